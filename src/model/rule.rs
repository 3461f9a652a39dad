use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The user's rules in a context: one text (as before rules files were read), or a list of
/// rules, each saying where it came from.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Rules {
    /// Rules text, inserted as data.
    Text(String),
    /// Rules one by one, in the order they reach the prompt.
    List(Vec<Rule>),
}

impl Default for Rules {
    fn default() -> Self {
        Rules::Text(String::new())
    }
}

/// One rule (or workflow) read from a rules file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Rule {
    /// Where it came from: `clinerules`, `cursorrules`, `cursor`, `windsurfrules`, `agents`,
    /// `global`, `workflow` or `context`.
    pub kind: String,
    /// Its file, relative to the rules folder it was read from (`.clinerules/testing.md`).
    pub path: String,
    /// The rules folder it was read from, as named (`--rules ~/src/shop`, a `rules_from`
    /// entry, a `--global-rules` folder): rules of the same name from two folders are told
    /// apart, and switched off one at a time, by `FOLDER/PATH`. Empty for a rule the context
    /// lists itself.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub folder: String,
    /// The rules folder's real path (`/home/me/shop` for `--rules .` run there), with `/`
    /// between its parts: an active file named by its absolute path is matched as the path
    /// below it, however the folder was named. Empty for a rule not read from a folder.
    #[serde(skip)]
    pub real_folder: String,
    /// Its name: the file name without `.md` or `.mdc`. `--disable-rule` and `rule_toggles`
    /// switch a rule off by this name, by its path, or by its folder and path.
    pub name: String,
    /// The rule's text, without its frontmatter.
    pub text: String,
    /// The frontmatter (description, globs, tags, author, version, and anything else).
    pub metadata: IndexMap<String, Value>,
}

impl Rule {
    /// Its folder and path together (`~/src/shop/AGENTS.md`), as a name it can be switched
    /// off by; its path alone when it has no folder, or the folder is `.`.
    pub fn qualified_path(&self) -> String {
        // As named, but for a leading `./` (`./shop` and `shop` are one folder).
        let mut folder = self.folder.trim_end_matches(['/', '\\']);
        while let Some(rest) = folder.strip_prefix("./") {
            folder = rest.trim_start_matches('/');
        }
        if folder.is_empty() || folder == "." || self.path.is_empty() {
            self.path.clone()
        } else {
            format!("{folder}/{}", self.path)
        }
    }
}

/// Rules text, as a context held it before rules became a list.
impl From<&str> for Rules {
    fn from(text: &str) -> Self {
        Rules::Text(text.to_string())
    }
}

impl From<String> for Rules {
    fn from(text: String) -> Self {
        Rules::Text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn a_rule_s_folder_and_path_name_it_as_the_folder_was_named() {
        let rule = |folder: &str| Rule {
            folder: folder.into(),
            path: "AGENTS.md".into(),
            ..Rule::default()
        };
        assert_eq!(rule("./shop/").qualified_path(), "shop/AGENTS.md");
        assert_eq!(rule("./../r/p1").qualified_path(), "../r/p1/AGENTS.md");
        assert_eq!(
            rule("/home/u/global").qualified_path(),
            "/home/u/global/AGENTS.md"
        );
        assert_eq!(rule(".").qualified_path(), "AGENTS.md");
        assert_eq!(rule("").qualified_path(), "AGENTS.md");
    }
}
