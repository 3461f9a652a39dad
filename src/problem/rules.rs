//! Problems of rules files (`.clinerules`, `.cursorrules`, …). Each is a warning: the rule it
//! concerns is left out and every other rule still loads, so one broken file never costs the
//! user the rest of their rules.

use std::fmt;

use super::Severity;

#[derive(Clone, Debug, PartialEq)]
pub enum RulesProblem {
    /// The YAML between the `---` lines does not parse, or is not a table of keys.
    FrontmatterSyntax { message: String },
    /// A `---` on the first line that no later `---` line closes.
    FrontmatterUnclosed,
    /// A rules file that cannot be read: permissions, a FIFO, a link out of its folder.
    RuleUnreadable { path: String, reason: String },
    /// A rules file larger than a data file may be (`limits.file_bytes`), or than what is left
    /// of the bytes one compile's rules may hold together (`together`).
    RuleTooLarge {
        path: String,
        limit: u64,
        together: bool,
    },
    /// A pattern of a rule's `globs` that does not parse, or `globs` of the wrong type.
    BadGlob { glob: String, message: String },
    /// `alwaysApply` that is not a boolean (`"true"`, quoted): the rule is decided by its
    /// globs, as if the key were not there.
    AlwaysApplyNotABoolean { found: String },
    /// A frontmatter key promptc does not read, near one it reads and the rule does not give
    /// (`glob` for `globs`, `alwaysapply` for `alwaysApply`): the rule is decided as if the
    /// key were not there, so a rule meant for some files applies to all.
    KeyNotRead { key: String, meant: String },
    /// More rules files than one compile reads.
    TooManyRuleFiles { limit: usize },
    /// A rules folder with more files and folders not read than are told of one by one.
    MoreRulesUnreadable {
        folder: String,
        more: usize,
        named: usize,
    },
    /// A rule whose globs take the rules read past the globs all of them may hold.
    TooManyGlobs { limit: usize },
    /// A rules folder named by `--rules`, `--global-rules` or `rules_from` that is not a folder.
    RulesFolderMissing {
        path: String,
        reason: String,
        /// A folder beside it of a near name.
        near: Option<String>,
    },
    /// A context's `rules_from` folder that leaves the workspace.
    RulesFromOutside { path: String },
    /// A rule left out because matching its globs against the context's active files would
    /// cost more than a context's rules may (see `load::rules::MAX_MATCH_WORK`).
    GlobsTooCostly { rule: String, active_files: usize },
    /// A `rule_toggles` key of a context file that no rule read is called (by name or path).
    ToggleNamesNoRule {
        name: String,
        suggestion: Option<String>,
    },
}

impl RulesProblem {
    pub fn code(&self) -> &'static str {
        match self {
            RulesProblem::FrontmatterSyntax { .. } => "frontmatter-syntax",
            RulesProblem::FrontmatterUnclosed => "frontmatter-unclosed",
            RulesProblem::RuleUnreadable { .. } => "rule-unreadable",
            RulesProblem::RuleTooLarge { .. } => "rule-too-large",
            RulesProblem::BadGlob { .. } => "bad-glob",
            RulesProblem::AlwaysApplyNotABoolean { .. } => "always-apply-not-a-boolean",
            RulesProblem::KeyNotRead { .. } => "rule-key-not-read",
            RulesProblem::TooManyRuleFiles { .. } => "too-many-rule-files",
            RulesProblem::MoreRulesUnreadable { .. } => "more-rules-unreadable",
            RulesProblem::TooManyGlobs { .. } => "too-many-globs",
            RulesProblem::RulesFolderMissing { .. } => "rules-folder-missing",
            RulesProblem::RulesFromOutside { .. } => "rules-from-outside",
            RulesProblem::GlobsTooCostly { .. } => "globs-too-costly",
            RulesProblem::ToggleNamesNoRule { .. } => "toggle-names-no-rule",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            RulesProblem::RulesFolderMissing { .. } | RulesProblem::RulesFromOutside { .. } => {
                Severity::Error
            }
            _ => Severity::Warning,
        }
    }

    pub fn help(&self) -> Option<String> {
        Some(match self {
            RulesProblem::FrontmatterSyntax { message } => match super::syntax::yaml_help(message) {
                Some(help) => format!("{help}; the rule is left out until then"),
                None => "fix the YAML between the `---` lines (quote values holding `: ` or starting with `*`); the rule is left out until then".into(),
            },
            RulesProblem::FrontmatterUnclosed => {
                "close the frontmatter with a line holding only `---`; the rule is left out until then".into()
            }
            RulesProblem::RuleUnreadable { .. } => {
                "make it a readable regular file inside its rules folder, or remove it; the other rules still load".into()
            }
            RulesProblem::RuleTooLarge {
                together: false, ..
            } => format!(
                "shorten it (a rule is sent with every prompt it applies to), or raise `limits.file_bytes` in promptc.toml (at most {} MiB); the other rules still load",
                crate::model::limits::MAX_FILE_BYTES >> 20
            ),
            RulesProblem::RuleTooLarge { together: true, .. } => format!(
                "the rules files read before it hold most of the {} MiB one compile's rules may hold together: move rules you do not use out of the folder; the other rules still load",
                crate::model::limits::MAX_RULES_BYTES >> 20
            ),
            RulesProblem::BadGlob { .. } => {
                "write `globs` as a list of glob patterns such as [\"src/**/*.ts\"]; the rule is left out until then".into()
            }
            RulesProblem::AlwaysApplyNotABoolean { .. } => {
                "write `alwaysApply: true` or `alwaysApply: false`, without quotes".into()
            }
            RulesProblem::KeyNotRead { key, meant } => {
                format!("rename `{key}` to `{meant}` (the name is read as written, case and all)")
            }
            RulesProblem::TooManyRuleFiles { .. } => {
                "the files after the limit are left out; move rules you do not use out of the folder".into()
            }
            RulesProblem::MoreRulesUnreadable { .. } => {
                "remove the links and special files the rules folder does not need; validate names the next ones once those named are gone".into()
            }
            RulesProblem::TooManyGlobs { .. } => {
                "match folders with fewer, broader globs (`src/**`), or move rules you do not use out of the folder".into()
            }
            RulesProblem::RulesFolderMissing {
                near: Some(near), ..
            } => format!("did you mean `{near}`?"),
            RulesProblem::RulesFolderMissing { .. } => {
                "name a project folder (the one holding `.clinerules`, `AGENTS.md`, …)".into()
            }
            RulesProblem::RulesFromOutside { .. } => {
                "name a folder inside the workspace, relative to its root; a folder elsewhere is read only with `--rules DIR`".into()
            }
            RulesProblem::GlobsTooCostly { .. } => {
                "give the rule fewer or simpler globs (`src/**` for a folder), or list fewer active files (a workspace's contexts share what matching may cost, so each of many contexts may less); `promptc explain` lists the rules left out".into()
            }
            RulesProblem::ToggleNamesNoRule {
                suggestion: Some(near),
                ..
            } => format!("did you mean `{near}`?"),
            RulesProblem::ToggleNamesNoRule { .. } => {
                "name a rule by its name or its path, as `promptc explain` lists them; the toggle changes nothing until then".into()
            }
        })
    }
}

impl fmt::Display for RulesProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RulesProblem::FrontmatterSyntax { message } => {
                write!(
                    f,
                    "rule frontmatter does not parse: {message}; the rule is skipped"
                )
            }
            RulesProblem::FrontmatterUnclosed => {
                write!(
                    f,
                    "rule frontmatter opened with `---` is never closed; the rule is skipped"
                )
            }
            RulesProblem::RuleUnreadable { path, reason } => {
                write!(
                    f,
                    "rules file `{path}` cannot be read ({reason}); it is skipped"
                )
            }
            RulesProblem::RuleTooLarge {
                path,
                limit,
                together,
            } => {
                let which = if *together {
                    "what is left of the bytes the rules read may hold together"
                } else {
                    "the limit of a data file"
                };
                write!(
                    f,
                    "rules file `{path}` is larger than {which} ({limit} bytes); it is skipped"
                )
            }
            RulesProblem::AlwaysApplyNotABoolean { found } => write!(
                f,
                "`alwaysApply` is {found}, not `true` or `false`: the rule applies by its globs alone"
            ),
            RulesProblem::BadGlob { glob, message } => {
                write!(
                    f,
                    "glob `{glob}` does not parse: {message}; the rule is skipped"
                )
            }
            RulesProblem::KeyNotRead { key, meant } => write!(
                f,
                "frontmatter key `{key}` is not read (promptc reads `{meant}`): the rule is decided as if it were not there"
            ),
            RulesProblem::TooManyRuleFiles { limit } => {
                write!(f, "more than {limit} rules files; the rest are skipped")
            }
            RulesProblem::MoreRulesUnreadable {
                folder,
                more,
                named,
            } => write!(
                f,
                "rules folder `{folder}` holds {more} more files or folders that cannot be read, besides the {named} named; they are skipped"
            ),
            RulesProblem::TooManyGlobs { limit } => {
                write!(
                    f,
                    "with this rule's globs the rules read hold more than {limit} globs in all; the rule is skipped"
                )
            }
            RulesProblem::RulesFolderMissing { path, reason, .. } => {
                write!(f, "rules folder `{path}` cannot be read: {reason}")
            }
            RulesProblem::RulesFromOutside { path } => {
                write!(f, "rules folder `{path}` leaves the workspace")
            }
            RulesProblem::GlobsTooCostly { rule, active_files } => write!(
                f,
                "rule `{rule}` is left out: matching its globs against the {active_files} active files costs more than a context's rules may"
            ),
            RulesProblem::ToggleNamesNoRule { name, .. } => write!(
                f,
                "`rule_toggles` names `{name}`, but no rule read is called so (by name or path)"
            ),
        }
    }
}
