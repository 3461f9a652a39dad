//! The names templates and conditions can use. Validation checks references against this
//! list and rendering fills it in, so both read it from here.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::model::{Context, StandardPlaceholder};

/// Names about the compile itself.
pub const FAMILY: &str = "family";
pub const VARIANT: &str = "variant";
pub const ENABLED_TOOLS: &str = "enabled_tools";
pub const TOOLS_DATA: &str = "tools";
pub const TOOLS_TEXT: &str = "TOOLS";
/// The one tool a tool-format template documents.
pub const TOOL: &str = "tool";
/// The context's MCP servers that count: not disabled, and connected.
pub const CONNECTED_MCP_SERVERS: &str = "connected_mcp_servers";

/// Names every template sees that promptc defines for the compile itself.
pub const COMPILE_NAMES: [&str; 7] = [
    FAMILY,
    VARIANT,
    ENABLED_TOOLS,
    TOOLS_DATA,
    TOOLS_TEXT,
    TOOL,
    CONNECTED_MCP_SERVERS,
];

/// The top-level fields of a context (`cwd`, `yolo`, `browser`, …).
pub fn context_fields() -> BTreeSet<String> {
    field_names(&context_shape())
}

/// A default context as JSON: every field, and the fields of its tables.
fn context_shape() -> Value {
    serde_json::to_value(Context::default()).unwrap_or(Value::Null)
}

fn field_names(shape: &Value) -> BTreeSet<String> {
    shape
        .as_object()
        .map(|fields| fields.keys().cloned().collect())
        .unwrap_or_default()
}

/// The fields of a table of the context's shape, when they are known: a map of the user's own
/// keys (`rule_toggles`) is empty in the default context, and any key below it may be there.
fn known_fields(shape: Option<&Value>) -> Option<&serde_json::Map<String, Value>> {
    shape
        .and_then(Value::as_object)
        .filter(|fields| !fields.is_empty())
}

/// The context's table of the workspace's own fields.
pub const EXTRA: &str = "extra";
/// Context fields whose keys are the user's own: any key below them is allowed (for
/// `extra`, unless the workspace declares its keys).
const FREE_TABLES: [&str; 2] = [EXTRA, "placeholders"];

/// What a template or condition may refer to.
#[derive(Clone, Debug)]
pub struct Namespace {
    names: BTreeSet<String>,
    context_shape: Value,
    /// Set when some names cannot be known (a file declaring them is invalid and was
    /// reported): any top-level name is then accepted, so nothing is blamed on the wrong file.
    open: bool,
    /// The keys of `extra` the workspace declares; `None` leaves `extra` free.
    extra_keys: Option<BTreeSet<String>>,
}

impl Namespace {
    /// Context fields, predicates and the standard names; add placeholders and slots with
    /// [`Namespace::insert`].
    pub fn new<'a>(predicates: impl IntoIterator<Item = &'a str>) -> Self {
        let context_shape = context_shape();
        let mut names = field_names(&context_shape);
        names.extend(predicates.into_iter().map(str::to_string));
        names.extend(StandardPlaceholder::ALL.map(|p| p.name().to_string()));
        names.extend([FAMILY, VARIANT, CONNECTED_MCP_SERVERS].map(str::to_string));
        Self {
            names,
            context_shape,
            open: false,
            extra_keys: None,
        }
    }

    /// What a routing `match` may read: the context's fields and the predicates, nothing of
    /// a variant (none is chosen yet).
    pub fn for_routing<'a>(predicates: impl IntoIterator<Item = &'a str>) -> Self {
        let context_shape = context_shape();
        let mut names = field_names(&context_shape);
        names.insert(CONNECTED_MCP_SERVERS.to_string());
        names.extend(predicates.into_iter().map(str::to_string));
        Self {
            names,
            context_shape,
            open: false,
            extra_keys: None,
        }
    }

    /// Accepts every top-level name from now on: used when a file that declares names is
    /// invalid.
    pub fn open(&mut self) {
        self.open = true;
    }

    /// Closes `extra` to the declared keys, when the workspace declares any.
    pub fn declare_extra<'a>(&mut self, keys: impl IntoIterator<Item = &'a String>) {
        let keys: BTreeSet<String> = keys.into_iter().cloned().collect();
        if !keys.is_empty() {
            self.extra_keys = Some(keys);
        }
    }

    pub fn insert(&mut self, name: impl Into<String>) {
        self.names.insert(name.into());
    }

    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.names.iter()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.open || self.names.contains(name)
    }

    /// Whether `name` is a table of the context whose fields are known (`browser`, `model`):
    /// a path into it can be checked. A table whose keys are the user's (`rule_toggles`, empty
    /// in the default context) is not.
    pub fn has_shape(&self, name: &str) -> bool {
        !FREE_TABLES.contains(&name) && known_fields(self.context_shape.get(name)).is_some()
    }

    /// When `path` names a table of the context's shape (`focus_chain`, `browser.viewport`),
    /// its fields that hold a boolean: a condition on the table itself holds whatever they
    /// say, as a table that has keys is true.
    pub fn table_at(&self, path: &str) -> Option<Vec<String>> {
        let mut segments = path.split('.');
        let first = segments.next()?;
        if FREE_TABLES.contains(&first) || !self.contains(first) {
            return None;
        }
        let mut shape = self.context_shape.get(first);
        for segment in segments {
            shape = known_fields(shape)?.get(segment);
        }
        let fields = known_fields(shape)?;
        Some(
            fields
                .iter()
                .filter(|(_, value)| value.is_boolean())
                .map(|(name, _)| name.clone())
                .collect(),
        )
    }

    /// Checks a dotted path (`browser.viewport.width`) against the context's shape. Returns
    /// the unknown prefix and the closest known name when it does not exist.
    pub fn check_path(&self, path: &str) -> Result<(), (String, Option<String>)> {
        let mut segments = path.split('.');
        let first = segments.next().unwrap_or_default();
        if !self.contains(first) {
            return Err((first.to_string(), closest(first, self.names.iter())));
        }
        if first == EXTRA
            && let (Some(keys), Some(key)) = (&self.extra_keys, segments.next())
            && !keys.contains(key)
        {
            return Err((
                format!("{EXTRA}.{key}"),
                closest(key, keys).map(|k| format!("{EXTRA}.{k}")),
            ));
        }
        if FREE_TABLES.contains(&first) {
            return Ok(());
        }
        let mut shape = self.context_shape.get(first);
        let mut walked = first.to_string();
        for segment in segments {
            let Some(fields) = known_fields(shape) else {
                return Ok(());
            };
            let parent = walked.clone();
            walked.push('.');
            walked.push_str(segment);
            match fields.get(segment) {
                Some(next) => shape = Some(next),
                None => {
                    let suggestion =
                        closest(segment, fields.keys()).map(|s| format!("{parent}.{s}"));
                    return Err((walked, suggestion));
                }
            }
        }
        Ok(())
    }
}

/// The most work one search for a suggestion does, in pairs of bytes compared (each candidate
/// costs its length times the name's): the candidates past it are not looked at. A search runs
/// for every unknown name a workspace writes, among every name it could have meant, and
/// without a bound thousands of each took minutes; this covers several hundred names of twenty characters.
const SUGGESTION_WORK: usize = 1 << 17;
/// Names longer than this are not compared: a typo of one is not what they are.
const SUGGESTION_BYTES: usize = 256;

/// The help for a name that is not among `known`: a near one, else all of them, sorted.
pub fn near_or(name: &str, known: &[String], what: &str) -> String {
    if let Some(near) = closest(name, known) {
        return format!("did you mean `{near}`?");
    }
    let mut names: Vec<&str> = known.iter().map(String::as_str).collect();
    names.sort_unstable();
    match names.as_slice() {
        [] => format!("there are no {what}"),
        names => format!("{what}: {}", names.join(", ")),
    }
}

/// The known name most like `name`, if one is close enough to be a likely typo. The candidates
/// are looked at in their order until [`SUGGESTION_WORK`] is done, so the answer depends on
/// the names alone.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a String>) -> Option<String> {
    if name.is_empty() || name.len() > SUGGESTION_BYTES {
        return None;
    }
    let mut work = 0usize;
    let mut best: Option<(f64, &String)> = None;
    for candidate in known {
        if candidate.len() > SUGGESTION_BYTES {
            continue;
        }
        work = work.saturating_add(name.len().saturating_mul(candidate.len().max(1)));
        if work > SUGGESTION_WORK {
            break;
        }
        // A name that differs only by case (`Plan` for `plan`) is the likeliest of all.
        // One letter changed, added, dropped or swapped (`gtp` for `gpt`) is a typo however
        // short the name, where the similarity of so few letters says little.
        let score = if candidate.eq_ignore_ascii_case(name) {
            2.0
        } else if name.len().min(candidate.len()) >= 2 && strsim::osa_distance(name, candidate) == 1
        {
            strsim::jaro_winkler(name, candidate).max(0.9)
        } else {
            strsim::jaro_winkler(name, candidate)
        };
        // The last of equally close candidates, as before the bound.
        if score > 0.85 && best.is_none_or(|(best, _)| score >= best) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate.clone())
}

/// A name as a file system that ignores case and how accented letters are encoded (macOS's
/// by default) holds it: two names of one fold are one file there. `café` written with a
/// composed `é` and with `e` and a combining accent are two files on Linux and one on macOS,
/// where a clone held only one of them and compiled other prompts.
pub fn folded(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    name.to_lowercase().nfd().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_of_the_user_s_own_keys_takes_any_key() {
        let namespace = Namespace::new(["has_mcp"]);
        assert!(namespace.check_path("rule_toggles.legacy_style").is_ok());
        assert!(!namespace.has_shape("rule_toggles"));
        assert!(namespace.has_shape("browser"));
    }

    #[test]
    fn a_name_that_differs_only_by_case_is_the_closest() {
        let known: Vec<String> = ["act", "plan", "planned"].map(String::from).to_vec();
        assert_eq!(closest("Plan", &known), Some("plan".into()));
        assert_eq!(closest("ACT", &known), Some("act".into()));
        assert_eq!(closest("zzz", &known), None);
    }

    #[test]
    fn one_edit_of_a_short_name_is_its_typo() {
        let known: Vec<String> = ["gpt", "gemini", "xs"].map(String::from).to_vec();
        assert_eq!(closest("gtp", &known), Some("gpt".into()));
        assert_eq!(closest("xz", &known), Some("xs".into()));
        assert_eq!(closest("gp", &known), Some("gpt".into()));
        assert_eq!(closest("abc", &known), None);
    }

    #[test]
    fn paths_are_checked_against_the_context_shape() {
        let namespace = Namespace::new(["has_mcp"]);
        assert!(namespace.check_path("browser.viewport.width").is_ok());
        assert!(namespace.check_path("has_mcp").is_ok());
        assert!(namespace.check_path("extra.anything.at.all").is_ok());
        assert_eq!(
            namespace.check_path("browser.enabeld"),
            Err(("browser.enabeld".into(), Some("browser.enabled".into())))
        );
        assert_eq!(
            namespace.check_path("browsr"),
            Err(("browsr".into(), Some("browser".into())))
        );
    }

    #[test]
    fn a_suggestion_is_found_among_a_registry_s_names_and_the_search_is_bounded() {
        let names: Vec<String> = (0..500).map(|n| format!("read_file_{n:03}")).collect();
        assert_eq!(
            closest("read_file_499x", &names).as_deref(),
            Some("read_file_499")
        );
        // Past the bound, the rest are not looked at: a name among a million others costs
        // what a few hundred do. Names of random letters, so that only the one asked for is
        // close.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let many: Vec<String> = (0..1_000_000)
            .map(|_| {
                (0..12)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        char::from(b'a' + (seed % 26) as u8)
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            closest(&format!("{}x", many[1]), &many).as_ref(),
            Some(&many[1])
        );
        assert_eq!(closest(&format!("{}x", many[999_999]), &many), None);
        assert_eq!(closest(&"a".repeat(300), &["a".repeat(300)]), None);
    }
}
