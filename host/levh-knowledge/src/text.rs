//! Splitting text into sentences: a detector judges one sentence at a time, so "we did not
//! decide. Then we agreed to wait" is two verdicts, not one muddled one.

/// One sentence of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence<'a> {
    /// Its text, trimmed.
    pub text: &'a str,
    /// Whether it asks (ends with a question mark): a question states no decision and
    /// makes no promise.
    pub question: bool,
}

/// The sentences of `text`: split after `.`, `!`, `?` or `…` followed by white space, and
/// at line breaks (chat and transcripts put one utterance per line).
pub fn sentences(text: &str) -> Vec<Sentence<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end_of_sentence = matches!(c, '.' | '!' | '?' | '…')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
            && !(c == '.' && abbreviation(&text[start..i]));
        if c == '\n' || end_of_sentence {
            push(&mut out, &text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    push(&mut out, &text[start..]);
    out
}

/// Titles and abbreviations whose full stop ends no sentence ("Dr. Okafor", "e.g. this"),
/// and initials ("J. Smith").
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "approx", "no",
    "inc", "ltd", "co", "corp", "dept", "av", "sn", "doç", "yrd", "bkz", "vb", "vs",
];

fn abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or_default();
    let lower = word.to_lowercase();
    ABBREVIATIONS.contains(&lower.as_str())
        || (word.chars().count() == 1 && word.chars().all(char::is_uppercase))
}

fn push<'a>(out: &mut Vec<Sentence<'a>>, piece: &'a str) {
    let text = piece.trim();
    if text.chars().any(char::is_alphanumeric) {
        out.push(Sentence {
            text,
            question: text
                .trim_end_matches(['"', '\'', ')', '»', '”'])
                .ends_with('?'),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_sentence_ends_and_lines_and_marks_questions() {
        let found: Vec<_> =
            sentences("We agreed. Did we decide? v1.2 ships\nYes! Ask Dr. Okafor or J. Smith.")
                .into_iter()
                .map(|s| (s.text, s.question))
                .collect();
        assert_eq!(
            found,
            [
                ("We agreed.", false),
                ("Did we decide?", true),
                ("v1.2 ships", false),
                ("Yes!", false),
                ("Ask Dr. Okafor or J. Smith.", false)
            ]
        );
        assert!(sentences("  \n ... \n").is_empty());
    }
}
