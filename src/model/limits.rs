use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::confine::{MAX_DATA_FILE_BYTES, MAX_TEMPLATE_BYTES, MAX_WORKSPACE_BYTES, ReadLimit};
use crate::templates::limits::{DEFAULT_COMPILE_BYTES, DEFAULT_RENDER_BYTES};

/// How much text templates may build. A template that goes over is an error naming the
/// template and, where it can, the line.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The most bytes one template render may write (its output, and text it captures with
    /// `{% set %}`), and the largest string a filter such as `join` or `replace` may build.
    /// Default 16 MiB, at most 1 GiB.
    #[serde(default = "Limits::default_render_bytes")]
    #[schemars(range(min = 1, max = 1_073_741_824))]
    pub render_bytes: u64,
    /// The most bytes all the renders of one compile (one family × context) may write together:
    /// sections, tool texts, the tool list and the prompt. Default 64 MiB, at most 1 GiB.
    #[serde(default = "Limits::default_compile_bytes")]
    #[schemars(range(min = 1, max = 1_073_741_824))]
    pub compile_bytes: u64,
    /// The largest data file (variant, component, tool, context) promptc reads. The manifest
    /// itself is always read with the default. Default 4 MiB, at most 256 MiB.
    #[serde(default = "Limits::default_file_bytes")]
    #[schemars(range(min = 1, max = 268_435_456))]
    pub file_bytes: u64,
    /// The largest template file promptc reads. Default 8 MiB, at most 1 GiB.
    #[serde(default = "Limits::default_template_bytes")]
    #[schemars(range(min = 1, max = 1_073_741_824))]
    pub template_bytes: u64,
    /// The most bytes of data files and templates the whole workspace may hold. Default
    /// 256 MiB, at most 4 GiB.
    #[serde(default = "Limits::default_workspace_bytes")]
    #[schemars(range(min = 1, max = 4_294_967_296u64))]
    pub workspace_bytes: u64,
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
        }
    }
}
