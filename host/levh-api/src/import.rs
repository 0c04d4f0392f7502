//! Reading memories to import (`levh import`): what `GET /api/export` writes (an object
//! with `memories`), a JSON array of memories, or JSON Lines (one memory per line). Each
//! memory needs `content`; `project`, `kind`, `importance`, `pinned` (or `pin`),
//! `valid_from`, `valid_to` and `metadata` are kept. An item of levh's own export (with
//! `id` and `stability_hours`) also keeps its id, decay state (stability, recalls, last
//! recall, creation), source and the memory that superseded it; derived values (retention,
//! scores) are computed again. The items then go through the gate in batches
//! ([`crate::memories::store_batch`]).

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::requests::StoreArgs;
use crate::{Error, Result};

/// One memory read from the input, or why it could not be read, with where it was.
#[derive(Debug)]
pub struct ImportItem {
    /// `line 12` (JSON Lines) or `memories[3]` (a JSON document).
    pub location: String,
    /// The memory, or what was wrong with it.
    pub memory: std::result::Result<StoreArgs, String>,
}

/// The memories in `text`. An unreadable document is an error; an unreadable memory in a
/// readable document is that item's error, and the others are kept.
pub fn parse(text: &str) -> Result<Vec<ImportItem>> {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return Err(Error::invalid("the input is empty: nothing to import"));
    }
    // A whole JSON document (an export or an array) parses as one value; JSON Lines with
    // more than one line does not. The document is parsed once as what its first
    // character says, only cut into its memories' texts, each memory then parsed on its
    // own: a tree of a whole 1M-memory export (850 MB) took 7 GB.
    let document: Option<Vec<&RawValue>> = match trimmed.as_bytes().first() {
        Some(b'[') => serde_json::from_str(trimmed).ok(),
        Some(b'{') => match serde_json::from_str::<BTreeMap<String, &RawValue>>(trimmed) {
            Ok(fields) => match fields.get("memories") {
                Some(list) => Some(
                    serde_json::from_str(list.get())
                        .map_err(|_| Error::invalid("`memories` is not an array"))?,
                ),
                // One memory on one line is JSON Lines of one.
                None => {
                    return Ok(vec![ImportItem {
                        location: "line 1".to_owned(),
                        memory: item(trimmed),
                    }]);
                }
            },
            Err(_) => None,
        },
        _ if serde_json::from_str::<&RawValue>(trimmed).is_ok() => {
            return Err(Error::invalid(
                "expected an export ({\"memories\": [...]}), a JSON array of memories or JSON Lines",
            ));
        }
        _ => None,
    };
    if let Some(items) = document {
        return Ok(items
            .into_iter()
            .enumerate()
            .map(|(index, raw)| ImportItem {
                location: format!("memories[{index}]"),
                memory: item(raw.get()),
            })
            .collect());
    }
    Ok(trimmed
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| ImportItem {
            location: format!("line {}", number + 1),
            memory: item(line),
        })
        .collect())
}

/// The fields of one exported or hand-written memory that an import keeps.
/// The longest text one memory may take in the input: its content at the gate's limit
/// (32,000 characters, up to 4 bytes each, escaped), its metadata at its cap (64 KiB), and
/// room for the rest. A longer item is refused by its size, before it is parsed: a 200 MB
/// line once took 2.6 GB to turn into a tree only to be rejected.
pub const MAX_ITEM_BYTES: usize = 512 * 1024;

/// One item's text parsed, unless it is too long to be a memory.
fn item(raw: &str) -> std::result::Result<StoreArgs, String> {
    if raw.len() > MAX_ITEM_BYTES {
        return Err(format!(
            "{} bytes: longer than any memory can be ({} KiB at most: 32,000 characters of content and 64 KiB of metadata); not read",
            raw.len(),
            MAX_ITEM_BYTES / 1024
        ));
    }
    serde_json::from_str::<Value>(raw)
        .map_err(|error| format!("not JSON: {error}"))
        .and_then(memory)
}

fn memory(value: Value) -> std::result::Result<StoreArgs, String> {
    let Value::Object(object) = value else {
        return Err("a memory must be a JSON object with `content`".to_owned());
    };
    let text = |field: &str| -> std::result::Result<Option<String>, String> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{field}` must be text, not {other}")),
        }
    };
    let content = text("content")?.ok_or("`content` is missing")?;
    let importance = match object.get("importance") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_f64()
                .ok_or_else(|| format!("`importance` must be a number, not {value}"))?,
        ),
    };
    let pin = match object.get("pinned").or_else(|| object.get("pin")) {
        None | Some(Value::Null) => None,
        Some(Value::Bool(pinned)) => Some(*pinned),
        Some(other) => return Err(format!("`pinned` must be true or false, not {other}")),
    };
    let metadata = match object.get("metadata") {
        None | Some(Value::Null) => None,
        Some(value @ Value::Object(_)) => Some(value.clone()),
        Some(other) => return Err(format!("`metadata` must be a JSON object, not {other}")),
    };
    let prior = prior(&object, &text)?;
    Ok(StoreArgs {
        content,
        project: text("project")?,
        kind: text("kind")?,
        importance,
        pin,
        valid_from: text("valid_from")?,
        valid_to: text("valid_to")?,
        session_id: None,
        metadata,
        prior,
    })
}

/// The memory's own record when the item is one of levh's export (it has an `id` and a
/// `stability_hours`): kept, so an import reproduces the memory. Other inputs start
/// afresh.
fn prior(
    object: &serde_json::Map<String, Value>,
    text: &dyn Fn(&str) -> std::result::Result<Option<String>, String>,
) -> std::result::Result<Option<levh_core::PriorMemory>, String> {
    let (Some(id), Some(stability)) = (text("id")?, object.get("stability_hours")) else {
        return Ok(None);
    };
    let id = id
        .parse()
        .map_err(|_| format!("`id` is not a memory id: {id:?}"))?;
    let stability_hours = stability
        .as_f64()
        .filter(|h| h.is_finite() && *h > 0.0)
        .ok_or_else(|| format!("`stability_hours` must be a positive number, not {stability}"))?;
    let recall_count = match object.get("recall_count") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`recall_count` must be a whole number, not {value}"))?,
    };
    let when = |field: &str| -> std::result::Result<Option<levh_core::Timestamp>, String> {
        text(field)?
            .map(|t| {
                levh_core::parse_instant(&t)
                    .ok_or_else(|| format!("`{field}` is not a time: {t:?}"))
            })
            .transpose()
    };
    let superseded_by = text("superseded_by")?
        .map(|s| {
            s.parse()
                .map_err(|_| format!("`superseded_by` is not a memory id: {s:?}"))
        })
        .transpose()?;
    Ok(Some(levh_core::PriorMemory {
        id,
        source: text("source")?,
        stability_hours,
        recall_count,
        last_recalled_at: when("last_recalled_at")?,
        created_at: when("created_at")?.ok_or("`created_at` is missing from an exported memory")?,
        superseded_by,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_an_array_and_json_lines_all_read_with_each_bad_item_named() {
        let export = r#"{"memories": [{"id": "x", "content": "one", "project": "p", "retention": 0.4},
                                      {"content": 5}]}"#;
        let items = parse(export).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].memory.as_ref().unwrap().project.as_deref(),
            Some("p")
        );
        assert_eq!(items[1].location, "memories[1]");
        assert!(
            items[1]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("`content` must be text")
        );

        let lines = "{\"content\": \"a\", \"pinned\": true}\n\n{oops\n{\"kind\": \"note\"}\n";
        let items = parse(lines).unwrap();
        let locations: Vec<&str> = items.iter().map(|i| i.location.as_str()).collect();
        assert_eq!(locations, ["line 1", "line 3", "line 4"]);
        assert_eq!(items[0].memory.as_ref().unwrap().pin, Some(true));
        assert!(
            items[1]
                .memory
                .as_ref()
                .unwrap_err()
                .starts_with("not JSON")
        );
        assert!(
            items[2]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("`content` is missing")
        );

        assert!(parse("  ").is_err());
        assert!(parse("42").is_err());
        assert!(parse(r#"{"memories": {"content": "a"}}"#).is_err());
        assert!(parse(r#"{"memories": null}"#).is_err());
        let single = parse(r#"{"content": "alone", "kind": "fact"}"#).unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].location, "line 1");
        assert_eq!(single[0].memory.as_ref().unwrap().content, "alone");
        let array = parse(r#"[{"content": "a"}, [], {"content": "b"}]"#).unwrap();
        assert_eq!(array.len(), 3);
        assert!(
            array[1]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("JSON object")
        );
    }

    #[test]
    fn an_item_longer_than_any_memory_is_refused_by_its_size_and_the_others_are_read() {
        let huge = format!("{{\"content\": \"{}\"}}", "a".repeat(MAX_ITEM_BYTES));
        let lines = format!("{{\"content\": \"before\"}}\n{huge}\n{{\"content\": \"after\"}}\n");
        let items = parse(&lines).unwrap();
        assert_eq!(items.len(), 3);
        let refused = items[1].memory.as_ref().unwrap_err();
        assert!(refused.contains("longer than any memory"), "{refused}");
        assert_eq!(items[2].memory.as_ref().unwrap().content, "after");
        let document = format!("{{\"memories\": [{huge}, {{\"content\": \"kept\"}}]}}");
        let items = parse(&document).unwrap();
        assert!(items[0].memory.is_err());
        assert_eq!(items[1].memory.as_ref().unwrap().content, "kept");
    }
}
