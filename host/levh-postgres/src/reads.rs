//! Reading memories: one live memory, memories (or their ranking rows, texts and
//! vectors) by lists of ids, whether an id is taken, pages of a filtered list, counts, the
//! gate's near-duplicate lookup and forgotten memories.

use crate::connection::Db;
use levh_core::{
    ComparedText, Memory, MemoryFilter, MemoryId, Page, RankingRow, StoredText, Timestamp,
    Workspace,
};

use crate::query::{Bound, id_texts, limit, order_by, where_clause};
use crate::rows::{
    self, MEMORY_COLUMN_COUNT, MEMORY_COLUMNS, MEMORY_FROM, column, from_micros, parse_id,
    read_memory,
};
use crate::{PostgresStore, PostgresStoreError};

/// One live memory of the workspace (inside a transaction or not).
pub(crate) fn get_live(
    conn: &mut impl Db,
    workspace: &Workspace,
    id: MemoryId,
) -> Result<Option<Memory>, PostgresStoreError> {
    conn.query_opt(
        &format!(
            "SELECT {MEMORY_COLUMNS} {MEMORY_FROM}
              WHERE m.workspace = $1 AND m.id = $2 AND m.forgotten_at IS NULL"
        ),
        &[&workspace.as_str(), &id.to_string()],
    )?
    .map(|row| read_memory(&row))
    .transpose()
}

impl PostgresStore {
    pub(crate) fn get_many_memories(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<Memory>, PostgresStoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.connection()?.query(
            &format!(
                "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE m.workspace = $1 AND m.id = ANY($2)"
            ),
            &[&workspace.as_str(), &id_texts(ids)],
        )?;
        rows.iter().map(read_memory).collect()
    }

    pub(crate) fn ranking_rows_of(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<RankingRow>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id, m.importance, m.pinned, m.stability_hours, m.last_recalled_at,
                    m.recall_count, m.created_at, m.valid_from
               FROM memories m WHERE m.workspace = $1 AND m.id = ANY($2)",
            &[&workspace.as_str(), &id_texts(ids)],
        )?;
        rows.iter().map(rows::read_ranking_row).collect()
    }

    pub(crate) fn compared_texts_of(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<ComparedText>, PostgresStoreError> {
        // An event's source id tells one calendar's events apart; a connector may have
        // written it as a number, which still names its item.
        let rows = self.connection()?.query(
            "SELECT m.id, m.pinned, m.content, m.source,
                    CASE WHEN m.kind = 'event' AND jsonb_typeof(m.metadata -> 'source_id') IN ('string', 'number')
                         THEN m.metadata ->> 'source_id' END,
                    m.kind, m.valid_from
               FROM memories m WHERE m.workspace = $1 AND m.id = ANY($2)",
            &[&workspace.as_str(), &id_texts(ids)],
        )?;
        rows.iter()
            .map(|row| {
                Ok(ComparedText {
                    id: parse_id(column(row, 0)?)?,
                    pinned: column(row, 1)?,
                    content: column(row, 2)?,
                    source: column(row, 3)?,
                    source_id: column(row, 4)?,
                    kind: column(row, 5)?,
                    valid_from: from_micros(column(row, 6)?),
                })
            })
            .collect()
    }

    pub(crate) fn embeddings_of(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        model: &str,
    ) -> Result<Vec<(MemoryId, Vec<f32>)>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id, e.vector FROM memory_embeddings e JOIN memories m ON m.seq = e.memory_seq
              WHERE e.model = $1 AND m.workspace = $2 AND m.id = ANY($3)",
            &[&model, &workspace.as_str(), &id_texts(ids)],
        )?;
        rows.iter()
            .map(|row| {
                let vector: pgvector::Vector = column(row, 1)?;
                Ok((parse_id(column(row, 0)?)?, vector.to_vec()))
            })
            .collect()
    }

    pub(crate) fn list_memories(
        &self,
        filter: &MemoryFilter,
        page: Page,
    ) -> Result<Vec<Memory>, PostgresStoreError> {
        let mut connection = self.connection()?;
        // A cursor whose memory was purged meanwhile would match nothing, and a page-by-page
        // read would end there as if complete: say so instead.
        if let Some(id) = filter.listed_after {
            let stored: bool = connection
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM memories WHERE id = $1)",
                    &[&id.to_string()],
                )?
                .get(0);
            if !stored {
                return Err(PostgresStoreError::ListCursorGone(id));
            }
        }
        let mut bound = Bound::default();
        let clause = where_clause(filter, &mut bound);
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} {MEMORY_FROM} WHERE {clause} {} LIMIT {} OFFSET {}",
            order_by(filter.order),
            bound.bind(limit(page.limit)),
            bound.bind(limit(page.offset)),
        );
        let rows = connection.query(&sql, &bound.params())?;
        rows.iter().map(read_memory).collect()
    }

    pub(crate) fn count_memories(&self, filter: &MemoryFilter) -> Result<u64, PostgresStoreError> {
        let mut bound = Bound::default();
        let clause = where_clause(filter, &mut bound);
        let count: i64 = self
            .connection()?
            .query_one(
                &format!("SELECT count(*) FROM memories m WHERE {clause}"),
                &bound.params(),
            )?
            .get(0);
        Ok(count.max(0) as u64)
    }

    pub(crate) fn matching(
        &self,
        filter: &MemoryFilter,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        let mut bound = Bound::default();
        let clause = where_clause(filter, &mut bound);
        let rows = self.connection()?.query(
            &format!("SELECT m.id FROM memories m WHERE {clause}"),
            &bound.params(),
        )?;
        rows.iter().map(|row| parse_id(column(row, 0)?)).collect()
    }

    /// Memories sharing near-duplicate keys with a text, most shared keys first.
    pub(crate) fn near_duplicates_of(
        &self,
        filter: &MemoryFilter,
        keys: &[i64],
        count: usize,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut bound = Bound::default();
        let keys = bound.bind(keys.to_vec());
        let clause = where_clause(filter, &mut bound);
        let sql = format!(
            "SELECT m.id FROM near_duplicate_keys k JOIN memories m ON m.seq = k.memory_seq
              WHERE k.key = ANY({keys}) AND {clause}
              GROUP BY m.seq, m.id ORDER BY count(*) DESC, m.seq DESC LIMIT {}",
            bound.bind(limit(count))
        );
        let rows = self.connection()?.query(&sql, &bound.params())?;
        rows.iter().map(|row| parse_id(column(row, 0)?)).collect()
    }

    pub(crate) fn forgotten(
        &self,
        workspace: &Workspace,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>, PostgresStoreError> {
        let row = self.connection()?.query_opt(
            &format!(
                "SELECT {MEMORY_COLUMNS}, m.forgotten_at {MEMORY_FROM}
                  WHERE m.workspace = $1 AND m.id = $2 AND m.forgotten_at IS NOT NULL"
            ),
            &[&workspace.as_str(), &id.to_string()],
        )?;
        row.map(|row| {
            let at: i64 = column(&row, MEMORY_COLUMN_COUNT)?;
            Ok((read_memory(&row)?, from_micros(at)))
        })
        .transpose()
    }

    pub(crate) fn is_id_in_use(&self, id: MemoryId) -> Result<bool, PostgresStoreError> {
        Ok(self
            .connection()?
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM memories WHERE id = $1)",
                &[&id.to_string()],
            )?
            .get(0))
    }

    /// The memories `filter` selects with exactly this content hash.
    pub(crate) fn identical(
        &self,
        filter: &MemoryFilter,
        content_hash: &str,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        identical(&mut *self.connection()?, filter, content_hash)
    }

    pub(crate) fn stored_texts(
        &self,
        workspace: &Workspace,
    ) -> Result<Vec<StoredText>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT id, content, project, source, metadata FROM memories
              WHERE workspace = $1 ORDER BY seq",
            &[&workspace.as_str()],
        )?;
        rows.iter()
            .map(|row| {
                Ok(StoredText {
                    id: parse_id(column(row, 0)?)?,
                    content: column(row, 1)?,
                    project: column(row, 2)?,
                    source: column(row, 3)?,
                    metadata: column(row, 4)?,
                })
            })
            .collect()
    }
}

/// [`PostgresStore::identical`] on a connection or inside a transaction.
pub(crate) fn identical(
    conn: &mut impl Db,
    filter: &MemoryFilter,
    content_hash: &str,
) -> Result<Vec<MemoryId>, PostgresStoreError> {
    let mut bound = Bound::default();
    let hash = bound.bind(content_hash.to_owned());
    let clause = where_clause(filter, &mut bound);
    conn.query(
        &format!("SELECT m.id FROM memories m WHERE m.content_hash = {hash} AND {clause}"),
        &bound.params(),
    )?
    .iter()
    .map(|row| parse_id(column(row, 0)?))
    .collect()
}
