//! Cutting the input of `levh import` into its memories' texts as it is read, holding at
//! most one memory's worth at a time ([`MAX_ITEM_BYTES`]): a 1 GB line or an 850 MB
//! export is scanned, never held. serde_json (and the streaming JSON readers on
//! crates.io) keep a whole string value in memory, so this module only finds where each
//! item begins and ends — strings, escapes and nesting — and each item's text is then
//! parsed by serde_json on its own.

use std::io::{BufRead, Cursor, Read};

use super::MAX_ITEM_BYTES;

/// What was read so far of the input, byte by byte, with where it is (for messages) and,
/// while a decision may still be undone, a bounded copy of what was read.
pub(super) struct Source<'a> {
    reader: Box<dyn BufRead + 'a>,
    /// 1-based line and column (in bytes) of the next byte.
    pub line: usize,
    pub column: usize,
    recording: Option<Vec<u8>>,
}

/// What went wrong reading a document, and where.
#[derive(Debug)]
pub(super) struct Syntax(pub String);

/// At most this much is kept to read the input again (one item and the text before an
/// export's `memories`).
const REPLAY_LIMIT: usize = 2 * MAX_ITEM_BYTES;

impl<'a> Source<'a> {
    pub fn new(reader: Box<dyn BufRead + 'a>) -> Self {
        Self {
            reader,
            line: 1,
            column: 1,
            recording: None,
        }
    }

    /// Keeps a copy of what is read from here on, up to [`REPLAY_LIMIT`].
    pub fn record(&mut self) {
        self.recording = Some(Vec::new());
    }

    pub fn stop_recording(&mut self) {
        self.recording = None;
    }

    /// What was read since [`Source::record`], unless it outgrew its limit.
    pub fn recorded(&self) -> Option<&[u8]> {
        self.recording.as_deref()
    }

    /// Skips a byte order mark at the start.
    pub fn skip_byte_order_mark(&mut self) -> Result<(), Syntax> {
        const MARK: &[u8] = "\u{feff}".as_bytes();
        let buffer = self.reader.fill_buf().map_err(read_error)?;
        if buffer.starts_with(MARK) {
            self.reader.consume(MARK.len());
        }
        Ok(())
    }

    /// The same input again from where recording began (`None` if the copy outgrew its
    /// limit): the recorded bytes, then what was not yet read.
    pub fn replay(self, line: usize, column: usize) -> Option<Source<'a>> {
        let recorded = self.recording?;
        Some(Source {
            reader: Box::new(std::io::BufReader::new(
                Cursor::new(recorded).chain(self.reader),
            )),
            line,
            column,
            recording: None,
        })
    }

    pub fn peek(&mut self) -> Result<Option<u8>, Syntax> {
        let buffer = self.reader.fill_buf().map_err(read_error)?;
        Ok(buffer.first().copied())
    }

    pub fn next(&mut self) -> Result<Option<u8>, Syntax> {
        let byte = self.peek()?;
        if let Some(byte) = byte {
            self.reader.consume(1);
            self.advance(byte);
        }
        Ok(byte)
    }

    fn advance(&mut self, byte: u8) {
        if byte == b'\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        if let Some(recording) = &mut self.recording {
            if recording.len() < REPLAY_LIMIT {
                recording.push(byte);
            } else {
                self.recording = None;
            }
        }
    }

    /// Skips spaces, tabs and line ends; the next byte is something else or the end.
    pub fn skip_whitespace(&mut self) -> Result<Option<u8>, Syntax> {
        while let Some(byte) = self.peek()? {
            if !byte.is_ascii_whitespace() {
                return Ok(Some(byte));
            }
            self.next()?;
        }
        Ok(None)
    }

    /// The rest of the current line (without its line end), kept up to `limit` bytes; a
    /// longer line is read to its end and only counted. `None` at the end of the input.
    pub fn line(&mut self, limit: usize) -> Result<Option<Bounded>, Syntax> {
        let mut kept = Bounded::new(limit);
        let mut read_any = false;
        loop {
            let buffer = self.reader.fill_buf().map_err(read_error)?;
            if buffer.is_empty() {
                return Ok(read_any.then_some(kept));
            }
            read_any = true;
            let (part, ended) = match buffer.iter().position(|&b| b == b'\n') {
                Some(end) => (&buffer[..end], true),
                None => (buffer, false),
            };
            kept.extend(part);
            let used = part.len() + usize::from(ended);
            if let Some(recording) = &mut self.recording {
                if recording.len() + used <= REPLAY_LIMIT {
                    recording.extend_from_slice(&buffer[..used]);
                } else {
                    self.recording = None;
                }
            }
            self.reader.consume(used);
            if ended {
                self.line += 1;
                self.column = 1;
                if kept.bytes.last() == Some(&b'\r') {
                    kept.bytes.pop();
                }
                return Ok(Some(kept));
            }
            self.column += used;
        }
    }

    /// Reads one JSON value — object, array, string, number or literal — into `into`,
    /// checking only what finds its end: strings, escapes and nesting.
    pub fn value(&mut self, into: &mut Bounded) -> Result<(), Syntax> {
        let (line, column) = (self.line, self.column);
        let unfinished = |what: &str| {
            Syntax(format!(
                "the input ends inside {what} that begins at line {line}, column {column}"
            ))
        };
        match self.peek()? {
            None => Err(Syntax(
                "the input ends where a value was expected".to_owned(),
            )),
            Some(b'"') => {
                self.next()?;
                into.push(b'"');
                self.string_rest(into).map_err(|_| unfinished("a string"))
            }
            Some(b'{' | b'[') => {
                let mut open = Vec::new();
                loop {
                    let Some(byte) = self.next()? else {
                        return Err(unfinished("a value"));
                    };
                    into.push(byte);
                    match byte {
                        b'"' => self.string_rest(into).map_err(|_| unfinished("a value"))?,
                        b'{' => open.push(b'}'),
                        b'[' => open.push(b']'),
                        b'}' | b']' => {
                            if open.pop() != Some(byte) {
                                self.column -= 1;
                                return Err(self.unexpected(
                                    byte,
                                    "where the value's brackets close otherwise",
                                ));
                            }
                            if open.is_empty() {
                                return Ok(());
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some(_) => {
                while let Some(byte) = self.peek()? {
                    if byte.is_ascii_whitespace() || matches!(byte, b',' | b']' | b'}') {
                        break;
                    }
                    self.next()?;
                    into.push(byte);
                }
                Ok(())
            }
        }
    }

    /// A string's text after its opening quote, through its closing one.
    fn string_rest(&mut self, into: &mut Bounded) -> Result<(), Syntax> {
        loop {
            let Some(byte) = self.next()? else {
                return Err(Syntax("unfinished string".to_owned()));
            };
            into.push(byte);
            match byte {
                b'"' => return Ok(()),
                b'\\' => {
                    let Some(escaped) = self.next()? else {
                        return Err(Syntax("unfinished string".to_owned()));
                    };
                    into.push(escaped);
                }
                _ => {}
            }
        }
    }

    /// Reads `expected` (after whitespace) or says what stood there instead.
    pub fn expect(&mut self, expected: u8, context: &str) -> Result<(), Syntax> {
        match self.skip_whitespace()? {
            Some(byte) if byte == expected => {
                self.next()?;
                Ok(())
            }
            Some(byte) => Err(self.unexpected(byte, context)),
            None => Err(Syntax(format!(
                "the input ends {context} (expected `{}`)",
                char::from(expected)
            ))),
        }
    }

    /// What stood at the next (peeked, not read) position instead of what was expected.
    pub fn unexpected(&self, byte: u8, context: &str) -> Syntax {
        let shown = if byte.is_ascii_graphic() {
            format!("`{}`", char::from(byte))
        } else {
            format!("byte 0x{byte:02x}")
        };
        Syntax(format!(
            "line {}, column {}: unexpected {shown} {context}",
            self.line, self.column
        ))
    }
}

fn read_error(error: std::io::Error) -> Syntax {
    Syntax(format!("reading the input: {error}"))
}

/// Bytes kept up to a limit; past it, only their number.
pub(super) struct Bounded {
    pub bytes: Vec<u8>,
    pub len: usize,
    limit: usize,
}

impl Bounded {
    pub fn new(limit: usize) -> Self {
        Self {
            bytes: Vec::new(),
            len: 0,
            limit,
        }
    }

    /// Bytes that were kept whole elsewhere.
    pub fn whole_of(bytes: Vec<u8>) -> Self {
        Self {
            len: bytes.len(),
            limit: bytes.len(),
            bytes,
        }
    }

    pub fn push(&mut self, byte: u8) {
        self.len += 1;
        if self.len <= self.limit {
            self.bytes.push(byte);
        } else if !self.bytes.is_empty() {
            // Freed at once: a 1 GB item must not hold its first half mebibyte either.
            self.bytes = Vec::new();
        }
    }

    fn extend(&mut self, part: &[u8]) {
        self.len += part.len();
        if self.len <= self.limit {
            self.bytes.extend_from_slice(part);
        } else if !self.bytes.is_empty() {
            self.bytes = Vec::new();
        }
    }

    /// Whether every byte was kept.
    pub fn whole(&self) -> bool {
        self.len <= self.limit
    }
}
