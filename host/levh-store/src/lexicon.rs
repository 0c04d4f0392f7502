//! Full-text ranking in memory: the same BM25 as SQLite's `bm25()`, without its cost.
//!
//! FTS5 finds a query's matches fast, but ranks them by calling `bm25()` on every match,
//! which gathers each phrase's instances in the row: ~1 µs a match. A common word
//! matches tens of thousands of memories at 100k, so ranking alone took 10–15 ms of a
//! recall. This index holds, for every memory row, its tokens as FTS5's tokenizer made
//! them (read back through `fts5vocab`, so stemming and case folding are FTS5's own),
//! and scores a query's matches with FTS5's formula, phrase by phrase in the same order:
//! the scores are bit for bit the ones `bm25()` returns, so the two paths rank alike and
//! either may answer.
//!
//! - **Built** once a store is asked a full-text query, on a thread of its own with its
//!   own connection (a file store; an in-memory store builds in place): the matches
//!   are ranked by FTS5 until it is ready. A build reads the change number it covers
//!   (`memory_text_changes`, migration 0009) in the same transaction as the tokens.
//! - **Refreshed** before each use with the memories whose text changed since —
//!   inserted, replaced or deleted, by this process or another one: their new text is
//!   tokenized by a private FTS5 table on the reading connection. Past
//!   [`REFRESH_AT_MOST`] changes (a bulk import), a rebuild starts instead and FTS5
//!   answers meanwhile.
//! - **Filtered** afterwards: matches are checked against the recall's filter in SQL in
//!   rank order, a few times the limit at first, more only when too few pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use levh_core::{MemoryFilter, MemoryId, StoreError};
use rusqlite::{Connection, params_from_iter};
use rustc_hash::FxHashMap;

use crate::query::where_clause;
use crate::{SqliteStoreError, rows};

/// The tokenizer of `memories_fts` (migration 0001); a test checks they agree.
pub(crate) const TOKENIZE: &str = "porter unicode61 remove_diacritics 2";

/// FTS5's BM25 constants (`fts5_aux.c`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Changes applied on the query path, at most (or a twentieth of the index, if more):
/// tokenizing costs ~10 µs a memory, so a bulk import is left to a rebuild.
const REFRESH_AT_MOST: usize = 2_000;

/// Query words remembered with their token; past this many the memory starts over.
const MAX_CACHED_WORDS: usize = 10_000;

/// One word of a query, as FTS5 reads `"word" *` and `"word"` (see `fts_query`).
#[derive(Debug, Clone)]
pub(crate) struct QueryWord {
    pub(crate) text: String,
    /// Also matched as a prefix.
    pub(crate) prefix: bool,
}

/// The index, once built; shared with the thread that builds it.
#[derive(Debug, Default)]
pub(crate) struct Lexicon {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    index: Mutex<Option<Index>>,
    building: AtomicBool,
    /// A build failed: FTS5 ranks for the rest of the process rather than a thread
    /// failing again on every query.
    failed: AtomicBool,
}

/// Clears the building flag however a build ends.
struct Building<'a>(&'a AtomicBool);

impl Drop for Building<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[derive(Debug)]
struct Index {
    tokenizer: Tokenizer,
    /// The change number (`memory_text_changes`) the index reflects.
    covered: i64,
    /// Every token seen, in byte order, so a prefix is a range.
    terms: BTreeMap<String, u32>,
    /// By term: the documents holding it, with how many times.
    postings: Vec<Vec<Posting>>,
    /// By term: how many live documents hold it.
    live_holders: Vec<u32>,
    /// By slot; a replaced or deleted memory's slot stays, dead, until a rebuild.
    docs: Vec<Doc>,
    slot_of: FxHashMap<i64, u32>,
    /// FTS5's `nRow` and total tokens: every live row, empty ones included.
    rows: u64,
    tokens: u64,
    /// Dead slots: past half of them, the index is rebuilt.
    dead: usize,
    /// Query words already tokenized (`None`: not one token, which FTS5 answers).
    words: FxHashMap<String, Option<String>>,
    /// [`Index::rank`]'s per-slot sums, kept between queries and zeroed where used: a
    /// four-word query adds ~10k postings at 100k memories, which hash maps made a
    /// sixth of a recall.
    scratch: RankScratch,
}

#[derive(Debug, Default)]
struct RankScratch {
    /// By slot: the score so far (0 = not matched yet; every phrase adds > 0).
    scores: Vec<f64>,
    /// By slot: the phrase's occurrences in it (0 = none yet).
    counts: Vec<u32>,
    /// Slots with a count in the current phrase, then with a score, first seen first.
    counted: Vec<u32>,
    scored: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    count: u32,
}

#[derive(Debug)]
struct Doc {
    seq: i64,
    length: u32,
    live: bool,
    /// Its distinct terms, to undo their holder counts when it dies.
    terms: Box<[u32]>,
}

/// A text's tokens, each with its count, and its length in tokens.
type Tokens = (Vec<(String, u32)>, u32);

/// Ranked matches: (seq, FTS5's `bm25()` value, lower is better).
type Ranked = Vec<(i64, f64)>;

impl Lexicon {
    /// The best `limit` matches of `words` that pass `filter`, best first, with their
    /// BM25 score (higher is better) — or `None` when the index cannot answer yet (not
    /// built, being rebuilt) or a word is not one token; FTS5 answers those.
    pub(crate) fn candidates(
        &self,
        conn: &Connection,
        store: &crate::SqliteStore,
        filter: &MemoryFilter,
        words: &[QueryWord],
        limit: usize,
        fetch: usize,
    ) -> Result<Option<Vec<(MemoryId, f64)>>, SqliteStoreError> {
        let ranked = {
            let mut guard = self
                .shared
                .index
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let Some(index) = guard.as_mut() else {
                drop(guard);
                self.start_build(conn, store.file_path())?;
                return Ok(None);
            };
            if !index.refresh(conn)? {
                *guard = None;
                drop(guard);
                self.start_build(conn, store.file_path())?;
                return Ok(None);
            }
            let Some(ranked) = index.rank(words)? else {
                return Ok(None);
            };
            ranked
        };
        filtered(conn, &store.project_seqs, filter, ranked, limit, fetch).map(Some)
    }

    /// Brings the index up to date without a query (a server, every few seconds):
    /// builds it when there is none, applies the changes since, or starts a rebuild
    /// after a bulk import — so the first query after an import by any process finds
    /// it ready, or at least building, instead of starting the build itself.
    pub(crate) fn keep_up(
        &self,
        conn: &Connection,
        file: Option<&Path>,
    ) -> Result<(), SqliteStoreError> {
        let mut guard = self
            .shared
            .index
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = guard.as_mut()
            && index.refresh(conn)?
        {
            return Ok(());
        }
        *guard = None;
        drop(guard);
        self.start_build(conn, file)
    }

    /// Builds the index: here for an in-memory store, on a thread with a connection of
    /// its own for a file (unless one is already building).
    fn start_build(&self, conn: &Connection, file: Option<&Path>) -> Result<(), SqliteStoreError> {
        let Some(file) = file else {
            let index = Index::build(conn)?;
            *self
                .shared
                .index
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(index);
            return Ok(());
        };
        if self.shared.failed.load(Ordering::Acquire)
            || self.shared.building.swap(true, Ordering::AcqRel)
        {
            return Ok(());
        }
        let shared = Arc::clone(&self.shared);
        let file: PathBuf = file.to_owned();
        let spawned = std::thread::Builder::new()
            .name("levh-lexicon".into())
            .spawn(move || {
                let _building = Building(&shared.building);
                let started = Instant::now();
                match crate::readers::open_for_build(&file).and_then(|conn| Index::build(&conn)) {
                    Ok(index) => {
                        tracing::debug!(
                            rows = index.rows,
                            terms = index.terms.len(),
                            took_ms = started.elapsed().as_millis() as u64,
                            "full-text ranking index built"
                        );
                        let mut guard =
                            shared.index.lock().unwrap_or_else(PoisonError::into_inner);
                        // A build raced by another is kept only if it covers more.
                        if guard.as_ref().is_none_or(|old| old.covered < index.covered) {
                            *guard = Some(index);
                        }
                    }
                    Err(error) => {
                        shared.failed.store(true, Ordering::Release);
                        // Said as every store failure is said ("storage error: …").
                        let error = StoreError::from(error);
                        tracing::warn!(%error, "full-text ranking index not built; FTS5 ranks instead");
                    }
                }
            });
        if let Err(error) = spawned {
            self.shared.building.store(false, Ordering::Release);
            tracing::warn!(%error, "cannot start the full-text ranking build");
        }
        Ok(())
    }

    /// Waits for a build in progress to finish (tests and benchmarks).
    pub(crate) fn wait_idle(&self) {
        while self.shared.building.load(Ordering::Acquire) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Whether the index is built.
    #[cfg(test)]
    pub(crate) fn is_built(&self) -> bool {
        self.shared
            .index
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// FTS5's tokenizer on a private in-memory database: a contentless table with the
/// store's tokenizer, read back through `fts5vocab`. Private, so no connection of the
/// store (its readers are `query_only`) is written to.
#[derive(Debug)]
struct Tokenizer(Connection);

impl Tokenizer {
    fn new() -> Result<Self, SqliteStoreError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE texts USING fts5(content, content = '', tokenize = '{TOKENIZE}');
             CREATE VIRTUAL TABLE instances USING fts5vocab(texts, instance);"
        ))?;
        Ok(Self(conn))
    }

    /// Each text's tokens as the store's FTS5 table makes them, each with its count, and
    /// the text's length in tokens.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Tokens>, SqliteStoreError> {
        let mut found: Vec<(BTreeMap<String, u32>, u32)> = vec![Default::default(); texts.len()];
        let tx = self.0.unchecked_transaction()?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO texts (rowid, content) VALUES (?1, ?2)")?;
            for (i, text) in texts.iter().enumerate() {
                insert.execute((i as i64, text))?;
            }
            let mut read = tx.prepare_cached("SELECT term, doc FROM instances")?;
            let mut rows = read.query([])?;
            while let Some(row) = rows.next()? {
                let term: String = row.get(0)?;
                let doc: i64 = row.get(1)?;
                let (terms, length) = &mut found[doc as usize];
                *terms.entry(term).or_default() += 1;
                *length += 1;
            }
            tx.execute("INSERT INTO texts (texts) VALUES ('delete-all')", [])?;
        }
        tx.commit()?;
        Ok(found
            .into_iter()
            .map(|(terms, length)| (terms.into_iter().collect(), length))
            .collect())
    }
}

impl Index {
    /// Every memory row's tokens, read from the store's FTS5 index, and the change
    /// number they reflect — in one read transaction, so the two agree.
    fn build(conn: &Connection) -> Result<Self, SqliteStoreError> {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.levh_fts_instances
                 USING fts5vocab(main, memories_fts, instance)",
        )?;
        conn.execute_batch("BEGIN")?;
        let built = Self::read_all(conn);
        // A read transaction: ending it cannot lose anything.
        let _ = conn.execute_batch("COMMIT");
        built
    }

    fn read_all(conn: &Connection) -> Result<Self, SqliteStoreError> {
        let mut index = Self {
            tokenizer: Tokenizer::new()?,
            covered: conn.query_row(
                "SELECT coalesce(max(change), 0) FROM memory_text_changes",
                [],
                |row| row.get(0),
            )?,
            terms: BTreeMap::new(),
            postings: Vec::new(),
            live_holders: Vec::new(),
            docs: Vec::new(),
            slot_of: FxHashMap::default(),
            rows: 0,
            tokens: 0,
            dead: 0,
            words: FxHashMap::default(),
            scratch: RankScratch::default(),
        };
        // Every row is a document, the empty ones too (FTS5 counts them in `nRow`).
        let mut seqs = conn.prepare("SELECT seq FROM memories ORDER BY seq")?;
        let mut rows = seqs.query([])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            index.slot_of.insert(seq, index.docs.len() as u32);
            index.docs.push(Doc {
                seq,
                length: 0,
                live: true,
                terms: Box::default(),
            });
        }
        index.rows = index.docs.len() as u64;
        // Instances come ordered by term, then document: one posting per run.
        let mut doc_terms: Vec<Vec<u32>> = vec![Vec::new(); index.docs.len()];
        let mut instances = conn.prepare("SELECT term, doc FROM temp.levh_fts_instances")?;
        let mut rows = instances.query([])?;
        let mut current: Option<(String, u32)> = None;
        while let Some(row) = rows.next()? {
            let term = row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
            let seq: i64 = row.get(1)?;
            let Some(&slot) = index.slot_of.get(&seq) else {
                // The index holds a row the table does not: FTS5 is out of step with
                // its content (an integrity-check failure); leave that row out.
                continue;
            };
            let id = match &current {
                Some((text, id)) if text == term => *id,
                _ => {
                    let id = index.intern(term);
                    current = Some((term.to_owned(), id));
                    id
                }
            };
            let postings = &mut index.postings[id as usize];
            match postings.last_mut() {
                Some(last) if last.slot == slot => last.count += 1,
                _ => {
                    postings.push(Posting { slot, count: 1 });
                    index.live_holders[id as usize] += 1;
                    doc_terms[slot as usize].push(id);
                }
            }
            index.docs[slot as usize].length += 1;
            index.tokens += 1;
        }
        for (doc, terms) in index.docs.iter_mut().zip(doc_terms) {
            doc.terms = terms.into_boxed_slice();
        }
        Ok(index)
    }

    /// Applies every text change after `covered`. `false` when there are too many to
    /// apply here (or too many dead slots): the caller rebuilds.
    fn refresh(&mut self, conn: &Connection) -> Result<bool, SqliteStoreError> {
        let pending: i64 = conn
            .prepare_cached("SELECT count(*) FROM memory_text_changes WHERE change > ?1")
            .and_then(|mut s| s.query_row([self.covered], |row| row.get(0)))?;
        if pending == 0 {
            return Ok(true);
        }
        if pending as usize > REFRESH_AT_MOST.max(self.docs.len() / 20) {
            return Ok(false);
        }
        // One statement, one snapshot: the texts and the change number agree.
        let mut changed: Vec<(i64, i64, Option<String>)> = Vec::new();
        {
            let mut statement = conn.prepare_cached(
                "SELECT c.change, c.memory_seq, m.content
                     FROM memory_text_changes c LEFT JOIN memories m ON m.seq = c.memory_seq
                     WHERE c.change > ?1 ORDER BY c.change",
            )?;
            let rows = statement.query_map([self.covered], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?;
            for row in rows {
                changed.push(row?);
            }
        }
        let texts: Vec<&str> = changed
            .iter()
            .filter_map(|(_, _, content)| content.as_deref())
            .collect();
        let mut tokens = self.tokenizer.tokenize(&texts)?.into_iter();
        for (change, seq, content) in &changed {
            self.remove(*seq);
            if content.is_some() {
                let (terms, length) = tokens.next().expect("one tokenization per text");
                self.add(*seq, terms, length);
            }
            self.covered = *change;
        }
        Ok(self.dead * 2 <= self.docs.len().max(64))
    }

    /// The id of `term`, a new one with no postings if it was never seen.
    fn intern(&mut self, term: &str) -> u32 {
        if let Some(id) = self.terms.get(term) {
            return *id;
        }
        let id = self.postings.len() as u32;
        self.terms.insert(term.to_owned(), id);
        self.postings.push(Vec::new());
        self.live_holders.push(0);
        id
    }

    fn remove(&mut self, seq: i64) {
        let Some(slot) = self.slot_of.remove(&seq) else {
            return;
        };
        let doc = &mut self.docs[slot as usize];
        doc.live = false;
        for term in doc.terms.iter() {
            self.live_holders[*term as usize] -= 1;
        }
        self.rows -= 1;
        self.tokens -= u64::from(doc.length);
        self.dead += 1;
    }

    fn add(&mut self, seq: i64, terms: Vec<(String, u32)>, length: u32) {
        let slot = self.docs.len() as u32;
        let mut ids = Vec::with_capacity(terms.len());
        for (term, count) in terms {
            let id = self.intern(&term);
            self.postings[id as usize].push(Posting { slot, count });
            self.live_holders[id as usize] += 1;
            ids.push(id);
        }
        self.docs.push(Doc {
            seq,
            length,
            live: true,
            terms: ids.into_boxed_slice(),
        });
        self.slot_of.insert(seq, slot);
        self.rows += 1;
        self.tokens += u64::from(length);
    }

    /// The token a query word reads as, `None` when it is not exactly one.
    fn token(&mut self, word: &str) -> Result<Option<String>, SqliteStoreError> {
        if let Some(token) = self.words.get(word) {
            return Ok(token.clone());
        }
        let (terms, length) = self.tokenizer.tokenize(&[word])?.pop().expect("one text");
        let token = (length == 1)
            .then(|| terms.into_iter().next().map(|(t, _)| t))
            .flatten();
        if self.words.len() >= MAX_CACHED_WORDS {
            self.words.clear();
        }
        self.words.insert(word.to_owned(), token.clone());
        Ok(token)
    }

    /// Every match of the query, unordered ([`filtered`] orders what it checks), scored
    /// as FTS5's `bm25()` scores it: the phrases in the order `fts_query` writes them (a
    /// word's prefix form before its exact form), each one's IDF from the live rows
    /// holding it, each row's sum taken in phrase order.
    fn rank(&mut self, words: &[QueryWord]) -> Result<Option<Ranked>, SqliteStoreError> {
        let mut phrases: Vec<(String, bool)> = Vec::with_capacity(words.len() * 2);
        for word in words {
            let Some(token) = self.token(&word.text)? else {
                return Ok(None);
            };
            if word.prefix {
                phrases.push((token.clone(), true));
            }
            phrases.push((token, false));
        }
        if self.rows == 0 {
            return Ok(Some(Vec::new()));
        }
        let rows = self.rows as f64;
        let average = self.tokens as f64 / rows;
        let Self {
            terms,
            postings,
            docs,
            scratch,
            ..
        } = self;
        let RankScratch {
            scores,
            counts,
            counted,
            scored,
        } = scratch;
        scores.resize(docs.len(), 0.0);
        counts.resize(docs.len(), 0);
        scored.clear();
        for (token, prefix) in &phrases {
            counted.clear();
            let mut add = |id: u32| {
                for posting in &postings[id as usize] {
                    let slot = posting.slot as usize;
                    if docs[slot].live {
                        if counts[slot] == 0 {
                            counted.push(posting.slot);
                        }
                        counts[slot] += posting.count;
                    }
                }
            };
            if *prefix {
                for (_, id) in terms
                    .range::<str, _>((
                        std::ops::Bound::Included(token.as_str()),
                        std::ops::Bound::Unbounded,
                    ))
                    .take_while(|(term, _)| term.starts_with(token.as_str()))
                {
                    add(*id);
                }
            } else if let Some(id) = terms.get(token) {
                add(*id);
            }
            if counted.is_empty() {
                continue;
            }
            let hits = counted.len() as f64;
            let mut idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
            if idf <= 0.0 {
                idf = 1e-6;
            }
            for &slot in counted.iter() {
                let slot = slot as usize;
                let frequency = f64::from(std::mem::take(&mut counts[slot]));
                let length = f64::from(docs[slot].length);
                if scores[slot] == 0.0 {
                    scored.push(slot as u32);
                }
                scores[slot] += idf
                    * ((frequency * (K1 + 1.0))
                        / (frequency + K1 * (1.0 - B + B * length / average)));
            }
        }
        Ok(Some(
            scored
                .iter()
                .map(|&slot| {
                    let score = std::mem::take(&mut scores[slot as usize]);
                    (docs[slot as usize].seq, -score)
                })
                .collect(),
        ))
    }
}

/// Best first: the lower `bm25()` value, then the older memory.
fn rank_order(a: &(i64, f64), b: &(i64, f64)) -> std::cmp::Ordering {
    a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))
}

/// The first `limit` of `ranked` (unordered) that pass `filter`, in rank order: checked
/// `fetch` at a time at first, four times as many each round after, so an unselective
/// filter costs one lookup of a few hundred rows and a selective one no more than
/// checking them all. Only what is checked is sorted: the best chunk is selected from
/// the rest first (a query matches ~10k memories at 100k; a chunk is a few hundred).
fn filtered(
    conn: &Connection,
    projects: &crate::project_seqs::ProjectSeqs,
    filter: &MemoryFilter,
    mut ranked: Vec<(i64, f64)>,
    limit: usize,
    fetch: usize,
) -> Result<Vec<(MemoryId, f64)>, SqliteStoreError> {
    // Scoped to a project, the matches of other projects are dropped first, by the
    // project's seqs read from its index: otherwise a project holding a tenth of the
    // store costs ten row probes per candidate kept (2,600 probes, most of a scoped
    // recall at 100k).
    if let Some(project) = &filter.project
        && ranked.len() > fetch.max(limit).saturating_mul(4)
    {
        let seqs = projects.get(conn, &filter.workspace, project)?;
        ranked.retain(|(seq, _)| seqs.contains(seq));
    }
    let (clause, values) = where_clause(filter);
    // The seqs drive the lookup (CROSS JOIN keeps that order): one rowid probe each.
    let sql = format!(
        "SELECT m.seq, m.id FROM json_each(?1) j CROSS JOIN memories m ON m.seq = j.value
         WHERE {clause}"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let mut found = Vec::new();
    let (mut start, mut size) = (0, fetch.max(limit).max(1));
    while start < ranked.len() && found.len() < limit {
        let end = (start + size).min(ranked.len());
        let rest = &mut ranked[start..];
        if end - start < rest.len() {
            rest.select_nth_unstable_by(end - start, rank_order);
        }
        rest[..end - start].sort_unstable_by(rank_order);
        let chunk = &ranked[start..end];
        let seqs = serde_json::to_string(&chunk.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())?;
        let params = std::iter::once(rusqlite::types::Value::from(seqs)).chain(values.clone());
        let mut passed: FxHashMap<i64, String> = FxHashMap::default();
        let mut matches = statement.query(params_from_iter(params))?;
        while let Some(row) = matches.next()? {
            passed.insert(row.get(0)?, row.get(1)?);
        }
        for (seq, bm25) in chunk {
            if let Some(id) = passed.get(seq) {
                // SQLite's bm25() is lower-is-better; the trait promises higher-is-better.
                found.push((rows::parse_id(id)?, -bm25));
                if found.len() == limit {
                    break;
                }
            }
        }
        start += chunk.len();
        size = size.saturating_mul(4);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use levh_core::{Actor, Store, Timestamp, Workspace};

    use super::*;
    use crate::SqliteStore;
    use crate::lexical::{fts_query, lexical_query, query_words};

    /// Words with shared stems and prefixes, diacritics, a number and a non-Latin script:
    /// whatever FTS5's tokenizer does with them, the two rankings must agree.
    const WORDS: &[&str] = &[
        "bake",
        "baker",
        "bakery",
        "baking",
        "baked",
        "quarter",
        "quarterly",
        "quarters",
        "run",
        "runs",
        "running",
        "runner",
        "café",
        "cafe",
        "naïve",
        "deploy",
        "deployed",
        "deployment",
        "budget",
        "budgets",
        "the",
        "a",
        "of",
        "meeting",
        "meet",
        "release",
        "released",
        "2026",
        "東京",
        "über",
        "uber",
        "résumé",
        "resume",
        "invoice",
        "vendor",
    ];

    struct Fixture {
        _dir: tempfile::TempDir,
        store: SqliteStore,
        written: u64,
        seed: u64,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let store = SqliteStore::open(&dir.path().join("levh.db")).unwrap();
            Self {
                _dir: dir,
                store,
                written: 0,
                seed: 7,
            }
        }

        fn next(&mut self) -> u64 {
            // xorshift: varied, repeatable texts without a dependency.
            self.seed ^= self.seed << 13;
            self.seed ^= self.seed >> 7;
            self.seed ^= self.seed << 17;
            self.seed
        }

        fn text(&mut self) -> String {
            let length = 1 + self.next() % 25;
            (0..length)
                .map(|_| WORDS[(self.next() % WORDS.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join(" ")
        }

        fn add(&mut self, content: String, workspace: &str, project: &str) -> i64 {
            self.written += 1;
            let at = Timestamp::from_second(1_700_000_000 + self.written as i64).unwrap();
            let record = crate::test_records::record(content, at, workspace, project, None);
            self.store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            self.store
                .with_connection(|c| c.query_row("SELECT max(seq) FROM memories", [], |r| r.get(0)))
                .unwrap()
        }

        fn fill(&mut self, count: usize) {
            for n in 0..count {
                let text = self.text();
                let workspace = if n % 7 == 0 { "other" } else { "default" };
                self.add(text, workspace, &format!("p{}", n % 5));
            }
        }

        /// The in-memory ranking, built and current.
        fn lexicon(
            &self,
            filter: &MemoryFilter,
            query: &str,
            limit: usize,
        ) -> Vec<(MemoryId, f64)> {
            let conn = self.store.read();
            let words = query_words(query);
            for _ in 0..2 {
                if let Some(found) = self
                    .store
                    .lexicon
                    .candidates(&conn, &self.store, filter, &words, limit, limit * 4)
                    .unwrap()
                {
                    return found;
                }
                self.store.lexicon.wait_idle();
            }
            panic!("the full-text ranking was not built");
        }

        /// FTS5's own ranking, every match checked.
        fn fts5(&self, filter: &MemoryFilter, query: &str, limit: usize) -> Vec<(MemoryId, f64)> {
            let fts = fts_query(&query_words(query)).unwrap();
            lexical_query(&self.store.read(), filter, &fts, None, limit).unwrap()
        }

        fn agree(&self, queries: &[&str]) -> usize {
            let mut compared = 0;
            for query in queries {
                for (filter, limit) in [
                    (MemoryFilter::workspace(Workspace::default()), 10),
                    (MemoryFilter::workspace(Workspace::default()), 1000),
                    (
                        MemoryFilter::workspace(Workspace::new("other").unwrap()),
                        50,
                    ),
                    (
                        MemoryFilter {
                            project: Some("p3".into()),
                            ..MemoryFilter::workspace(Workspace::default())
                        },
                        3,
                    ),
                ] {
                    let expected = self.fts5(&filter, query, limit);
                    let found = self.lexicon(&filter, query, limit);
                    // Bit for bit: the same phrases, the same statistics, the same sums.
                    assert_eq!(found, expected, "query {query:?}, filter {filter:?}");
                    compared += expected.len();
                }
            }
            compared
        }
    }

    const QUERIES: &[&str] = &[
        "bake",
        "quarterly budget meeting",
        "running runner",
        "cafe",
        "café résumé",
        "the of a",
        "東京 2026",
        "uber deployment release",
        "bakery's vendor invoice",
        "nothing-here zzz",
    ];

    #[test]
    fn ranks_every_query_exactly_as_fts5_through_inserts_replacements_and_deletes() {
        let mut fixture = Fixture::new();
        fixture.fill(400);
        // Rows without a single token still count as rows for BM25.
        fixture.add("!!! ???".into(), "default", "p0");
        assert!(fixture.agree(QUERIES) > 1000);
        assert!(fixture.store.lexicon.is_built());

        // Changes after the build, applied on the next query: new memories, replaced
        // texts, deleted rows.
        fixture.fill(60);
        let seqs: Vec<i64> = fixture.store.with_connection(|c| {
            let mut s = c
                .prepare("SELECT seq FROM memories WHERE seq % 9 = 0")
                .unwrap();
            s.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        });
        for (n, seq) in seqs.iter().enumerate() {
            let text = fixture.text();
            fixture.store.with_connection(|c| {
                if n % 2 == 0 {
                    c.execute(
                        "UPDATE memories SET content = ?1 WHERE seq = ?2",
                        (text, seq),
                    )
                } else {
                    c.execute("DELETE FROM memories WHERE seq = ?1", [seq])
                }
                .unwrap();
            });
        }
        assert!(fixture.agree(QUERIES) > 1000);
    }

    #[test]
    fn another_process_writes_are_seen_and_a_bulk_change_rebuilds() {
        let mut fixture = Fixture::new();
        fixture.fill(100);
        fixture.agree(&["bake"]);
        // Another process on the same file: its writes reach this index through the log.
        let other = SqliteStore::open(fixture.store.file_path().unwrap()).unwrap();
        let found_before =
            fixture.lexicon(&MemoryFilter::workspace(Workspace::default()), "zebra", 10);
        assert!(found_before.is_empty());
        other
            .with_connection(|c| {
                c.execute(
                    "UPDATE memories SET content = 'a zebra crossing' WHERE seq = 3",
                    [],
                )
            })
            .unwrap();
        let found = fixture.lexicon(&MemoryFilter::workspace(Workspace::default()), "zebra", 10);
        assert_eq!(found.len(), 1);
        assert!(fixture.agree(QUERIES) > 100);

        // More changes than a query applies: FTS5 answers until the rebuild is done, and
        // the answers agree throughout.
        fixture.fill(REFRESH_AT_MOST + 10);
        let conn = fixture.store.read();
        let words = query_words("bake");
        let filter = MemoryFilter::workspace(Workspace::default());
        let answered = fixture
            .store
            .lexicon
            .candidates(&conn, &fixture.store, &filter, &words, 10, 40)
            .unwrap();
        assert!(
            answered.is_none(),
            "a bulk change is not applied on the query path"
        );
        drop(conn);
        assert!(fixture.agree(QUERIES) > 1000);
    }

    #[test]
    fn kept_up_without_queries_the_ranking_is_built_and_follows_a_bulk_import() {
        let mut fixture = Fixture::new();
        fixture.fill(100);
        assert!(!fixture.store.lexicon.is_built());
        // What a server does between requests: no query has asked yet.
        fixture.store.keep_text_ranking_up().unwrap();
        fixture.store.wait_text_ranking();
        assert!(fixture.store.lexicon.is_built());
        // A bulk import: kept up, a rebuild takes it in before any query.
        fixture.fill(REFRESH_AT_MOST + 10);
        fixture.store.keep_text_ranking_up().unwrap();
        fixture.store.wait_text_ranking();
        let conn = fixture.store.read();
        let answered = fixture
            .store
            .lexicon
            .candidates(
                &conn,
                &fixture.store,
                &MemoryFilter::workspace(Workspace::default()),
                &query_words("bake"),
                10,
                40,
            )
            .unwrap();
        assert!(answered.is_some(), "the first query after it is answered");
        drop(conn);
        assert!(fixture.agree(QUERIES) > 1000);
    }

    #[test]
    fn the_tokenizer_is_the_full_text_tables() {
        let store = SqliteStore::open_in_memory().unwrap();
        let sql: String = store
            .with_connection(|c| {
                c.query_row(
                    "SELECT sql FROM sqlite_master WHERE name = 'memories_fts'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert!(sql.contains(&format!("tokenize = '{TOKENIZE}'")), "{sql}");
    }
}
