//! Conflict candidates: whether two memories about the same thing may disagree.
//!
//! Narrow on purpose: a pair is judged only when it shares an entity and an attribute
//! (at least two content words, and at least [`MIN_SHARED_RATIO`] of the shorter memory's),
//! because a detector that lets any new fact invalidate any old one retires facts by
//! collateral damage. Within that scope the newer memory is
//! - an **update** when it says the fact changed ("moved to", "no longer", "from now on",
//!   "nicht mehr", "ab jetzt"): a supersession, not a conflict to flag;
//! - a **negation** when one of the two denies what the other states, the rest equal;
//! - an **antonym** when they say opposite things of it ("fast"/"slow", "approved"/"rejected");
//! - a **value** conflict when a value differs (a number, a date, a time, an amount, or one
//!   word in otherwise the same sentence);
//! - a **swap** when a name, a tool or a company in the same role differs;
//! - otherwise nothing (a paraphrase that agrees, or another attribute).
//!
//! The numbers were chosen on `fixtures/knowledge/conflicts.jsonl` and are measured on the
//! holdout set (`levh eval detectors`). Deterministic and offline; the words it reads
//! (glue, negations, "it changed" phrases, opposites, values) are per-language lists in
//! `data/conflicts.*.words`, so a language is added by a file, not code.

use std::collections::{BTreeSet, HashSet};
use std::sync::LazyLock;

use crate::RuleError;

/// Content words two memories must share to be about the same thing.
pub const MIN_SHARED: usize = 2;
/// ... and that share of the shorter memory's content words.
pub const MIN_SHARED_RATIO: f64 = 0.4;
/// Content words besides the negation that may differ in a negation.
const NEGATION_REST: usize = 3;
/// Differing content words per side in a value or swap conflict.
const MAX_DIFFERENT: usize = 4;
/// Shared ratio above which one differing word (not a number, not a name) is a value.
const ONE_WORD_RATIO: f64 = 0.75;
/// Shared ratio from which a differing name is a swap.
const SWAP_RATIO: f64 = 0.5;

/// What kind of disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConflictKind {
    /// A value differs.
    Value,
    /// One denies what the other states.
    Negation,
    /// Opposite words on the same subject.
    Antonym,
    /// Another person, tool or company in the same role.
    Swap,
}

impl ConflictKind {
    /// Its name: `value`, `negation`, `antonym`, `swap`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Value => "value",
            Self::Negation => "negation",
            Self::Antonym => "antonym",
            Self::Swap => "swap",
        }
    }
}

/// How a newer memory relates to an older one about the same thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// They may disagree: for a person to resolve.
    Conflict(ConflictKind),
    /// The newer says the fact changed: it supersedes the older.
    Update,
}

/// The word lists of every language (`data/conflicts.*.words`).
pub const WORD_FILES: &[(&str, &str)] = &[
    (
        "conflicts.en.words",
        include_str!("../data/conflicts.en.words"),
    ),
    (
        "conflicts.de.words",
        include_str!("../data/conflicts.de.words"),
    ),
];

/// What the word lists say, every language at once.
#[derive(Debug)]
struct Words {
    /// Glue words: not content.
    stop: HashSet<String>,
    /// Negations.
    negations: HashSet<String>,
    /// Phrases of a newer memory that say the fact changed.
    changed: Vec<String>,
    /// Opposites, each pair both ways.
    opposites: HashSet<(String, String)>,
    /// Values without a digit.
    values: HashSet<String>,
}

impl Words {
    fn parse(files: &[(&str, &str)]) -> Result<Self, RuleError> {
        let mut words = Self {
            stop: HashSet::new(),
            negations: HashSet::new(),
            changed: Vec::new(),
            opposites: HashSet::new(),
            values: HashSet::new(),
        };
        for (file, text) in files {
            for (number, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let error = |message: String| RuleError {
                    file: (*file).to_owned(),
                    line: number + 1,
                    message,
                };
                let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
                let rest = rest.trim().to_lowercase();
                if rest.is_empty() {
                    return Err(error(format!("`{kind}` names no word")));
                }
                match kind {
                    "stop" => {
                        words.stop.insert(rest);
                    }
                    "not" => {
                        words.negations.insert(rest);
                    }
                    "changed" => words.changed.push(rest),
                    "value" => {
                        words.values.insert(rest);
                    }
                    "opposite" => {
                        let Some((a, b)) = rest.split_once(' ') else {
                            return Err(error("`opposite` needs two words".into()));
                        };
                        let (a, b) = (a.trim().to_owned(), b.trim().to_owned());
                        words.opposites.insert((b.clone(), a.clone()));
                        words.opposites.insert((a, b));
                    }
                    other => {
                        return Err(error(format!(
                            "expected stop, not, changed, opposite or value, found {other:?}"
                        )));
                    }
                }
            }
        }
        Ok(words)
    }
}

static WORDS: LazyLock<Words> = LazyLock::new(|| {
    Words::parse(WORD_FILES).unwrap_or_else(|e| panic!("built-in conflict word lists: {e}"))
});

/// The words of a text as written (a time, a version, an amount stays one word).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let joins = |c: char| matches!(c, '\'' | '’' | ':' | '.' | ',' | '/' | '@' | '-');
    let starts = |c: char| c.is_alphanumeric() || matches!(c, '€' | '$' | '£' | '%');
    for c in text.chars() {
        if starts(c) || (!current.is_empty() && (joins(c) || c == '€' || c == '%')) {
            current.push(if c == '’' { '\'' } else { c });
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.into_iter()
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '.' | ',' | ':' | ';' | '\'' | '-'))
                .to_owned()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// A word as compared: lower case, without a possessive `'s`.
fn normal(word: &str) -> String {
    let lower = word.to_lowercase();
    lower.strip_suffix("'s").map(str::to_owned).unwrap_or(lower)
}

fn is_negation(word: &str) -> bool {
    WORDS.negations.contains(word) || word.ends_with("n't")
}

/// The content words of a text as [`relate`] compares them (lower case, no glue words or
/// negations): two memories sharing [`MIN_SHARED`] of them are worth comparing.
pub fn content_words(text: &str) -> BTreeSet<String> {
    content(&words(text))
}

/// The first `limit` distinct content words of a text, in the order it says them: what a
/// search for the memories it may contradict asks for (glue words would match nearly all).
pub fn search_words(text: &str, limit: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    words(text)
        .iter()
        .map(|w| normal(w))
        .filter(|w| !WORDS.stop.contains(w) && !is_negation(w))
        .filter(|w| seen.insert(w.clone()))
        .take(limit)
        .collect()
}

fn content(words: &[String]) -> BTreeSet<String> {
    words
        .iter()
        .map(|w| normal(w))
        .filter(|w| !WORDS.stop.contains(w) && !is_negation(w))
        .collect()
}

fn is_value(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
        || WORDS.values.contains(word)
        || word.starts_with(['€', '$', '£'])
}

/// Whether the words of a text say the fact changed (a `changed` phrase, as whole words).
fn says_changed(words: &[String]) -> bool {
    let spaced = format!(" {} ", words.join(" ").to_lowercase());
    WORDS
        .changed
        .iter()
        .any(|p| spaced.contains(&format!(" {p} ")))
}

/// Names in `words` (capitalised; the first word only with `first`, where a capital says
/// nothing by itself) among `different` content words.
fn names(words: &[String], different: &BTreeSet<String>, first: bool) -> usize {
    words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            (*i > 0 || first)
                && w.chars().next().is_some_and(char::is_uppercase)
                && different.contains(&normal(w))
        })
        .count()
}

/// How `newer` relates to `older`, when they are about the same thing and relate at all.
pub fn relate(older: &str, newer: &str) -> Option<Relation> {
    let (old_words, new_words) = (words(older), words(newer));
    let (old, new) = (content(&old_words), content(&new_words));
    if old.is_empty() || new.is_empty() {
        return None;
    }
    let shared = old.intersection(&new).count();
    let ratio = shared as f64 / old.len().min(new.len()) as f64;
    if shared < MIN_SHARED || ratio < MIN_SHARED_RATIO {
        return None;
    }
    if says_changed(&new_words) && !says_changed(&old_words) {
        return Some(Relation::Update);
    }
    let only_old: BTreeSet<String> = old.difference(&new).cloned().collect();
    let only_new: BTreeSet<String> = new.difference(&old).cloned().collect();
    let denied = |ws: &[String]| ws.iter().any(|w| is_negation(&normal(w)));
    if denied(&old_words) != denied(&new_words) && only_old.len() + only_new.len() <= NEGATION_REST
    {
        return Some(Relation::Conflict(ConflictKind::Negation));
    }
    let opposite = only_old.iter().any(|x| {
        only_new
            .iter()
            .any(|y| WORDS.opposites.contains(&(x.clone(), y.clone())))
    });
    if opposite {
        return Some(Relation::Conflict(ConflictKind::Antonym));
    }
    if only_old.is_empty()
        || only_new.is_empty()
        || only_old.len() > MAX_DIFFERENT
        || only_new.len() > MAX_DIFFERENT
    {
        return None;
    }
    if only_old.iter().any(|w| is_value(w)) && only_new.iter().any(|w| is_value(w)) {
        return Some(Relation::Conflict(ConflictKind::Value));
    }
    // Two sentences that differ in their first word, both capitalised there, the rest the
    // same: a name in the role the sentence gives ("Priya owns billing" / "Kenji owns…").
    let first_differs = |ws: &[String], only: &BTreeSet<String>| {
        ws.first().is_some_and(|w| only.contains(&normal(w)))
    };
    let first = first_differs(&old_words, &only_old)
        && first_differs(&new_words, &only_new)
        && only_old.len() == 1
        && only_new.len() == 1;
    if names(&old_words, &only_old, first) > 0
        && names(&new_words, &only_new, first) > 0
        && ratio >= SWAP_RATIO
    {
        return Some(Relation::Conflict(ConflictKind::Swap));
    }
    if ratio >= ONE_WORD_RATIO && only_old.len() == 1 && only_new.len() == 1 {
        return Some(Relation::Conflict(ConflictKind::Value));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(a: &str, b: &str) -> Option<ConflictKind> {
        match relate(a, b) {
            Some(Relation::Conflict(kind)) => Some(kind),
            _ => None,
        }
    }

    #[test]
    fn the_word_lists_parse_and_a_bad_line_names_its_file_and_line() {
        let words = Words::parse(WORD_FILES).unwrap();
        assert!(words.opposites.contains(&("slow".into(), "fast".into())));
        assert!(words.changed.iter().any(|p| p == "nicht mehr"));
        let bad = Words::parse(&[("x.words", "stop the\nopposite lonely\n")]).unwrap_err();
        assert_eq!((bad.file.as_str(), bad.line), ("x.words", 2));
    }

    #[test]
    fn each_kind_of_disagreement_and_what_is_not_one() {
        assert_eq!(
            conflict("The deadline is March 3.", "The deadline is March 10."),
            Some(ConflictKind::Value)
        );
        assert_eq!(
            conflict("Priya owns billing.", "Kenji owns billing."),
            Some(ConflictKind::Swap)
        );
        assert_eq!(
            conflict(
                "Ana is allergic to peanuts.",
                "Ana is not allergic to peanuts."
            ),
            Some(ConflictKind::Negation)
        );
        assert_eq!(
            conflict("The staging server is fast.", "The staging server is slow."),
            Some(ConflictKind::Antonym)
        );
        assert_eq!(
            relate(
                "Daily standup is at 9:15.",
                "From next Monday the daily standup moves to 9:45."
            ),
            Some(Relation::Update)
        );
        assert_eq!(
            relate("Priya owns billing.", "Priya is on leave in August."),
            None
        );
        assert_eq!(
            conflict(
                "Der Server steht in Frankfurt.",
                "Der Server steht in München."
            ),
            Some(ConflictKind::Swap)
        );
    }
}
