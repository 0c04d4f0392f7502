//! Full-text candidates for a recall, from the `fts` column (English stemming) and its GIN
//! index, filtered before the limit.
//!
//! The query is built as SQLite's store builds its FTS5 query: the query's words
//! (`levh_core::text::query_terms`) ORed, never ANDed; words of four letters or more
//! also match as prefixes (after stemming), with the exact word asked for too so that an
//! exact match outscores a longer word that merely starts the same. Each word is a quoted
//! lexeme, so nothing a user types is read as tsquery syntax. Ranking is `ts_rank`, not
//! BM25: relevances are on another scale than SQLite's (the engine only compares them
//! with the best of the same answer), and which of `ts_rank` and `pg_trgm` follows
//! SQLite's ranking best is for the recall benchmarks to say (issue #45).

use crate::connection::Db;
use levh_core::{MemoryFilter, MemoryId};

use crate::query::{Bound, limit, where_clause};
use crate::rows::{column, parse_id};
use crate::{PostgresStore, PostgresStoreError};

/// A bound on terms keeps a pasted essay from becoming a thousand-way OR.
const MAX_TERMS: usize = 64;

/// The tsquery text of a recall's query; `None` when it has no words.
pub(crate) fn tsquery(text: &str) -> Option<String> {
    let mut terms = levh_core::text::query_terms(text);
    terms.truncate(MAX_TERMS);
    let mut parts = Vec::with_capacity(terms.len() * 2);
    for term in terms {
        let quoted = format!("'{}'", term.replace('\\', "\\\\").replace('\'', "''"));
        if term.chars().count() >= 4 {
            parts.push(format!("{quoted}:*"));
        }
        parts.push(quoted);
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

impl PostgresStore {
    pub(crate) fn lexical(
        &self,
        filter: &MemoryFilter,
        query: &str,
        count: usize,
    ) -> Result<Vec<(MemoryId, f64)>, PostgresStoreError> {
        let Some(tsquery) = tsquery(query) else {
            return Ok(Vec::new());
        };
        let mut bound = Bound::default();
        let query = bound.bind(tsquery);
        let clause = where_clause(filter, &mut bound);
        let sql = format!(
            "SELECT m.id, ts_rank(m.fts, q)::float8 AS score
               FROM memories m, to_tsquery('english', {query}) q
              WHERE m.fts @@ q AND {clause}
              ORDER BY score DESC, m.seq LIMIT {}",
            bound.bind(limit(count))
        );
        let rows = self.connection()?.query(&sql, &bound.params())?;
        rows.iter()
            .map(|row| Ok((parse_id(column(row, 0)?)?, column(row, 1)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_are_quoted_lexemes_ored_with_prefixes_for_long_words() {
        assert_eq!(
            tsquery("What did Nadia's son say about the band?").as_deref(),
            Some("'nadia':* | 'nadia' | 'son' | 'band':* | 'band'")
        );
        assert_eq!(tsquery("  ?! "), None);
    }
}
