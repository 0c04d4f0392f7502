//! RFC 2047 §6.2: whitespace between two adjacent encoded words is not text, so a word
//! a mailer split across two of them reads whole (`=?UTF-8?Q?Solidarno=C5=9B?=
//! =?UTF-8?Q?=C4=87?=` is "Solidarność"). mail-parser drops that whitespace in a Subject
//! and in a bare display name, but keeps it inside a quoted string: a display name
//! `"=?…?= =?…?="` or a parameter `filename="=?…?= =?…?="` read "Solidarnoś ć". RFC 2047
//! does not allow encoded words there; mailers write them anyway and readers decode them.
//!
//! Hand-written because mail-parser has no option for it: this finds that whitespace in
//! the header sections, and [`super::repair`] removes it from a copy that is parsed again.
//! Whitespace between an encoded word and ordinary text is text, and stays.

use std::ops::Range;

/// The runs of whitespace (folding included) between two adjacent encoded words inside a
/// quoted string of the header section `headers`, as ranges of `headers`.
pub(super) fn gaps_in_quotes(headers: &[u8]) -> Vec<Range<usize>> {
    let mut gaps = Vec::new();
    let mut in_quote = false;
    let mut at = 0;
    while at < headers.len() {
        match headers[at] {
            // A quoted string ends with its field: a line that is not a continuation.
            b'\n'
                if !headers
                    .get(at + 1)
                    .is_some_and(|&b| b == b' ' || b == b'\t') =>
            {
                in_quote = false;
            }
            b'\\' if in_quote => at += 1,
            b'"' => in_quote = !in_quote,
            b'=' if in_quote => {
                if let Some(end) = encoded_word_end(headers, at) {
                    let next = whitespace_end(headers, end);
                    if next > end && encoded_word_end(headers, next).is_some() {
                        gaps.push(end..next);
                    }
                    // The next word may have a neighbour of its own.
                    at = next;
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    gaps
}

/// Where the encoded word `=?charset?B|Q?text?=` that starts at `start` ends (just after
/// its `?=`), if one starts there.
fn encoded_word_end(bytes: &[u8], start: usize) -> Option<usize> {
    let rest = bytes.get(start..)?.strip_prefix(b"=?")?;
    let token = |b: &u8| b.is_ascii_graphic() && *b != b'?';
    let charset = rest.iter().take_while(|b| token(b)).count();
    let rest = rest.get(charset..)?;
    let [b'?', encoding, b'?', text @ ..] = rest else {
        return None;
    };
    if charset == 0 || !matches!(encoding, b'B' | b'b' | b'Q' | b'q') {
        return None;
    }
    let text_len = text.iter().take_while(|b| token(b)).count();
    text.get(text_len..)?.starts_with(b"?=").then(|| {
        let consumed = 2 + charset + 3 + text_len + 2;
        start + consumed
    })
}

/// Where the linear whitespace from `start` ends: spaces, tabs and folding line breaks,
/// but not the end of a field or of the section.
fn whitespace_end(bytes: &[u8], start: usize) -> usize {
    let mut at = start;
    loop {
        match bytes.get(at..) {
            Some([b' ' | b'\t', ..]) => at += 1,
            Some([b'\r', b'\n', b' ' | b'\t', ..]) => at += 3,
            Some([b'\n', b' ' | b'\t', ..]) => at += 2,
            _ => return at,
        }
    }
}

/// `bytes` without the `gaps` (sorted, not overlapping).
pub(super) fn without(bytes: &[u8], gaps: &[Range<usize>]) -> Vec<u8> {
    let mut joined = Vec::with_capacity(bytes.len());
    let mut from = 0;
    for gap in gaps {
        joined.extend_from_slice(&bytes[from..gap.start]);
        from = gap.end;
    }
    joined.extend_from_slice(&bytes[from..]);
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(headers: &str) -> String {
        let gaps = gaps_in_quotes(headers.as_bytes());
        String::from_utf8(without(headers.as_bytes(), &gaps)).unwrap()
    }

    #[test]
    fn only_whitespace_between_encoded_words_in_quotes_goes() {
        let (a, b) = ("=?UTF-8?Q?Solidarno=C5=9B?=", "=?utf-8?b?xIc=?=");
        for (headers, expected) in [
            (
                format!("From: \"{a} {b}\" <x@y.z>\n"),
                format!("From: \"{a}{b}\" <x@y.z>\n"),
            ),
            (
                format!("From: \"{a}\r\n\t {b} {a}\" <x@y.z>\r\n"),
                format!("From: \"{a}{b}{a}\" <x@y.z>\r\n"),
            ),
            // next to ordinary text, and outside quotes (mail-parser's to handle)
            (
                format!("From: \"Lech {a} x {b}\"\n"),
                format!("From: \"Lech {a} x {b}\"\n"),
            ),
            (format!("Subject: {a} {b}\n"), format!("Subject: {a} {b}\n")),
            // not an encoded word
            (
                format!("From: \"{a} =?UTF-8?X?y?=\"\n"),
                format!("From: \"{a} =?UTF-8?X?y?=\"\n"),
            ),
            // an escaped quote does not end the string; a new field does
            (
                format!("From: \"\\\" {a} {b}\"\n"),
                format!("From: \"\\\" {a}{b}\"\n"),
            ),
            (
                format!("From: \"x\nSubject: {a} {b}\n"),
                format!("From: \"x\nSubject: {a} {b}\n"),
            ),
            // a blank line is no folding
            (
                format!("To: \"{a}\n\n {b}\""),
                format!("To: \"{a}\n\n {b}\""),
            ),
        ] {
            assert_eq!(joined(&headers), expected, "{headers:?}");
        }
    }
}
