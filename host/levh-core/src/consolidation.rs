//! Consolidation's pure part (SPEC §10): which aged memories belong together, and the
//! extractive summary that replaces a cluster. The engine reads the candidates and writes
//! the result (`engine/consolidate.rs`); `levh eval consolidation` runs the same
//! clustering over labelled sets to choose the thresholds.
//!
//! Related is judged by the active measure: with the hash embedder (whose vectors mean
//! nothing), the cosine of the two texts' TF-IDF weights over their content words; with a
//! semantic embedder, the mean of that and the cosine of the two stored vectors. Clustering
//! is complete-link agglomeration over the pairs at or above the threshold, strongest pair
//! first: two clusters merge only when every member of one is related to every member of
//! the other, so one middling link never chains two topics together.
//!
//! These choices were measured, not assumed: `levh eval consolidation` on the three sets
//! of `fixtures/consolidation/` (held-out F0.5, README): complete link beat average link on
//! both measures (lexical .46 vs .41 mean; semantic .53 vs .43), and the mean of vector
//! and TF-IDF cosine beat the vector alone (.53 vs .45), with the held-out thresholds of the
//! three sets agreeing.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::{Timestamp, text};

/// Fewest memories worth one summary.
pub const MIN_CLUSTER: usize = 3;
/// Most memories one summary replaces: a summary lists one line per member, and a long
/// list is no longer a summary.
pub const MAX_CLUSTER: usize = 12;
/// Up to this many candidates in a project, every pair is compared (2 million pairs at
/// most); above, only pairs that share an uncommon word, so the cost stays linear.
pub const ALL_PAIRS_UP_TO: usize = 2_000;
/// A word in more than this many candidates of a project is too common to pair them.
const MAX_POSTING: usize = 64;
/// The vector cosine's share of the semantic measure; the rest is TF-IDF cosine.
const SEMANTIC_SHARE: f64 = 0.5;
/// Characters of each member's line in an extractive summary.
const LINE_CHARS: usize = 220;

/// One memory as clustering sees it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// Its text.
    pub content: &'a str,
    /// Its stored vector, when the measure is semantic.
    pub vector: Option<&'a [f32]>,
}

/// Groups of indices into `items` (each of [`MIN_CLUSTER`]..=[`MAX_CLUSTER`] members, in
/// index order; groups ordered by their first member), whose members are related at
/// `threshold` or above, each with each, by the measure: vector and TF-IDF cosine when
/// `semantic`, TF-IDF cosine otherwise. Deterministic: the same items give the same groups.
pub fn clusters(items: &[Item<'_>], semantic: bool, threshold: f64) -> Vec<Vec<usize>> {
    let lexical = TfIdf::of(items);
    let similarity = |a: usize, b: usize| -> f64 {
        if !semantic {
            return lexical.cosine(a, b);
        }
        let vector = match (items[a].vector, items[b].vector) {
            (Some(x), Some(y)) => dot(x, y),
            _ => 0.0,
        };
        SEMANTIC_SHARE * vector + (1.0 - SEMANTIC_SHARE) * lexical.cosine(a, b)
    };
    let mut edges: Vec<(f64, usize, usize)> = candidate_pairs(items)
        .into_iter()
        .filter_map(|(a, b)| {
            let s = similarity(a, b);
            (s >= threshold).then_some((s, a, b))
        })
        .collect();
    edges.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));

    // cluster id per item; members per cluster id
    let mut owner: Vec<usize> = (0..items.len()).collect();
    let mut members: HashMap<usize, Vec<usize>> = (0..items.len()).map(|i| (i, vec![i])).collect();
    for (_, a, b) in edges {
        let (ca, cb) = (owner[a], owner[b]);
        if ca == cb || members[&ca].len() + members[&cb].len() > MAX_CLUSTER {
            continue;
        }
        let (left, right) = (&members[&ca], &members[&cb]);
        let cross: Vec<f64> = left
            .iter()
            .flat_map(|&x| right.iter().map(move |&y| (x, y)))
            .map(|(x, y)| similarity(x, y))
            .collect();
        // Complete link: every member related to every other.
        if cross.iter().all(|&s| s >= threshold) {
            let moved = members.remove(&cb).unwrap_or_default();
            for &m in &moved {
                owner[m] = ca;
            }
            members.get_mut(&ca).expect("live cluster").extend(moved);
        }
    }
    let mut groups: Vec<Vec<usize>> = members
        .into_values()
        .filter(|group| group.len() >= MIN_CLUSTER)
        .map(|mut group| {
            group.sort_unstable();
            group
        })
        .collect();
    groups.sort();
    groups
}

/// The pairs worth comparing: all of them for a small set, else those sharing a word
/// that at most [`MAX_POSTING`] items use.
fn candidate_pairs(items: &[Item<'_>]) -> Vec<(usize, usize)> {
    let n = items.len();
    if n <= ALL_PAIRS_UP_TO {
        return (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
    }
    let mut postings: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let words: HashSet<String> = text::words(item.content)
            .filter(|w| !text::is_stopword(w))
            .collect();
        for word in words {
            postings.entry(word).or_default().push(i);
        }
    }
    let mut pairs = HashSet::new();
    for posting in postings.values() {
        if posting.len() < 2 || posting.len() > MAX_POSTING {
            continue;
        }
        for (k, &a) in posting.iter().enumerate() {
            for &b in &posting[k + 1..] {
                pairs.insert((a, b));
            }
        }
    }
    let mut pairs: Vec<(usize, usize)> = pairs.into_iter().collect();
    pairs.sort_unstable();
    pairs
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// TF-IDF weights of each item's content words (stopwords out), L2-normalised: the
/// lexical measure of relatedness. Two notes about one thread share its rare words (a
/// test's name, a place, a person) more than the common ones, which IDF weighs down.
struct TfIdf {
    /// Per item: (word id, weight), sorted by word id.
    vectors: Vec<Vec<(u32, f64)>>,
}

impl TfIdf {
    fn of(items: &[Item<'_>]) -> Self {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let counted: Vec<BTreeMap<u32, f64>> = items
            .iter()
            .map(|item| {
                let mut counts = BTreeMap::new();
                for word in text::words(item.content).filter(|w| !text::is_stopword(w)) {
                    let next = ids.len() as u32;
                    let id = *ids.entry(word).or_insert(next);
                    *counts.entry(id).or_insert(0.0) += 1.0;
                }
                counts
            })
            .collect();
        let mut df = vec![0u32; ids.len()];
        for counts in &counted {
            for id in counts.keys() {
                df[*id as usize] += 1;
            }
        }
        let n = items.len().max(1) as f64;
        let vectors = counted
            .into_iter()
            .map(|counts| {
                let mut weights: Vec<(u32, f64)> = counts
                    .into_iter()
                    .map(|(id, tf)| {
                        let idf = (n / f64::from(df[id as usize])).ln() + 1.0;
                        (id, (1.0 + f64::ln(tf)) * idf)
                    })
                    .collect();
                let norm = weights.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
                if norm > 0.0 {
                    for (_, w) in &mut weights {
                        *w /= norm;
                    }
                }
                weights
            })
            .collect();
        Self { vectors }
    }

    fn cosine(&self, a: usize, b: usize) -> f64 {
        let (x, y) = (&self.vectors[a], &self.vectors[b]);
        let (mut i, mut j, mut sum) = (0, 0, 0.0);
        while i < x.len() && j < y.len() {
            match x[i].0.cmp(&y[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    sum += x[i].1 * y[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        sum
    }
}

/// One member of a cluster, as its summary line needs it.
#[derive(Debug, Clone, Copy)]
pub struct Episode<'a> {
    /// When it held (its `valid_from`).
    pub at: Timestamp,
    /// Its text.
    pub content: &'a str,
}

/// The deterministic extractive summary of a cluster: a heading line with how many
/// memories and which days, then one line per member, oldest first — its date and its
/// first sentence (cut at [`LINE_CHARS`]). Members whose line repeats an earlier one are
/// listed once.
pub fn extractive_summary(project: Option<&str>, episodes: &[Episode<'_>]) -> String {
    let mut episodes = episodes.to_vec();
    episodes.sort_by_key(|e| e.at);
    let day = |at: Timestamp| at.strftime("%Y-%m-%d").to_string();
    let (first, last) = match (episodes.first(), episodes.last()) {
        (Some(f), Some(l)) => (day(f.at), day(l.at)),
        _ => return String::new(),
    };
    let span = if first == last {
        format!("on {first}")
    } else {
        format!("from {first} to {last}")
    };
    let place = project.map(|p| format!(" in {p}")).unwrap_or_default();
    let mut out = format!("Summary of {} memories{place}, {span}:", episodes.len());
    let mut seen = HashSet::new();
    for episode in &episodes {
        let sentence = levh_knowledge::sentences(episode.content)
            .into_iter()
            .map(|s| s.text)
            .find(|s| !s.is_empty())
            .unwrap_or(episode.content.trim());
        let line = text::preview(sentence, LINE_CHARS);
        if seen.insert(line.to_lowercase()) {
            out.push_str(&format!("\n- {}: {line}", day(episode.at)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEXICAL: f64 = 0.025;

    fn items<'a>(texts: &'a [&'a str]) -> Vec<Item<'a>> {
        texts
            .iter()
            .map(|content| Item {
                content,
                vector: None,
            })
            .collect()
    }

    #[test]
    fn notes_of_one_thread_cluster_and_an_unrelated_note_stays_out() {
        let texts = [
            "The checkout integration test flaked again on the ARM runner",
            "Quarterly budget review moved to Thursday with Dana",
            "Checkout integration test: flake traced to a shared Redis port on the runner",
            "Pinned the Redis port for the checkout integration test; flake gone",
            "Bought new running shoes for the marathon",
        ];
        let groups = clusters(&items(&texts), false, LEXICAL);
        assert_eq!(groups, vec![vec![0, 2, 3]]);
    }

    #[test]
    fn a_cluster_never_exceeds_its_bound() {
        let texts: Vec<String> = (0..30)
            .map(|i| format!("kestrel deploy pipeline note {i} about kestrel deploy"))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let groups = clusters(&items(&refs), false, LEXICAL);
        assert!(!groups.is_empty());
        assert!(
            groups
                .iter()
                .all(|g| (MIN_CLUSTER..=MAX_CLUSTER).contains(&g.len()))
        );
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 30);
    }

    #[test]
    fn vectors_decide_with_a_semantic_measure() {
        let near = [1.0f32, 0.0];
        let also = [0.96f32, 0.28];
        let far = [0.0f32, 1.0];
        let items = vec![
            Item {
                content: "a",
                vector: Some(&near),
            },
            Item {
                content: "b",
                vector: Some(&far),
            },
            Item {
                content: "c",
                vector: Some(&also),
            },
            Item {
                content: "d",
                vector: Some(&near),
            },
        ];
        // Same (empty of words) texts: only the vectors tell them apart.
        assert_eq!(clusters(&items, true, 0.45), vec![vec![0, 2, 3]]);
    }

    #[test]
    fn the_summary_lists_each_member_once_oldest_first() {
        let at = |s: &str| s.parse::<Timestamp>().expect("time");
        let summary = extractive_summary(
            Some("shop"),
            &[
                Episode {
                    at: at("2026-03-05T10:00:00Z"),
                    content: "Pinned the Redis port. Flake gone.",
                },
                Episode {
                    at: at("2026-03-01T10:00:00Z"),
                    content: "The checkout test flaked again.",
                },
                Episode {
                    at: at("2026-03-06T10:00:00Z"),
                    content: "Pinned the Redis port.",
                },
            ],
        );
        assert_eq!(
            summary,
            "Summary of 3 memories in shop, from 2026-03-01 to 2026-03-06:\n\
             - 2026-03-01: The checkout test flaked again.\n\
             - 2026-03-05: Pinned the Redis port."
        );
    }
}
