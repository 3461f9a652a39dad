//! An agent's request as data, and the context it names or carries.

use std::path::PathBuf;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use super::Failure;
use super::shape::NotData;
use crate::compile::{Request, Selection};
use crate::diagnostic::Diagnostics;
use crate::load::entry::Entry;
use crate::load::mcp_places::McpPlaces;
use crate::model::{Context, Dialect, Model};
use crate::problem::RequestProblem;
use crate::source::Sources;
use crate::workspace::Workspace;

/// What an agent asks for. Every field is optional: with none, the manifest's default
/// context compiles for the family routing picks for its model.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentRequest {
    /// The model in hand: routing picks the family for it, and it becomes the context's
    /// `model`.
    pub model: Option<Model>,
    /// A table of context fields (as in a context file: `cwd`, `mode`, `mcp_servers`, …),
    /// or the name of one of the workspace's contexts. Its `rules_from` folders are the
    /// caller's and may lie anywhere; relative ones are taken from the current directory.
    pub context: Option<Value>,
    /// Compile this family instead of the routed one.
    pub family: Option<String>,
    /// Compile this variant (an id or `family@version`) instead of the routed one; given
    /// alone, without `family`, `label` or `tag`.
    pub variant: Option<String>,
    /// Within the family, the version this label names.
    pub label: Option<String>,
    /// Within the family, only variants carrying this tag.
    pub tag: Option<String>,
    /// The provider shape of native tool definitions, instead of the manifest's rules; for a
    /// variant without native tools, a `dialect-unused` warning.
    pub dialect: Option<String>,
    /// Runtime placeholders that win over every other value (`--set KEY=VALUE`).
    pub set: IndexMap<String, String>,
    /// What a prompt over its variant's token budget is: a failure (`error`, the default, as
    /// in `build`), or the prompt with an `over-budget` warning (`warn`), for an agent whose
    /// user's rules files or MCP servers may make the prompt longer than the registry
    /// planned, and that would rather send it than none.
    pub over_budget: OverBudget,
}

/// See [`AgentRequest::over_budget`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverBudget {
    #[default]
    Error,
    Warn,
}

impl AgentRequest {
    /// A request from a JSON value, as the language bindings pass it; unknown keys and values
    /// of the wrong type are a failure naming them.
    pub fn from_json(value: Value) -> Result<AgentRequest, Failure> {
        super::shape::check(&value)?;
        serde_json::from_value(value).map_err(invalid_request)
    }

    /// A request from JSON text, as the Node package passes it (a JavaScript engine writes an
    /// object as JSON faster than N-API reads it field by field). The text goes through a
    /// value first, so that a problem is described as `from_json` describes it, without a
    /// position in a text the caller never wrote. A key given twice is refused, as in every
    /// JSON promptc reads, rather than the last taken.
    pub fn from_json_text(text: &str) -> Result<AgentRequest, Failure> {
        let value: Value = crate::unique_json::from_str(text).map_err(|error| {
            if error.to_string().starts_with("recursion limit exceeded") {
                Failure::not_data(&super::shape::too_deep_in(text), NotData::TooDeep)
            } else {
                invalid_request(error)
            }
        })?;
        AgentRequest::from_json(value)
    }

    /// The compiler's request, around the assembled context.
    pub(super) fn compile_request(
        &self,
        workspace: &Workspace,
        mut context: Context,
        mcp_places: McpPlaces,
    ) -> Result<Request, Failure> {
        if let Some(model) = &self.model {
            context.model = model.clone();
        }
        if self.variant.is_some() {
            let other = [
                ("family", self.family.is_some()),
                ("label", self.label.is_some()),
                ("tag", self.tag.is_some()),
            ]
            .into_iter()
            .find_map(|(name, given)| given.then_some(name));
            if let Some(other) = other {
                return Err(Failure::unlocated(RequestProblem::VariantNotAlone {
                    other,
                }));
            }
        }
        let mut selection = match (&self.family, &self.variant) {
            (Some(family), _) => Selection::family(family.clone()),
            (None, Some(variant)) => Selection::variant(variant.clone()),
            (None, None) => Selection::route(),
        };
        selection.label = self.label.clone();
        selection.tag = self.tag.clone();
        let mut request = Request::new(selection, context);
        request.set = self.set.clone();
        request
            .set_context_fields(
                &workspace.settings().context_fields,
                crate::compile::SetFrom::Request,
            )
            .map_err(|message| {
                Failure::unlocated(RequestProblem::SetValueDoesNotFit { message })
            })?;
        request.mcp_places = mcp_places;
        request.dialect = match &self.dialect {
            None => None,
            Some(name) => Some(
                Dialect::ALL
                    .into_iter()
                    .find(|dialect| dialect.name() == name)
                    .ok_or_else(|| {
                        Failure::unlocated(RequestProblem::UnknownDialect {
                            name: name.clone(),
                            known: Dialect::ALL.map(|dialect| dialect.name()).to_vec(),
                        })
                    })?,
            ),
        };
        Ok(request)
    }
}

/// The context a request compiles with, as [`context`] assembles it.
pub(super) struct Assembled {
    pub context: Context,
    /// Its name for messages: a workspace context's, else [`INLINE`].
    pub name: String,
    /// The caller's rules folders (`rules_from`).
    pub folders: Vec<PathBuf>,
    /// Where its MCP tools are written, for the problems found with them.
    pub mcp_places: McpPlaces,
}

/// The context a request compiles with; `Ok(None)` when the fields given have problems
/// (pushed to `found`).
pub(super) fn context(
    workspace: &Workspace,
    given: &AgentRequest,
    sources: &mut Sources,
    found: &mut Diagnostics,
) -> Result<Option<Assembled>, Failure> {
    let assembled = |entry: &Entry<Context>, name: &str, folders| Assembled {
        context: entry.value.clone(),
        name: name.to_string(),
        folders,
        mcp_places: McpPlaces::of_context(entry, &workspace.contexts),
    };
    let named = |name: &str| match workspace.contexts.get(name) {
        Some(entry) => Ok(Some(assembled(entry, name, Vec::new()))),
        None => Err(Failure::unlocated(RequestProblem::UnknownContext {
            name: name.to_string(),
            known: workspace.contexts.keys().cloned().collect(),
        })),
    };
    let fields = match &given.context {
        None => {
            return match &workspace.settings().default_context {
                Some(name) => named(name),
                None => Ok(Some(Assembled {
                    context: Context::default(),
                    name: INLINE.to_string(),
                    folders: Vec::new(),
                    mcp_places: McpPlaces::default(),
                })),
            };
        }
        Some(Value::String(name)) => return named(name),
        Some(Value::Object(fields)) => fields,
        Some(other) => {
            return Err(Failure::unlocated(RequestProblem::ContextNotTable {
                found: kind_of(other),
            }));
        }
    };
    let mut fields = fields.clone();
    let folders = match fields.remove("rules_from") {
        None => Vec::new(),
        Some(folders) => serde_json::from_value::<Vec<PathBuf>>(folders).map_err(|error| {
            Failure::unlocated(RequestProblem::RulesFromNotFolders {
                reason: error.to_string(),
            })
        })?,
    };
    // Pretty-printed, so that a problem's line and column point at one field.
    let text = serde_json::to_string_pretty(&fields).unwrap_or_default();
    let entry =
        crate::load::specs::context_from_text(sources, INLINE, text, &workspace.contexts, found);
    let Some(entry) = entry else {
        return Ok(None);
    };
    crate::validate::check_context(workspace, &entry, found);
    Ok(Some(assembled(&entry, INLINE, folders)))
}

/// How diagnostics name a context passed as fields.
const INLINE: &str = "<context>";

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

fn invalid_request(error: serde_json::Error) -> Failure {
    // A parse error ends with its position in the text, which the caller never wrote.
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = error.to_string();
    let message = match message.strip_suffix(&position) {
        Some(message) => message.to_string(),
        None => message,
    };
    Failure::invalid_request(message)
}
