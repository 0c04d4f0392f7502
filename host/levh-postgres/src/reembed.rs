//! What `levh reembed` works through: memories whose vector is missing or of another
//! model, and their new vectors written only over the content they were made from.

use crate::connection::Db;
use levh_core::{Embedding, StaleEmbedding};

use crate::query::limit;
use crate::rows::{column, parse_id};
use crate::{PostgresStore, PostgresStoreError, writes};

impl PostgresStore {
    pub(crate) fn stale(
        &self,
        model: &str,
        count: usize,
    ) -> Result<Vec<StaleEmbedding>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id, m.content, m.content_hash FROM memories m
               LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
              WHERE e.model IS NULL OR e.model <> $1
              ORDER BY m.seq LIMIT $2",
            &[&model, &limit(count)],
        )?;
        rows.iter()
            .map(|row| {
                Ok(StaleEmbedding {
                    id: parse_id(column(row, 0)?)?,
                    content: column(row, 1)?,
                    content_hash: column(row, 2)?,
                })
            })
            .collect()
    }

    pub(crate) fn count_stale(&self, model: &str) -> Result<u64, PostgresStoreError> {
        let count: i64 = self
            .connection()?
            .query_one(
                "SELECT count(*) FROM memories m
                   LEFT JOIN memory_embeddings e ON e.memory_seq = m.seq
                  WHERE e.model IS NULL OR e.model <> $1",
                &[&model],
            )?
            .get(0);
        Ok(count.max(0) as u64)
    }

    pub(crate) fn write_embeddings(
        &self,
        vectors: &[(StaleEmbedding, Embedding)],
    ) -> Result<usize, PostgresStoreError> {
        self.ensure_vector_indexes(vectors.iter().map(|(_, e)| e.vector.len()))?;
        self.write(|tx| {
            let mut written = 0;
            for (memory, embedding) in vectors {
                let row = tx.query_opt(
                    "SELECT seq FROM memories WHERE id = $1 AND content_hash = $2 FOR UPDATE",
                    &[&memory.id.to_string(), &memory.content_hash],
                )?;
                if let Some(row) = row {
                    writes::write_embedding(tx, column(&row, 0)?, embedding)?;
                    written += 1;
                }
            }
            Ok(written)
        })
    }
}
