use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::render::limits::{DEFAULT_COMPILE_BYTES, DEFAULT_RENDER_BYTES};

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
}

impl Limits {
    fn default_render_bytes() -> u64 {
        DEFAULT_RENDER_BYTES
    }
    fn default_compile_bytes() -> u64 {
        DEFAULT_COMPILE_BYTES
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            render_bytes: DEFAULT_RENDER_BYTES,
            compile_bytes: DEFAULT_COMPILE_BYTES,
        }
    }
}
