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
}
