//! Three repairs of damaged MIME that mail-parser does not make, done on a copy of the
//! bytes that is then parsed again. Hand-written because no kept Rust mail library makes
//! them; all follow what mainstream readers do with such mail.
//!
//! - **A header section that runs into its body.** A line in a header section that is
//!   neither a field (`Name: value`) nor a continuation (it starts with a space or a tab),
//!   in a section that then reaches a boundary line or the end of the message, means the
//!   blank line before the body is missing, or holds whitespace and so reads as a folded
//!   continuation. mail-parser skips such lines and reads on for headers, through the
//!   body and into the next part: the text/plain part of a multipart/alternative vanished
//!   and its HTML sibling became the body (#17). Python's `email` package starts the body
//!   at that line instead (its `MissingHeaderBodySeparatorDefect`); so does this, by
//!   inserting the missing blank line.
//! - **A multipart cut off before its closing boundary** (a message saved half-way, a
//!   truncated download). Mail readers show what is there. mail-parser keeps the complete
//!   parts but turns the cut one into an unnamed attachment, so its text is lost; with
//!   the closing boundaries appended (innermost first) the cut part reads as what it is,
//!   and the message is marked as truncated.
//! - **Encoded words in a quoted string** (`"=?…?= =?…?="`), which RFC 2047 forbids:
//!   the whitespace between two of them is dropped, as RFC 2047 has it dropped between
//!   adjacent encoded words elsewhere ([`super::encoded_words`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use mail_parser::{Message, MessageParser, MimeHeaders, PartType};

use super::encoded_words;

/// The bytes to parse instead, and why the message is incomplete, if it is.
#[derive(Debug)]
pub(super) struct Repaired {
    /// The message with its damage repaired.
    pub bytes: Vec<u8>,
    /// `multipart boundary "b" never closes`, when boundaries were closed.
    pub truncated: Option<String>,
}

/// Rounds of repair a message gets at most. A round repairs one header section, or closes
/// every open boundary at once; mail damaged in more places than this keeps the rest of
/// its damage, as mail-parser reads it.
const MAX_ROUNDS: usize = 8;

/// The first repair a parsed message needs, if it needs one.
pub(super) fn needed(message: &Message<'_>) -> Option<Repaired> {
    let raw = message.raw_message();
    let layout = Layout::of(message);
    if let Some(at) = layout
        .sections
        .iter()
        .find_map(|&at| layout.run_on_line(raw, at))
    {
        return Some(Repaired {
            bytes: insert_blank_line(raw, at),
            truncated: None,
        });
    }
    if let Some(outermost) = layout.open.first() {
        let truncated = format!("multipart boundary {outermost:?} never closes");
        return Some(Repaired {
            bytes: close_boundaries(raw, &layout.open),
            truncated: Some(truncated),
        });
    }
    let gaps = encoded_word_gaps(message);
    (!gaps.is_empty()).then(|| Repaired {
        bytes: encoded_words::without(raw, &gaps),
        truncated: None,
    })
}

/// The whitespace between adjacent encoded words in quoted strings, in every header
/// section of the message, in order.
fn encoded_word_gaps(message: &Message<'_>) -> Vec<Range<usize>> {
    let raw = message.raw_message();
    let mut gaps: Vec<Range<usize>> = message
        .parts
        .iter()
        .flat_map(|part| {
            let start = part.offset_header as usize;
            let headers = raw
                .get(start..part.offset_body as usize)
                .unwrap_or_default();
            encoded_words::gaps_in_quotes(headers)
                .into_iter()
                .map(move |gap| gap.start + start..gap.end + start)
        })
        .collect();
    gaps.sort_by_key(|gap| gap.start);
    gaps.dedup();
    gaps
}

/// Repairs `repaired` further until it needs nothing more (or [`MAX_ROUNDS`] are done).
pub(super) fn complete(parser: &MessageParser, mut repaired: Repaired) -> Repaired {
    for _ in 1..MAX_ROUNDS {
        let next = parser
            .parse(&repaired.bytes)
            .as_ref()
            .and_then(|message| needed(message));
        let Some(next) = next else {
            break;
        };
        repaired = Repaired {
            bytes: next.bytes,
            // The first note names the outermost open boundary of the original.
            truncated: repaired.truncated.or(next.truncated),
        };
    }
    repaired
}

/// Where the header sections of a message start, and which multiparts never close.
struct Layout<'m> {
    /// Offsets of header sections: the message's, and one after each boundary line.
    sections: Vec<usize>,
    /// Boundaries whose closing line (`--b--`) never comes after their multipart's
    /// start, outermost first.
    open: Vec<&'m str>,
    /// The boundaries of the multiparts mail-parser recognised.
    boundaries: HashSet<&'m [u8]>,
}

impl<'m> Layout<'m> {
    /// One pass over the lines, whatever the number of parts. Boundary lines are found as
    /// RFC 2046 has them (at the start of a line, trailing whitespace allowed) for the
    /// multiparts mail-parser recognised.
    fn of(message: &'m Message<'_>) -> Self {
        let raw = message.raw_message();
        let mut multiparts: Vec<(usize, &str)> = message
            .parts
            .iter()
            .filter(|part| matches!(part.body, PartType::Multipart(_)))
            .filter_map(|part| {
                let boundary = part.content_type()?.attribute("boundary")?;
                (!boundary.is_empty()).then_some((part.offset_body as usize, boundary))
            })
            .collect();
        multiparts.sort_by_key(|(start, _)| *start);
        let boundaries: HashSet<&[u8]> = multiparts.iter().map(|(_, b)| b.as_bytes()).collect();
        let mut sections = vec![0];
        let mut last_closing: HashMap<&[u8], usize> = HashMap::new();
        let mut at = 0;
        for line in raw.split_inclusive(|&b| b == b'\n') {
            let start = at;
            at += line.len();
            let Some(rest) = line.strip_prefix(b"--") else {
                continue;
            };
            let rest = rest.trim_ascii_end();
            if boundaries.contains(rest) {
                sections.push(at);
            } else if let Some(name) = rest.strip_suffix(b"--")
                && let Some(name) = boundaries.get(name)
            {
                last_closing.insert(name, start);
            }
        }
        let open = multiparts
            .into_iter()
            .filter(|(start, boundary)| {
                last_closing
                    .get(boundary.as_bytes())
                    .is_none_or(|closing| closing < start)
            })
            .map(|(_, boundary)| boundary)
            .collect();
        Self {
            sections,
            open,
            boundaries,
        }
    }

    /// Whether `line` is a boundary line (`--b` or `--b--`) of one of the multiparts.
    fn is_boundary_line(&self, line: &[u8]) -> bool {
        line.strip_prefix(b"--").is_some_and(|rest| {
            let rest = rest.trim_ascii_end();
            self.boundaries.contains(rest)
                || rest
                    .strip_suffix(b"--")
                    .is_some_and(|name| self.boundaries.contains(name))
        })
    }

    /// In the header section at `start`, where its body starts when it ran on into it:
    /// the first line that is neither a field nor a continuation, if the section then
    /// reaches a boundary line or the end of the message without its blank line. A stray
    /// line between fields that a blank line ends (an unindented continuation from a
    /// careless mailer) is left as mail-parser reads it, dropped, so that the fields
    /// after it are kept.
    fn run_on_line(&self, raw: &[u8], start: usize) -> Option<usize> {
        let mut at = start;
        let mut stray = None;
        for (index, line) in raw
            .get(start..)?
            .split_inclusive(|&b| b == b'\n')
            .enumerate()
        {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.is_empty() {
                return None;
            }
            if self.is_boundary_line(text) {
                return Some(stray.unwrap_or(at));
            }
            // An mbox postmark left on a saved message.
            let postmark = start == 0 && index == 0 && text.starts_with(b"From ");
            let header =
                postmark || is_field(text) || text.starts_with(b" ") || text.starts_with(b"\t");
            if !header && stray.is_none() {
                stray = Some(at);
            }
            at += line.len();
        }
        stray
    }
}

/// `Name: value` (or the obsolete `Name : value`): a name of printable ASCII without a
/// colon, then a colon.
fn is_field(line: &[u8]) -> bool {
    let name = line
        .iter()
        .take_while(|&&b| b.is_ascii_graphic() && b != b':')
        .count();
    name > 0
        && line[name..]
            .iter()
            .find(|&&b| b != b' ' && b != b'\t')
            .is_some_and(|&b| b == b':')
}

/// The line end the line at `at` uses, or the message's first one.
fn line_end(raw: &[u8], at: usize) -> &'static [u8] {
    let from = &raw[at.min(raw.len())..];
    let line = match from.iter().position(|&b| b == b'\n') {
        Some(end) => &from[..=end],
        None => raw.split_inclusive(|&b| b == b'\n').next().unwrap_or(raw),
    };
    if line.ends_with(b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    }
}

fn insert_blank_line(raw: &[u8], at: usize) -> Vec<u8> {
    let end = line_end(raw, at);
    let mut bytes = Vec::with_capacity(raw.len() + end.len());
    bytes.extend_from_slice(&raw[..at]);
    bytes.extend_from_slice(end);
    bytes.extend_from_slice(&raw[at..]);
    bytes
}

/// `raw` with the closing boundaries appended, innermost (last opened) first.
fn close_boundaries(raw: &[u8], open: &[&str]) -> Vec<u8> {
    let end = line_end(raw, 0);
    let mut bytes = raw.to_vec();
    if !bytes.ends_with(b"\n") {
        bytes.extend_from_slice(end);
    }
    for boundary in open.iter().rev() {
        bytes.extend_from_slice(b"--");
        bytes.extend_from_slice(boundary.as_bytes());
        bytes.extend_from_slice(b"--");
        bytes.extend_from_slice(end);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(raw: &str) -> Option<(String, Option<String>)> {
        let parser = MessageParser::default();
        let message = parser.parse(raw.as_bytes())?;
        let first = needed(&message)?;
        let done = complete(&parser, first);
        Some((String::from_utf8(done.bytes).unwrap(), done.truncated))
    }

    #[test]
    fn well_formed_mail_needs_no_repair() {
        for raw in [
            "From: a@b.c\nSubject: s\n\nbody\n",
            "From a@b.c Mon Mar  2 08:15:00 2026\nFrom: a@b.c\nSubject : old style\n  folded\n\nbody\n",
            "From: a@b.c\nContent-Type: multipart/mixed; boundary=m\n\n--m\nContent-Type: text/plain\n\nx\n--m--\n",
            "From: a@b.c\r\nSubject: s\r\n\r\nNo: headers here\r\n",
            // an unindented continuation: the Date after it is kept
            "From: a@b.c\nTo: x@y.z,\nw@v.u\nDate: Mon, 02 Mar 2026 09:15:00 +0100\n\nbody\n",
        ] {
            assert!(repaired(raw).is_none(), "{raw:?}");
        }
    }

    #[test]
    fn a_missing_or_whitespace_separator_line_is_inserted_before_the_body() {
        let (bytes, truncated) = repaired(
            "From: a@b.c\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n \nPlain.\n--b\nPlain too.\n--b--\n",
        )
        .unwrap();
        assert_eq!(
            bytes,
            "From: a@b.c\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n \n\nPlain.\n--b\n\nPlain too.\n--b--\n"
        );
        assert_eq!(truncated, None);
        let (bytes, _) = repaired("From: a@b.c\r\nSubject: s\r\nbody line\r\n").unwrap();
        assert_eq!(bytes, "From: a@b.c\r\nSubject: s\r\n\r\nbody line\r\n");
    }

    #[test]
    fn open_boundaries_are_closed_innermost_first_and_named_outermost() {
        let (bytes, truncated) = repaired(
            "From: a@b.c\r\nContent-Type: multipart/mixed; boundary=out\r\n\r\n--out\r\nContent-Type: multipart/alternative; boundary=in\r\n\r\n--in\r\nContent-Type: text/plain\r\n\r\ncut mid-sen",
        )
        .unwrap();
        assert!(
            bytes.ends_with("cut mid-sen\r\n--in--\r\n--out--\r\n"),
            "{bytes:?}"
        );
        assert_eq!(
            truncated.as_deref(),
            Some("multipart boundary \"out\" never closes")
        );
    }
}
