//! Reading rows back into core types. Times are stored as UTC microseconds since the Unix
//! epoch: integers sort and compare exactly, which text timestamps only do by convention.

use levh_core::{
    AdmissionRecord, AdmissionVerdict, Kind, Memory, MemoryId, MemoryState, MemorySummary,
    RankingRow, SessionId, Timestamp, Workspace,
};
use rusqlite::Row;
use rusqlite::types::Type;

use crate::SqliteStoreError;

/// The columns [`read_memory`] expects, in order.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.workspace, m.project, m.content, m.kind, m.source, \
    m.importance, m.pinned, m.stability_hours, m.last_recalled_at, m.recall_count, m.created_at, \
    m.valid_from, m.valid_to, m.superseded_by, m.content_hash, m.admission_verdict, \
    m.admission_reasons, m.admission_decided_by, m.metadata, m.session_id, e.model, e.dimension";

/// How many columns [`MEMORY_COLUMNS`] names: a query may select more after them.
pub(crate) const MEMORY_COLUMN_COUNT: usize = 23;

/// The `FROM` that goes with [`MEMORY_COLUMNS`].
pub(crate) const MEMORY_FROM: &str =
    "FROM memories m LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq";

/// Times as every store keeps them (levh-core's one rule).
pub(crate) use levh_core::{from_stored_micros as from_micros, stored_micros as micros};

fn conversion(
    column: usize,
    kind: Type,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(column, kind, Box::new(error))
}

fn time(row: &Row<'_>, column: usize) -> rusqlite::Result<Timestamp> {
    Ok(from_micros(row.get(column)?))
}

fn optional_time(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<Timestamp>> {
    Ok(row.get::<_, Option<i64>>(column)?.map(from_micros))
}

pub(crate) fn parse_id(text: &str) -> Result<MemoryId, SqliteStoreError> {
    text.parse()
        .map_err(|_| SqliteStoreError::Corrupt(format!("memory id {text:?}")))
}

pub(crate) fn id(row: &Row<'_>, column: usize) -> rusqlite::Result<MemoryId> {
    let text: String = row.get(column)?;
    parse_id(&text).map_err(|e| conversion(column, Type::Text, e))
}

fn json(row: &Row<'_>, column: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = row.get(column)?;
    serde_json::from_str(&text).map_err(|e| conversion(column, Type::Text, e))
}

fn kind(row: &Row<'_>, column: usize) -> rusqlite::Result<Kind> {
    let text: String = row.get(column)?;
    Kind::stored(&text).map_err(|e| conversion(column, Type::Text, e))
}

/// Reads `importance, pinned, stability_hours, last_recalled_at, recall_count,
/// created_at` from column `at` on.
fn state_at(row: &Row<'_>, at: usize) -> rusqlite::Result<MemoryState> {
    Ok(MemoryState {
        importance: row.get(at)?,
        pinned: row.get(at + 1)?,
        stability_hours: row.get(at + 2)?,
        last_recalled_at: optional_time(row, at + 3)?,
        recall_count: row.get(at + 4)?,
        created_at: time(row, at + 5)?,
    })
}

/// Reads a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn read_memory(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let workspace: String = row.get(1)?;
    let reasons = json(row, 17)?;
    Ok(Memory {
        id: id(row, 0)?,
        workspace: Workspace::new(&workspace).map_err(|e| conversion(1, Type::Text, e))?,
        project: row.get(2)?,
        content: row.get(3)?,
        kind: kind(row, 4)?,
        source: row.get(5)?,
        state: state_at(row, 6)?,
        valid_from: time(row, 12)?,
        valid_to: optional_time(row, 13)?,
        superseded_by: match row.get::<_, Option<String>>(14)? {
            Some(text) => Some(parse_id(&text).map_err(|e| conversion(14, Type::Text, e))?),
            None => None,
        },
        content_hash: row.get(15)?,
        admission: AdmissionRecord {
            verdict: {
                // A verdict this levh does not know (written by a newer one) reads as
                // `admit`, named in the log: one row never breaks a read.
                let text: String = row.get(16)?;
                AdmissionVerdict::parse(&text).unwrap_or_else(|| {
                    tracing::warn!(verdict = %text, "a memory's admission verdict is unknown; read as admit");
                    AdmissionVerdict::Admit
                })
            },
            reasons: serde_json::from_value(reasons).map_err(|e| conversion(17, Type::Text, e))?,
            decided_by: row.get(18)?,
        },
        metadata: json(row, 19)?,
        session_id: row.get::<_, Option<String>>(20)?.map(SessionId::new),
        embedding_model: row.get(21)?,
        embedding_dimension: row.get(22)?,
    })
}

/// Reads `id, importance, pinned, stability_hours, last_recalled_at, recall_count,
/// created_at, valid_from`.
pub(crate) fn read_ranking_row(row: &Row<'_>) -> rusqlite::Result<RankingRow> {
    Ok(RankingRow {
        id: id(row, 0)?,
        state: state_at(row, 1)?,
        valid_from: time(row, 7)?,
    })
}

/// Reads `id, project, kind, source, importance, pinned, stability_hours,
/// last_recalled_at, recall_count, created_at` from column `at` on.
pub(crate) fn read_summary_at(row: &Row<'_>, at: usize) -> rusqlite::Result<MemorySummary> {
    Ok(MemorySummary {
        id: id(row, at)?,
        project: row.get(at + 1)?,
        kind: kind(row, at + 2)?,
        source: row.get(at + 3)?,
        state: state_at(row, at + 4)?,
    })
}
