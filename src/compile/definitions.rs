//! Native tool definitions: the tools a prompt shows (with the texts it renders for them)
//! and the MCP tools of the servers that count, in the shape one provider's API takes.
//!
//! Built once as neutral JSON Schema, then written in a dialect. Key order is fixed (serde_json
//! keeps insertion order): the same inputs give the same bytes.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Compiler, Request};
use crate::compiled::{CompileError, Compiled, CompiledTool};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::mcp_places::McpPlaces;
use crate::model::{Context, Dialect, LongNames, ToolDefinitionSettings};
use crate::parameter_schema::held_bytes;
use crate::problem::{DefinitionProblem, Problem, SchemaFault};
use crate::render::memo::write_tool;
use crate::resolve::scope::Scope;
use crate::templates::written::write_bytes;
use crate::workspace::Workspace;
use crate::workspace::inheritance::EffectiveVariant;

/// What a finding is about, so the caller can place it: a tool spec (and one of its
/// parameters), an MCP tool of the context, or the manifest's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    Tool {
        id: String,
        parameter: Option<String>,
    },
    Mcp {
        server: usize,
        tool: usize,
    },
    Settings,
}

/// A request's tool definitions as made: the dialect, the definitions, and what was found.
pub(crate) type Made = (Dialect, Value, Vec<Finding>);

#[derive(Clone, Debug)]
pub struct Finding {
    pub subject: Subject,
    pub problem: Problem,
}

/// One tool, neutral: name, description, and the JSON Schema of its arguments.
struct Neutral {
    name: String,
    description: String,
    schema: Value,
    subject: Subject,
    /// The family whose spec of the workspace's tool was used; `None` for the generic spec
    /// and for an MCP tool.
    spec: Option<String>,
    /// The characters promptc writes before an MCP tool's description (`[server] `).
    prefix: usize,
}

/// The definitions of `tools` and of the context's MCP tools, in `dialect`.
pub fn build(
    tools: &[CompiledTool],
    context: &Context,
    settings: &ToolDefinitionSettings,
    dialect: Dialect,
    mcp_name: &dyn Fn(&str, &str) -> Result<String, String>,
) -> (Value, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut neutral: Vec<Neutral> = tools
        .iter()
        .map(|tool| of_tool(tool, &mut findings))
        .collect();
    for (server_index, server) in context.mcp_servers.iter().enumerate() {
        if !server.counts() {
            continue;
        }
        for (tool_index, tool) in server.tools.iter().enumerate() {
            let subject = Subject::Mcp {
                server: server_index,
                tool: tool_index,
            };
            let name = match mcp_name(server.uid_or_name(), &tool.name) {
                Ok(name) => name,
                Err(message) => {
                    findings.push(Finding {
                        subject: Subject::Settings,
                        problem: Problem::Definitions(DefinitionProblem::McpNameFailed { message }),
                    });
                    return (Value::Array(Vec::new()), findings);
                }
            };
            if let Some(too_long) = rejected(dialect, &name) {
                let problem = match settings.long_names {
                    LongNames::Skip => DefinitionProblem::McpToolSkipped {
                        name,
                        dialect: dialect.name(),
                        max: dialect.max_name_len(),
                        too_long,
                    },
                    LongNames::Error => DefinitionProblem::ToolNameRejected {
                        name,
                        dialect: dialect.name(),
                        max: dialect.max_name_len(),
                        too_long,
                    },
                };
                findings.push(Finding {
                    subject,
                    problem: Problem::Definitions(problem),
                });
                continue;
            }
            if let Some(found) = tool.input_schema.as_ref().and_then(not_an_object_schema) {
                findings.push(Finding {
                    subject,
                    problem: Problem::Definitions(DefinitionProblem::McpSchemaNotAnObject {
                        name,
                        dialect: dialect.name(),
                        found,
                    }),
                });
                continue;
            }
            let rejected_property = tool
                .input_schema
                .as_ref()
                .and_then(|schema| schema.get("properties")?.as_object())
                .and_then(|properties| {
                    properties
                        .keys()
                        .find(|key| !dialect.accepts_property(key))
                        .cloned()
                });
            if let Some(property) = rejected_property {
                findings.push(Finding {
                    subject,
                    problem: Problem::Definitions(DefinitionProblem::McpPropertyRejected {
                        name,
                        property,
                        dialect: dialect.name(),
                    }),
                });
                continue;
            }
            if let Some((at, fault)) = tool
                .input_schema
                .as_ref()
                .and_then(|schema| refused_within(dialect, schema, String::new(), 0))
            {
                findings.push(Finding {
                    subject,
                    problem: Problem::Definitions(DefinitionProblem::McpSchemaRefused {
                        name,
                        dialect: dialect.name(),
                        at,
                        fault,
                    }),
                });
                continue;
            }
            let description = if tool.description.is_empty() {
                format!("[{}]", server.name)
            } else {
                format!("[{}] {}", server.name, tool.description)
            };
            let prefix = description.chars().count() - tool.description.chars().count();
            let schema = tool
                .input_schema
                .clone()
                .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
            neutral.push(Neutral {
                name,
                description,
                schema,
                subject,
                spec: None,
                prefix,
            });
        }
    }
    for tool in &neutral {
        let Subject::Tool { id, .. } = &tool.subject else {
            continue;
        };
        let properties = tool.schema.get("properties").and_then(Value::as_object);
        for property in properties.into_iter().flat_map(Map::keys) {
            if !dialect.accepts_property(property) {
                findings.push(Finding {
                    subject: Subject::Tool {
                        id: id.clone(),
                        parameter: Some(property.clone()),
                    },
                    problem: Problem::Definitions(DefinitionProblem::PropertyNameRejected {
                        tool: tool.name.clone(),
                        property: property.clone(),
                        dialect: dialect.name(),
                    }),
                });
            }
        }
        if let Some(too_long) = rejected(dialect, &tool.name) {
            findings.push(Finding {
                subject: tool.subject.clone(),
                problem: Problem::Definitions(DefinitionProblem::ToolNameRejected {
                    name: tool.name.clone(),
                    dialect: dialect.name(),
                    max: dialect.max_name_len(),
                    too_long,
                }),
            });
        }
    }
    // The first tool of each name, looked up rather than searched for: a context of tens of
    // thousands of MCP tools took minutes.
    let mut first_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, tool) in neutral.iter().enumerate() {
        let first = *first_of.entry(tool.name.as_str()).or_insert(index);
        if first != index {
            let first = &neutral[first];
            findings.push(Finding {
                subject: tool.subject.clone(),
                problem: Problem::ToolNameTaken {
                    name: tool.name.clone(),
                    first: match &first.subject {
                        Subject::Tool { id, .. } => id.clone(),
                        _ => first.name.clone(),
                    },
                    mcp: [&first.subject, &tool.subject]
                        .iter()
                        .any(|subject| matches!(subject, Subject::Mcp { .. })),
                },
            });
        }
    }
    if let Some(max) = dialect.max_description_len() {
        for tool in &mut neutral {
            described_within(tool, dialect, max, &mut findings);
        }
    }
    let value = write(dialect, neutral, &mut findings);
    (value, findings)
}

/// A description past what the provider accepts: the workspace's own tool is an error to
/// fix in its spec; an MCP tool's, which the server writes, is cut to the longest the
/// provider takes (`…` last), so that the request is not refused as a whole.
fn described_within(tool: &mut Neutral, dialect: Dialect, max: usize, findings: &mut Vec<Finding>) {
    let length = tool.description.chars().count();
    if length <= max {
        return;
    }
    let problem = match &tool.subject {
        Subject::Tool { .. } => DefinitionProblem::DescriptionTooLong {
            tool: tool.name.clone(),
            spec: tool.spec.clone(),
            dialect: dialect.name(),
            max,
            length,
        },
        Subject::Mcp { .. } | Subject::Settings => {
            let own = length.saturating_sub(tool.prefix);
            let kept = tool
                .description
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(tool.description.len(), |(at, _)| at);
            tool.description.truncate(kept);
            tool.description.push('…');
            DefinitionProblem::McpDescriptionCut {
                name: tool.name.clone(),
                dialect: dialect.name(),
                max,
                length,
                own,
            }
        }
    };
    findings.push(Finding {
        subject: tool.subject.clone(),
        problem: Problem::Definitions(problem),
    });
}

/// The MCP tools of the servers that count go into the native tool definitions with their
/// input schemas, copied (held as JSON, and written out pretty-printed by `build`): what they
/// take is spent from what the compile has left of `limits.compile_bytes` (`left`), as the
/// tool specs' parameter schemas are. The first tool past it is returned with its place and
/// the problem: a context whose server lists a schema of hundreds of megabytes is refused at
/// that tool, not copied into a definitions document as large.
pub(crate) fn mcp_tools_within(context: &Context, mut left: u64, limit: u64) -> Option<Finding> {
    for (server_index, server) in context.mcp_servers.iter().enumerate() {
        if !server.counts() {
            continue;
        }
        for (tool_index, tool) in server.tools.iter().enumerate() {
            let schema = tool.input_schema.as_ref().map_or(0, |schema| {
                // Past what is left, the exact size does not matter: writing stops there.
                let mut counter = crate::parameter_schema::CappedCounter::new(left);
                let _ = serde_json::to_writer_pretty(&mut counter, schema);
                counter.bytes().max(held_bytes(schema) as u64)
            });
            let bytes = schema
                .saturating_add(tool.name.len() as u64)
                .saturating_add(tool.description.len() as u64)
                .saturating_add(server.name.len() as u64);
            if bytes > left {
                return Some(Finding {
                    subject: Subject::Mcp {
                        server: server_index,
                        tool: tool_index,
                    },
                    problem: Problem::Definitions(DefinitionProblem::McpSchemaTooLarge {
                        server: server.name.clone(),
                        tool: tool.name.clone(),
                        bytes,
                        limit,
                    }),
                });
            }
            left -= bytes;
        }
    }
    None
}

/// What an MCP tool's input schema is, when it is not an object schema: a value of another
/// type, a `type` other than `object`, or `properties` that is not a table. Passed on, it was
/// sent as it was (a request the provider refuses) or, in Gemini's form, dropped without a
/// word.
fn not_an_object_schema(schema: &Value) -> Option<String> {
    let Some(object) = schema.as_object() else {
        return Some(crate::load::schema_check::json_type(schema).to_string());
    };
    // Anthropic requires the top level's `type`, and OpenAI refuses a schema without one.
    match object.get("type") {
        None => return Some("a schema with no `type`".into()),
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => return Some(format!("of type {other}")),
    }
    match object.get("properties") {
        None | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "an object whose `properties` is {}",
            crate::load::schema_check::json_type(other)
        )),
    }
}

/// The first place in an MCP tool's input schema (below its top level, which
/// `not_an_object_schema` has looked at) for which the dialect's provider refuses the whole
/// request, and what is wrong there. A server's listing is not the workspace's to fix, and one
/// refused tool would fail every request of the agent: the tool is left out instead. Gemini's
/// form drops what its mapping cannot carry (a `required` or `type` of the wrong shape), so
/// only what survives the mapping counts there; an object without `properties` is found on
/// the mapped schema, in `write`.
fn refused_within(
    dialect: Dialect,
    schema: &Value,
    at: String,
    depth: usize,
) -> Option<(String, SchemaFault)> {
    // As deep as any schema a provider takes: past it, nothing was looked into and the
    // rest was sent as it was (an error 70 levels down reached the provider); the tool is
    // left out instead.
    if depth > 64 || at.len() > 1024 {
        return Some((at, SchemaFault::TooDeep));
    }
    let object = match schema {
        Value::Object(object) => object,
        // JSON Schema's `true` and `false`; Gemini's schema is a message with fields, which
        // takes neither.
        Value::Bool(_) if dialect != Dialect::Gemini => return None,
        other => {
            let found = crate::load::schema_check::json_type(other);
            return Some((at, SchemaFault::NotASchema { found }));
        }
    };
    let malformed = |keyword: &'static str, value: &Value| {
        Some((
            at.clone(),
            SchemaFault::Malformed {
                keyword,
                found: crate::load::schema_check::json_type(value),
            },
        ))
    };
    let names = |value: &Value| {
        value
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string))
    };
    if dialect != Dialect::Gemini {
        if let Some(required) = object.get("required")
            && !names(required)
        {
            return malformed("required", required);
        }
        if let Some(kind) = object.get("type")
            && !(kind.is_string() || names(kind))
        {
            return malformed("type", kind);
        }
    }
    if is_array(schema) && !object.contains_key("items") && dialect != Dialect::Anthropic {
        return Some((at, SchemaFault::ArrayWithoutItems));
    }
    let join = |name: &str| {
        if at.is_empty() {
            name.to_string()
        } else {
            format!("{at}.{name}")
        }
    };
    match object.get("properties") {
        None => {}
        Some(Value::Object(properties)) => {
            for (name, inner) in properties {
                if let Some(found) = refused_within(dialect, inner, join(name), depth + 1) {
                    return Some(found);
                }
            }
        }
        Some(_) if dialect == Dialect::Gemini => {}
        Some(other) => return malformed("properties", other),
    }
    match object.get("items") {
        None => {}
        Some(Value::Array(positions)) => {
            for position in positions {
                if let Some(found) = refused_within(dialect, position, format!("{at}[]"), depth + 1)
                {
                    return Some(found);
                }
            }
        }
        Some(items) => {
            if let Some(found) = refused_within(dialect, items, format!("{at}[]"), depth + 1) {
                return Some(found);
            }
        }
    }
    // Schemas the mapping to Gemini's form drops, which the other providers check.
    if dialect != Dialect::Gemini {
        for keyword in ["additionalProperties", "not"] {
            if let Some(inner) = object.get(keyword)
                && let Some(found) = refused_within(dialect, inner, join(keyword), depth + 1)
            {
                return Some(found);
            }
        }
        for keyword in ["$defs", "definitions"] {
            match object.get(keyword) {
                None => {}
                Some(Value::Object(defined)) => {
                    for (name, inner) in defined {
                        let place = join(&format!("{keyword}.{name}"));
                        if let Some(found) = refused_within(dialect, inner, place, depth + 1) {
                            return Some(found);
                        }
                    }
                }
                Some(other) => return malformed(keyword, other),
            }
        }
    }
    // Gemini's mapping drops `oneOf` and `allOf`, and makes `properties` of another shape
    // an object without properties (found in `write`).
    let choices: &[&'static str] = if dialect == Dialect::Gemini {
        &["anyOf"]
    } else {
        &["anyOf", "oneOf", "allOf"]
    };
    for &keyword in choices {
        match object.get(keyword) {
            None => {}
            Some(Value::Array(choices)) => {
                for choice in choices {
                    if let Some(found) = refused_within(dialect, choice, at.clone(), depth + 1) {
                        return Some(found);
                    }
                }
            }
            // Gemini's mapping makes an `anyOf` that is no list an empty one.
            Some(other) if dialect != Dialect::Gemini => return malformed(keyword, other),
            Some(_) => {}
        }
    }
    None
}

/// `Some(too_long)` when the provider rejects the name.
fn rejected(dialect: Dialect, name: &str) -> Option<bool> {
    if name.chars().count() > dialect.max_name_len() {
        Some(true)
    } else if name.is_empty() || !dialect.accepts_name(name) {
        Some(false)
    } else {
        None
    }
}

fn of_tool(tool: &CompiledTool, findings: &mut Vec<Finding>) -> Neutral {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for parameter in &tool.parameters {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::from(parameter.kind.as_str()));
        let description = parameter.instruction.trim();
        if !description.is_empty() {
            schema.insert("description".into(), Value::from(description));
        }
        for (key, value) in parameter.schema.iter() {
            schema.insert(key.to_string(), value.clone());
        }
        // The parameter itself, and any array its `properties` or `items` hold, at any depth
        // (`meta.labels`, `rows[]`).
        let schema = Value::Object(schema);
        let mut bare = Vec::new();
        arrays_without_items_in(&schema, &parameter.name, &mut bare);
        for path in bare {
            findings.push(Finding {
                subject: Subject::Tool {
                    id: tool.id.clone(),
                    parameter: Some(parameter.name.clone()),
                },
                problem: Problem::Definitions(DefinitionProblem::ArrayWithoutItems {
                    tool: tool.name.clone(),
                    parameter: path,
                }),
            });
        }
        if parameter.required {
            required.push(Value::from(parameter.name.as_str()));
        }
        properties.insert(parameter.name.clone(), schema);
    }
    Neutral {
        name: tool.name.clone(),
        description: tool.description.trim().to_string(),
        schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
        }),
        subject: Subject::Tool {
            id: tool.id.clone(),
            parameter: None,
        },
        spec: tool.from_family.then(|| tool.spec.clone()),
        prefix: 0,
    }
}

fn write(dialect: Dialect, tools: Vec<Neutral>, findings: &mut Vec<Finding>) -> Value {
    match dialect {
        Dialect::Openai => Value::Array(
            tools
                .into_iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "strict": false,
                            "parameters": closed(tool.schema, &tool.subject),
                        },
                    })
                })
                .collect(),
        ),
        Dialect::OpenaiResponses => Value::Array(
            tools
                .into_iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": closed(tool.schema, &tool.subject),
                        "strict": false,
                    })
                })
                .collect(),
        ),
        Dialect::Anthropic => Value::Array(
            tools
                .into_iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.schema,
                    })
                })
                .collect(),
        ),
        Dialect::Gemini => {
            let declarations: Vec<Value> = tools
                .into_iter()
                .filter_map(|tool| {
                    let mut dropped = Vec::new();
                    let parameters = openapi(&tool.schema, &mut dropped);
                    // Gemini refuses an `OBJECT` with no `properties` (a free-form table of
                    // arguments), at any depth: said at the parameter it is part of.
                    let mut open_objects = Vec::new();
                    if let Some(properties) =
                        parameters.get("properties").and_then(Value::as_object)
                    {
                        for (parameter, schema) in properties {
                            open_objects_in(schema, parameter, parameter, &mut open_objects);
                        }
                    }
                    // An MCP tool with one would fail every request: it is left out.
                    if let (Subject::Mcp { .. }, Some((_, path))) =
                        (&tool.subject, open_objects.first())
                    {
                        findings.push(Finding {
                            subject: tool.subject.clone(),
                            problem: Problem::Definitions(DefinitionProblem::McpSchemaRefused {
                                name: tool.name.clone(),
                                dialect: dialect.name(),
                                at: path.clone(),
                                fault: SchemaFault::ObjectWithoutProperties,
                            }),
                        });
                        return None;
                    }
                    dropped.sort();
                    dropped.dedup();
                    // One warning per parameter that lost a keyword, at that parameter (a
                    // keyword of the schema as a whole, at the tool).
                    let mut by_parameter: std::collections::BTreeMap<Option<String>, Vec<String>> =
                        std::collections::BTreeMap::new();
                    for Dropped { parameter, keyword } in dropped {
                        by_parameter.entry(parameter).or_default().push(keyword);
                    }
                    for (parameter, keywords) in by_parameter {
                        let subject = match (&tool.subject, parameter) {
                            (Subject::Tool { id, .. }, Some(parameter)) => Subject::Tool {
                                id: id.clone(),
                                parameter: Some(parameter),
                            },
                            (subject, _) => subject.clone(),
                        };
                        findings.push(Finding {
                            subject,
                            problem: Problem::Definitions(DefinitionProblem::KeywordsDropped {
                                tool: tool.name.clone(),
                                dialect: dialect.name(),
                                keywords,
                            }),
                        });
                    }
                    for (parameter, path) in open_objects {
                        let subject = match &tool.subject {
                            Subject::Tool { id, .. } => Subject::Tool {
                                id: id.clone(),
                                parameter: Some(parameter),
                            },
                            subject => subject.clone(),
                        };
                        findings.push(Finding {
                            subject,
                            problem: Problem::Definitions(
                                DefinitionProblem::ObjectWithoutProperties {
                                    tool: tool.name.clone(),
                                    parameter: path,
                                },
                            ),
                        });
                    }
                    // Gemini rejects an object schema without properties: a tool that takes
                    // no arguments declares no parameters.
                    let empty = parameters
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty);
                    Some(if empty {
                        json!({ "name": tool.name, "description": tool.description })
                    } else {
                        json!({
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": parameters,
                        })
                    })
                })
                .collect();
            json!([{ "functionDeclarations": declarations }])
        }
    }
}

/// A prompt tool's arguments object closed to other keys, as OpenAI's function calling
/// expects: promptc knows every argument it takes. An MCP tool's schema is the server's,
/// passed as it is: one that leaves its arguments open (`{"type": "object"}`) takes
/// arguments it does not list, and closing it would tell the model it takes none.
fn closed(mut schema: Value, subject: &Subject) -> Value {
    if matches!(subject, Subject::Tool { .. })
        && let Some(object) = schema.as_object_mut()
        && !object.contains_key("additionalProperties")
    {
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    schema
}

/// The keywords of Gemini's `Schema` (an OpenAPI 3.0 subset).
const OPENAPI_KEYWORDS: [&str; 22] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// JSON Schema as Gemini's OpenAPI subset: upper-case type names, `nullable` for a `null`
/// type, and no keyword it does not know (collected in `dropped`).
fn openapi(schema: &Value, dropped: &mut Vec<Dropped>) -> Value {
    openapi_within(schema, None, dropped)
}

/// A keyword Gemini's subset has no place for, and the parameter (the top-level property)
/// it was found under, so the warning can point at that parameter.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Dropped {
    parameter: Option<String>,
    keyword: String,
}

/// Whether Gemini takes `format` for a schema of `kind`: `float` and `double` for numbers,
/// `int32` and `int64` for integers, `enum` and `date-time` for text.
fn gemini_format(kind: Option<&Value>, format: &Value) -> bool {
    let allowed: &[&str] = match kind.and_then(Value::as_str) {
        Some("number") => &["float", "double"],
        Some("integer") => &["int32", "int64"],
        Some("string") => &["enum", "date-time"],
        _ => &[],
    };
    format
        .as_str()
        .is_some_and(|format| allowed.contains(&format))
}

fn openapi_within(schema: &Value, parameter: Option<&str>, dropped: &mut Vec<Dropped>) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let drop = |dropped: &mut Vec<Dropped>, keyword: &str| {
        dropped.push(Dropped {
            parameter: parameter.map(String::from),
            keyword: keyword.to_string(),
        });
    };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "type" => {
                let (kinds, nullable): (Vec<&str>, bool) = match value {
                    Value::Array(kinds) => (
                        kinds
                            .iter()
                            .filter_map(Value::as_str)
                            .filter(|kind| *kind != "null")
                            .collect(),
                        kinds.iter().any(|kind| kind == "null"),
                    ),
                    other => {
                        let name = other.as_str();
                        (
                            name.filter(|kind| *kind != "null").into_iter().collect(),
                            name == Some("null"),
                        )
                    }
                };
                // A name that is no JSON Schema type (`str`), or no name at all (`type: 5`,
                // `type: []`), is refused by Gemini: dropped, said.
                const TYPES: [&str; 6] =
                    ["string", "number", "integer", "boolean", "array", "object"];
                let (kinds, unknown): (Vec<&str>, Vec<&str>) =
                    kinds.into_iter().partition(|kind| TYPES.contains(kind));
                for kind in unknown {
                    drop(dropped, &format!("type (`{kind}`)"));
                }
                let named = match value {
                    Value::String(_) => true,
                    Value::Array(items) => items.iter().any(Value::is_string),
                    _ => false,
                };
                if !named {
                    drop(dropped, "type (no type's name)");
                }
                match kinds.as_slice() {
                    [] => {}
                    [kind] => {
                        out.insert("type".into(), Value::from(kind.to_ascii_uppercase()));
                    }
                    // Several types are a choice: the subset spells it `anyOf`, one type each.
                    several => {
                        let choices: Vec<Value> = several
                            .iter()
                            .map(|kind| json!({ "type": kind.to_ascii_uppercase() }))
                            .collect();
                        out.insert("anyOf".into(), Value::Array(choices));
                    }
                }
                if nullable {
                    out.insert("nullable".into(), Value::Bool(true));
                }
            }
            "properties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| {
                        let within = parameter.unwrap_or(name);
                        (
                            name.clone(),
                            openapi_within(property, Some(within), dropped),
                        )
                    })
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" => match value {
                // A tuple (a schema per position) has no form in the subset: each position's
                // schema becomes one choice for every item, and the warning says so.
                Value::Array(positions) => {
                    drop(dropped, "items (a schema per position)");
                    let choices: Vec<Value> = positions
                        .iter()
                        .map(|position| openapi_within(position, parameter, dropped))
                        .collect();
                    out.insert(key.clone(), json!({ "anyOf": choices }));
                }
                single => {
                    out.insert(key.clone(), openapi_within(single, parameter, dropped));
                }
            },
            "anyOf" => {
                let choices: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|choice| openapi_within(choice, parameter, dropped))
                    .collect();
                out.insert(key.clone(), Value::Array(choices));
            }
            // Gemini's `enum` lists text only, and it refuses any other list.
            "enum"
                if !value
                    .as_array()
                    .is_some_and(|values| values.iter().all(Value::is_string)) =>
            {
                drop(dropped, "enum (values that are not text)");
            }
            // Gemini takes only the formats its subset names for the type, and refuses
            // the request for any other (`uri`, `email`).
            "format" if !gemini_format(object.get("type"), value) => {
                let format = value.as_str().unwrap_or("?");
                drop(dropped, &format!("format (`{format}`)"));
            }
            known if OPENAPI_KEYWORDS.contains(&known) => {
                out.insert(key.clone(), value.clone());
            }
            unknown => drop(dropped, unknown),
        }
    }
    // Gemini refuses the request for a required name no property has (`required[0]:
    // property is not defined`), or a `required` that is no list of names: such names
    // are dropped, said.
    if let Some(required) = out.get("required") {
        let names = required.as_array().map(|names| {
            names
                .iter()
                .filter(|name| {
                    name.as_str().is_some_and(|name| {
                        out.get("properties")
                            .and_then(Value::as_object)
                            .is_some_and(|properties| properties.contains_key(name))
                    })
                })
                .cloned()
                .collect::<Vec<Value>>()
        });
        match names {
            Some(kept)
                if required
                    .as_array()
                    .is_some_and(|all| all.len() == kept.len()) => {}
            Some(kept) => {
                drop(dropped, "required (names no property has)");
                out.insert("required".into(), Value::Array(kept));
            }
            None => {
                drop(dropped, "required (not a list of names)");
                out.remove("required");
            }
        }
    }
    // An object with no required properties says nothing by listing none.
    if out
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        out.remove("required");
    }
    Value::Object(out)
}

impl Compiler<'_> {
    /// The dialect of a request's tool definitions: `--dialect`, else the first rule of
    /// `tool_definitions.dialects` that holds for the context, else the default.
    pub fn dialect(&self, request: &Request, family: &str) -> Result<Dialect, CompileError> {
        if let Some(dialect) = request.dialect {
            return Ok(dialect);
        }
        let workspace = self.workspace;
        let settings = &workspace.settings().tool_definitions;
        if settings.dialects.is_empty() {
            return Ok(settings.dialect);
        }
        let mut diagnostics = Diagnostics::default();
        let mut scope = Scope::for_routing(&request.context, &workspace.settings().context_fields);
        // The variant is chosen by now: a rule may name its family (`family == 'gpt'`).
        scope.insert_fact(crate::namespace::FAMILY, minijinja::Value::from(family));
        let fuel = self.conditions().fuel();
        self.insert_predicates(&mut scope, &fuel, &mut diagnostics);
        let values = scope.values();
        for (index, rule) in settings.dialects.iter().enumerate() {
            let span = workspace
                .manifest
                .value_span(&format!("/tool_definitions/dialects/{index}/when"));
            match self.conditions.evaluate(&rule.when, &values, span, &fuel) {
                Ok(true) => return Ok(rule.dialect),
                Ok(false) => {}
                Err(diagnostic) => {
                    diagnostics.push(diagnostic);
                    return Err(CompileError::Diagnostics(diagnostics));
                }
            }
        }
        Ok(settings.dialect)
    }

    /// For a variant with native tool calls: its dialect, its tool definitions, and what
    /// was found writing them (errors fail the compile; warnings are for `validate`),
    /// shared with the compiles that ask for the same. `context_json` is the request's
    /// context written out, when the caller has it.
    pub(crate) fn tool_definitions(
        &self,
        request: &Request,
        variant: &EffectiveVariant,
        tools: &[CompiledTool],
        context_json: Option<&[u8]>,
    ) -> Result<Option<Arc<Made>>, CompileError> {
        if variant.variant.native_tools != Some(true) {
            return Ok(None);
        }
        // The definitions are a function of the dialect asked for, the context (its MCP
        // servers, and what the dialect rules read) and the tools: an agent asks for the same
        // ones request after request, and writing them takes longer than the compile.
        let written = match context_json {
            Some(written) => Some(std::borrow::Cow::Borrowed(written)),
            None => serde_json::to_vec(&request.context)
                .ok()
                .map(std::borrow::Cow::Owned),
        };
        let key = written.map(|context| {
            let mut key = tools_key(tools, context.len());
            match request.dialect {
                Some(dialect) => {
                    key.push(1);
                    write_bytes(dialect.name().as_bytes(), &mut key);
                }
                // The rules may read the family as well as the context.
                None => {
                    key.push(0);
                    write_bytes(variant.family().as_bytes(), &mut key);
                }
            }
            key.extend_from_slice(&context);
            key.into_boxed_slice()
        });
        if let Some(made) = key.as_ref().and_then(|key| self.definitions.get(key)) {
            return Ok(Some(made));
        }
        // Beyond the dialect, the definitions read only the context's MCP servers (what
        // `build` reads of them): the contexts of a matrix mostly differ elsewhere, and
        // share them.
        let dialect = self.dialect(request, variant.family())?;
        let by_servers = serde_json::to_vec(&servers_read(&request.context))
            .ok()
            .map(|servers| {
                let mut key = tools_key(tools, servers.len());
                write_bytes(dialect.name().as_bytes(), &mut key);
                key.extend_from_slice(&servers);
                key.into_boxed_slice()
            });
        let made = match by_servers
            .as_ref()
            .and_then(|by_servers| self.definitions_by_servers.get(by_servers))
        {
            Some(made) => made,
            None => {
                let made = Arc::new(self.tool_definitions_afresh(request, dialect, tools));
                if let Some(by_servers) = by_servers {
                    let bytes = by_servers.len() + held_bytes(&made.1);
                    self.definitions_by_servers
                        .insert(by_servers, Arc::clone(&made), bytes);
                }
                made
            }
        };
        if let Some(key) = key {
            // The key, and the definitions as they are held (a copy of every schema): counted
            // again for each context that shares them, as each entry may be what keeps them
            // once the other memo has let them go.
            let bytes = key.len() + held_bytes(&made.1);
            self.definitions.insert(key, Arc::clone(&made), bytes);
        }
        Ok(Some(made))
    }

    /// What writing a compile's tool definitions found that does not stop it (a keyword a
    /// dialect drops, an MCP tool left out), placed: the warnings `validate` reports, for a
    /// single compile. The definitions are the compile's own, remembered: not made again.
    pub fn definition_warnings(&self, request: &Request, compiled: &Compiled) -> Diagnostics {
        let mut warnings = Diagnostics::default();
        let Some(variant) = self.variant(&compiled.variant) else {
            return warnings;
        };
        if let Ok(Some(made)) = self.tool_definitions(request, variant, &compiled.tools, None) {
            for finding in &made.2 {
                warnings.push(place(self.workspace, finding, &request.mcp_places));
            }
        }
        warnings
    }

    fn tool_definitions_afresh(
        &self,
        request: &Request,
        dialect: Dialect,
        tools: &[CompiledTool],
    ) -> Made {
        let settings = &self.workspace.settings().tool_definitions;
        let env = self.workspace.templates.env();
        let described = |error: minijinja::Error| match error.detail() {
            Some(detail) => format!("{}: {detail}", error.kind()),
            None => error.kind().to_string(),
        };
        // Parsed once for all the context's tools. An import whose alias is not a name
        // would panic minijinja's code generator.
        let template =
            if crate::templates::references::bad_import_aliases(&settings.mcp_name).is_empty() {
                env.template_from_str(&settings.mcp_name).map_err(described)
            } else {
                Err(crate::templates::IMPORT_NEEDS_A_NAME.to_string())
            };
        // The names spend one compile's fuel together: each render with fuel of its own let
        // a context of ten thousand tools run a costly name ten thousand times over.
        let fuel = env.fuel().unwrap_or(u64::MAX);
        let spent = std::cell::Cell::new(0u64);
        let mcp_name = |server: &str, tool: &str| {
            let template = template.as_ref().map_err(Clone::clone)?;
            // Each render may run to the fuel: together, they spend at most twice it.
            if spent.get() >= fuel {
                return Err(format!(
                    "{}: the names of the context's MCP tools spent a compile's fuel ({fuel}) \
                     together before `{server}`'s `{tool}`",
                    minijinja::ErrorKind::OutOfFuel
                ));
            }
            if let Some(spent_ms) = crate::deadline::passed() {
                return Err(format!(
                    "promptc stopped making the names of the context's MCP tools, at `{server}`'s \
                     `{tool}`, after {:.1} s of processor time, most of what its limit allows \
                     (`PROMPTC_TIME_LIMIT`)",
                    spent_ms as f64 / 1000.0
                ));
            }
            let captured = template
                .render_captured(minijinja::context! { server => server, tool => tool })
                .map_err(described)?;
            spent.set(
                spent
                    .get()
                    .saturating_add(crate::templates::model_id::used_fuel(captured.state())),
            );
            Ok(captured.output().to_string())
        };
        let (value, findings) = build(tools, &request.context, settings, dialect, &mcp_name);
        (dialect, value, findings)
    }
}

/// What [`build`] reads of a context's MCP servers, in their order (a finding names a server
/// by its place in the list): whether each counts, and of one that does, its names and tools.
fn servers_read(context: &Context) -> Vec<(bool, &str, &str, &[crate::model::McpTool])> {
    context
        .mcp_servers
        .iter()
        .map(|server| match server.counts() {
            true => (
                true,
                server.uid_or_name(),
                server.name.as_str(),
                &server.tools[..],
            ),
            false => (false, "", "", &[][..]),
        })
        .collect()
}

/// The start of a key of remembered definitions: the tools, with room for `more` bytes.
fn tools_key(tools: &[CompiledTool], more: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(more + 64 * tools.len() + 16);
    key.extend((tools.len() as u64).to_le_bytes());
    for tool in tools {
        write_tool(tool, &mut key);
    }
    key
}

/// Where a tool's description, as the family entry `spec` sees it, is written: the last spec
/// of its chain of families that sets one, else the generic spec's (also for `None`, the
/// generic spec).
fn description_pointer(tool: &crate::model::ToolSpec, spec: Option<&str>) -> String {
    let Some(spec) = spec else {
        return "/description".to_string();
    };
    crate::resolve::tool_spec::family_chain(tool, spec)
        .iter()
        .rev()
        .find(|family| {
            tool.families
                .get(**family)
                .is_some_and(|family| family.description.is_some())
        })
        .map_or_else(
            || "/description".to_string(),
            |family| {
                crate::pointer::child_pointer(
                    &crate::pointer::child_pointer("/families", family),
                    "description",
                )
            },
        )
}

/// A finding at its place: the tool spec (or its parameter), the MCP tool where a file
/// names it (`places`), else the manifest's `[tool_definitions]`.
pub fn place(workspace: &Workspace, finding: &Finding, places: &McpPlaces) -> Diagnostic {
    let manifest = &workspace.manifest;
    let settings_span = || manifest.key_span("/tool_definitions");
    let span = match &finding.subject {
        Subject::Tool { id, parameter } => match workspace.tools.get(id) {
            Some(entry) => {
                let parameter_index = parameter.as_ref().and_then(|name| {
                    entry
                        .value
                        .parameters
                        .iter()
                        .position(|p| p.name.as_deref() == Some(name.as_str()))
                });
                let about_the_name = matches!(
                    finding.problem,
                    Problem::Definitions(DefinitionProblem::PropertyNameRejected { .. })
                );
                if let Problem::Definitions(DefinitionProblem::DescriptionTooLong {
                    spec, ..
                }) = &finding.problem
                {
                    return Diagnostic::new(
                        finding.problem.clone(),
                        entry.value_span(&description_pointer(&entry.value.spec, spec.as_deref())),
                    );
                }
                match parameter_index {
                    Some(index) if about_the_name => {
                        entry.value_span(&format!("/parameters/{index}/name"))
                    }
                    // The parameter's `type` (what the finding is about), else the entry.
                    Some(index) if entry.value.parameters[index].kind.is_some() => {
                        entry.value_span(&format!("/parameters/{index}/type"))
                    }
                    Some(index) => entry.value_span(&format!("/parameters/{index}")),
                    None if entry.value.name.is_some() => entry.value_span("/name"),
                    None => entry.value_span("/id"),
                }
            }
            None => settings_span(),
        },
        Subject::Mcp { server, tool } => match places.name(*server, *tool) {
            Some(span) => span,
            // A context given as data: the naming rule, which is what can change.
            None if manifest.document.writes("/tool_definitions/mcp_name") => {
                manifest.value_span("/tool_definitions/mcp_name")
            }
            None => settings_span(),
        },
        Subject::Settings => manifest.value_span("/tool_definitions/mcp_name"),
    };
    Diagnostic::new(finding.problem.clone(), span)
}

/// The paths (`tags`, `meta.labels`, `rows[]`) of the arrays without `items` in a JSON
/// Schema, the schema itself first.
fn arrays_without_items_in(schema: &Value, path: &str, out: &mut Vec<String>) {
    // Deep enough for any schema a provider takes; a deeper one is not looked into.
    if path.len() > 1024 {
        return;
    }
    let is_array = is_array(schema);
    match schema.get("items") {
        Some(items @ Value::Object(_)) => arrays_without_items_in(items, &format!("{path}[]"), out),
        Some(Value::Array(positions)) => {
            for position in positions {
                arrays_without_items_in(position, &format!("{path}[]"), out);
            }
        }
        Some(_) => {}
        None if is_array => out.push(path.to_string()),
        None => {}
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, inner) in properties {
            arrays_without_items_in(inner, &format!("{path}.{name}"), out);
        }
    }
}

/// Whether a schema's `type` names an array, alone or among others.
fn is_array(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "array",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "array"),
        _ => false,
    }
}

/// The objects without `properties` in a Gemini schema (`OBJECT` types), each as the top-level
/// parameter it is part of and its path (`options`, `options.deep`, `list[]`).
fn open_objects_in(schema: &Value, parameter: &str, path: &str, out: &mut Vec<(String, String)>) {
    open_objects_within(schema, parameter, path, 0, out);
}

fn open_objects_within(
    schema: &Value,
    parameter: &str,
    path: &str,
    depth: usize,
    out: &mut Vec<(String, String)>,
) {
    // Deep enough for any schema a provider takes; a deeper one is not looked into.
    if path.len() > 1024 || depth > 64 {
        return;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("OBJECT") => match schema.get("properties").and_then(Value::as_object) {
            Some(properties) if !properties.is_empty() => {
                for (name, inner) in properties {
                    let path = format!("{path}.{name}");
                    open_objects_within(inner, parameter, &path, depth + 1, out);
                }
            }
            _ => out.push((parameter.to_string(), path.to_string())),
        },
        Some("ARRAY") => {
            if let Some(items) = schema.get("items") {
                open_objects_within(items, parameter, &format!("{path}[]"), depth + 1, out);
            }
        }
        _ => {}
    }
    // Each choice of several (a JSON Schema type list becomes one), at the same place.
    for choice in schema
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        open_objects_within(choice, parameter, path, depth + 1, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp_tool(description: String) -> Neutral {
        Neutral {
            name: "maps__geocode".into(),
            description,
            schema: json!({ "type": "object" }),
            subject: Subject::Mcp { server: 0, tool: 0 },
            spec: None,
            prefix: 0,
        }
    }

    /// The limit counts characters, as the provider does, not bytes: a description of
    /// two-byte characters is cut after its 1,023rd, with `…` making it 1,024, and one at the
    /// limit is kept whole.
    #[test]
    fn an_mcp_description_is_cut_to_the_limit_in_characters() {
        let mut findings = Vec::new();
        let mut tool = mcp_tool("é".repeat(1500));
        described_within(&mut tool, Dialect::Openai, 1024, &mut findings);
        assert_eq!(tool.description.chars().count(), 1024);
        assert!(tool.description.ends_with("é…"), "{}", tool.description);
        assert!(matches!(
            findings.as_slice(),
            [Finding {
                problem: Problem::Definitions(DefinitionProblem::McpDescriptionCut {
                    length: 1500,
                    max: 1024,
                    ..
                }),
                ..
            }]
        ));

        let mut findings = Vec::new();
        let mut tool = mcp_tool("é".repeat(1024));
        described_within(&mut tool, Dialect::Openai, 1024, &mut findings);
        assert_eq!(tool.description, "é".repeat(1024));
        assert!(findings.is_empty());
    }

    /// Gemini refuses a required name no property has: it is dropped and said, at any
    /// depth; names that have a property stay.
    #[test]
    fn required_names_without_a_property_are_dropped_for_gemini() {
        let mut dropped = Vec::new();
        let schema = json!({
            "type": "object",
            "properties": {
                "title": { "type": "string" },
                "meta": {
                    "type": "object",
                    "properties": { "a": { "type": "string" } },
                    "required": "a",
                },
            },
            "required": ["title", "missing"],
        });
        let converted = openapi(&schema, &mut dropped);
        assert_eq!(converted["required"], json!(["title"]), "{converted}");
        assert_eq!(
            converted["properties"]["meta"].get("required"),
            None,
            "{converted}"
        );
        let mut keywords: Vec<&str> = dropped.iter().map(|d| d.keyword.as_str()).collect();
        keywords.sort();
        assert_eq!(
            keywords,
            [
                "required (names no property has)",
                "required (not a list of names)"
            ]
        );
        let mut types = Vec::new();
        let converted = openapi(
            &json!({"type": "object", "properties": {
                "a": {"type": 5}, "b": {"type": []}, "c": {"type": "str"},
                "d": {"type": ["string", "null"]}, "e": {"type": "null"},
            }}),
            &mut types,
        );
        let mut keywords: Vec<(Option<&str>, &str)> = types
            .iter()
            .map(|d| (d.parameter.as_deref(), d.keyword.as_str()))
            .collect();
        keywords.sort();
        assert_eq!(
            keywords,
            [
                (Some("a"), "type (no type's name)"),
                (Some("b"), "type (no type's name)"),
                (Some("c"), "type (`str`)"),
            ],
            "{converted}"
        );
        assert_eq!(
            converted["properties"]["d"],
            json!({"type": "STRING", "nullable": true})
        );
        assert_eq!(converted["properties"]["e"], json!({"nullable": true}));
        let mut none = Vec::new();
        let kept = openapi(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            &mut none,
        );
        assert_eq!(kept["required"], json!(["a"]));
        assert!(none.is_empty());
    }

    #[test]
    fn json_schema_becomes_the_openapi_subset() {
        let mut dropped = Vec::new();
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "tags": { "type": "array", "items": { "type": ["string", "null"] } },
                "mode": { "type": "string", "enum": ["a", "b"], "const": "a" },
            },
            "required": [],
            "additionalProperties": false,
        });
        assert_eq!(
            openapi(&schema, &mut dropped),
            json!({
                "type": "OBJECT",
                "properties": {
                    "tags": { "type": "ARRAY", "items": { "type": "STRING", "nullable": true } },
                    "mode": { "type": "STRING", "enum": ["a", "b"] },
                },
            })
        );
        dropped.sort();
        let dropped: Vec<(Option<&str>, &str)> = dropped
            .iter()
            .map(|d| (d.parameter.as_deref(), d.keyword.as_str()))
            .collect();
        assert_eq!(
            dropped,
            [
                (None, "$schema"),
                (None, "additionalProperties"),
                (Some("mode"), "const")
            ]
        );
    }

    // `type = ["string", "integer"]` became `"STRING"` alone, and a tuple's `items` list went
    // through as it was, with types Gemini does not read.
    #[test]
    fn several_types_and_tuples_keep_what_they_allow() {
        let mut dropped = Vec::new();
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["string", "integer", "null"] },
                "e": { "type": "array", "items": [{ "type": "string" }, { "type": "number" }] },
            },
        });
        assert_eq!(
            openapi(&schema, &mut dropped),
            json!({
                "type": "OBJECT",
                "properties": {
                    "a": { "anyOf": [{ "type": "STRING" }, { "type": "INTEGER" }], "nullable": true },
                    "e": {
                        "type": "ARRAY",
                        "items": { "anyOf": [{ "type": "STRING" }, { "type": "NUMBER" }] }
                    },
                },
            })
        );
        assert_eq!(
            dropped,
            [Dropped {
                parameter: Some("e".into()),
                keyword: "items (a schema per position)".into()
            }]
        );
    }

    #[test]
    fn names_are_checked_per_dialect() {
        assert_eq!(rejected(Dialect::Openai, "read_file"), None);
        assert_eq!(rejected(Dialect::Openai, "files.read"), Some(false));
        assert_eq!(rejected(Dialect::Gemini, "files.read"), None);
        assert_eq!(rejected(Dialect::Gemini, "1tool"), Some(false));
        assert_eq!(rejected(Dialect::Anthropic, &"a".repeat(65)), Some(true));
        assert_eq!(rejected(Dialect::Anthropic, &"a".repeat(64)), None);
        assert_eq!(rejected(Dialect::Gemini, &"a".repeat(65)), Some(true));
    }
}
