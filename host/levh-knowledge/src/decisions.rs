//! Decisions: sentences that state something was decided ("we decided to…", "agreed:",
//! "karar verdik", "kararlaştırdık"), from the rule files `data/decisions.*.rules`.

use std::sync::LazyLock;

use crate::{Rules, sentences};

/// The built-in rules, every language at once (a memory may mix them).
pub const RULE_FILES: &[(&str, &str)] = &[
    (
        "decisions.en.rules",
        include_str!("../data/decisions.en.rules"),
    ),
    (
        "decisions.tr.rules",
        include_str!("../data/decisions.tr.rules"),
    ),
];

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    // The files ship with the crate and a test parses them: they cannot fail here.
    Rules::parse(RULE_FILES).unwrap_or_else(|e| panic!("built-in decision rules: {e}"))
});

/// The sentences of `text` that state a decision, in order.
pub fn decisions(text: &str) -> Vec<String> {
    detect(&RULES, text)
}

/// [`decisions`] with other rules.
pub fn detect(rules: &Rules, text: &str) -> Vec<String> {
    sentences(text)
        .into_iter()
        .filter(|s| !s.question && rules.matches(s.text))
        .map(|s| s.text.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_stated_decisions_not_open_questions() {
        assert_eq!(
            decisions("We still need to decide. In the end we decided to ship on Tuesday."),
            ["In the end we decided to ship on Tuesday."]
        );
        assert_eq!(
            decisions("Sürümü salıya ertelemeye karar verdik."),
            ["Sürümü salıya ertelemeye karar verdik."]
        );
        assert!(decisions("Karar verdik mi?").is_empty());
        assert!(decisions("We have not decided yet").is_empty());
        assert!(decisions("Henüz karar vermedik").is_empty());
    }
}
