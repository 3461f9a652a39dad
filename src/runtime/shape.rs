//! What a request may hold: data that JSON carries as written, nested fewer than
//! [`REQUEST_DEPTH`] levels. What a request holds besides is refused at its place (its path
//! from the request's top), rather than changed (`NaN` made `null`) or refused with no place.
//!
//! The Python package finds such a value while it reads its language's values, and names it
//! with [`Failure::not_data`]. The Node package hands over JSON text, which JSON.stringify
//! makes: it writes such a value as a [`NOT_DATA_MARK`] table in its place, which reading the
//! request finds.

use serde_json::Value;

use super::Failure;
use crate::problem::RequestProblem;

/// The levels of lists and tables a request may not reach, the request itself counted:
/// serde_json's limit for JSON text, far past any real context. Following a deeper value
/// would overflow the stack, and one that holds itself never ends.
pub const REQUEST_DEPTH: usize = 128;

/// The key of the table the Node package writes in place of a value JSON cannot carry; its
/// value names the value's kind (`bigint`, `function`, `symbol`), the number (`NaN`,
/// `Infinity`), or [`TOO_DEEP`].
pub const NOT_DATA_MARK: &str = "\u{0}promptc-not-data";

/// A [`NOT_DATA_MARK`] for lists and tables nested too deep, or holding themselves.
pub const TOO_DEEP: &str = "too-deep";

/// One step from a request's top towards one of its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A value a request cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotData {
    /// A value of a kind that is no data, as its language names the kind (`bigint`, `set`).
    Kind(String),
    /// A number JSON cannot carry as written: `NaN`, an infinity, an integer past 64 bits.
    Number(String),
    /// A table key that is not a string, by the kind of the key.
    Key(String),
    /// Lists and tables nested [`REQUEST_DEPTH`] levels deep, or holding themselves.
    TooDeep,
}

impl Failure {
    /// A request holding `what` at `path`.
    pub fn not_data(path: &[Step], what: NotData) -> Failure {
        let at = written(path, what == NotData::TooDeep);
        Failure::unlocated(match what {
            NotData::TooDeep => RequestProblem::NestedTooDeep {
                at,
                limit: REQUEST_DEPTH,
            },
            NotData::Kind(kind) => RequestProblem::NotDataKind { at, kind },
            NotData::Number(number) => RequestProblem::NotDataNumber { at, number },
            NotData::Key(kind) => RequestProblem::NotDataKey { at, kind },
        })
    }
}

/// How many steps of a path too deep are written: enough to name the MCP server and tool
/// (`context.mcp_servers[0].tools[2].input_schema`) and a little of what is below.
const STEPS_SHOWN: usize = 8;

/// A path as a message writes it: `context.mcp_servers[0].tools`, a key that is no name
/// quoted (`extra["a b"]`), empty for the request itself; cut after [`STEPS_SHOWN`] steps
/// when `cut`.
fn written(path: &[Step], cut: bool) -> String {
    let mut out = String::new();
    let shown = if cut { STEPS_SHOWN } else { usize::MAX };
    for step in path.iter().take(shown) {
        match step {
            Step::Key(key) if is_name(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Key(key) => {
                out.push('[');
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(']');
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    if path.len() > shown {
        out.push('…');
    }
    out
}

fn is_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The first value of `value` a request cannot carry: a [`NOT_DATA_MARK`] table, or lists
/// and tables nested [`REQUEST_DEPTH`] levels deep.
pub(super) fn check(value: &Value) -> Result<(), Failure> {
    let mut path = Vec::new();
    match find(value, &mut path, 1) {
        Some(what) => Err(Failure::not_data(&path, what)),
        None => Ok(()),
    }
}

fn find(value: &Value, path: &mut Vec<Step>, level: usize) -> Option<NotData> {
    let items: Box<dyn Iterator<Item = (Step, &Value)>> = match value {
        Value::Object(fields) => {
            if fields.len() == 1
                && let Some(Value::String(kind)) = fields.get(NOT_DATA_MARK)
            {
                return Some(marked(kind));
            }
            Box::new(
                fields
                    .iter()
                    .map(|(key, item)| (Step::Key(key.clone()), item)),
            )
        }
        Value::Array(items) => Box::new(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| (Step::Index(index), item)),
        ),
        _ => return None,
    };
    if level >= REQUEST_DEPTH {
        return Some(NotData::TooDeep);
    }
    for (step, item) in items {
        path.push(step);
        if let Some(found) = find(item, path, level + 1) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn marked(kind: &str) -> NotData {
    match kind {
        TOO_DEEP => NotData::TooDeep,
        "NaN" | "Infinity" | "-Infinity" => NotData::Number(kind.to_string()),
        _ => NotData::Kind(kind.to_string()),
    }
}

/// The path to the list or table that reaches [`REQUEST_DEPTH`] levels in JSON `text`, which
/// is JSON up to there (serde_json stopped reading it there).
pub(super) fn too_deep_in(text: &str) -> Vec<Step> {
    // Each open list or table: for a table, the key last read; for a list, the index.
    let mut open: Vec<Step> = Vec::new();
    let mut expecting_key = false;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                let start = at;
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                if expecting_key && let Some(Step::Key(key)) = open.last_mut() {
                    let quoted = text.get(start..=at.min(bytes.len() - 1)).unwrap_or("\"\"");
                    *key = serde_json::from_str(quoted).unwrap_or_default();
                    expecting_key = false;
                }
            }
            opening @ (b'{' | b'[') => {
                if open.len() + 1 >= REQUEST_DEPTH {
                    break;
                }
                open.push(if opening == b'{' {
                    Step::Key(String::new())
                } else {
                    Step::Index(0)
                });
                expecting_key = opening == b'{';
            }
            b'}' | b']' => {
                open.pop();
                expecting_key = false;
            }
            b',' => match open.last_mut() {
                Some(Step::Index(index)) => *index += 1,
                Some(Step::Key(_)) => expecting_key = true,
                None => {}
            },
            _ => {}
        }
        at += 1;
    }
    open
}
