//! The exact vector scan: every stored vector of a model that passes the filter, scored
//! against the query. Fine for tens of thousands of memories; the approximate index
//! (`ann/`) runs it over its fresh tail and falls back to it.

use levh_core::{MemoryFilter, MemoryId};
use rusqlite::{Connection, params_from_iter};

use crate::query::where_clause;
use crate::{SqliteStoreError, rows, vectors};

/// The exact top `limit` of every `model` vector matching `filter`.
pub(crate) fn exact_nearest(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    limit: usize,
) -> Result<Vec<(MemoryId, f32)>, SqliteStoreError> {
    let mut top = vectors::TopK::new(limit);
    exact_scan(conn, filter, model, query, None, &mut top)?;
    Ok(top.into_sorted())
}

/// Scores every `model` vector matching `filter` against `query` into `top`. With
/// `changed_after`, only vectors written after that change number (the fresh tail of an
/// approximate index); `skip` holds memory seqs already scored by the caller.
pub(crate) fn exact_scan(
    conn: &Connection,
    filter: &MemoryFilter,
    model: &str,
    query: &[f32],
    tail: Option<(i64, &std::collections::HashSet<i64>)>,
    top: &mut vectors::TopK,
) -> Result<(), SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    // CROSS JOIN fixes the loop order: walk the vectors once and look each memory up
    // by rowid, rather than walk a workspace index and look up both tables per row.
    // The tail walks the change log's (model, dimension, change) index instead, so its
    // cost follows the number of fresh vectors, not the store's size.
    let sql = match tail {
        None => format!(
            "SELECT m.id, e.vector, e.memory_seq FROM memory_embeddings e
             CROSS JOIN memories m ON m.seq = e.memory_seq
             WHERE e.model = ?1 AND e.dimension = ?2 AND {clause}"
        ),
        Some(_) => format!(
            "SELECT m.id, e.vector, e.memory_seq FROM vector_changes c
             CROSS JOIN memory_embeddings e ON e.memory_seq = c.memory_seq
             CROSS JOIN memories m ON m.seq = e.memory_seq
             WHERE c.model = ?1 AND c.dimension = ?2 AND c.change > ?3
               AND e.model = ?1 AND e.dimension = ?2 AND {clause}"
        ),
    };
    let mut params = vec![
        rusqlite::types::Value::from(model.to_owned()),
        rusqlite::types::Value::from(query.len() as i64),
    ];
    if let Some((after, _)) = tail {
        params.push(after.into());
    }
    // Numbered and anonymous parameters mix: `?` takes the number after the largest so far.
    params.extend(values);
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(params))?;
    // A vector written twice since the snapshot has two change rows: score it once.
    let mut seen = std::collections::HashSet::new();
    while let Some(row) = rows.next()? {
        if let Some((_, skip)) = tail {
            let seq: i64 = row.get(2)?;
            if skip.contains(&seq) || !seen.insert(seq) {
                continue;
            }
        }
        let blob = vectors::blob(row, 1)?;
        let score = vectors::dot(query, blob);
        if top.would_keep(score) {
            let id: String = row.get(0)?;
            top.push(score, rows::parse_id(&id)?);
        }
    }
    Ok(())
}
