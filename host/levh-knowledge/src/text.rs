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
/// at line breaks (chat and transcripts put one utterance per line) — except where prose
/// was hard-wrapped (mail, plain-text docs): a long line whose next line goes on in lower
/// case is one sentence with it.
pub fn sentences(text: &str) -> Vec<Sentence<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end_of_sentence = matches!(c, '.' | '!' | '?' | '…')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
            && !(c == '.' && abbreviation(&text[start..i]));
        if (c == '\n' && !wrapped(text, i)) || end_of_sentence {
            push(&mut out, &text[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    push(&mut out, &text[start..]);
    out
}

/// A line this long or longer, followed by one that starts in lower case, was wrapped by
/// its writer's editor rather than ended (mail and docs wrap at 72–80 columns).
const WRAPPED_LINE: usize = 50;

/// Whether the line break at `at` continues the sentence on the next line.
fn wrapped(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..at].trim();
    let next = text[at + 1..].trim_start_matches([' ', '\t']);
    line.chars().count() >= WRAPPED_LINE && next.chars().next().is_some_and(char::is_lowercase)
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
        // Hard-wrapped prose is one sentence across its lines; short lines stay apart.
        let wrapped = "Hence, after a long discussion on the list, we decided to\n  check whether the old format still works.\nok\nthanks";
        let found: Vec<_> = sentences(wrapped).into_iter().map(|s| s.text).collect();
        assert_eq!(
            found,
            [
                "Hence, after a long discussion on the list, we decided to\n  check whether the old format still works.",
                "ok",
                "thanks"
            ]
        );
    }
}
