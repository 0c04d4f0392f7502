//! Full-text candidates for a recall: the query's words, ranked by the in-memory ranking
//! (`lexicon.rs`) once it is built and by FTS5 until then, filtered before the limit.

use levh_core::{MemoryFilter, MemoryId};
use rusqlite::{Connection, params_from_iter};

use crate::query::{sql_limit, where_clause};
use crate::{SqliteStore, SqliteStoreError, lexicon, rows};

/// How many more full-text matches than asked for are ranked before the filter: enough
/// that an unfiltered or broadly filtered recall is answered by the first query.
pub(crate) const LEXICAL_OVERFETCH: usize = 4;

/// The best `limit` full-text matches of `fts` that pass `filter`, best first, among the
/// best `ranked` matches overall (`None`: among all of them).
pub(crate) fn lexical_query(
    conn: &Connection,
    filter: &MemoryFilter,
    fts: &str,
    ranked: Option<usize>,
    limit: usize,
) -> Result<Vec<(MemoryId, f64)>, SqliteStoreError> {
    let (clause, values) = where_clause(filter);
    let best = match ranked {
        Some(ranked) => format!("ORDER BY score, seq LIMIT {}", sql_limit(ranked)),
        None => String::new(),
    };
    // The full-text match runs once, materialised, and its hits are then filtered by
    // rowid lookups. Left to itself the planner may instead walk the workspace and probe
    // the FTS index once per memory, which is orders of magnitude slower.
    let sql = format!(
        "WITH hits AS MATERIALIZED (
             SELECT rowid AS seq, bm25(memories_fts) AS score FROM memories_fts
             WHERE memories_fts MATCH ? {best}
         )
         SELECT m.id, hits.score FROM hits CROSS JOIN memories m ON m.seq = hits.seq
         WHERE {clause} ORDER BY hits.score, hits.seq LIMIT {limit}",
        limit = sql_limit(limit)
    );
    let params = std::iter::once(rusqlite::types::Value::from(fts.to_owned())).chain(values);
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, f64>(1)?))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (id, bm25) = row?;
        // SQLite's bm25() is lower-is-better; the trait promises higher-is-better.
        found.push((rows::parse_id(&id)?, -bm25));
    }
    Ok(found)
}

/// The words of a full-text query ([`text::query_terms`]): ORed, never ANDed, so a
/// question need not repeat every word of the memory it asks for. Words of four letters
/// or more also match as prefixes — after the tokenizer's stemming, so "quarter" meets
/// "quarterly" and "bake" meets "bakery" — while the exact word is asked for too, so an
/// exact match still outscores a longer word that merely starts the same. Empty when
/// the text has no words.
///
/// [`text::query_terms`]: levh_core::text::query_terms
pub(crate) fn query_words(text: &str) -> Vec<lexicon::QueryWord> {
    let mut terms = levh_core::text::query_terms(text);
    // A bound on terms keeps a pasted essay from becoming a thousand-way OR.
    terms.truncate(64);
    terms
        .into_iter()
        .map(|text| lexicon::QueryWord {
            prefix: text.chars().count() >= 4,
            text,
        })
        .collect()
}

/// The FTS5 query of [`query_words`]: each word a quoted string, so nothing a user types
/// is read as FTS syntax (`AND`, `NEAR(`, `col:`, `*`, `"` are all literal); its prefix
/// form first, then its exact form (the in-memory ranking follows the same order).
pub(crate) fn fts_query(words: &[lexicon::QueryWord]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    let mut parts = Vec::with_capacity(words.len() * 2);
    for word in words {
        let quoted = format!("\"{}\"", word.text.replace('"', "\"\""));
        if word.prefix {
            parts.push(format!("{quoted} *"));
        }
        parts.push(quoted);
    }
    Some(parts.join(" OR "))
}

pub(crate) fn lexical_candidates(
    store: &SqliteStore,
    filter: &MemoryFilter,
    query: &str,
    limit: usize,
) -> Result<Vec<(MemoryId, f64)>, SqliteStoreError> {
    let words = query_words(query);
    let Some(fts) = fts_query(&words) else {
        return Ok(Vec::new());
    };
    let conn = store.read();
    let fetch = limit.saturating_mul(LEXICAL_OVERFETCH);
    // The in-memory ranking (`lexicon.rs`) when it is built; FTS5's, scoring alike,
    // while it is not. The former checks its best matches against the filter a chunk
    // at a time, starting with a quarter more than asked for: most matches pass a
    // recall's filter, and a further chunk costs no ranking again.
    let first_chunk = limit + limit / 4;
    if let Some(found) =
        store
            .lexicon
            .candidates(&conn, store, filter, &words, limit, first_chunk)?
    {
        return Ok(found);
    }
    // First the best `limit × LEXICAL_OVERFETCH` matches, ranked inside FTS5 with no
    // join, then checked against the filter: when at least `limit` of them pass, they
    // are exactly the best `limit` that pass (anything ranked lower cannot beat them).
    // Joining every match to its row first costs a row lookup per match, and a
    // common word matches tens of thousands of memories at 100k.
    let found = lexical_query(&conn, filter, &fts, Some(fetch), limit)?;
    if found.len() >= limit {
        return Ok(found);
    }
    // Fewer passed: the filter is selective (or there are few matches, which makes
    // this cheap), so every match is checked.
    lexical_query(&conn, filter, &fts, None, limit)
}
