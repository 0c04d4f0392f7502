//! Conflict candidates found when a memory is written: every write that stores or changes
//! a memory's text (capture, update, batch, import, a held candidate admitted, a connector's
//! sync) compares it with the memories valid now in its project that share the most words
//! with it, judged by levh-knowledge's [`relate`] — narrow on purpose: only pairs that
//! share an entity and an attribute, and a pair of which one says the fact changed is a
//! supersession, not a conflict. Found pairs are recorded for a person to resolve; nothing
//! is retired here.

use levh_knowledge::conflicts::{Relation, relate, search_words};

use super::Levh;
use crate::entities::ConflictRecord;
use crate::{Memory, MemoryId, Result, Scope};

/// Memories a written one is compared with: its nearest by full-text rank.
pub const AT_ADMISSION: usize = 10;
/// Content words of a written memory its neighbours are searched by (the first ones it
/// says): a long mail costs a search no dearer than a short note.
pub const SEARCH_WORDS: usize = 32;

/// Pairs that may disagree: (older, newer, kind). Each pair is given as (older, newer);
/// a pair of which either says the fact changed ("moves to", "no longer") is a
/// supersession, not a conflict, whichever of the two came first.
pub fn judge_conflicts(
    pairs: impl Iterator<Item = (Memory, Memory)>,
) -> Vec<(MemoryId, MemoryId, String)> {
    let mut found = Vec::new();
    for (older, newer) in pairs {
        let forward = relate(&older.content, &newer.content);
        if forward == Some(Relation::Update)
            || relate(&newer.content, &older.content) == Some(Relation::Update)
        {
            continue;
        }
        if let Some(Relation::Conflict(kind)) = forward {
            found.push((older.id, newer.id, kind.as_str().to_owned()));
        }
    }
    found
}

/// Two memories as (older, newer): by world time, then by when they were stored.
pub fn in_order(a: Memory, b: Memory) -> (Memory, Memory) {
    if (a.valid_from, a.state.created_at, a.id) <= (b.valid_from, b.state.created_at, b.id) {
        (a, b)
    } else {
        (b, a)
    }
}

/// The full-text query a written memory's neighbours are found by: its first content
/// words, each split where the full-text index splits it ("we'll" → "we", "ll"; "v2.5"
/// → "v2", "5"), keeping the parts of two characters or more.
///
/// Why split here: a word the index reads as several tokens is a phrase query, which the
/// in-memory ranking (levh-store's `lexicon.rs`, positions not kept) cannot answer, so
/// the whole query fell back to FTS5's own ranking — a quarter of the benchmark sets'
/// turns hold such a word ("I'm", "we'll", "3.5"), and that fallback was the largest part
/// of a capture's cost over REST at 3k. A neighbour search only needs the shared
/// content words; a one-letter contraction part matches nearly everything.
pub fn neighbour_query(content: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let words = search_words(content, SEARCH_WORDS);
    for word in &words {
        for part in word.split(|c: char| !c.is_alphanumeric()) {
            if part.chars().count() >= 2 && !parts.contains(&part) {
                parts.push(part);
            }
        }
    }
    parts.join(" ")
}

impl Levh {
    /// After `id` was stored or its text changed: the memories valid now in its project
    /// that share the most words with it (full-text rank; nothing is embedded again),
    /// judged against it in world-time order, the candidates recorded (each pair once).
    /// Returns the pairs recorded now.
    pub fn check_conflicts(&self, scope: &Scope, id: MemoryId) -> Result<Vec<ConflictRecord>> {
        // Stored forgotten (an export's forgotten memory), or forgotten since: nothing
        // live to disagree with.
        let Some(written) = self.store.get(&scope.workspace, id)? else {
            return Ok(Vec::new());
        };
        let query = neighbour_query(&written.content);
        let pairs = self
            .lexical_neighbours(scope, &written, &query, AT_ADMISSION)?
            .into_iter()
            .map(|other| in_order(other, written.clone()));
        let found = judge_conflicts(pairs);
        if found.is_empty() {
            return Ok(Vec::new());
        }
        self.record_conflicts(scope, &found)
    }

    /// [`Levh::check_conflicts`] for each of `ids`: how many pairs were recorded.
    pub fn check_conflicts_of(&self, scope: &Scope, ids: &[MemoryId]) -> Result<usize> {
        let mut found = 0;
        for &id in ids {
            found += self.check_conflicts(scope, id)?.len();
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word of the query is one token of the full-text index (letters and digits
    /// only), so the in-memory ranking answers it; the content words survive in order.
    #[test]
    fn the_neighbour_query_holds_only_words_the_index_reads_as_one_token() {
        let query = neighbour_query(
            "Nadia: I'm sure we'll move the O'Brien launch to v2.5 — budget 3.5M, Nadia's call",
        );
        for word in query.split(' ') {
            assert!(
                word.chars().all(char::is_alphanumeric),
                "{word:?} in {query:?}"
            );
            assert!(word.chars().count() >= 2, "{word:?} in {query:?}");
        }
        for expected in ["nadia", "brien", "launch", "v2", "budget", "5m"] {
            assert!(
                query.split(' ').any(|w| w == expected),
                "{expected} missing: {query:?}"
            );
        }
        assert_eq!(
            query.split(' ').filter(|w| *w == "nadia").count(),
            1,
            "each word once: {query:?}"
        );
        assert_eq!(neighbour_query("the a of"), "");
    }
}
