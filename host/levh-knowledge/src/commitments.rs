//! Commitments: open promises in the writer's own words ("I'll send the deck by Friday",
//! "let me check", "yarın göndereceğim", "halledeceğim"), each with the date it names, from
//! the rule files `data/commitments.*.rules` and [`crate::dates`].

use std::sync::LazyLock;

use jiff::civil::Date;

use crate::{Rules, sentences};

/// The built-in rules, every language at once.
pub const RULE_FILES: &[(&str, &str)] = &[
    (
        "commitments.en.rules",
        include_str!("../data/commitments.en.rules"),
    ),
    (
        "commitments.tr.rules",
        include_str!("../data/commitments.tr.rules"),
    ),
];

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    Rules::parse(RULE_FILES).unwrap_or_else(|e| panic!("built-in commitment rules: {e}"))
});

/// A promise found in a text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Commitment {
    /// The sentence that makes it.
    pub sentence: String,
    /// The day it is due, when the sentence names one (in the writer's calendar).
    pub due: Option<Date>,
}

/// The promises `text` makes, in order; `written_on` is the writer's local date when it
/// was written (the memory's world time in the user's time zone), against which "by
/// Friday" or "yarın" resolve.
pub fn commitments(text: &str, written_on: Date) -> Vec<Commitment> {
    detect(&RULES, text, written_on)
}

/// [`commitments`] with other rules.
pub fn detect(rules: &Rules, text: &str, written_on: Date) -> Vec<Commitment> {
    sentences(text)
        .into_iter()
        .filter(|s| !s.question && rules.matches(s.text))
        .map(|s| Commitment {
            sentence: s.text.to_owned(),
            due: crate::dates::due_date(s.text, written_on),
        })
        .collect()
}

/// The built-in rules of a kept promise ("I sent…", "gönderdim").
pub const COMPLETION_RULE_FILES: &[(&str, &str)] = &[
    (
        "completions.en.rules",
        include_str!("../data/completions.en.rules"),
    ),
    (
        "completions.tr.rules",
        include_str!("../data/completions.tr.rules"),
    ),
];

static COMPLETIONS: LazyLock<Rules> = LazyLock::new(|| {
    Rules::parse(COMPLETION_RULE_FILES).unwrap_or_else(|e| panic!("built-in completion rules: {e}"))
});

/// Words that say nothing about *what* was promised: pronouns, auxiliaries, the promise's
/// own verbs and dates. Both languages at once; a word is compared by its first five
/// letters, so Turkish case endings ("raporu", "raporları") still meet ("rapor").
const FILLER: &[&str] = &[
    "i",
    "i'll",
    "ill",
    "will",
    "shall",
    "let",
    "me",
    "the",
    "a",
    "an",
    "to",
    "by",
    "on",
    "for",
    "and",
    "or",
    "of",
    "it",
    "this",
    "that",
    "them",
    "we",
    "you",
    "my",
    "our",
    "your",
    "send",
    "sent",
    "share",
    "shared",
    "finish",
    "finished",
    "get",
    "got",
    "have",
    "had",
    "make",
    "sure",
    "going",
    "today",
    "tomorrow",
    "tonight",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "next",
    "week",
    "end",
    "morning",
    "evening",
    "this",
    "done",
    "with",
    "over",
    "out",
    "back",
    "again",
    "just",
    "yarın",
    "bugün",
    "akşam",
    "sabah",
    "hafta",
    "haftaya",
    "sonu",
    "kadar",
    "ben",
    "bunu",
    "şunu",
    "onu",
    "size",
    "sana",
];

fn content_words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .map(|w| w.trim_matches(['\'', '’']).to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !FILLER.contains(&w.as_str()))
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| w.chars().take(5).collect())
        .collect()
}

/// Whether a later `sentence` says the promise `commitment` was kept: it reads as a
/// completion (`data/completions.*.rules`) and names at least two thirds of what was
/// promised (the promise's content words, without its verbs, pronouns and dates).
pub fn fulfils(commitment: &str, sentence: &str) -> bool {
    is_completion(sentence) && names_the_promise(commitment, sentence)
}

/// Whether a sentence reads as a kept promise, whatever it names.
pub fn is_completion(sentence: &str) -> bool {
    !sentence.trim_end().ends_with('?') && COMPLETIONS.matches(sentence)
}

/// Whether `sentence` names at least two thirds of what `commitment` promised.
pub fn names_the_promise(commitment: &str, sentence: &str) -> bool {
    let promised = content_words(commitment);
    if promised.is_empty() {
        return false;
    }
    let said = content_words(sentence);
    let named = promised.iter().filter(|w| said.contains(w)).count();
    named * 3 >= promised.len() * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_writers_promises_with_their_dates_and_not_others() {
        let wednesday: Date = "2026-03-04".parse().unwrap();
        let found = commitments(
            "Thanks! I'll send the deck by Friday. She will review it.",
            wednesday,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].due, Some("2026-03-06".parse().unwrap()));
        let found = commitments("Raporu yarın göndereceğim.", wednesday);
        assert_eq!(found[0].due, Some("2026-03-05".parse().unwrap()));
        for none in [
            "Will you send it?",
            "I sent it yesterday.",
            "I'll be out on Friday.",
            "Göndermeyeceğim.",
            "Ali yarın gönderecek.",
            "Let me know if it works.",
        ] {
            assert!(commitments(none, wednesday).is_empty(), "{none}");
        }
    }

    #[test]
    fn a_later_sentence_that_names_what_was_promised_in_the_past_tense_keeps_it() {
        let promise = "I'll send the revised budget to Priya by Friday.";
        assert!(fulfils(
            promise,
            "I sent the revised budget to Priya this morning."
        ));
        assert!(fulfils(promise, "Done: revised budget is with Priya."));
        // Not yet, another thing, or the promise again.
        assert!(!fulfils(
            promise,
            "I haven't sent the revised budget to Priya yet."
        ));
        assert!(!fulfils(promise, "I sent the slides to Priya."));
        assert!(!fulfils(
            promise,
            "I'll send the revised budget to Priya tomorrow."
        ));
        let söz = "Test raporunu yarın göndereceğim.";
        assert!(fulfils(söz, "Test raporunu gönderdim."));
        assert!(!fulfils(söz, "Test raporunu henüz göndermedim."));
    }
}
