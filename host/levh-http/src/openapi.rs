//! The OpenAPI 3.1 document, generated from the route table and the handlers' types
//! (schemars, JSON Schema 2020-12 — the dialect OpenAPI 3.1 uses).
//!
//! Why not utoipa or aide: utoipa would need its own derive on every engine and view type
//! (they already derive schemars' `JsonSchema` for MCP), and aide's schemars-1 release is
//! still an alpha. The table in `routes.rs` is the single source for both router and
//! document, which is what those crates would have given us.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::routes::{Api, Route};

pub(crate) fn document(api: &Api) -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "#/components/schemas/".into())
        .into_generator();
    let error = Route::error_schema(&mut generator);
    let mut paths = Map::new();
    for operation in &api.routes {
        let mut entry = Map::new();
        entry.insert("summary".into(), json!(operation.summary));
        entry.insert(
            "operationId".into(),
            json!(operation_id(operation.method.as_str(), operation.path)),
        );
        entry.insert(
            "tags".into(),
            json!([operation.path.split('/').nth(2).unwrap_or("api")]),
        );
        entry.insert("x-levh-role".into(), json!(operation.role.as_str()));
        entry.insert("x-levh-operation".into(), json!(operation.operation.name()));
        let mut parameters: Vec<Value> = path_parameters(operation.path);
        if let Some(query) = operation.query {
            let schema = query(&mut generator).to_value();
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    let mut property = property.clone();
                    let description = property
                        .as_object_mut()
                        .and_then(|p| p.remove("description"));
                    let mut parameter = json!({
                        "name": name,
                        "in": "query",
                        "required": required.contains(name),
                        "schema": property,
                    });
                    if let Some(description) = description {
                        parameter["description"] = description;
                    }
                    parameters.push(parameter);
                }
            }
        }
        if !parameters.is_empty() {
            entry.insert("parameters".into(), Value::Array(parameters));
        }
        if let Some(body) = operation.body {
            entry.insert(
                "requestBody".into(),
                json!({
                    "required": true,
                    "content": { "application/json": { "schema": body(&mut generator).to_value() } }
                }),
            );
        }
        let mut responses = Map::new();
        for (status, body) in &operation.responses {
            let mut response = json!({ "description": reason(*status) });
            if let Some(body) = body {
                response["content"] =
                    json!({ "application/json": { "schema": body(&mut generator).to_value() } });
            }
            responses.insert(status.to_string(), response);
        }
        for status in &operation.errors {
            responses.insert(
                status.to_string(),
                json!({
                    "description": reason(*status),
                    "content": { "application/json": { "schema": error.clone().to_value() } }
                }),
            );
        }
        entry.insert("responses".into(), Value::Object(responses));
        let item = paths
            .entry(operation.path.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        item[operation.method.as_str().to_ascii_lowercase()] = Value::Object(entry);
    }
    let schemas: Map<String, Value> = generator.take_definitions(true);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "levh",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "levh's REST API. Every route needs a token (X-LEVH-Token or Authorization: Bearer) when the server runs with LEVH_TOKEN; a token binds one workspace and a role (x-levh-role is the weakest role a route accepts). MCP over streamable HTTP is served at /mcp.",
            "license": { "name": "Apache-2.0", "identifier": "Apache-2.0" }
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "token": { "type": "apiKey", "in": "header", "name": "X-LEVH-Token" },
                "bearer": { "type": "http", "scheme": "bearer" }
            }
        },
        "security": [ { "token": [] }, { "bearer": [] } ]
    })
}

fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            json!({
                "name": name,
                "in": "path",
                "required": true,
                "schema": { "type": "string" },
                "description": "A memory, held-candidate or session id, or a connector id"
            })
        })
        .collect()
}

/// `post /api/memories/{id}/pin` → `post_memories_id_pin`.
fn operation_id(method: &str, path: &str) -> String {
    let mut id = method.to_ascii_lowercase();
    for segment in path.trim_start_matches("/api").split('/') {
        let segment = segment.trim_matches(|c| c == '{' || c == '}');
        if segment.is_empty() {
            continue;
        }
        id.push('_');
        id.extend(
            segment
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
        );
    }
    id
}

fn reason(status: u16) -> &'static str {
    match status {
        101 => "Switching to the WebSocket protocol",
        200 => "OK",
        201 => "Created",
        202 => "Accepted: held for a person's review",
        204 => "Done, no content",
        400 => "The request failed validation; the message names the field",
        401 => "Missing or invalid token",
        403 => "The token's role does not allow this",
        404 => "Not found in this workspace",
        409 => "Already decided",
        413 => "The body is larger than this route accepts; nothing was changed",
        415 => "The body must be JSON (Content-Type: application/json)",
        422 => "The connector run failed",
        429 => "Too many failed authentication attempts",
        503 => "The connector runtime is not available",
        _ => "Internal error (details in the server log)",
    }
}
