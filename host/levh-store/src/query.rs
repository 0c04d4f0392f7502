//! The SQL text the store's reads are built from: a [`MemoryFilter`] as a `WHERE` clause
//! with bound values only, lookups by lists of ids, counts written into `LIMIT`, and the
//! gate's near-duplicate lookup. (The memory columns and their reader stay together in
//! `rows.rs`: the reader reads them by position.)

use levh_core::{ListOrder, MemoryFilter};
use rusqlite::types::Value;

use crate::rows::{MEMORY_COLUMNS, MEMORY_FROM, micros};

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
    if let Some(except) = &filter.working_except {
        // No session id is empty: `<> ''` leaves out every session's working memory.
        let session = except.as_ref().map_or("", |s| s.as_str());
        add(
            "NOT EXISTS (SELECT 1 FROM working_memories w WHERE w.memory_seq = m.seq AND w.session_id <> ?)",
            session.to_owned().into(),
        );
    }
    if let Some(entity) = filter.entity {
        // From the entity's side (its own index): a person appears in a few memories of
        // many, so the list walks those, not the workspace.
        add(
            "m.seq IN (SELECT me.memory_seq FROM memory_entities me
                        JOIN entities ent ON ent.seq = me.entity_seq WHERE ent.id = ?)",
            entity.to_string().into(),
        );
    }
    if let Some(id) = filter.listed_after {
        // Row values in the list's own order; the cursor's row is found once by its id.
        let key = order_key(filter.order);
        add(
            &format!(
                "({key}, m.seq) < (SELECT {}, c.seq FROM memories c WHERE c.id = ?)",
                key.replace("m.", "c.")
            ),
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
        None if filter.forgotten => add("m.forgotten_at IS NOT ?", Value::Null),
        None => add("m.forgotten_at IS ?", Value::Null),
    }
    (clauses.join(" AND "), values)
}

/// The column (or expression) a list is ordered by, descending, before the seq that
/// breaks ties. Each has an index led by the workspace (migration 0017), which SQLite
/// walks backwards; never-recalled memories count as recalled at 0 so that the order and
/// its cursor have no NULL to compare.
pub(crate) fn order_key(order: ListOrder) -> &'static str {
    match order {
        ListOrder::Created => "m.created_at",
        ListOrder::Importance => "m.importance",
        ListOrder::Recalled => "coalesce(m.last_recalled_at, 0)",
    }
}

/// `ORDER BY` for a list in `order`.
pub(crate) fn order_by(order: ListOrder) -> String {
    format!("ORDER BY {} DESC, m.seq DESC", order_key(order))
}

/// `+m.workspace = ? AND m.id IN (?, …)` for `n` ids. The `+` keeps the workspace out of
/// index choice so that the unique id drives the lookup: without statistics SQLite rates
/// `workspace = ?` as more selective than a list of ids and walks the whole workspace
/// instead — 120–180 ms at 100k memories for any number of ids, which was most of a
/// recall, a fading list and the gate's candidate reads.
pub(crate) fn by_ids(n: usize) -> String {
    let marks = vec!["?"; n].join(", ");
    format!("+m.workspace = ? AND m.id IN ({marks})")
}

/// Whole memories by id: the workspace, then `n` ids.
pub(crate) fn get_many_sql(n: usize) -> String {
    format!("SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {}", by_ids(n))
}

/// What the gate compares, by id: the columns up to `content` and the short ones after
/// it (source, kind, start), and a row's metadata — often on overflow pages, up to 64 KiB
/// — only for events, whose source id tells one calendar's events apart. The workspace,
/// then `n` ids.
pub(crate) fn compared_texts_sql(n: usize) -> String {
    format!(
        "SELECT m.id, m.pinned, m.content, m.source,
                CASE WHEN m.kind = 'event' THEN json_extract(m.metadata, '$.source_id') END,
                m.kind, m.valid_from
         FROM memories m WHERE {}",
        by_ids(n)
    )
}

/// What ranking reads, by id (no join, no JSON): the workspace, then `n` ids.
pub(crate) fn ranking_rows_sql(n: usize) -> String {
    format!(
        "SELECT m.id, m.importance, m.pinned, m.stability_hours, m.last_recalled_at,
                m.recall_count, m.created_at, m.valid_from
         FROM memories m WHERE {}",
        by_ids(n)
    )
}

/// Stored vectors of one model by memory id: the model, the workspace, then `n` ids.
pub(crate) fn embeddings_sql(n: usize) -> String {
    format!(
        "SELECT m.id, e.vector FROM memory_embeddings e JOIN memories m ON m.seq = e.memory_seq
         WHERE e.model = ? AND {}",
        by_ids(n)
    )
}

/// A count for a `LIMIT` or `OFFSET`, written into the SQL instead of bound: SQLite
/// prepares a statement again every time a `LIMIT` parameter is bound (its value can
/// change the plan), which was a sixth of the gate's lookup per item and part of every
/// recall. Distinct counts make distinct cached statements; callers use a few.
pub(crate) fn sql_limit(count: usize) -> i64 {
    count.min(i64::MAX as usize) as i64
}

/// The gate's lookup of memories sharing near-duplicate keys with a text, most shared
/// first: its SQL and parameters.
pub(crate) fn near_duplicates_query(
    filter: &MemoryFilter,
    keys: &[i64],
    limit: usize,
) -> (String, Vec<Value>) {
    let (clause, values) = where_clause(filter);
    // The keys are bound once (?1..?n) and read in both tables of keys (the large
    // index and the recent keys not yet merged into it; each pair is in one of them).
    // The limit is written into the SQL ([`sql_limit`]).
    let marks = (1..=keys.len())
        .map(|n| format!("?{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    // CROSS JOIN: start from the (indexed) keys, never from the workspace.
    let sql = format!(
        "SELECT m.id FROM (
             SELECT memory_seq FROM near_duplicate_keys WHERE key IN ({marks})
             UNION ALL
             SELECT memory_seq FROM near_duplicate_keys_recent WHERE key IN ({marks})
         ) k CROSS JOIN memories m ON m.seq = k.memory_seq
         WHERE {clause}
         GROUP BY m.seq ORDER BY count(*) DESC, m.seq DESC LIMIT {limit}",
        limit = sql_limit(limit)
    );
    let params = keys
        .iter()
        .map(|key| Value::from(*key))
        .chain(values)
        .collect();
    (sql, params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use levh_core::{Actor, Store, Timestamp, Workspace};
    use rusqlite::{Connection, params_from_iter};

    use crate::SqliteStore;

    /// The gate looks for near-duplicates of every item it judges: its statement is
    /// prepared once, not again for each new set of keys, project or time (SQLite built
    /// with STAT4 re-prepares a statement whenever a parameter it estimated rows with
    /// changes, once statistics exist, as `PRAGMA optimize` leaves them).
    #[test]
    fn near_duplicate_lookups_are_not_prepared_again_for_new_values() {
        use rusqlite::StatementStatus;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("levh.db");
        let store = SqliteStore::open(&path).unwrap();
        let content = |n: usize| format!("note {n} about the {} cluster", ["alpha", "beta"][n % 2]);
        for n in 0..300 {
            let at = Timestamp::from_second(1_700_000_000 + n as i64).unwrap();
            let project = ["atlas", "vega", "orion"][n % 3];
            let mut record = crate::test_records::record(content(n), at, "default", project, None);
            record.near_duplicate_keys = levh_core::text::near_duplicate_keys(&content(n));
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
        }
        store.lock().execute_batch("ANALYZE").unwrap();
        let connection = Connection::open(&path).unwrap();
        let mut runs = 0;
        let mut reprepared = 0;
        for n in 0..12 {
            let filter = MemoryFilter {
                project: Some(["atlas", "vega", "orion"][n % 3].to_owned()),
                not_retired_at: Some(Timestamp::from_second(1_700_000_000 + n as i64).unwrap()),
                ..MemoryFilter::workspace(Workspace::default())
            };
            let keys = levh_core::text::near_duplicate_keys(&content(n * 7));
            let (sql, params) = near_duplicates_query(&filter, &keys, 20);
            let mut statement = connection.prepare_cached(&sql).unwrap();
            let found: Vec<String> = statement
                .query_map(params_from_iter(params), |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            runs += usize::from(!found.is_empty());
            reprepared += statement.reset_status(StatementStatus::RePrepare);
        }
        assert!(runs >= 4, "the lookups found their items ({runs} of 12)");
        assert_eq!(reprepared, 0);
    }

    /// Lookups by a list of ids go through the unique id index at any list length, never
    /// through a workspace index (which walks every memory of the workspace).
    #[test]
    fn lookups_by_id_are_driven_by_the_ids() {
        let store = SqliteStore::open_in_memory().unwrap();
        let conn = store.lock();
        for n in [1, 20, 500] {
            for (name, sql, fixed) in [
                ("get_many", get_many_sql(n), 1),
                ("compared_texts", compared_texts_sql(n), 1),
                ("ranking_rows", ranking_rows_sql(n), 1),
                ("embeddings", embeddings_sql(n), 2),
            ] {
                let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
                let params = (0..fixed + n).map(|i| format!("v{i}"));
                let plan: Vec<String> = statement
                    .query_map(params_from_iter(params), |row| row.get(3))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let walks_workspace = plan.iter().any(|step| step.contains("workspace"));
                let by_id = plan
                    .iter()
                    .any(|step| step.contains("sqlite_autoindex_memories_1 (id=?)"));
                assert!(by_id && !walks_workspace, "{name} with {n} ids: {plan:?}");
            }
        }
    }
}
