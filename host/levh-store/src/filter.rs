//! [`MemoryFilter`] → an SQL `WHERE` clause over `memories m`, with bound values only.

use levh_core::MemoryFilter;
use rusqlite::types::Value;

use crate::rows::micros;

/// The clause (without `WHERE`) and its values, in order.
pub(crate) fn where_clause(filter: &MemoryFilter) -> (String, Vec<Value>) {
    let mut clauses = vec!["m.workspace = ?".to_owned()];
    let mut values: Vec<Value> = vec![filter.workspace.as_str().to_owned().into()];
    let mut add = |clause: &str, value: Value| {
        clauses.push(clause.to_owned());
        values.push(value);
    };
    if let Some(project) = &filter.project {
        add("m.project = ?", project.clone().into());
    }
    if let Some(kind) = &filter.kind {
        add("m.kind = ?", kind.as_str().to_owned().into());
    }
    if let Some(source) = &filter.source {
        add("m.source = ?", source.clone().into());
    }
    if let Some(after) = filter.created_after {
        add("m.created_at >= ?", micros(after).into());
    }
    if let Some(before) = filter.created_before {
        add("m.created_at < ?", micros(before).into());
    }
    if let Some(at) = filter.valid_at {
        add("m.valid_from <= ?", micros(at).into());
        add("(m.valid_to IS NULL OR m.valid_to > ?)", micros(at).into());
    }
    if let Some(at) = filter.not_retired_at {
        add("(m.valid_to IS NULL OR m.valid_to > ?)", micros(at).into());
    }
    if let Some(pinned) = filter.pinned {
        add("m.pinned = ?", i64::from(pinned).into());
    }
    if let Some(id) = filter.listed_after {
        // Row values in the list's own order; the cursor's row is found once by its id.
        add(
            "(m.created_at, m.seq) < (SELECT c.created_at, c.seq FROM memories c WHERE c.id = ?)",
            id.to_string().into(),
        );
    }
    match filter.known_at {
        Some(known) => {
            add("m.created_at <= ?", micros(known).into());
            add(
                "(m.forgotten_at IS NULL OR m.forgotten_at > ?)",
                micros(known).into(),
            );
        }
        // `IS NULL` written with a bound NULL so every clause goes through `add`.
        None => add("m.forgotten_at IS ?", Value::Null),
    }
    (clauses.join(" AND "), values)
}
