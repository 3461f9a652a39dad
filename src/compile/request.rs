//! What to compile: a selection of variant and a runtime context.

use indexmap::IndexMap;

use crate::load::mcp_places::McpPlaces;
use crate::resolve::date::SourceDateEpoch;
use serde_json::Value;

use crate::model::{Context, ContextField, Dialect, ParameterType};

/// Which variant to compile: a family, a variant, or the family routing picks for the
/// context's model; then, within the family, a label or a tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub by: SelectBy,
    /// The version this label names (an error when the family has no such label). Without
    /// it, the manifest's `routing.label`, when the family has it, else the highest version.
    pub label: Option<String>,
    /// Only variants carrying this tag. With [`SelectBy::Fallback`], the one family whose
    /// variants carry it.
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SelectBy {
    /// The family whose `match` holds first for the context (its `model.id`,
    /// `model.provider`, …), in the manifest's `routing.order`; the fallback family when
    /// none does.
    #[default]
    Route,
    /// The manifest's `fallback_family`.
    Fallback,
    Family(String),
    /// A variant id, or `family@version` (a version or the start of one: its highest match).
    Variant(String),
}

impl Selection {
    /// The family routing picks for the context's model.
    pub fn route() -> Self {
        Self::default()
    }

    /// The manifest's fallback family.
    pub fn fallback() -> Self {
        Self::by(SelectBy::Fallback)
    }

    pub fn family(family: impl Into<String>) -> Self {
        Self::by(SelectBy::Family(family.into()))
    }

    /// A variant id or `family@version`.
    pub fn variant(variant: impl Into<String>) -> Self {
        Self::by(SelectBy::Variant(variant.into()))
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    fn by(by: SelectBy) -> Self {
        Self {
            by,
            label: None,
            tag: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Request {
    pub selection: Selection,
    pub context: Context,
    /// `--set KEY=VALUE` pairs: runtime placeholders that win over everything.
    pub set: IndexMap<String, String>,
    /// SOURCE_DATE_EPOCH, used when the context has no date.
    pub source_date_epoch: SourceDateEpoch,
    /// The provider shape of native tool definitions, instead of the manifest's rules.
    pub dialect: Option<Dialect>,
    /// Where the context's MCP tools are written, for the problems found with them; empty
    /// for a context with no file behind it.
    pub mcp_places: McpPlaces,
}

impl Request {
    pub fn new(selection: Selection, context: Context) -> Self {
        Self {
            selection,
            context,
            set: IndexMap::new(),
            source_date_epoch: SourceDateEpoch::Unset,
            dialect: None,
            mcp_places: McpPlaces::default(),
        }
    }
}

impl Request {
    /// Moves each `--set` value that names a context field, or a path into one (`yolo`,
    /// `cwd`, `browser.enabled`, `extra.retries`), out of the runtime placeholders and into the
    /// context, read as the field's type (see [`typed_value`]): a text `false` would read as
    /// true in every condition, and a text `cwd` would leave `CWD` as it was. An error says
    /// which value does not fit, and what would.
    pub fn set_context_fields(
        &mut self,
        declared: &IndexMap<String, ContextField>,
        from: SetFrom,
    ) -> Result<(), String> {
        let fields = crate::namespace::context_fields();
        let typed: Vec<(String, String)> = self
            .set
            .iter()
            .filter(|(name, _)| {
                name.split('.')
                    .next()
                    .is_some_and(|first| fields.contains(first))
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        if typed.is_empty() {
            return Ok(());
        }
        let mut context = serde_json::to_value(&self.context).map_err(|error| error.to_string())?;
        let mut moved = Vec::new();
        for (name, text) in typed {
            with_declared_default(&mut context, &name, declared);
            let value = typed_value(&context, &name, &text, declared, from)?;
            set_at(&mut context, &name, value);
            // The value is held to the context's schema, as the same value in a context file
            // is (a viewport at least a pixel wide, a mode that exists).
            let pointer = name.split('.').fold(String::new(), |at, key| {
                crate::pointer::child_pointer(&at, key)
            });
            let problems = crate::load::schema_check::SchemaValidators::shared().problems_at(
                crate::problem::Kind::Context,
                &context,
                &pointer,
            );
            if let Some(problem) = problems.first() {
                return Err(format!("{}: {problem}", from.value(&name, &text)));
            }
            moved.push(name);
        }
        self.context = serde_json::from_value(context).map_err(|error| {
            let names: Vec<String> = moved.iter().map(|name| from.name(name)).collect();
            format!("{} does not fit the context: {error}", names.join(", "))
        })?;
        for name in moved {
            self.set.shift_remove(&name);
        }
        Ok(())
    }
}

/// Where values set by name came from, which is how the errors about them write them: the
/// command line's `--set NAME=VALUE`, or a run-time request's `set` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetFrom {
    CommandLine,
    Request,
}

impl SetFrom {
    /// How the user wrote the value of `name`.
    fn value(self, name: &str, text: &str) -> String {
        match self {
            SetFrom::CommandLine => format!("`--set {name}={text}`"),
            SetFrom::Request => format!("`set.{name}` ({text:?})"),
        }
    }

    /// How the user named `name`.
    fn name(self, name: &str) -> String {
        match self {
            SetFrom::CommandLine => format!("`--set {name}`"),
            SetFrom::Request => format!("`set.{name}`"),
        }
    }

    /// Where a value set so cannot go, and where it can.
    fn cannot_give(self) -> &'static str {
        match self {
            SetFrom::CommandLine => "which `--set` cannot give: set it in a context file",
            SetFrom::Request => "which `set` cannot give: give it in the request's `context`",
        }
    }

    /// Where a field that is not set by name is given instead.
    fn give_instead(self) -> &'static str {
        match self {
            SetFrom::CommandLine => {
                "is not set from the command line: write it in a context file (rules also follow `--rules`, `--files` and `--disable-rule`, servers `--mcp`)"
            }
            SetFrom::Request => {
                "is not given by `set`: give it in the request's `context` (rules also follow `context.rules_from`)"
            }
        }
    }

    /// Where a table of fields the context lacks is given.
    fn context_file(self) -> &'static str {
        match self {
            SetFrom::CommandLine => "set it in a context file",
            SetFrom::Request => "give it in the request's `context`",
        }
    }
}

/// A path into a declared `extra` key the context leaves out (`extra.cfg.depth`, `cfg` having
/// only its default) starts from the key's default, which templates see for it.
fn with_declared_default(
    context: &mut Value,
    name: &str,
    declared: &IndexMap<String, ContextField>,
) {
    let mut segments = name.split('.');
    let (Some(crate::namespace::EXTRA), Some(key), Some(_)) =
        (segments.next(), segments.next(), segments.next())
    else {
        return;
    };
    let Some(field) = declared.get(key) else {
        return;
    };
    let Some(extra) = context
        .get_mut(crate::namespace::EXTRA)
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if !extra.contains_key(key) {
        extra.insert(key.to_string(), field.default_value());
    }
}

/// The context fields `--set` cannot give: the rules and MCP servers are read and decided
/// before the values are set (a toggle set so changed nothing), and the others are lists,
/// links or the placeholders `--set` gives by their own names.
const NOT_SET: [&str; 8] = [
    "rules",
    "workflows",
    "rules_from",
    "active_files",
    "rule_toggles",
    "mcp_servers",
    "extends",
    "placeholders",
];

/// The value `--set NAME=TEXT` gives a context field, read as the type the field holds (or,
/// for a key of `extra`, the type the workspace declares for it), text included: the field
/// is set, so that its standard placeholder follows (`--set cwd=…` is `CWD` too). A path must
/// lead through tables the context has; a `date` must be one that exists.
fn typed_value(
    context: &Value,
    name: &str,
    text: &str,
    declared: &IndexMap<String, ContextField>,
    from: SetFrom,
) -> Result<Value, String> {
    let segments: Vec<&str> = name.split('.').collect();
    let first = segments[0];
    let named = from.name(name);
    if NOT_SET.contains(&first) {
        return Err(format!("{named}: `{first}` {}", from.give_instead()));
    }
    let wrong = |what: &str| {
        format!(
            "{}: `{name}` is a context field that holds {what}",
            from.value(name, text)
        )
    };
    let cannot_give = format!("a list or a table, {}", from.cannot_give());
    let boolean = || match text.trim() {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => Err(wrong("`true` or `false`")),
    };
    // A whole number; digits past what 64 bits hold are told as such, not as "not a whole
    // number".
    let whole = |what: &str| match text.trim().parse::<i64>() {
        Ok(integer) => Ok(Value::from(integer)),
        Err(error)
            if matches!(
                error.kind(),
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
            ) =>
        {
            Err(wrong(&format!(
                "{what} from {} to {}, and `{}` is past them",
                i64::MIN,
                i64::MAX,
                text.trim()
            )))
        }
        Err(_) => Err(wrong(what)),
    };
    let number = || match serde_json::from_str::<serde_json::Number>(text.trim()) {
        Ok(number) => Ok(Value::Number(number)),
        Err(_) => Err(wrong("a number")),
    };
    // A declared `extra` key: its declared type, whatever the context holds now; a key the
    // workspace does not declare is refused with the near one, as a template reading it is.
    if first == crate::namespace::EXTRA && segments.len() > 1 && !declared.is_empty() {
        let key = segments[1];
        let Some(field) = declared.get(key) else {
            let near = crate::namespace::closest(key, declared.keys());
            return Err(format!(
                "{named}: `extra.{key}` is not a key `[context_fields]` declares{}",
                near.map(|near| format!("; did you mean `extra.{near}`?"))
                    .unwrap_or_default()
            ));
        };
        if segments.len() == 2 {
            return Ok(match field.kind {
                ParameterType::Boolean => boolean()?,
                ParameterType::Integer => whole("an integer")?,
                ParameterType::Number => number()?,
                ParameterType::String => Value::String(text.to_string()),
                ParameterType::Array | ParameterType::Object => {
                    return Err(wrong(&cannot_give));
                }
            });
        }
    }
    // Every segment but the last names a table the context has.
    let mut node = context;
    for (depth, segment) in segments[..segments.len() - 1].iter().enumerate() {
        let walked = segments[..=depth].join(".");
        node = match node.get(*segment) {
            Some(table @ Value::Object(_)) => table,
            Some(other) => {
                return Err(format!(
                    "{named}: `{walked}` holds {}, not a table of fields",
                    crate::load::schema_check::json_type(other)
                ));
            }
            None => {
                return Err(format!(
                    "{named}: the context has no `{walked}`: {}",
                    from.context_file()
                ));
            }
        };
    }
    let last = segments[segments.len() - 1];
    Ok(match node.get(last) {
        Some(Value::Bool(_)) => boolean()?,
        // A field of whole numbers (a viewport's width) takes one, written as one.
        Some(Value::Number(held)) if !held.is_f64() => whole("a whole number")?,
        Some(Value::Number(_)) => number()?,
        Some(Value::Array(_) | Value::Object(_)) => {
            return Err(wrong(&cannot_give));
        }
        _ if name == "date" && !is_calendar_date(text.trim()) => {
            return Err(wrong("a date that exists, written YYYY-MM-DD"));
        }
        _ => Value::String(text.to_string()),
    })
}

/// Whether `text` is a date that exists, written `YYYY-MM-DD`.
fn is_calendar_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    let digits =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        year.parse::<u32>(),
        month.parse::<u32>(),
        day.parse::<u32>(),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Sets `value` at the dotted `path` of `context`, adding the last key when it is missing.
fn set_at(context: &mut Value, path: &str, value: Value) {
    let mut node = context;
    let mut segments = path.split('.').peekable();
    while let Some(segment) = segments.next() {
        let Some(table) = node.as_object_mut() else {
            return;
        };
        if segments.peek().is_none() {
            table.insert(segment.to_string(), value);
            return;
        }
        let Some(next) = table.get_mut(segment) else {
            return;
        };
        node = next;
    }
}
