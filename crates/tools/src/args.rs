//! Typed tool arguments: one `#[derive(Deserialize, JsonSchema)]` struct per tool.
//!
//! Invariant: the schema a model sees and the parser that checks its call come from the same
//! struct, so they cannot drift; a bad call is refused with an error that names the offending field
//! and spells out the expected shape, never half-applied.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use workmate_protocol::ToolSpec;

use crate::ToolError;

/// The JSON schema of `T`, as the `parameters` of a tool spec (without the `$schema`/`title` noise).
pub fn schema<T: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(T).to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    value
}

/// A tool spec whose parameters are `T`'s schema.
pub fn spec<T: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: schema::<T>(),
    }
}

/// Parses a call's arguments; `null` counts as `{}` (some models send no arguments at all).
pub fn parse<T: JsonSchema + DeserializeOwned>(
    tool: &str,
    arguments: Value,
) -> Result<T, ToolError> {
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    if !arguments.is_object() {
        return Err(ToolError::new(format!(
            "invalid arguments for {tool}: expected a JSON object {}",
            shape(&schema::<T>())
        )));
    }
    serde_json::from_value(arguments).map_err(|e| {
        ToolError::new(format!(
            "invalid arguments for {tool}: {e}; expected {}",
            shape(&schema::<T>())
        ))
    })
}

/// A one-line rendering of an object schema: `{path: string, max_lines?: integer}`.
pub(crate) fn shape(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "{}".to_owned();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{name}{optional}: {}", type_name(property))
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

fn type_name(property: &Value) -> String {
    match property.get("type") {
        Some(Value::String(t)) if t == "array" => {
            let item = property.get("items").map_or("any".to_owned(), type_name);
            format!("array of {item}")
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".to_owned(),
    }
}

/// Declares a stateless tool: a unit struct whose `call` parses `$args` and hands them to `$run`.
macro_rules! simple_tool {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $args:ty, $description:expr, $metadata:expr, $run:path) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $ty;

        impl $crate::Tool for $ty {
            fn spec(&self) -> ::workmate_protocol::ToolSpec {
                $crate::args::spec::<$args>($name, $description)
            }

            fn metadata(&self) -> Option<$crate::ToolMetadata> {
                Some($metadata)
            }

            fn call<'a>(
                &'a self,
                ctx: &'a $crate::ToolContext,
                arguments: ::serde_json::Value,
            ) -> $crate::ToolFuture<'a> {
                Box::pin(async move {
                    let args = $crate::args::parse::<$args>($name, arguments)?;
                    $run(ctx, args).await
                })
            }
        }
    };
}
pub(crate) use simple_tool;

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Example {
        path: String,
        #[serde(default)]
        max_lines: Option<u64>,
        #[serde(default)]
        ids: Vec<String>,
    }

    #[test]
    fn schema_lists_fields_and_forbids_extras() {
        let schema = schema::<Example>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["path"]));
        assert!(schema.get("$schema").is_none());
        assert_eq!(
            shape(&schema),
            "{path: string, max_lines?: integer, ids?: array of string}"
        );
    }

    #[test]
    fn errors_name_the_field_and_the_shape() {
        let missing = parse::<Example>("t", json!({})).unwrap_err().message;
        assert!(missing.contains("missing field `path`"), "{missing}");
        assert!(missing.contains("{path: string"), "{missing}");

        let unknown = parse::<Example>("t", json!({"path": "a", "pth": 1}))
            .unwrap_err()
            .message;
        assert!(unknown.contains("unknown field `pth`"), "{unknown}");

        let wrong = parse::<Example>("t", json!({"path": 3}))
            .unwrap_err()
            .message;
        assert!(wrong.contains("invalid type"), "{wrong}");

        let not_object = parse::<Example>("t", json!("a")).unwrap_err().message;
        assert!(
            not_object.contains("expected a JSON object"),
            "{not_object}"
        );
    }

    #[test]
    fn null_is_an_empty_object() {
        #[derive(Debug, Deserialize, JsonSchema)]
        struct Empty {
            #[serde(default)]
            path: Option<String>,
        }
        let parsed: Empty = parse("t", Value::Null).unwrap();
        assert!(parsed.path.is_none());
    }
}
