//! The values every template and condition of one compile sees, in precedence order (lowest
//! first): context fields and compile facts, predicates, variant placeholders, standard
//! placeholders, section outputs, runtime placeholders.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use minijinja::Value;
use minijinja::value::Serde;

use crate::model::{Context, Mode};
use crate::namespace::{FAMILY, VARIANT};
use crate::resolve::effective_variant::EffectiveVariant;

#[derive(Clone, Debug, Default)]
pub struct Globals {
    values: BTreeMap<String, Value>,
}

impl Globals {
    pub fn insert(&mut self, name: impl Into<String>, value: Value) {
        self.values.insert(name.into(), value);
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub fn to_value(&self) -> Value {
        Value::from(self.values.clone())
    }

    /// Context fields, the family and variant, variant and standard placeholders.
    /// Predicates, sections and runtime placeholders are added by the compile as it goes.
    pub fn new(variant: &EffectiveVariant, context: &Context, date: Option<&str>) -> Self {
        let mut globals = Globals::default();
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(context) {
            for (name, value) in fields {
                globals.insert(name, Value::from(Serde(value)));
            }
        }
        if let Some(date) = date {
            globals.insert("date", Value::from(date));
        }
        globals.insert(FAMILY, Value::from(variant.family()));
        let v = &variant.variant;
        let mut info = BTreeMap::new();
        info.insert("id", Value::from(v.id.as_str()));
        info.insert("family", Value::from(variant.family()));
        info.insert(
            "version",
            v.version.as_deref().map_or(Value::from(()), Value::from),
        );
        info.insert(
            "tags",
            Value::from(Serde(v.tags.clone().unwrap_or_default())),
        );
        info.insert(
            "labels",
            Value::from(Serde(v.labels.clone().unwrap_or_default())),
        );
        globals.insert(VARIANT, Value::from(info));
        for (name, value) in &v.placeholders {
            globals.insert(name.clone(), Value::from(Serde(value)));
        }
        let standard: [(&str, Value); 14] = [
            ("CWD", Value::from(context.cwd.as_str())),
            ("OS", Value::from(context.os.as_str())),
            ("SHELL", Value::from(context.shell.as_str())),
            ("HOME", Value::from(context.home.as_str())),
            ("IDE", Value::from(context.ide.as_str())),
            // Left undefined without a date: using it is then an error, never the wall clock.
            ("CURRENT_DATE", date.map_or(Value::UNDEFINED, Value::from)),
            ("MODEL_FAMILY", Value::from(variant.family())),
            ("MODEL_ID", Value::from(context.model.id.as_str())),
            ("PROVIDER", Value::from(context.model.provider.as_str())),
            (
                "MODE",
                Value::from(match context.mode {
                    Mode::Act => "act",
                    Mode::Plan => "plan",
                }),
            ),
            ("SUPPORTS_BROWSER", Value::from(context.browser.enabled)),
            (
                "BROWSER_VIEWPORT",
                Value::from(format!(
                    "{}x{}",
                    context.browser.viewport.width, context.browser.viewport.height
                )),
            ),
            ("YOLO", Value::from(context.yolo)),
            (
                "PREFERRED_LANGUAGE",
                Value::from(context.preferred_language.as_str()),
            ),
        ];
        for (name, value) in standard {
            if !value.is_undefined() {
                globals.insert(name, value);
            }
        }
        globals
    }

    /// Runtime placeholders: the context's, then `--set` pairs, which win.
    pub fn insert_runtime(&mut self, context: &Context, set: &IndexMap<String, String>) {
        for (name, value) in &context.placeholders {
            self.insert(name.clone(), Value::from(Serde(value)));
        }
        for (name, value) in set {
            self.insert(name.clone(), Value::from(value.as_str()));
        }
    }
}
