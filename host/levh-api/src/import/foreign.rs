//! Other memory products' exports, read into levh memories (each then goes through the
//! gate like any import; a second import of the same file stores nothing, the gate
//! rejecting each as a duplicate of its first import):
//!
//! - **The Python levh** (`levh export-full`, 2.x: `{"format": "levh-full-export",
//!   "memories": [...]}`, also a bare array of its records): a record has `memory_type`
//!   (`episodic`, `short_term`), `tags`, a 32-hex `id`, `decay_factor`. Content, project,
//!   importance, pin and when it was valid are kept; its kind is read from its tags
//!   (`levh-rule` → `rule`, `decision`, `preference`, `convention`, else `note`); its own id,
//!   tags, type, source and metadata are kept under `metadata.import`. Its decay state is
//!   not: the Python levh's stability follows other rules, so the memory starts afresh.
//! - **The MCP memory server** (`@modelcontextprotocol/server-memory`, its `memory.jsonl`):
//!   a line `{"type": "entity", "name", "entityType", "observations": [...]}` becomes one
//!   memory per observation ("Amara Okafor (person): Tech lead of …", kind `fact`), or one
//!   saying what it is when nothing is observed; a line `{"type": "relation", "from",
//!   "to", "relationType"}` becomes one memory ("Amara Okafor works at Kestrel Labs", kind
//!   `relation`). Each names its entity in `metadata.import`.

use serde_json::{Map, Value, json};

use crate::requests::StoreArgs;

type Object = Map<String, Value>;

/// A line of the MCP memory server's file.
pub(super) fn is_mcp_memory(object: &Object) -> bool {
    matches!(
        object.get("type").and_then(Value::as_str),
        Some("entity" | "relation")
    ) && !object.contains_key("content")
}

/// A record of the Python levh's export.
pub(super) fn is_python_levh(object: &Object) -> bool {
    object.contains_key("memory_type") && object.contains_key("content")
}

fn text<'o>(object: &'o Object, field: &str) -> Result<Option<&'o str>, String> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!("`{field}` must be text, not {other}")),
    }
}

fn required<'o>(object: &'o Object, field: &str) -> Result<&'o str, String> {
    text(object, field)?
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| format!("`{field}` is missing"))
}

fn fresh(content: String, kind: &str, metadata: Value) -> StoreArgs {
    StoreArgs {
        content,
        project: None,
        kind: Some(kind.to_owned()),
        importance: None,
        pin: None,
        valid_from: None,
        valid_to: None,
        session_id: None,
        metadata: Some(metadata),
        prior: None,
    }
}

/// The memories of one line of the MCP memory server's file.
pub(super) fn mcp_memory(object: &Object) -> Result<Vec<StoreArgs>, String> {
    match object.get("type").and_then(Value::as_str) {
        Some("entity") => {
            let name = required(object, "name")?;
            let kind = text(object, "entityType")?.unwrap_or("entity");
            let observations: Vec<&str> = match object.get("observations") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|o| {
                        o.as_str()
                            .ok_or_else(|| format!("`observations` must hold text, not {o}"))
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(format!("`observations` must be a list, not {other}")),
            };
            let metadata = json!({"import": {
                "from": "mcp-memory",
                "entity": name,
                "entity_type": kind,
            }});
            let observed: Vec<&str> = observations
                .into_iter()
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .collect();
            if observed.is_empty() {
                return Ok(vec![fresh(
                    format!("{name} is a {kind}."),
                    "fact",
                    metadata,
                )]);
            }
            Ok(observed
                .into_iter()
                .map(|o| fresh(format!("{name} ({kind}): {o}"), "fact", metadata.clone()))
                .collect())
        }
        _ => {
            let (from, to) = (required(object, "from")?, required(object, "to")?);
            let relation = required(object, "relationType")?;
            let words = relation.replace(['_', '-'], " ");
            Ok(vec![fresh(
                format!("{from} {} {to}.", words.trim()),
                "relation",
                json!({"import": {
                    "from": "mcp-memory",
                    "entity": from,
                    "relation": relation,
                    "to": to,
                }}),
            )])
        }
    }
}

/// One record of the Python levh's export.
pub(super) fn python_levh(object: &Object) -> Result<StoreArgs, String> {
    let content = required(object, "content")?.to_owned();
    let tags: Vec<&str> = match object.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(other) => return Err(format!("`tags` must be a list, not {other}")),
    };
    let kind = if tags.contains(&"levh-rule") {
        "rule"
    } else {
        ["decision", "preference", "convention"]
            .into_iter()
            .find(|k| tags.contains(k))
            .unwrap_or("note")
    };
    let importance = super::importance(object)?;
    let pin = super::pinned(object.get("pinned"))?;
    // Its times are RFC 3339 with an offset; one without (its own parser allows that) is
    // taken as UTC.
    let time = |field: &str| -> Result<Option<String>, String> {
        let Some(at) = text(object, field)? else {
            return Ok(None);
        };
        let at = at.trim();
        let with_zone = if at.parse::<jiff::civil::DateTime>().is_ok()
            && at.parse::<jiff::Timestamp>().is_err()
        {
            format!("{at}Z")
        } else {
            at.to_owned()
        };
        levh_core::parse_instant(&with_zone)
            .map(|_| Some(with_zone))
            .ok_or_else(|| format!("`{field}` is not a time: {at:?}"))
    };
    let valid_from = match time("valid_from")? {
        Some(at) => Some(at),
        None => time("created_at")?,
    };
    let mut kept = Map::new();
    for field in ["id", "memory_type", "source", "session_id", "created_at"] {
        if let Some(value) = object.get(field).filter(|v| !v.is_null()) {
            kept.insert(field.to_owned(), value.clone());
        }
    }
    kept.insert("from".into(), "python-levh".into());
    kept.insert("tags".into(), json!(tags));
    if let Some(metadata) = object.get("metadata").filter(|m| m.is_object()) {
        let mut metadata = metadata.clone();
        // How it was embedded there says nothing here.
        if let Some(fields) = metadata.as_object_mut() {
            fields.remove("embedding_provenance");
        }
        kept.insert("metadata".into(), metadata);
    }
    Ok(StoreArgs {
        content,
        project: text(object, "project")?.map(str::to_owned),
        kind: Some(kind.to_owned()),
        importance,
        pin,
        valid_from,
        valid_to: time("valid_to")?,
        session_id: None,
        metadata: Some(json!({ "import": kept })),
        prior: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn an_entity_is_a_memory_per_observation_and_a_relation_one_sentence() {
        let entity = object(
            json!({"type": "entity", "name": "Ada", "entityType": "person",
            "observations": ["Writes the compiler", " ", "Prefers tabs"]}),
        );
        let memories = mcp_memory(&entity).unwrap();
        let texts: Vec<&str> = memories.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Ada (person): Writes the compiler",
                "Ada (person): Prefers tabs"
            ]
        );
        let bare = object(json!({"type": "entity", "name": "Acme", "entityType": "organization"}));
        assert_eq!(
            mcp_memory(&bare).unwrap()[0].content,
            "Acme is a organization."
        );
        let relation = object(
            json!({"type": "relation", "from": "Ada", "to": "Acme", "relationType": "works_at"}),
        );
        let memory = &mcp_memory(&relation).unwrap()[0];
        assert_eq!(memory.content, "Ada works at Acme.");
        assert_eq!(memory.kind.as_deref(), Some("relation"));
        let broken = object(json!({"type": "relation", "from": "Ada"}));
        assert_eq!(mcp_memory(&broken).unwrap_err(), "`to` is missing");
    }

    #[test]
    fn a_python_levh_record_keeps_its_facts_and_names_its_origin() {
        let record = object(
            json!({"id": "b1d3c428e7d747c193896a8152fb5887", "content": "Ship migrations through the pipeline.",
            "memory_type": "episodic", "tags": ["levh-rule"], "project": "ledgerline", "pinned": true,
            "importance": 0.85, "created_at": "2026-10-19T11:48:30.772654+00:00", "valid_from": "2026-10-19T11:48:30",
            "stability_hours": 168.0, "metadata": {"severity": "medium", "embedding_provenance": {"model": "x"}}}),
        );
        let memory = python_levh(&record).unwrap();
        assert_eq!(memory.kind.as_deref(), Some("rule"));
        assert_eq!(memory.pin, Some(true));
        assert_eq!(memory.valid_from.as_deref(), Some("2026-10-19T11:48:30Z"));
        assert!(memory.prior.is_none());
        let kept = &memory.metadata.unwrap()["import"];
        assert_eq!(kept["id"], "b1d3c428e7d747c193896a8152fb5887");
        assert_eq!(kept["metadata"], json!({"severity": "medium"}));
    }
}
