//! A parameter's parts made once, when the workspace loads: its texts, its schema, its
//! `depends_on` and its condition. A shared parameter (`[parameters.X]` in promptc.toml) is
//! used by any number of tools, and a tool with a family spec is resolved once per variant:
//! each takes these parts, never a copy. A tool's own fields replace the shared ones field by
//! field; whatever it does not replace stays shared.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::model::Parameter;
use crate::parameter_schema::{Keyword, ParameterSchema};
use crate::workspace::ParameterTexts;

/// The parts a parameter sets itself (those it leaves out are `None`).
#[derive(Clone, Debug, Default)]
pub struct ParameterParts {
    pub texts: ParameterTexts,
    pub schema: SchemaParts,
    pub depends_on: Option<Arc<[String]>>,
    pub when: Option<Arc<str>>,
    /// The schema over the shared definition's, made the first time: a tool with a family
    /// spec is resolved once per variant, always over the same shared definition (the one
    /// its `use` names).
    over_shared: OnceLock<ParameterSchema>,
}

impl ParameterParts {
    pub fn new(parameter: &Parameter, texts: ParameterTexts) -> Self {
        Self {
            texts,
            schema: SchemaParts::own(parameter),
            depends_on: parameter.depends_on.as_deref().map(Arc::from),
            when: parameter.when.as_deref().map(Arc::from),
            over_shared: OnceLock::new(),
        }
    }

    /// The parameter's schema over `shared`'s parts, the shared definition it uses.
    pub fn schema_over(&self, shared: Option<&ParameterParts>) -> ParameterSchema {
        match shared {
            None => self.schema.schema.clone(),
            Some(shared) => self
                .over_shared
                .get_or_init(|| self.schema.over(Some(&shared.schema)).schema)
                .clone(),
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
    /// The schema fields `parameter` sets itself.
    pub fn own(parameter: &Parameter) -> Self {
        let free = parameter.schema.as_ref().map(|free| {
            free.iter()
                .map(|(key, value)| (key.clone(), Keyword::new(value.clone())))
                .collect()
        });
        Self::made(
            parameter
                .one_of
                .clone()
                .map(|values| Keyword::new(Value::Array(values))),
            parameter.items.clone().map(Keyword::new),
            parameter
                .properties
                .as_ref()
                .map(|p| Keyword::new(serde_json::to_value(p).unwrap_or_default())),
            free,
        )
    }

    /// These fields over `base`'s (a shared definition's) for those they leave out: fields
    /// that set nothing have the base's very schema, and without a base they are the schema.
    pub fn over(&self, base: Option<&SchemaParts>) -> Self {
        let Some(base) = base else {
            return self.clone();
        };
        let sets_none = self.one_of.is_none()
            && self.items.is_none()
            && self.properties.is_none()
            && self.free.is_none();
        if sets_none {
            return base.clone();
        }
        let pick = |own: &Option<Keyword>, shared: &Option<Keyword>| own.clone().or(shared.clone());
        Self::made(
            pick(&self.one_of, &base.one_of),
            pick(&self.items, &base.items),
            pick(&self.properties, &base.properties),
            self.free.clone().or(base.free.clone()),
        )
    }

    fn made(
        one_of: Option<Keyword>,
        items: Option<Keyword>,
        properties: Option<Keyword>,
        free: Option<Arc<[(String, Keyword)]>>,
    ) -> Self {
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
        let shared = ParameterParts::new(
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

        let of = |fields: Value| SchemaParts::own(&parameter(fields)).over(Some(base));
        let plain = of(json!({ "use": "mode" }));
        assert!(plain.schema.same_as(&base.schema));
        assert!(std::ptr::eq(
            plain.schema.get("enum").expect("enum"),
            base.schema.get("enum").expect("enum")
        ));

        let own = of(json!({
            "use": "mode",
            "items": { "type": "string" },
            "schema": { "minItems": 1 },
        }));
        assert_eq!(
            written(&own.schema),
            r#"{"enum":["a","b"],"items":{"type":"string"},"minItems":1}"#
        );
        assert!(std::ptr::eq(
            own.schema.get("enum").expect("enum"),
            base.schema.get("enum").expect("enum")
        ));

        let replaced = of(json!({ "use": "mode", "enum": ["c"] }));
        assert_eq!(written(&replaced.schema), r#"{"enum":["c"],"default":"a"}"#);
        assert_eq!(shared.depends_on.as_deref(), Some(&["x".to_string()][..]));
    }
}
