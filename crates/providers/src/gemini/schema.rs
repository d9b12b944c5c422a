//! Reduces a tool's JSON Schema to the OpenAPI subset Gemini's `functionDeclarations` accept.
//!
//! Invariant: the output only holds keywords Gemini knows (an allowlist, so a new JSON Schema
//! keyword can never turn into a 400), every `$ref` into `$defs`/`definitions` is inlined or
//! replaced, and the walk is depth-limited, so a recursive or hostile schema still yields a finite
//! answer. The function never fails: what cannot be expressed is loosened, never rejected.

use serde_json::{Map, Value, json};

/// How many `$ref`s may be followed inside one another before a reference is cut off.
const MAX_REF_DEPTH: usize = 8;
/// How deep the walk goes before a subschema is replaced by a plain object.
const MAX_DEPTH: usize = 32;

/// Keywords copied as they are (after `format`, `enum`, `type` and the subschema keywords have
/// been handled on their own).
const PLAIN_KEYWORDS: &[&str] = &[
    "description",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];

/// The Gemini form of `schema`.
pub fn sanitize_schema(schema: &Value) -> Value {
    let defs = definitions(schema);
    Walker { defs: &defs }.walk(schema, 0, 0)
}

/// The definitions `$ref`s may point to: `$defs` and `definitions` of the root.
fn definitions(root: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(Value::Object(map)) = root.get(key) {
            for (name, def) in map {
                defs.insert(format!("#/{key}/{name}"), def.clone());
            }
        }
    }
    defs
}

struct Walker<'a> {
    defs: &'a Map<String, Value>,
}

impl Walker<'_> {
    fn walk(&self, schema: &Value, depth: usize, refs: usize) -> Value {
        let Value::Object(input) = schema else {
            // `true` (anything goes) and other non-object schemas: say nothing about the value.
            return Value::Object(Map::new());
        };
        if depth > MAX_DEPTH {
            return json!({"type": "object"});
        }
        if let Some(target) = input.get("$ref").and_then(Value::as_str) {
            return self.reference(input, target, depth, refs);
        }
        let mut out = Map::new();
        let mut nullable = input.get("nullable").and_then(Value::as_bool) == Some(true);

        if let Some(merged) = self.all_of(input, depth, refs) {
            out = merged;
        }
        match input.get("type") {
            Some(Value::String(t)) if t == "null" => nullable = true,
            Some(Value::String(t)) => {
                out.insert("type".into(), Value::String(t.clone()));
            }
            Some(Value::Array(types)) => {
                let (named, has_null) = split_types(types);
                nullable |= has_null;
                match named.as_slice() {
                    [] => {}
                    [one] => {
                        out.insert("type".into(), Value::String((*one).to_owned()));
                    }
                    many => {
                        let branches = many.iter().map(|t| json!({"type": t})).collect();
                        out.insert("anyOf".into(), Value::Array(branches));
                    }
                }
            }
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = input.get(key) {
                nullable |= self.any_of(branches, &mut out, depth, refs);
            }
        }
        if let Some(format) = input.get("format").and_then(Value::as_str)
            && matches!(format, "date-time" | "enum")
        {
            out.insert("format".into(), Value::String(format.to_owned()));
        }
        if let Some(Value::Array(values)) = input.get("enum") {
            let kept: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            nullable |= kept.len() != values.len();
            if !kept.is_empty() {
                out.insert("enum".into(), Value::Array(kept));
            }
        } else if let Some(value) = input.get("const") {
            if value.is_null() {
                nullable = true;
            } else {
                out.insert("enum".into(), Value::Array(vec![value.clone()]));
                if !out.contains_key("type") && value.is_string() {
                    out.insert("type".into(), Value::String("string".into()));
                }
            }
        }
        for key in PLAIN_KEYWORDS {
            if let Some(value) = input.get(*key) {
                out.insert((*key).to_owned(), value.clone());
            }
        }
        self.object_parts(input, &mut out, depth, refs);
        self.items(input, &mut out, depth, refs);
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        Value::Object(out)
    }

    /// A `$ref`: the definition it names, inlined, with the referring schema's own description
    /// winning; a reference too deep or to nowhere becomes a plain object.
    fn reference(
        &self,
        input: &Map<String, Value>,
        target: &str,
        depth: usize,
        refs: usize,
    ) -> Value {
        let resolved = match self.defs.get(target) {
            Some(def) if refs < MAX_REF_DEPTH => self.walk(def, depth + 1, refs + 1),
            _ => json!({"type": "object"}),
        };
        let mut resolved = match resolved {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        if let Some(description) = input.get("description") {
            resolved.insert("description".into(), description.clone());
        }
        if input.get("nullable").and_then(Value::as_bool) == Some(true) {
            resolved.insert("nullable".into(), Value::Bool(true));
        }
        Value::Object(resolved)
    }

    /// `allOf` folded into one schema: properties and `required` united, other keywords first
    /// come first served.
    fn all_of(
        &self,
        input: &Map<String, Value>,
        depth: usize,
        refs: usize,
    ) -> Option<Map<String, Value>> {
        let Some(Value::Array(parts)) = input.get("allOf") else {
            return None;
        };
        let mut merged = Map::new();
        for part in parts {
            let Value::Object(part) = self.walk(part, depth + 1, refs) else {
                continue;
            };
            for (key, value) in part {
                let Some(have) = merged.get_mut(&key) else {
                    merged.insert(key, value);
                    continue;
                };
                match (have, value) {
                    (Value::Object(have), Value::Object(more)) if key == "properties" => {
                        have.extend(more);
                    }
                    (Value::Array(have), Value::Array(more)) if key == "required" => {
                        for name in more {
                            if !have.contains(&name) {
                                have.push(name);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(merged)
    }

    /// `anyOf`/`oneOf`: null branches become `nullable`; a single remaining branch is merged in,
    /// several stay an `anyOf`. Returns whether a null branch was seen.
    fn any_of(
        &self,
        branches: &[Value],
        out: &mut Map<String, Value>,
        depth: usize,
        refs: usize,
    ) -> bool {
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        let has_null = branches.iter().any(is_null);
        let mut kept: Vec<Value> = branches
            .iter()
            .filter(|b| !is_null(b))
            .map(|b| self.walk(b, depth + 1, refs))
            .collect();
        if kept.len() == 1 {
            if let Some(Value::Object(only)) = kept.pop() {
                for (key, value) in only {
                    out.entry(key).or_insert(value);
                }
            }
        } else if !kept.is_empty() {
            out.insert("anyOf".into(), Value::Array(kept));
        }
        has_null
    }

    /// `properties` walked, empty ones dropped; `required` limited to properties that exist.
    fn object_parts(
        &self,
        input: &Map<String, Value>,
        out: &mut Map<String, Value>,
        depth: usize,
        refs: usize,
    ) {
        if let Some(Value::Object(properties)) = input.get("properties") {
            let walked: Map<String, Value> = properties
                .iter()
                .map(|(name, schema)| (name.clone(), self.walk(schema, depth + 1, refs)))
                .collect();
            if !walked.is_empty() {
                out.insert("properties".into(), Value::Object(walked));
            }
        }
        if let Some(Value::Array(required)) = input.get("required") {
            let known = out.get("properties").and_then(Value::as_object);
            let kept: Vec<Value> = required
                .iter()
                .filter(|name| {
                    name.as_str()
                        .is_some_and(|n| known.is_some_and(|k| k.contains_key(n)))
                })
                .cloned()
                .collect();
            if kept.is_empty() {
                out.remove("required");
            } else {
                out.insert("required".into(), Value::Array(kept));
            }
        }
    }

    /// `items` walked (a tuple form keeps its first schema). Gemini refuses an array without
    /// `items`, so one that names none gets string items.
    fn items(
        &self,
        input: &Map<String, Value>,
        out: &mut Map<String, Value>,
        depth: usize,
        refs: usize,
    ) {
        let items = match input.get("items") {
            Some(Value::Array(tuple)) => tuple.first(),
            other => other,
        };
        if let Some(items) = items {
            out.insert("items".into(), self.walk(items, depth + 1, refs));
        } else if out.get("type").and_then(Value::as_str) == Some("array")
            && !out.contains_key("items")
        {
            out.insert("items".into(), json!({"type": "string"}));
        }
    }
}

/// The non-null type names of a `type` array, and whether `"null"` was among them.
fn split_types(types: &[Value]) -> (Vec<&str>, bool) {
    let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
    let has_null = names.contains(&"null");
    (
        names.into_iter().filter(|t| *t != "null").collect(),
        has_null,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_keywords_are_dropped() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$id": "urn:x",
            "title": "Args",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "when": {"type": "string", "format": "date-time", "default": "now", "examples": ["x"]},
                "mail": {"type": "string", "format": "email", "title": "Mail"},
                "n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 5}
            },
            "required": ["when", "ghost"]
        });
        assert_eq!(
            sanitize_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "when": {"type": "string", "format": "date-time"},
                    "mail": {"type": "string"},
                    "n": {"type": "integer", "minimum": 1}
                },
                "required": ["when"]
            })
        );
    }

    #[test]
    fn nullable_forms_become_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string", "description": "A"}, {"type": "null"}]},
                "b": {"type": ["integer", "null"]},
                "c": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "number"}}]},
                "d": {"type": ["string", "number"]},
                "e": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "f": {"enum": ["x", null], "type": "string"}
            }
        });
        let out = sanitize_schema(&schema);
        let p = &out["properties"];
        assert_eq!(
            p["a"],
            json!({"type": "string", "description": "A", "nullable": true})
        );
        assert_eq!(p["b"], json!({"type": "integer", "nullable": true}));
        assert_eq!(
            p["c"],
            json!({"type": "array", "items": {"type": "number"}, "nullable": true})
        );
        assert_eq!(
            p["d"],
            json!({"anyOf": [{"type": "string"}, {"type": "number"}]})
        );
        assert_eq!(
            p["e"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
        );
        assert_eq!(
            p["f"],
            json!({"type": "string", "enum": ["x"], "nullable": true})
        );
    }

    #[test]
    fn const_becomes_a_single_value_enum() {
        assert_eq!(
            sanitize_schema(&json!({"const": "fixed"})),
            json!({"type": "string", "enum": ["fixed"]})
        );
        assert_eq!(
            sanitize_schema(&json!({"type": "integer", "const": 3})),
            json!({"type": "integer", "enum": [3]})
        );
    }

    #[test]
    fn refs_are_inlined_from_defs_and_definitions() {
        let schema = json!({
            "type": "object",
            "$defs": {"Point": {"type": "object", "title": "Point", "properties": {"x": {"type": "number"}}}},
            "definitions": {"Tag": {"type": "string", "enum": ["a", "b"]}},
            "properties": {
                "at": {"$ref": "#/$defs/Point", "description": "where"},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
                "lost": {"$ref": "#/$defs/Missing"}
            }
        });
        assert_eq!(
            sanitize_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "at": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                    "lost": {"type": "object"}
                }
            })
        );
    }

    #[test]
    fn recursive_refs_stop_at_the_depth_limit() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"
        });
        let mut node = &sanitize_schema(&schema);
        let mut levels = 0;
        while let Some(child) = node.get("properties").and_then(|p| p.get("child")) {
            node = child;
            levels += 1;
        }
        assert_eq!(levels, MAX_REF_DEPTH);
        assert_eq!(node, &json!({"type": "object"}));
    }

    #[test]
    fn all_of_is_merged_and_arrays_get_items() {
        let schema = json!({
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "array"}}, "required": ["b", "a"]}
            ]
        });
        assert_eq!(
            sanitize_schema(&schema),
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}},
                "required": ["a", "b"]
            })
        );
    }

    #[test]
    fn odd_input_never_panics() {
        for odd in [
            json!(true),
            json!(null),
            json!([1, 2]),
            json!({"type": 7, "properties": []}),
            json!({"anyOf": "x", "items": [], "required": "a", "enum": []}),
            json!({"$ref": 5}),
        ] {
            let _ = sanitize_schema(&odd);
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "array", "items": deep});
        }
        assert!(sanitize_schema(&deep).is_object());
    }
}
