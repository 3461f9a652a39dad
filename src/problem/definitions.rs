//! Problems of native tool definitions: names a provider rejects, schema keywords a dialect
//! cannot carry. Each has its own code, named after it.

use std::fmt;

use super::Severity;

#[derive(Clone, Debug, PartialEq)]
pub enum DefinitionProblem {
    /// A tool name the provider rejects: too long, or characters it does not take.
    ToolNameRejected {
        name: String,
        dialect: &'static str,
        max: usize,
        too_long: bool,
    },
    /// An MCP tool left out of the definitions: its qualified name is one the provider
    /// rejects (`tool_definitions.long_names = "skip"`).
    McpToolSkipped {
        name: String,
        dialect: &'static str,
        max: usize,
        too_long: bool,
    },
    /// A tool's description (as rendered, with its parameters' notes) longer than the
    /// provider accepts; `spec` is the family whose entry of the tool's `families` it was
    /// compiled from, `None` for the generic spec.
    DescriptionTooLong {
        tool: String,
        spec: Option<String>,
        dialect: &'static str,
        max: usize,
        length: usize,
    },
    /// An MCP tool's description longer than the provider accepts, cut to the longest it
    /// takes (the server writes it; leaving the tool out would lose it for a long text).
    McpDescriptionCut {
        name: String,
        dialect: &'static str,
        max: usize,
        /// With the `[server] ` promptc writes before it.
        length: usize,
        /// The server's own.
        own: usize,
    },
    /// A tool's argument named so that the provider refuses the request (a parameter of
    /// the workspace's own tool).
    PropertyNameRejected {
        tool: String,
        property: String,
        dialect: &'static str,
    },
    /// An MCP tool left out of the definitions: an argument of its input schema is named so
    /// that the provider would refuse the whole request.
    McpPropertyRejected {
        name: String,
        property: String,
        dialect: &'static str,
    },
    /// JSON Schema keywords the dialect cannot carry, dropped from a tool's schema.
    KeywordsDropped {
        tool: String,
        dialect: &'static str,
        keywords: Vec<String>,
    },
    /// An array parameter with no `items`: providers that need them reject the tool.
    ArrayWithoutItems { tool: String, parameter: String },
    /// An object parameter without `properties`, which Gemini refuses.
    ObjectWithoutProperties { tool: String, parameter: String },
    /// `tool_definitions.mcp_name` failed to render.
    McpNameFailed { message: String },
    /// An MCP tool left out of the definitions: its input schema is not an object schema
    /// (`found` says what it is), which providers refuse.
    McpSchemaNotAnObject {
        name: String,
        dialect: &'static str,
        found: String,
    },
    /// An MCP tool left out of the definitions: its input schema holds, at `at` (a path in it
    /// such as `tags` or `rows[]`, empty for the schema as a whole), something for which the
    /// dialect's provider refuses the whole request.
    McpSchemaRefused {
        name: String,
        dialect: &'static str,
        at: String,
        fault: SchemaFault,
    },
    /// An MCP tool's input schema (`bytes`, with its name and description, as the
    /// definitions hold and write it) did not fit in what the compile had left of
    /// `limits.compile_bytes` (`limit`).
    McpSchemaTooLarge {
        server: String,
        tool: String,
        bytes: u64,
        limit: u64,
    },
}

impl DefinitionProblem {
    pub fn code(&self) -> &'static str {
        match self {
            DefinitionProblem::ToolNameRejected { .. } => "tool-name-rejected",
            DefinitionProblem::McpToolSkipped { .. } => "mcp-tool-skipped",
            DefinitionProblem::DescriptionTooLong { .. } => "description-too-long",
            DefinitionProblem::McpDescriptionCut { .. } => "mcp-description-cut",
            DefinitionProblem::PropertyNameRejected { .. } => "property-name-rejected",
            DefinitionProblem::McpPropertyRejected { .. } => "mcp-property-rejected",
            DefinitionProblem::KeywordsDropped { .. } => "keywords-dropped",
            DefinitionProblem::ArrayWithoutItems { .. } => "array-without-items",
            DefinitionProblem::ObjectWithoutProperties { .. } => "object-without-properties",
            DefinitionProblem::McpNameFailed { .. } => "mcp-name-failed",
            DefinitionProblem::McpSchemaNotAnObject { .. } => "mcp-schema-not-an-object",
            DefinitionProblem::McpSchemaTooLarge { .. } => "mcp-schema-too-large",
            DefinitionProblem::McpSchemaRefused { .. } => "mcp-schema-refused",
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            DefinitionProblem::ToolNameRejected { .. }
            | DefinitionProblem::DescriptionTooLong { .. }
            | DefinitionProblem::PropertyNameRejected { .. }
            | DefinitionProblem::McpNameFailed { .. }
            | DefinitionProblem::McpSchemaTooLarge { .. } => Severity::Error,
            _ => Severity::Warning,
        }
    }

    pub fn help(&self) -> Option<String> {
        Some(match self {
            DefinitionProblem::ToolNameRejected { max, dialect, .. } => format!(
                "give the tool a `name` of at most {max} {}",
                accepted(dialect)
            ),
            // The tool's own name is the server's: what the workspace changes is how the
            // definitions name it.
            DefinitionProblem::McpToolSkipped {
                too_long: true, ..
            } => {
                "shorten the server's `uid`, or make `tool_definitions.mcp_name` shorter (e.g. `{{ tool }}` alone); `long_names = \"error\"` in promptc.toml's `[tool_definitions]` makes this an error".into()
            }
            DefinitionProblem::McpToolSkipped { dialect, .. } if *dialect == "gemini" => format!(
                "make `tool_definitions.mcp_name` write only {}, starting with a letter or `_` (e.g. `mcp_{{{{ server }}}}__{{{{ tool | replace(' ', '_') }}}}`, for servers whose names start with a digit); `long_names = \"error\"` in promptc.toml's `[tool_definitions]` makes this an error",
                accepted(dialect)
            ),
            DefinitionProblem::McpToolSkipped { dialect, .. } => format!(
                "make `tool_definitions.mcp_name` write only {} (e.g. `{{{{ server }}}}__{{{{ tool | replace(' ', '_') }}}}`); `long_names = \"error\"` in promptc.toml's `[tool_definitions]` makes this an error",
                accepted(dialect)
            ),
            DefinitionProblem::KeywordsDropped { .. } => {
                "leave these keywords out, or accept that this provider does not see them".into()
            }
            DefinitionProblem::DescriptionTooLong { max, .. } => format!(
                "shorten the description to at most {max} characters as it renders (the notes of the parameters it shows count too): what a single argument needs can go in that parameter's `instruction`, which has no such limit, and the rest in the prompt"
            ),
            DefinitionProblem::McpDescriptionCut { max, own, .. } if own > max => format!(
                "the server writes the description, so the fix is the server's; until then the model reads its first {max} characters"
            ),
            DefinitionProblem::McpDescriptionCut { max, .. } => format!(
                "the server's own description fits; a shorter server name in the context leaves it the room (the model reads the first {max} characters)"
            ),
            DefinitionProblem::PropertyNameRejected { .. } => {
                "name the parameter with 1 to 64 letters, digits, `_`, `.` and `-` (`file_path`, not `file path`)".into()
            }
            DefinitionProblem::McpPropertyRejected { .. } => {
                "the server names its arguments: it is the server's listing to change, or leave the server out of the context for this provider".into()
            }
            DefinitionProblem::ArrayWithoutItems { .. } => {
                "give the parameter `items`, e.g. `items = { type = \"string\" }`".into()
            }
            DefinitionProblem::ObjectWithoutProperties { .. } => {
                "give the parameter `properties` (e.g. `properties = { path = { type = \"string\" } }`), or make it a string the model writes JSON into".into()
            }
            DefinitionProblem::McpNameFailed { .. } => {
                "`mcp_name` may read `server` and `tool`".into()
            }
            DefinitionProblem::McpSchemaNotAnObject { .. } => {
                "providers take a tool's arguments as an object: give the tool an `input_schema` such as `{\"type\": \"object\", \"properties\": {…}}` (the server lists it)".into()
            }
            DefinitionProblem::McpSchemaRefused { fault, .. } => format!(
                "the server lists this schema, so the fix is the server's ({}); until then, leave the server out of the context, or `disabled`, for this provider",
                fault.server_fix()
            ),
            DefinitionProblem::McpSchemaTooLarge { .. } => format!(
                "each MCP tool's input schema is copied into the native tool definitions, which count toward the compile's size: leave the tool (or its server) out of the context, or, if the size is real, raise `limits.compile_bytes` in promptc.toml (at most {} bytes)",
                crate::model::limits::MAX_BYTES
            ),
        })
    }
}

/// What in an MCP tool's input schema makes a provider refuse the request it is part of.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaFault {
    /// A value where a schema belongs (a property's, `items`, a choice of `anyOf`) that is
    /// neither an object nor `true`/`false` (`found` says what it is).
    NotASchema { found: &'static str },
    /// A keyword whose value has the wrong shape: `required` not a list of names, `type`
    /// neither a type's name nor a list of them, `properties` not an object, `anyOf` not a
    /// list.
    Malformed {
        keyword: &'static str,
        found: &'static str,
    },
    /// An array with no `items` (OpenAI and Gemini refuse it).
    ArrayWithoutItems,
    /// An object with no `properties` (Gemini refuses it).
    ObjectWithoutProperties,
    /// Nested deeper (or under longer names) than promptc looks into a schema.
    TooDeep,
}

impl SchemaFault {
    /// What the server's listing would say instead.
    fn server_fix(&self) -> String {
        match self {
            SchemaFault::NotASchema { .. } => {
                "each property, `items` and choice a schema such as `{\"type\": \"string\"}`".into()
            }
            SchemaFault::Malformed { keyword, .. } => {
                format!("`{keyword}` {}", shape(keyword).replacen("is ", "as ", 1))
            }
            SchemaFault::ArrayWithoutItems => {
                "an array with `items`, e.g. `\"items\": {\"type\": \"string\"}`".into()
            }
            SchemaFault::ObjectWithoutProperties => "an object with its `properties`".into(),
            SchemaFault::TooDeep => {
                "a schema nested fewer than 64 levels deep, under names of fewer than 1024 characters in all".into()
            }
        }
    }
}

/// The shape a schema keyword's value has, in words.
fn shape(keyword: &str) -> &'static str {
    match keyword {
        "required" => "is a list of property names",
        "type" => "is a type's name (`string`, `object`, …) or a list of them",
        "properties" | "$defs" | "definitions" => "is an object of schemas",
        _ => "is a list of schemas",
    }
}

impl fmt::Display for SchemaFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaFault::NotASchema { found } => {
                write!(f, "is {found}, where a schema is an object")
            }
            SchemaFault::Malformed { keyword, found } => {
                write!(
                    f,
                    "has a `{keyword}` that is {found}, where it {}",
                    shape(keyword)
                )
            }
            SchemaFault::ArrayWithoutItems => write!(f, "is an array without `items`"),
            SchemaFault::ObjectWithoutProperties => {
                write!(f, "is an object without `properties`")
            }
            SchemaFault::TooDeep => write!(
                f,
                "is nested deeper than promptc checks a schema (64 levels, 1024 characters of names), so it cannot tell whether the provider takes it"
            ),
        }
    }
}

/// The company whose API speaks a dialect.
fn provider(dialect: &str) -> &'static str {
    match dialect {
        "anthropic" => "Anthropic",
        "gemini" => "Gemini",
        _ => "OpenAI",
    }
}

/// The characters a dialect takes in a tool's name, in words.
fn accepted(dialect: &str) -> &'static str {
    if dialect == "gemini" {
        "letters, digits, `_`, `-`, `.` and `:`"
    } else {
        "letters, digits, `_` and `-`"
    }
}

impl fmt::Display for DefinitionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = |too_long: bool, max: usize, dialect: &str| {
            if too_long {
                format!("longer than {max} characters")
            } else {
                // Gemini also wants a letter or `_` first (`1password__get_item` is not).
                let first = if dialect == "gemini" {
                    ", starting with a letter or `_`"
                } else {
                    ""
                };
                format!("not made of {} alone{first}", accepted(dialect))
            }
        };
        match self {
            DefinitionProblem::ToolNameRejected {
                name,
                dialect,
                max,
                too_long,
            } => write!(
                f,
                "tool name `{name}` is {}, which the {dialect} dialect rejects",
                why(*too_long, *max, dialect)
            ),
            DefinitionProblem::McpToolSkipped {
                name,
                dialect,
                max,
                too_long,
            } => write!(
                f,
                "MCP tool `{name}` is left out of the {dialect} tool definitions: its name is {}",
                why(*too_long, *max, dialect)
            ),
            DefinitionProblem::DescriptionTooLong {
                tool,
                dialect,
                max,
                length,
                ..
            } => write!(
                f,
                "the description of tool `{tool}` is {length} characters, and the {dialect} dialect's provider refuses any request with one longer than {max}"
            ),
            DefinitionProblem::McpDescriptionCut {
                name,
                dialect,
                max,
                length,
                own,
            } => write!(
                f,
                "the description of MCP tool `{name}` comes to {length} characters ({own} of the server's, after its server's name in brackets), longer than the {max} the {dialect} dialect's provider accepts: cut to {max} in the tool definitions"
            ),
            DefinitionProblem::PropertyNameRejected {
                tool,
                property,
                dialect,
            } => write!(
                f,
                "parameter `{property}` of tool `{tool}` is not 1 to 64 letters, digits, `_`, `.` and `-`, which the {dialect} dialect rejects"
            ),
            DefinitionProblem::McpPropertyRejected {
                name,
                property,
                dialect,
            } => write!(
                f,
                "MCP tool `{name}` is left out of the {dialect} tool definitions: its argument `{property}` is not 1 to 64 letters, digits, `_`, `.` and `-`, which the provider rejects"
            ),
            DefinitionProblem::KeywordsDropped {
                tool,
                dialect,
                keywords,
            } => write!(
                f,
                "the {dialect} dialect cannot carry {} in the schema of tool `{tool}`: dropped",
                // A keyword, or one with what of it was dropped: `format` (`uri`).
                keywords
                    .iter()
                    .map(|k| match k.split_once(' ') {
                        Some((keyword, what)) => format!("`{keyword}` {what}"),
                        None => format!("`{k}`"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            DefinitionProblem::McpSchemaNotAnObject {
                name,
                dialect,
                found,
            } => write!(
                f,
                "MCP tool `{name}` is left out of the {dialect} tool definitions: its input schema is {found}, where providers take an object of named arguments"
            ),
            DefinitionProblem::McpSchemaRefused {
                name,
                dialect,
                at,
                fault,
            } => {
                let place = if at.is_empty() {
                    "its input schema".to_string()
                } else {
                    format!("`{at}` in its input schema")
                };
                write!(
                    f,
                    "MCP tool `{name}` is left out of the {dialect} tool definitions, as {} refuses any request that holds it: {place} {fault}",
                    provider(dialect)
                )
            }
            DefinitionProblem::ArrayWithoutItems { tool, parameter } => write!(
                f,
                "parameter `{parameter}` of tool `{tool}` is an array without `items`"
            ),
            DefinitionProblem::ObjectWithoutProperties { tool, parameter } => write!(
                f,
                "`{parameter}` of tool `{tool}` is an object without `properties`, which Gemini refuses (`properties: should be non-empty for OBJECT type`)"
            ),
            DefinitionProblem::McpNameFailed { message } => {
                write!(f, "`tool_definitions.mcp_name` failed: {message}")
            }
            DefinitionProblem::McpSchemaTooLarge {
                server,
                tool,
                bytes,
                limit,
            } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` takes about {bytes} bytes in the native tool definitions: with them, the compile comes to more than {limit} bytes (`limits.compile_bytes`)"
            ),
        }
    }
}
