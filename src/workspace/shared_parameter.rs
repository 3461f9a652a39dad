//! A shared parameter (`[parameters.X]` in promptc.toml) as every tool that uses it shares it:
//! its texts, its schema and its `depends_on`, each made once. A tool's own fields replace
//! the shared ones field by field; whatever it does not replace stays shared, never copied.

use std::sync::Arc;

use serde_json::Value;

use crate::model::Parameter;
use crate::parameter_schema::{Keyword, ParameterSchema};
use crate::workspace::ParameterTexts;

#[derive(Clone, Debug, Default)]
pub struct SharedParameter {
    pub texts: ParameterTexts,
    pub schema: SchemaParts,
    pub depends_on: Option<Arc<[String]>>,
}

impl SharedParameter {
    pub fn new(parameter: &Parameter, texts: ParameterTexts) -> Self {
        Self {
            texts,
            schema: SchemaParts::of(parameter, None),
            depends_on: parameter.depends_on.as_deref().map(Arc::from),
        }
    }
}

/// A parameter's schema fields, each one its own or its shared definition's, and the schema
/// they make.
#[derive(Clone, Debug, Default)]
pub struct SchemaParts {
    one_of: Option<Keyword>,
    items: Option<Keyword>,
    properties: Option<Keyword>,
    /// The free `schema` keywords, in order.
    free: Option<Arc<[(String, Keyword)]>>,
    pub schema: ParameterSchema,
}

impl SchemaParts {
    /// The fields `parameter` sets, over `base`'s (its shared definition's) for those it
    /// does not: a parameter that sets none has its shared definition's very schema.
    pub fn of(parameter: &Parameter, base: Option<&SchemaParts>) -> Self {
        let sets_none = parameter.one_of.is_none()
            && parameter.items.is_none()
            && parameter.properties.is_none()
            && parameter.schema.is_none();
        if let (true, Some(base)) = (sets_none, base) {
            return base.clone();
        }
        let pick = |own: Option<Value>, shared: Option<&Keyword>| {
            own.map(Keyword::new).or_else(|| shared.cloned())
        };
        let one_of = pick(
            parameter.one_of.clone().map(Value::Array),
            base.and_then(|b| b.one_of.as_ref()),
        );
        let items = pick(parameter.items.clone(), base.and_then(|b| b.items.as_ref()));
        let properties = pick(
            parameter
                .properties
                .as_ref()
                .map(|p| serde_json::to_value(p).unwrap_or_default()),
            base.and_then(|b| b.properties.as_ref()),
        );
        let free = match &parameter.schema {
            Some(own) => Some(
                own.iter()
                    .map(|(key, value)| (key.clone(), Keyword::new(value.clone())))
                    .collect(),
            ),
            None => base.and_then(|b| b.free.clone()),
        };
        // The named fields first; a free keyword of the same name does not replace one.
        let named = [
            ("enum", &one_of),
            ("items", &items),
            ("properties", &properties),
        ]
        .into_iter()
        .filter_map(|(key, keyword)| Some((key.to_string(), keyword.clone()?)));
        let schema = ParameterSchema::new(named.chain(free.iter().flat_map(|f| f.iter().cloned())));
        Self {
            one_of,
            items,
            properties,
            free,
            schema,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parameter(fields: Value) -> Parameter {
        serde_json::from_value(fields).expect("a parameter")
    }

    fn written(schema: &ParameterSchema) -> String {
        serde_json::to_string(schema).expect("json")
    }

    /// A tool that sets no schema field has its shared definition's schema itself; one that
    /// sets some has its own for those and shares the shared definition's values for the
    /// rest, in the order every schema has: `enum`, `items`, `properties`, then the free
    /// keywords, whose own set replaces the shared set whole.
    #[test]
    fn a_tool_shares_what_it_does_not_replace() {
        let shared = SharedParameter::new(
            &parameter(json!({
                "name": "mode",
                "enum": ["a", "b"],
                "schema": { "default": "a", "enum": ["never"] },
                "depends_on": ["x"],
            })),
            ParameterTexts::default(),
        );
        let base = &shared.schema;
        assert_eq!(written(&base.schema), r#"{"enum":["a","b"],"default":"a"}"#);

        let plain = SchemaParts::of(&parameter(json!({ "use": "mode" })), Some(base));
        assert!(plain.schema.same_as(&base.schema));
        assert!(std::ptr::eq(
            plain.schema.get("enum").expect("enum"),
            base.schema.get("enum").expect("enum")
        ));

        let own = SchemaParts::of(
            &parameter(json!({
                "use": "mode",
                "items": { "type": "string" },
                "schema": { "minItems": 1 },
            })),
            Some(base),
        );
        assert_eq!(
            written(&own.schema),
            r#"{"enum":["a","b"],"items":{"type":"string"},"minItems":1}"#
        );
        assert!(std::ptr::eq(
            own.schema.get("enum").expect("enum"),
            base.schema.get("enum").expect("enum")
        ));

        let replaced = SchemaParts::of(
            &parameter(json!({ "use": "mode", "enum": ["c"] })),
            Some(base),
        );
        assert_eq!(written(&replaced.schema), r#"{"enum":["c"],"default":"a"}"#);
        assert_eq!(shared.depends_on.as_deref(), Some(&["x".to_string()][..]));
    }
}
