//! What callers send: the request types of the operations, each with a JSON schema (the
//! MCP tools' input schemas and the OpenAPI document's bodies and queries come from
//! these), and their conversion into the engine's requests, validated once here.
//!
//! The shared checks (ids, times, kinds, limits, the closest valid argument) are here;
//! the types are in one file per area, as the operations are (memories, recall, the
//! gate, the workspace, connectors, knowledge, entities), all re-exported here.

use std::collections::BTreeMap;

use levh_core::{HeldId, Kind, MemoryId, NewMemory, RecallRequest, SessionId, Timestamp};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::Error;

/// A memory id from the text a caller gave in `field`.
pub fn memory_id(field: &'static str, text: &str) -> Result<MemoryId, Error> {
    text.trim().parse::<MemoryId>().map_err(|_| {
        Error::invalid(format!(
            "invalid {field}: '{text}' is not a memory id (expected a UUID)"
        ))
    })
}

/// A held candidate's id from the text a caller gave in `field`.
pub fn held_id(field: &'static str, text: &str) -> Result<HeldId, Error> {
    text.trim().parse::<HeldId>().map_err(|_| {
        Error::invalid(format!(
            "invalid {field}: '{text}' is not a held candidate id (expected a UUID)"
        ))
    })
}

/// An optional RFC 3339 time from `field`. A time past the last instant levh can hold
/// (9999-12-30) means "whenever": it is clamped to that instant, not refused.
pub fn time(field: &'static str, text: Option<&str>) -> Result<Option<Timestamp>, Error> {
    text.map(|t| {
        levh_core::parse_instant(t).ok_or_else(|| {
            Error::invalid(format!(
                "invalid {field}: '{}' is not an RFC 3339 time like 2026-11-30T09:00:00Z (or a date like 2026-11-30)",
                t.trim()
            ))
        })
    })
    .transpose()
}

/// An optional memory kind.
pub fn kind(text: Option<&str>) -> Result<Option<Kind>, Error> {
    text.map(|k| Kind::new(k).map_err(|e| Error::invalid(e.to_string())))
        .transpose()
}

/// A page size in 1..=1000 (`default` when not given).
pub fn limit(value: Option<usize>, default: usize) -> Result<usize, Error> {
    let limit = value.unwrap_or(default);
    if limit == 0 || limit > 1000 {
        return Err(Error::invalid(format!(
            "invalid limit: {limit} is outside 1..1000"
        )));
    }
    Ok(limit)
}

mod assistant;
mod connectors;
mod entities;
mod gate;
mod knowledge;
mod memories;
mod recall;
mod workspace;

pub use assistant::*;
pub use connectors::*;
pub use entities::*;
pub use gate::*;
pub use knowledge::*;
pub use memories::*;
pub use recall::*;
pub use workspace::*;

/// serde's refusal of an unknown argument ("unknown field `asof`, expected one of
/// `query`, …, `as_of`") with the closest valid name added ("… did you mean `as_of`?"),
/// for every surface that reads arguments (MCP tools, REST bodies and query strings).
/// Other messages are returned as they are.
pub fn suggest_known_field(message: &str) -> String {
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_owned();
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let closest = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|name| (strsim::normalized_damerau_levenshtein(unknown, name), name))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((similarity, name)) if similarity >= 0.5 => {
            format!("{message}; did you mean `{name}`?")
        }
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    #[test]
    fn an_unknown_argument_is_named_with_the_closest_valid_one() {
        let refused = serde_json::from_value::<RecallArgs>(
            serde_json::json!({ "query": "deploys", "asof": "2026-01-01" }),
        )
        .unwrap_err()
        .to_string();
        let told = suggest_known_field(&refused);
        assert!(told.contains("unknown field `asof`"), "{told}");
        assert!(told.ends_with("did you mean `as_of`?"), "{told}");
        let refused = serde_json::from_value::<ListArgs>(serde_json::json!({ "projet": "api" }))
            .unwrap_err()
            .to_string();
        assert!(
            suggest_known_field(&refused).ends_with("did you mean `project`?"),
            "{refused}"
        );
        // Nothing close: no guess.
        let refused = serde_json::from_value::<ContextArgs>(serde_json::json!({ "zzzzzz": 1 }))
            .unwrap_err()
            .to_string();
        assert_eq!(suggest_known_field(&refused), refused);
        assert_eq!(suggest_known_field("invalid type"), "invalid type");
    }
}
