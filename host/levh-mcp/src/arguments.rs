//! What real MCP clients need of tool schemas and argument errors.
//!
//! - [`interoperable_tool`]: schemars writes an optional argument as `"type": ["number",
//!   "null"]` and integers with formats such as `uint32`. MCP Inspector's CLI sends every
//!   `--tool-arg` as a string unless the schema types it as a plain `number`/`boolean`, so
//!   `importance`, `pin` and `limit` could not be set from it, and its validator warns on
//!   each non-standard format. An optional argument is one left out of `required`; its
//!   type is the plain one, and only the formats JSON Schema defines are kept. (Output
//!   schemas keep their `null`s: a result does say `"held_id": null`.)
//! - [`Parameters`]: rmcp's wrapper of the same name reports "expected f64" without
//!   saying which argument; this one deserialises with `serde_path_to_error`, so the
//!   error names it ("argument `importance`: invalid type: string, expected f64"). The `#[tool]`
//!   macro finds the argument type by this name, so tools use it unchanged.

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// The formats JSON Schema 2020-12 defines; validators know these.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops non-standard formats and, for `input`, the `null` of optional types, recursively.
fn rewrite(schema: &mut JsonObject, input: bool) {
    if let Some(serde_json::Value::String(format)) = schema.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        schema.remove("format");
    }
    if input && let Some(serde_json::Value::Array(types)) = schema.get("type") {
        let named: Vec<serde_json::Value> =
            types.iter().filter(|t| *t != "null").cloned().collect();
        if named.len() == 1 && named.len() < types.len() {
            schema.insert("type".into(), named[0].clone());
        }
    }
    for value in schema.values_mut() {
        match value {
            serde_json::Value::Object(inner) => rewrite(inner, input),
            serde_json::Value::Array(items) => {
                for item in items {
                    if let serde_json::Value::Object(inner) = item {
                        rewrite(inner, input);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A tool with its input schema's optional types made plain and both schemas rid of
/// non-standard formats.
pub fn interoperable_tool(mut tool: Tool) -> Tool {
    let mut input = (*tool.input_schema).clone();
    rewrite(&mut input, true);
    tool.input_schema = std::sync::Arc::new(input);
    if let Some(output) = &tool.output_schema {
        let mut output = (**output).clone();
        rewrite(&mut output, false);
        tool.output_schema = Some(std::sync::Arc::new(output));
    }
    tool
}

/// A tool's arguments, deserialised so that an error names the argument at fault.
#[derive(Debug, Clone)]
pub struct Parameters<P>(pub P);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<S, P: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(context: &mut ToolCallContext<S>) -> Result<Self, rmcp::ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        serde_path_to_error::deserialize(serde_json::Value::Object(arguments))
            .map(Parameters)
            .map_err(|error| {
                // rmcp's router turns an error with this prefix into a tool result the
                // agent reads (isError), not a protocol fault: keep it.
                let path = error.path().to_string();
                let inner = levh_api::requests::suggest_known_field(&error.inner().to_string());
                let message = if path == "." {
                    format!("failed to deserialize parameters: {inner}")
                } else {
                    format!("failed to deserialize parameters: argument `{path}`: {inner}")
                };
                rmcp::ErrorData::invalid_params(message, None)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_types_are_plain_and_only_standard_formats_stay() {
        let mut schema: JsonObject = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {
                "importance": {"type": ["number", "null"], "format": "double"},
                "limit": {"type": ["integer", "null"], "format": "uint", "minimum": 0},
                "pin": {"type": ["boolean", "null"]},
                "at": {"type": "string", "format": "date-time"},
                "either": {"type": ["string", "integer"]},
                "items": {"type": "array", "items": {"type": "integer", "format": "uint64"}}
            },
            "$defs": {"X": {"type": "integer", "format": "uint32"}}
        }))
        .unwrap();
        rewrite(&mut schema, true);
        let p = &schema["properties"];
        assert_eq!(p["importance"], serde_json::json!({"type": "number"}));
        assert_eq!(
            p["limit"],
            serde_json::json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(p["pin"], serde_json::json!({"type": "boolean"}));
        assert_eq!(p["at"]["format"], "date-time");
        assert_eq!(
            p["either"]["type"],
            serde_json::json!(["string", "integer"])
        );
        assert_eq!(p["items"]["items"], serde_json::json!({"type": "integer"}));
        assert_eq!(schema["$defs"]["X"], serde_json::json!({"type": "integer"}));

        let mut output: JsonObject = serde_json::from_value(serde_json::json!({
            "properties": {"held_id": {"type": ["string", "null"]}, "n": {"type": "integer", "format": "uint64"}}
        }))
        .unwrap();
        rewrite(&mut output, false);
        assert_eq!(
            output["properties"]["held_id"]["type"],
            serde_json::json!(["string", "null"])
        );
        assert_eq!(
            output["properties"]["n"],
            serde_json::json!({"type": "integer"})
        );
    }
}
