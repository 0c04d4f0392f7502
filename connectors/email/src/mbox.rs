//! Splitting an mbox file into messages, with the byte offset of each.
//!
//! mail-parser has an mbox iterator (`mailbox::mbox::MessageIterator`), but it does not say
//! where a message starts, and a sync that pages through a large mailbox must resume at a
//! byte offset (re-splitting from the top on every page would be quadratic). So this is a
//! small streaming splitter with the same rules plus offsets and bounded memory:
//!
//! - A message starts at a `From ` line ("postmark") at the start of the file, or after a
//!   blank line, or anywhere if the line looks like a real postmark
//!   (`From sender Wed Mar 18 ...`).
//! - mboxrd quoting is undone: `>From `, `>>From ` lose one `>`.
//! - The blank line that separates two messages is not part of either.
//! - A message (or a line) larger than the caps is read through but not kept.

use std::io::{self, BufRead};

/// The largest message kept in memory; larger ones are read through and reported.
pub const MAX_MESSAGE_BYTES: usize = 32 << 20;

/// One message of an mbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawMessage {
    /// Byte offset of its `From ` line in the file.
    pub offset: u64,
    /// The message (headers and body), postmark removed, quoting undone.
    pub bytes: Vec<u8>,
    /// Bytes it took in the file, postmark and separator included.
    pub file_bytes: u64,
    /// True when it was larger than the cap and `bytes` holds only its start.
    pub oversized: bool,
    /// The date its `From ` line gives (Unix seconds), when it gives one.
    pub postmark_date: Option<i64>,
}

/// Why the mbox could not be split.
#[derive(Debug)]
pub enum MboxError {
    /// The first non-blank line is not a `From ` line.
    NotMbox,
    /// Reading failed.
    Io(io::Error),
}

impl std::fmt::Display for MboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotMbox => write!(
                f,
                "not an mbox: it does not start with a \"From \" line (a single message is `eml_path`)"
            ),
            Self::Io(e) => write!(f, "read error: {e}"),
        }
    }
}

/// Reads messages one by one from a reader positioned at a `From ` line (or at the start
/// of the file, where blank lines may come first).
#[derive(Debug)]
pub struct MboxReader<R> {
    reader: R,
    /// Offset of the next byte the reader will give.
    offset: u64,
    /// The postmark of the next message, already read: its offset and line.
    pending: Option<(u64, Vec<u8>)>,
    finished: bool,
    line: Vec<u8>,
}

impl<R: BufRead> MboxReader<R> {
    /// A reader whose next byte is at `offset` in the file.
    pub fn new(reader: R, offset: u64) -> Self {
        Self {
            reader,
            offset,
            pending: None,
            finished: false,
            line: Vec::with_capacity(256),
        }
    }

    /// Where the next message starts (its `From ` line), or `None` at the end of the file.
    /// Meaningful after `next_message` returned a message.
    pub fn next_offset(&self) -> Option<u64> {
        self.pending.as_ref().map(|(offset, _)| *offset)
    }

    /// The next message, `Ok(None)` at the end.
    pub fn next_message(&mut self) -> Result<Option<RawMessage>, MboxError> {
        if self.finished {
            return Ok(None);
        }
        let (offset, postmark) = match self.pending.take() {
            Some(pending) => pending,
            None => {
                // First call: skip blank lines, then expect a postmark.
                loop {
                    let at = self.offset;
                    if !self.read_line(MAX_LINE).map_err(MboxError::Io)? {
                        self.finished = true;
                        return Ok(None);
                    }
                    if is_blank(&self.line) {
                        continue;
                    }
                    if self.line.starts_with(b"From ") {
                        break (at, std::mem::take(&mut self.line));
                    }
                    self.finished = true;
                    return Err(MboxError::NotMbox);
                }
            }
        };
        let mut bytes = Vec::new();
        let mut oversized = false;
        let mut previous_blank = false;
        loop {
            let at = self.offset;
            if !self.read_line(MAX_LINE).map_err(MboxError::Io)? {
                self.finished = true;
                break;
            }
            let line = &self.line;
            if line.starts_with(b"From ") && (previous_blank || looks_like_postmark(line)) {
                self.pending = Some((at, std::mem::take(&mut self.line)));
                break;
            }
            previous_blank = is_blank(line);
            let unquoted = unquote(line);
            if bytes.len() + unquoted.len() > MAX_MESSAGE_BYTES {
                oversized = true;
            } else {
                bytes.extend_from_slice(unquoted);
            }
        }
        // The separator before the next postmark belongs to neither message.
        if self.pending.is_some() {
            if bytes.ends_with(b"\r\n") {
                bytes.truncate(bytes.len() - 2);
            } else if bytes.ends_with(b"\n") {
                bytes.truncate(bytes.len() - 1);
            }
        }
        let end = self.next_offset().unwrap_or(self.offset);
        Ok(Some(RawMessage {
            offset,
            bytes,
            file_bytes: end - offset,
            oversized,
            postmark_date: crate::parse::postmark_date(&String::from_utf8_lossy(&postmark)),
        }))
    }

    /// Reads one line (with its `\n`) into `self.line`, keeping at most `max` bytes of it.
    /// False at the end of the input.
    fn read_line(&mut self, max: usize) -> io::Result<bool> {
        self.line.clear();
        let mut any = false;
        loop {
            let buffer = match self.reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buffer.is_empty() {
                return Ok(any);
            }
            any = true;
            let (used, done) = match buffer.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buffer.len(), false),
            };
            let room = max.saturating_sub(self.line.len());
            self.line.extend_from_slice(&buffer[..used.min(room)]);
            self.reader.consume(used);
            self.offset += used as u64;
            if done {
                return Ok(true);
            }
        }
    }
}

/// The longest line kept whole (a longer one is cut; the message is still read through).
const MAX_LINE: usize = 1 << 20;

fn is_blank(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// `>From ` → `From `, `>>From ` → `>From ` (mboxrd); anything else unchanged.
fn unquote(line: &[u8]) -> &[u8] {
    let quotes = line.iter().take_while(|&&b| b == b'>').count();
    if quotes > 0 && line[quotes..].starts_with(b"From ") {
        &line[1..]
    } else {
        line
    }
}

/// `From sender@example.com Wed Mar 18 09:30:00 2026`: a postmark even without a blank
/// line before it (some tools write none). A body line "From what I heard, ..." is not.
fn looks_like_postmark(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let mut words = text.split_whitespace().skip(1);
    let (Some(_sender), Some(day), Some(month)) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    DAYS.iter().any(|d| d.eq_ignore_ascii_case(day))
        && MONTHS.iter().any(|m| m.eq_ignore_ascii_case(month))
        && text.contains(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &[u8]) -> Result<Vec<RawMessage>, MboxError> {
        let mut reader = MboxReader::new(text, 0);
        let mut out = Vec::new();
        while let Some(m) = reader.next_message()? {
            out.push(m);
        }
        Ok(out)
    }

    #[test]
    fn splits_on_postmarks_with_offsets_and_unquotes() {
        let mbox = b"From a@x Wed Mar 18 09:30:00 2026\nSubject: one\n\n>From here\nFrom what I heard\n\nFrom b@x Thu Mar 19 10:00:00 2026\nSubject: two\n\nbody\n";
        let messages = split(mbox).unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(
            messages[0].bytes,
            b"Subject: one\n\nFrom here\nFrom what I heard\n"
        );
        assert_eq!(messages[0].offset, 0);
        let second = mbox.windows(7).position(|w| w == b"From b@").unwrap() as u64;
        assert_eq!(messages[1].offset, second);
        assert_eq!(messages[0].file_bytes, second);
        assert_eq!(messages[1].bytes, b"Subject: two\n\nbody\n");
    }

    #[test]
    fn a_reader_started_at_an_offset_resumes_there() {
        let mbox = b"From a@x Wed Mar 18 09:30:00 2026\nSubject: one\n\nx\n\nFrom b@x Thu Mar 19 10:00:00 2026\nSubject: two\n\ny\n";
        let first = split(mbox).unwrap();
        let offset = first[1].offset;
        let mut reader = MboxReader::new(&mbox[offset as usize..], offset);
        let again = reader.next_message().unwrap().unwrap();
        assert_eq!(again, first[1]);
        assert!(reader.next_message().unwrap().is_none());
    }

    #[test]
    fn a_file_that_does_not_start_with_a_postmark_is_not_an_mbox() {
        assert!(matches!(
            split(b"Subject: hi\n\nbody\n"),
            Err(MboxError::NotMbox)
        ));
        assert!(split(b"\n\n").unwrap().is_empty());
    }

    #[test]
    fn crlf_mailboxes_split_too() {
        let mbox = b"From a@x Wed Mar 18 09:30:00 2026\r\nSubject: one\r\n\r\nx\r\n\r\nFrom b@x Thu Mar 19 10:00:00 2026\r\nSubject: two\r\n\r\ny\r\n";
        let messages = split(mbox).unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].bytes, b"Subject: one\r\n\r\nx\r\n");
    }
}
