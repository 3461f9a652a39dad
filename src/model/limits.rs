use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Template instructions one compile (one family × context) may run by default: generous
/// for real prompts, small enough that a runaway loop stops within a second.
pub const DEFAULT_FUEL: u64 = 5_000_000;
/// The highest `fuel` a manifest may set: about five seconds of template work (release build).
pub const MAX_FUEL: u64 = 100_000_000;
/// Default for `limits.render_bytes`: the text one render may write, and the largest string a
/// filter may build.
pub const DEFAULT_RENDER_BYTES: u64 = 16 << 20;
/// Default for `limits.compile_bytes`: the text all renders of one compile may write together
/// (sections, tool texts, the tool list and the prompt).
pub const DEFAULT_COMPILE_BYTES: u64 = 64 << 20;
/// The highest byte limit a manifest may set. A compile holds a few copies of what it writes
/// (sections, the prompt as each post-processing rule leaves it, `validate`'s second compile
/// for the stable prefix): at 1 GiB, a workspace choosing the highest limits could make a
/// compile ask for more than the process's 4 GiB ceiling and end it on a failed allocation.
pub const MAX_BYTES: u64 = 256 * MIB;
/// The highest `limits.file_bytes` a manifest may set.
pub const MAX_FILE_BYTES: u64 = 256 * MIB;
/// The highest `limits.workspace_bytes` a manifest may set. A load holds what it reads, and
/// an environment holds another copy of each template it compiles: at 4 GiB, a workspace of
/// large partials ended the process on a failed allocation past its 4 GiB ceiling.
pub const MAX_WORKSPACE_LIMIT: u64 = 1 << 30;
const MIB: u64 = 1024 * 1024;

/// Largest data file (manifest, variant, component, tool, context) promptc reads, unless
/// `limits.file_bytes` says otherwise. The manifest itself is always read with this limit.
pub const MAX_DATA_FILE_BYTES: u64 = 4 * MIB;
/// Largest template file promptc reads, unless `limits.template_bytes` says otherwise. Below
/// the default `limits.render_bytes`: a template's own text is part of what it renders.
pub const MAX_TEMPLATE_BYTES: u64 = 8 * MIB;
/// Most bytes of data files and templates one workspace may hold in all, unless
/// `limits.workspace_bytes` says otherwise: links and copies must not multiply the per-file
/// limits.
pub const MAX_WORKSPACE_BYTES: u64 = 256 * MIB;
/// Most rules files (rules and workflows) one compile reads from all its rules folders: a
/// folder holding thousands of files is not a rules folder.
pub const MAX_RULE_FILES: usize = 256;
/// The most active files a context may list (`active_files`).
pub const MAX_ACTIVE_FILES: usize = 10_000;
/// Most bytes of rules files one compile reads in all; each file is bounded by
/// `limits.file_bytes` as a data file is.
pub const MAX_RULES_BYTES: u64 = 8 * MIB;
/// Default for `limits.outputs`: the most outputs the build matrix may write. A real registry
/// writes tens to hundreds; families and contexts multiply, and 400 of each (800 files of a
/// few bytes) made 160,000 outputs, whose files alone took `build --all` past a minute.
pub const DEFAULT_OUTPUTS: usize = 10_000;
/// The highest `limits.outputs` a manifest may set: about half a minute of `build --all`
/// writing small outputs on the machines promptc is measured on.
pub const MAX_OUTPUTS: usize = 50_000;
/// Largest committed output promptc reads back to compare with a fresh compile.
pub const MAX_OUTPUT_BYTES: u64 = 64 * MIB;

/// A byte limit on the files a load reads, and the `[limits]` setting that changes it.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimit {
    pub bytes: u64,
    pub setting: &'static str,
}

/// How much text templates may build. A template that goes over is an error naming the
/// template and, where it can, the line.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The most bytes one template render may write (its output, and text it captures with
    /// `{% set %}`), and the largest string a filter such as `join` or `replace` may build.
    /// Default 16 MiB, at most 256 MiB.
    #[serde(default = "Limits::default_render_bytes")]
    #[schemars(range(min = 1, max = MAX_BYTES))]
    pub render_bytes: u64,
    /// The most bytes all the renders of one compile (one family × context) may write together:
    /// sections, tool texts, the tool list and the prompt, with a copy of each tool's
    /// parameter schemas (as native tool definitions hold them). Default 64 MiB, at most 256 MiB.
    #[serde(default = "Limits::default_compile_bytes")]
    #[schemars(range(min = 1, max = MAX_BYTES))]
    pub compile_bytes: u64,
    /// The largest data file (variant, component, tool, context) promptc reads. The manifest
    /// itself is always read with the default. Default 4 MiB, at most 256 MiB.
    #[serde(default = "Limits::default_file_bytes")]
    #[schemars(range(min = 1, max = MAX_FILE_BYTES))]
    pub file_bytes: u64,
    /// The largest template file promptc reads. Default 8 MiB, at most 256 MiB.
    #[serde(default = "Limits::default_template_bytes")]
    #[schemars(range(min = 1, max = MAX_BYTES))]
    pub template_bytes: u64,
    /// The most bytes of data files and templates the whole workspace may hold. Default
    /// 256 MiB, at most 1 GiB.
    #[serde(default = "Limits::default_workspace_bytes")]
    #[schemars(range(min = 1, max = MAX_WORKSPACE_LIMIT))]
    pub workspace_bytes: u64,
    /// The most outputs the build matrix may write (families × contexts, with the build's
    /// entries). Default 10,000, at most 50,000.
    #[serde(default = "Limits::default_outputs")]
    #[schemars(range(min = 1, max = MAX_OUTPUTS))]
    pub outputs: usize,
}

impl Limits {
    fn default_render_bytes() -> u64 {
        DEFAULT_RENDER_BYTES
    }
    fn default_compile_bytes() -> u64 {
        DEFAULT_COMPILE_BYTES
    }
    fn default_file_bytes() -> u64 {
        MAX_DATA_FILE_BYTES
    }
    fn default_template_bytes() -> u64 {
        MAX_TEMPLATE_BYTES
    }
    fn default_workspace_bytes() -> u64 {
        MAX_WORKSPACE_BYTES
    }
    fn default_outputs() -> usize {
        DEFAULT_OUTPUTS
    }

    /// These limits, each brought within what the schema allows: what a load that has not
    /// yet checked the manifest against its schema reads with (see `load::specs`).
    pub fn within_schema(&self) -> Self {
        let clamp = |value: u64, max: u64| value.clamp(1, max);
        Self {
            render_bytes: clamp(self.render_bytes, MAX_BYTES),
            compile_bytes: clamp(self.compile_bytes, MAX_BYTES),
            file_bytes: clamp(self.file_bytes, MAX_FILE_BYTES),
            template_bytes: clamp(self.template_bytes, MAX_BYTES),
            workspace_bytes: clamp(self.workspace_bytes, MAX_WORKSPACE_LIMIT),
            outputs: self.outputs.clamp(1, MAX_OUTPUTS),
        }
    }

    /// What one data file may hold.
    pub fn file(&self) -> ReadLimit {
        ReadLimit {
            bytes: self.file_bytes,
            setting: "file_bytes",
        }
    }

    /// What one template file may hold.
    pub fn template(&self) -> ReadLimit {
        ReadLimit {
            bytes: self.template_bytes,
            setting: "template_bytes",
        }
    }

    /// What the files of the workspace may hold together.
    pub fn workspace(&self) -> ReadLimit {
        ReadLimit {
            bytes: self.workspace_bytes,
            setting: "workspace_bytes",
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            render_bytes: DEFAULT_RENDER_BYTES,
            compile_bytes: DEFAULT_COMPILE_BYTES,
            file_bytes: MAX_DATA_FILE_BYTES,
            template_bytes: MAX_TEMPLATE_BYTES,
            workspace_bytes: MAX_WORKSPACE_BYTES,
            outputs: DEFAULT_OUTPUTS,
        }
    }
}
