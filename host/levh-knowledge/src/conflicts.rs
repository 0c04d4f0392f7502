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
//! holdout set (`levh eval detectors`). Deterministic and offline; English and German.

use std::collections::BTreeSet;

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

const STOP: &[&str] = &[
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "of", "to", "in",
    "on", "at", "for", "by", "with", "from", "and", "or", "but", "so", "as", "it", "its", "this",
    "that", "these", "those", "there", "here", "our", "my", "your", "his", "her", "their", "we",
    "i", "you", "he", "she", "they", "me", "us", "them", "do", "does", "did", "has", "have", "had",
    "will", "would", "can", "could", "should", "shall", "may", "might", "must", "just", "also",
    "very", "really", "please", "about", "into", "over", "after", "before", "per", "every", "each",
    "any", "some", "all", "than", "then", "too", "der", "die", "das", "ein", "eine", "einen",
    "einem", "einer", "und", "oder", "aber", "ist", "sind", "war", "waren", "wird", "werden", "im",
    "am", "an", "auf", "für", "mit", "von", "zu", "zum", "zur", "bei", "aus", "den", "dem", "des",
    "es", "sie", "er", "wir", "ich", "ihr", "unser", "unsere", "unseren", "mein", "meine",
];

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "cannot", "without", "nicht", "kein",
    "keine", "keinen", "keinem", "keiner", "nie", "niemals", "ohne",
];

/// Words of a newer memory that say the fact changed over time.
const UPDATE: &[&str] = &[
    "moved to",
    "move to",
    "moves to",
    "moving to",
    "from now on",
    "no longer",
    "as of",
    "switched",
    "switching",
    "changed to",
    "has changed",
    "anymore",
    "now",
    "from next",
    "starting",
    "took over",
    "taken over",
    "replaced",
    "instead",
    "new",
    "been moved",
    "been changed",
    "been updated",
    "been renamed",
    "been reassigned",
    "updated",
    "going forward",
    "since",
    "ab jetzt",
    "jetzt",
    "nicht mehr",
    "ab sofort",
    "seit",
    "neu",
    "neue",
    "neuen",
    "neuer",
    "neues",
    "umgezogen",
    "gewechselt",
    "ab nächster",
    "ab nächsten",
    "ab nächstem",
    "ab dem",
    "ab montag",
    "verlegt",
    "geändert",
    "übernommen",
    "stattdessen",
    "künftig",
    "zukünftig",
];

const ANTONYMS: &[(&str, &str)] = &[
    ("fast", "slow"),
    ("accepted", "rejected"),
    ("approved", "rejected"),
    ("approved", "denied"),
    ("up", "down"),
    ("higher", "lower"),
    ("open", "closed"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("on", "off"),
    ("enabled", "disabled"),
    ("passed", "failed"),
    ("pass", "fail"),
    ("succeeded", "failed"),
    ("likes", "dislikes"),
    ("like", "dislike"),
    ("loves", "hates"),
    ("cheap", "expensive"),
    ("early", "late"),
    ("earlier", "later"),
    ("easy", "hard"),
    ("easy", "difficult"),
    ("stable", "unstable"),
    ("safe", "unsafe"),
    ("reliable", "unreliable"),
    ("available", "unavailable"),
    ("public", "private"),
    ("hot", "cold"),
    ("warm", "cold"),
    ("full", "empty"),
    ("win", "lose"),
    ("won", "lost"),
    ("profitable", "unprofitable"),
    ("profit", "loss"),
    ("online", "offline"),
    ("allowed", "forbidden"),
    ("allowed", "banned"),
    ("mandatory", "optional"),
    ("required", "optional"),
    ("included", "excluded"),
    ("ahead", "behind"),
    ("above", "below"),
    ("more", "less"),
    ("better", "worse"),
    ("good", "bad"),
    ("positive", "negative"),
    ("healthy", "sick"),
    ("light", "heavy"),
    ("large", "small"),
    ("big", "small"),
    ("long", "short"),
    ("quiet", "noisy"),
    ("quiet", "loud"),
    ("synchronous", "asynchronous"),
    ("sync", "async"),
    ("remote", "onsite"),
    ("signed", "unsigned"),
    ("agreed", "disagreed"),
    ("supports", "opposes"),
    ("confirmed", "cancelled"),
    ("confirmed", "canceled"),
    ("active", "inactive"),
    ("valid", "invalid"),
    ("legal", "illegal"),
    ("increasing", "decreasing"),
    ("rising", "falling"),
    ("rose", "fell"),
    ("gained", "lost"),
    ("clean", "dirty"),
    ("wet", "dry"),
    ("first", "last"),
    ("inside", "outside"),
    ("indoors", "outdoors"),
    ("schnell", "langsam"),
    ("angenommen", "abgelehnt"),
    ("genehmigt", "abgelehnt"),
    ("offen", "geschlossen"),
    ("teuer", "günstig"),
    ("teuer", "billig"),
    ("früh", "spät"),
    ("stabil", "instabil"),
    ("höher", "niedriger"),
    ("gestiegen", "gesunken"),
    ("mehr", "weniger"),
    ("gut", "schlecht"),
    ("leicht", "schwer"),
    ("groß", "klein"),
    ("laut", "leise"),
    ("warm", "kalt"),
    ("bestanden", "durchgefallen"),
    ("erlaubt", "verboten"),
    ("pflicht", "optional"),
    ("gewonnen", "verloren"),
    ("zugesagt", "abgesagt"),
    ("aktiviert", "deaktiviert"),
    ("voll", "leer"),
    ("einfach", "schwierig"),
    ("sicher", "unsicher"),
    ("positiv", "negativ"),
    ("gesund", "krank"),
    ("mag", "hasst"),
    ("liebt", "hasst"),
];

/// Words that are values though they hold no digit: months, weekdays, times of day.
const VALUE_WORDS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "januar",
    "februar",
    "märz",
    "mai",
    "juni",
    "juli",
    "oktober",
    "dezember",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
    "montag",
    "dienstag",
    "mittwoch",
    "donnerstag",
    "freitag",
    "samstag",
    "sonntag",
    "montags",
    "dienstags",
    "mittwochs",
    "donnerstags",
    "freitags",
    "samstags",
    "sonntags",
    "morning",
    "afternoon",
    "evening",
    "night",
    "noon",
    "midnight",
];

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
    NEGATIONS.contains(&word) || word.ends_with("n't")
}

/// The content words of a text as [`relate`] compares them (lower case, no glue words or
/// negations): two memories sharing [`MIN_SHARED`] of them are worth comparing.
pub fn content_words(text: &str) -> BTreeSet<String> {
    content(&words(text))
}

fn content(words: &[String]) -> BTreeSet<String> {
    words
        .iter()
        .map(|w| normal(w))
        .filter(|w| !STOP.contains(&w.as_str()) && !is_negation(w))
        .collect()
}

fn is_value(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
        || VALUE_WORDS.contains(&word)
        || word.starts_with(['€', '$', '£'])
}

/// Whether `text` (lower case) holds one of `phrases` as whole words.
fn says_any(text: &str, phrases: &[&str]) -> bool {
    let spaced = format!(" {} ", words(text).join(" ").to_lowercase());
    phrases.iter().any(|p| spaced.contains(&format!(" {p} ")))
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
    if says_any(newer, UPDATE) && !says_any(older, UPDATE) {
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
        only_new.iter().any(|y| {
            ANTONYMS
                .iter()
                .any(|(a, b)| (a == x && b == y) || (a == y && b == x))
        })
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
