//! The placeholders every compile defines from the context and the variant (`CWD`,
//! `CURRENT_DATE`, …): one table that names them, computes their values, says which change
//! from one request to the next, and how to change each for the prompt-cache probe.

use serde_json::Value;

use super::{Context, Mode};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandardPlaceholder {
    Cwd,
    Os,
    Shell,
    Home,
    Ide,
    CurrentDate,
    ModelFamily,
    ModelId,
    Provider,
    Mode,
    SupportsBrowser,
    BrowserViewport,
    Yolo,
    PreferredLanguage,
}

/// The text the prompt-cache probe puts where a volatile value was.
const PROBE: &str = "promptc-volatile-probe";

impl StandardPlaceholder {
    pub const ALL: [StandardPlaceholder; 14] = [
        Self::Cwd,
        Self::Os,
        Self::Shell,
        Self::Home,
        Self::Ide,
        Self::CurrentDate,
        Self::ModelFamily,
        Self::ModelId,
        Self::Provider,
        Self::Mode,
        Self::SupportsBrowser,
        Self::BrowserViewport,
        Self::Yolo,
        Self::PreferredLanguage,
    ];

    /// The name templates use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cwd => "CWD",
            Self::Os => "OS",
            Self::Shell => "SHELL",
            Self::Home => "HOME",
            Self::Ide => "IDE",
            Self::CurrentDate => "CURRENT_DATE",
            Self::ModelFamily => "MODEL_FAMILY",
            Self::ModelId => "MODEL_ID",
            Self::Provider => "PROVIDER",
            Self::Mode => "MODE",
            Self::SupportsBrowser => "SUPPORTS_BROWSER",
            Self::BrowserViewport => "BROWSER_VIEWPORT",
            Self::Yolo => "YOLO",
            Self::PreferredLanguage => "PREFERRED_LANGUAGE",
        }
    }

    /// The context field whose value it is, when it is one field's (`CWD` is `cwd`).
    pub fn context_field(self) -> Option<&'static str> {
        Some(match self {
            Self::Cwd => "cwd",
            Self::Os => "os",
            Self::Shell => "shell",
            Self::Home => "home",
            Self::Ide => "ide",
            Self::CurrentDate => "date",
            Self::Mode => "mode",
            Self::Yolo => "yolo",
            Self::PreferredLanguage => "preferred_language",
            Self::ModelFamily
            | Self::ModelId
            | Self::Provider
            | Self::SupportsBrowser
            | Self::BrowserViewport => return None,
        })
    }

    /// The path into the context whose value it is, as it is (`SUPPORTS_BROWSER` is
    /// `browser.enabled`), where it has one: its type and choices are that field's.
    pub fn context_path(self) -> Option<&'static str> {
        match self {
            Self::SupportsBrowser => Some("browser.enabled"),
            Self::ModelId => Some("model.id"),
            Self::Provider => Some("model.provider"),
            Self::ModelFamily | Self::BrowserViewport => None,
            other => other.context_field(),
        }
    }

    /// The placeholder a name stands for: its own name, or its context field's.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name || p.context_field() == Some(name))
    }

    /// Values that change between requests of one user: text after the first of them cannot
    /// come from a provider's prompt cache. The manifest's `tokens.volatile` default, in its
    /// order.
    pub const VOLATILE_BY_DEFAULT: [StandardPlaceholder; 3] =
        [Self::CurrentDate, Self::Cwd, Self::Mode];

    /// Its value for a compile; `None` leaves it undefined (`CURRENT_DATE` without a date:
    /// using it is then an error, never the wall clock).
    pub fn value(self, context: &Context, family: &str, date: Option<&str>) -> Option<Value> {
        let text = |s: &str| Some(Value::from(s));
        match self {
            Self::Cwd => text(&context.cwd),
            Self::Os => text(&context.os),
            Self::Shell => text(&context.shell),
            Self::Home => text(&context.home),
            Self::Ide => text(&context.ide),
            Self::CurrentDate => date.map(Value::from),
            Self::ModelFamily => text(family),
            Self::ModelId => text(&context.model.id),
            Self::Provider => text(&context.model.provider),
            Self::Mode => text(match context.mode {
                Mode::Act => "act",
                Mode::Plan => "plan",
            }),
            Self::SupportsBrowser => Some(Value::from(context.browser.enabled)),
            Self::BrowserViewport => {
                let viewport = &context.browser.viewport;
                Some(Value::from(format!(
                    "{}x{}",
                    viewport.width, viewport.height
                )))
            }
            Self::Yolo => Some(Value::from(context.yolo)),
            Self::PreferredLanguage => text(&context.preferred_language),
        }
    }

    /// Changes its value in `context`, for the prompt-cache probe: both spellings (`CWD` and
    /// `cwd`) change together. `false` when it is not the context's to change (it is then
    /// set as a runtime placeholder).
    pub fn perturb(self, context: &mut Context) -> bool {
        match self {
            Self::CurrentDate => {
                let next = if context.date.as_deref() == Some("1970-01-02") {
                    "1970-01-03"
                } else {
                    "1970-01-02"
                };
                context.date = Some(next.into());
            }
            Self::Cwd => context.cwd = format!("/{PROBE}"),
            Self::Home => context.home = format!("/{PROBE}-home"),
            Self::Os => context.os = PROBE.into(),
            Self::Shell => context.shell = format!("/bin/{PROBE}"),
            Self::Ide => context.ide = PROBE.into(),
            Self::Mode => {
                context.mode = match context.mode {
                    Mode::Act => Mode::Plan,
                    Mode::Plan => Mode::Act,
                }
            }
            _ => return false,
        }
        true
    }

    /// The text the probe gives a volatile value it cannot change in the context.
    pub fn probe_text() -> &'static str {
        PROBE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_placeholder_has_its_own_name_and_field() {
        let mut names: Vec<&str> = StandardPlaceholder::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), StandardPlaceholder::ALL.len());
        for placeholder in StandardPlaceholder::ALL {
            assert_eq!(
                StandardPlaceholder::named(placeholder.name()),
                Some(placeholder)
            );
            if let Some(field) = placeholder.context_field() {
                assert_eq!(StandardPlaceholder::named(field), Some(placeholder));
            }
        }
    }

    #[test]
    fn fields_named_are_fields_of_the_context() {
        let fields = serde_json::to_value(Context::default()).unwrap_or_default();
        for placeholder in StandardPlaceholder::ALL {
            if let Some(field) = placeholder.context_field() {
                assert!(fields.get(field).is_some(), "{field}");
            }
        }
    }

    #[test]
    fn a_perturbed_value_differs() {
        for placeholder in StandardPlaceholder::ALL {
            let context = Context {
                date: Some("2026-11-01".into()),
                ..Context::default()
            };
            let mut changed = context.clone();
            if placeholder.perturb(&mut changed) {
                let before = placeholder.value(&context, "f", context.date.as_deref());
                let after = placeholder.value(&changed, "f", changed.date.as_deref());
                assert_ne!(before, after, "{placeholder:?}");
            }
        }
    }
}
