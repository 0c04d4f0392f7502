//! Reading memories: one live memory, memories (or their ranking rows, texts and
//! vectors) by lists of ids, whether an id is taken, pages of a filtered list, counts,
//! the gate's near-duplicate lookup, forgotten memories, every stored text, and the
//! memories whose vector is stale.

use levh_core::{
    ComparedText, Memory, MemoryFilter, MemoryId, Page, RankingRow, StaleEmbedding, StoredText,
    Timestamp, Workspace,
};
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use crate::query::{
    compared_texts_sql, embeddings_sql, get_many_sql, near_duplicates_query, ranking_rows_sql,
    sql_limit, where_clause,
};
use crate::rows::{self, MEMORY_COLUMNS, MEMORY_FROM, read_memory};
use crate::{SqliteStore, SqliteStoreError, vectors};

/// Reads one live memory inside a transaction.
pub(crate) fn get_live(
    conn: &Connection,
    workspace: &Workspace,
    id: MemoryId,
) -> Result<Option<Memory>, SqliteStoreError> {
    Ok(conn.prepare_cached(&format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE m.workspace = ?1 AND m.id = ?2 AND m.forgotten_at IS NULL"
    ))?
    .query_row(params![workspace.as_str(), id.to_string()], read_memory)
    .optional()?)
}

/// Runs `sql(n)` — whose parameters are `leading`, the workspace, then `n` ids — over
/// `ids` in chunks far below SQLite's bound-parameter limit, collecting `read` of every
/// row.
pub(crate) fn by_id_chunks<T>(
    conn: &Connection,
    sql: fn(usize) -> String,
    leading: &[&str],
    workspace: &Workspace,
    ids: &[MemoryId],
    mut read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, SqliteStoreError> {
    let mut found = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut statement = conn.prepare_cached(&sql(chunk.len()))?;
        let params = leading
            .iter()
            .map(|value| (*value).to_owned())
            .chain([workspace.as_str().to_owned()])
            .chain(chunk.iter().map(ToString::to_string));
        let rows = statement.query_map(params_from_iter(params), &mut read)?;
        for row in rows {
            found.push(row?);
        }
    }
    Ok(found)
}

/// Whether any workspace has a memory, forgotten ones included, with this id.
pub(crate) fn id_in_use(conn: &Connection, id: MemoryId) -> Result<bool, SqliteStoreError> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
        [id.to_string()],
        |row| row.get(0),
    )?)
}

/// The memories `filter` selects with exactly this content hash.
pub(crate) fn identical(
    conn: &Connection,
    filter: &MemoryFilter,
    content_hash: &str,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    let (clause, values) = crate::query::where_clause(filter);
    let mut statement = conn.prepare_cached(&format!(
        "SELECT m.id FROM memories m WHERE m.content_hash = ? AND {clause}"
    ))?;
    let ids = statement.query_map(
        params_from_iter(std::iter::once(content_hash.to_owned().into()).chain(values)),
        |row| row.get::<_, String>(0),
    )?;
    let mut found = Vec::new();
    for id in ids {
        found.push(rows::parse_id(&id?)?);
    }
    Ok(found)
}

pub(crate) fn ranking_rows(
    conn: &Connection,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<RankingRow>, SqliteStoreError> {
    by_id_chunks(
        conn,
        ranking_rows_sql,
        &[],
        workspace,
        ids,
        rows::read_ranking_row,
    )
}

pub(crate) fn compared_texts(
    conn: &Connection,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<ComparedText>, SqliteStoreError> {
    by_id_chunks(conn, compared_texts_sql, &[], workspace, ids, |row| {
        Ok(ComparedText {
            id: rows::id(row, 0)?,
            pinned: row.get(1)?,
            content: row.get(2)?,
            source: row.get(3)?,
            // A source id a connector wrote as a number still names its item.
            source_id: row.get::<_, Option<rusqlite::types::Value>>(4)?.and_then(
                |value| match value {
                    rusqlite::types::Value::Text(text) => Some(text),
                    rusqlite::types::Value::Integer(n) => Some(n.to_string()),
                    _ => None,
                },
            ),
            kind: row.get(5)?,
            valid_from: rows::from_micros(row.get(6)?),
        })
    })
}

/// The stored vectors of `model` for these memories.
pub(crate) fn embeddings(
    conn: &Connection,
    workspace: &Workspace,
    ids: &[MemoryId],
    model: &str,
) -> Result<Vec<(MemoryId, Vec<f32>)>, SqliteStoreError> {
    by_id_chunks(conn, embeddings_sql, &[model], workspace, ids, |row| {
        let blob = row.get_ref(1)?.as_blob()?;
        Ok((rows::id(row, 0)?, vectors::decode(blob)))
    })
}

pub(crate) fn get_many(
    store: &SqliteStore,
    workspace: &Workspace,
    ids: &[MemoryId],
) -> Result<Vec<Memory>, SqliteStoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    by_id_chunks(
        &store.read(),
        get_many_sql,
        &[],
        workspace,
        ids,
        read_memory,
    )
}

pub(crate) fn list(
    store: &SqliteStore,
    filter: &MemoryFilter,
    page: Page,
) -> Result<Vec<Memory>, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let conn = store.read();
    // A cursor whose memory was purged meanwhile would match nothing, and a page-by-page
    // read would end there as if complete: say so instead.
    if let Some(id) = filter.listed_after {
        let stored = conn
            .prepare_cached("SELECT count(*) > 0 FROM memories WHERE id = ?1")
            .and_then(|mut statement| {
                statement.query_row([id.to_string()], |row| row.get::<_, bool>(0))
            })?;
        if !stored {
            return Err(SqliteStoreError::ListCursorGone(id));
        }
    }
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {clause} {} LIMIT {} OFFSET {}",
        crate::query::order_by(filter.order),
        sql_limit(page.limit),
        sql_limit(page.offset),
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(values), read_memory)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub(crate) fn count(store: &SqliteStore, filter: &MemoryFilter) -> Result<u64, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let conn = store.read();
    Ok(conn
        .query_row(
            &format!("SELECT count(*) FROM memories m WHERE {clause}"),
            params_from_iter(values),
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as u64)?)
}

pub(crate) fn matching_ids(
    store: &SqliteStore,
    filter: &MemoryFilter,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let conn = store.read();
    let mut statement = conn.prepare(&format!("SELECT m.id FROM memories m WHERE {clause}"))?;
    let rows = statement.query_map(params_from_iter(values), |row| row.get::<_, String>(0))?;
    let mut ids = Vec::new();
    for row in rows {
        ids.push(rows::parse_id(&row?)?);
    }
    Ok(ids)
}

pub(crate) fn near_duplicates(
    store: &SqliteStore,
    filter: &MemoryFilter,
    keys: &[i64],
    limit: usize,
) -> Result<Vec<MemoryId>, SqliteStoreError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, params) = near_duplicates_query(filter, keys, limit);
    let conn = store.read();
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| row.get::<_, String>(0))?;
    let mut found = Vec::new();
    for row in rows {
        found.push(rows::parse_id(&row?)?);
    }
    Ok(found)
}

pub(crate) fn get_forgotten(
    store: &SqliteStore,
    workspace: &Workspace,
    id: MemoryId,
) -> Result<Option<(Memory, Timestamp)>, SqliteStoreError> {
    let conn = store.read();
    Ok(conn
        .query_row(
            &format!(
                "SELECT {MEMORY_COLUMNS}, m.forgotten_at {MEMORY_FROM}
             WHERE m.workspace = ?1 AND m.id = ?2 AND m.forgotten_at IS NOT NULL"
            ),
            params![workspace.as_str(), id.to_string()],
            |row| {
                let forgotten: i64 = row.get(rows::MEMORY_COLUMN_COUNT)?;
                Ok((read_memory(row)?, rows::from_micros(forgotten)))
            },
        )
        .optional()?)
}

pub(crate) fn contents(
    store: &SqliteStore,
    workspace: &Workspace,
) -> Result<Vec<StoredText>, SqliteStoreError> {
    let conn = store.lock();
    let mut statement = conn.prepare(
        "SELECT id, content, project, source, metadata FROM memories
             WHERE workspace = ?1 ORDER BY seq",
    )?;
    let rows = statement.query_map([workspace.as_str()], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, String>(4)?,
        ))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (id, content, project, source, metadata) = row?;
        found.push(StoredText {
            id: rows::parse_id(&id)?,
            content,
            project,
            source,
            metadata: serde_json::from_str(&metadata)?,
        });
    }
    Ok(found)
}

pub(crate) fn stale_embeddings(
    store: &SqliteStore,
    model: &str,
    limit: usize,
) -> Result<Vec<StaleEmbedding>, SqliteStoreError> {
    let conn = store.lock();
    let mut statement = conn.prepare_cached(
        "SELECT m.id, m.content, m.content_hash FROM memories m
             LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
             WHERE e.model IS NULL OR e.model <> ?1
             ORDER BY m.seq LIMIT ?2",
    )?;
    let rows = statement.query_map(params![model, limit as i64], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
        ))
    })?;
    let mut stale = Vec::new();
    for row in rows {
        let (id, content, content_hash) = row?;
        stale.push(StaleEmbedding {
            id: rows::parse_id(&id)?,
            content,
            content_hash,
        });
    }
    Ok(stale)
}

pub(crate) fn count_stale_embeddings(
    store: &SqliteStore,
    model: &str,
) -> Result<u64, SqliteStoreError> {
    let conn = store.lock();
    Ok(conn
        .query_row(
            "SELECT count(*) FROM memories m
         LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
         WHERE e.model IS NULL OR e.model <> ?1",
            [model],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n as u64)?)
}

#[cfg(test)]
mod tests {
    use levh_core::{
        Actor, EventKind, MemoryFilter, MemoryId, MemoryState, Page, RankingRow, Store, Timestamp,
        Workspace,
    };

    use crate::SqliteStore;

    /// A page that continues after a memory no longer stored (purged while listing) is
    /// the caller's condition to act on (list again), typed as such at the boundary, not
    /// an empty page that looks like the end.
    #[test]
    fn a_list_continuing_after_a_purged_memory_says_so() {
        let store = SqliteStore::open_in_memory().unwrap();
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let record = crate::test_records::record("kept".into(), at, "default", "p", None);
        store
            .insert(&record, &[], &|_| None, &Actor::cli())
            .unwrap();
        let gone = MemoryId::new_at(at);
        let error = store
            .list(
                &MemoryFilter {
                    listed_after: Some(gone),
                    ..MemoryFilter::default()
                },
                Page {
                    limit: 10,
                    offset: 0,
                },
            )
            .unwrap_err();
        assert!(error.is_cursor_gone(), "{error}");
        assert!(error.to_string().contains("list again"), "{error}");
        let listed = store
            .list(
                &MemoryFilter {
                    listed_after: None,
                    ..MemoryFilter::default()
                },
                Page {
                    limit: 10,
                    offset: 0,
                },
            )
            .unwrap();
        assert_eq!(listed.len(), 1);
    }

    /// What ranking reads of a memory is what the whole row says, column for column (a
    /// state written after insertion included), for the asked workspace's ids only.
    #[test]
    fn ranking_rows_agree_with_whole_rows() {
        let store = SqliteStore::open_in_memory().unwrap();
        let workspace = Workspace::default();
        let mut ids = Vec::new();
        for (n, space) in ["default", "default", "other", "default"]
            .iter()
            .enumerate()
        {
            let at = Timestamp::from_second(1_700_000_000 + n as i64 * 3600).unwrap();
            let record = crate::test_records::record(format!("note {n}"), at, space, "p", None);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            ids.push(record.memory.id);
        }
        let later = Timestamp::from_second(1_700_100_000).unwrap();
        store
            .update_states(
                &workspace,
                &ids[..1],
                EventKind::RecallReinforce,
                &Actor::cli(),
                later,
                &mut |m| {
                    Some(MemoryState {
                        importance: 0.9,
                        pinned: true,
                        stability_hours: 400.5,
                        last_recalled_at: Some(later),
                        recall_count: 3,
                        ..m.state
                    })
                },
            )
            .unwrap();
        let missing = MemoryId::new_at(later);
        let asked = [ids.clone(), vec![missing]].concat();
        let mut rows = store.ranking_rows(&workspace, &asked).unwrap();
        rows.sort_by_key(|row| row.id);
        let mut whole: Vec<RankingRow> = store
            .get_many(&workspace, &asked)
            .unwrap()
            .into_iter()
            .map(|m| RankingRow {
                id: m.id,
                state: m.state,
                valid_from: m.valid_from,
            })
            .collect();
        whole.sort_by_key(|row| row.id);
        assert_eq!(rows, whole);
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[0], ids[1], ids[3]]
        );
        assert_eq!(
            (rows[0].state.recall_count, rows[0].state.pinned),
            (3, true)
        );
        assert_eq!(rows[0].state.last_recalled_at, Some(later));
        assert_eq!(rows[2].valid_from.as_second(), 1_700_000_000 + 3 * 3600);
    }
}
