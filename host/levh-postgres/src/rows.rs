//! Reading rows back into core types. Times are stored as UTC microseconds since the Unix
//! epoch (bigint), exactly as the SQLite store keeps them, with the same clamp on write
//! and on read.

use levh_core::{
    AdmissionRecord, AdmissionVerdict, Kind, Memory, MemoryId, MemoryState, RankingRow, SessionId,
    Timestamp, Workspace,
};
use postgres::Row;

use crate::PostgresStoreError;

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

pub(crate) fn optional_time(value: Option<i64>) -> Option<Timestamp> {
    value.map(from_micros)
}

pub(crate) fn parse_id(text: &str) -> Result<MemoryId, PostgresStoreError> {
    text.parse()
        .map_err(|_| PostgresStoreError::Corrupt(format!("memory id {text:?}")))
}

/// A column of a row, with the column's name in the error when its type is not what the
/// schema says.
pub(crate) fn column<'a, T: postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, PostgresStoreError> {
    row.try_get(index).map_err(|e| {
        let name = row.columns().get(index).map_or("?", |column| column.name());
        PostgresStoreError::Corrupt(format!("column {name}: {e}"))
    })
}

fn workspace(text: &str) -> Result<Workspace, PostgresStoreError> {
    Workspace::new(text).map_err(|e| PostgresStoreError::Corrupt(format!("workspace: {e}")))
}

fn kind(text: &str) -> Result<Kind, PostgresStoreError> {
    Kind::stored(text).map_err(|e| PostgresStoreError::Corrupt(format!("kind: {e}")))
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

/// Reads `importance, pinned, stability_hours, last_recalled_at, recall_count,
/// created_at` from column `at` on.
fn state_at(row: &Row, at: usize) -> Result<MemoryState, PostgresStoreError> {
    Ok(MemoryState {
        importance: column(row, at)?,
        pinned: column(row, at + 1)?,
        stability_hours: column(row, at + 2)?,
        last_recalled_at: optional_time(column(row, at + 3)?),
        recall_count: count(column(row, at + 4)?),
        created_at: from_micros(column(row, at + 5)?),
    })
}

/// Reads a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn read_memory(row: &Row) -> Result<Memory, PostgresStoreError> {
    let verdict: String = column(row, 16)?;
    Ok(Memory {
        id: parse_id(column(row, 0)?)?,
        workspace: workspace(column(row, 1)?)?,
        project: column(row, 2)?,
        content: column(row, 3)?,
        kind: kind(column(row, 4)?)?,
        source: column(row, 5)?,
        state: state_at(row, 6)?,
        valid_from: from_micros(column(row, 12)?),
        valid_to: optional_time(column(row, 13)?),
        superseded_by: column::<Option<&str>>(row, 14)?
            .map(parse_id)
            .transpose()?,
        content_hash: column(row, 15)?,
        admission: AdmissionRecord {
            // A verdict this levh does not know (written by a newer one) reads as `admit`.
            verdict: AdmissionVerdict::parse(&verdict).unwrap_or_else(|| {
                tracing::warn!(verdict = %verdict, "a memory's admission verdict is unknown; read as admit");
                AdmissionVerdict::Admit
            }),
            reasons: serde_json::from_value(column(row, 17)?)?,
            decided_by: column(row, 18)?,
        },
        metadata: column(row, 19)?,
        session_id: column::<Option<String>>(row, 20)?.map(SessionId::new),
        embedding_model: column(row, 21)?,
        embedding_dimension: column::<Option<i32>>(row, 22)?.map(|d| d.max(0) as u32),
    })
}

/// Reads `id, importance, pinned, stability_hours, last_recalled_at, recall_count,
/// created_at, valid_from`.
pub(crate) fn read_ranking_row(row: &Row) -> Result<RankingRow, PostgresStoreError> {
    Ok(RankingRow {
        id: parse_id(column(row, 0)?)?,
        state: state_at(row, 1)?,
        valid_from: from_micros(column(row, 7)?),
    })
}
