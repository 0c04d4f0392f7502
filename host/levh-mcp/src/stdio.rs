//! MCP over stdin/stdout, with an answer for a message too large to read.
//!
//! rmcp's stdio transport drops a line longer than its limit (16 MiB) and says nothing to
//! the client, whose request then waits forever. [`Oversize`] sits between stdin and
//! rmcp: it passes each line through whole, and replaces a line over the limit by a small
//! request of our own, [`TOO_LARGE_METHOD`], carrying the original request's `id` (read
//! from the line's head, or its tail — clients put `id` first or last). The handler
//! answers it with a JSON-RPC error naming the size and the limit, so the client's call
//! ends with an error instead of a hang.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use regex::bytes::Regex;
use tokio::io::{AsyncRead, ReadBuf};

/// The largest message levh reads over stdio, its newline included: rmcp's own limit, so
/// a line we pass on is never dropped by rmcp.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The method of the stand-in request for a message over the limit.
pub const TOO_LARGE_METHOD: &str = "levh/message-too-large";

/// The method of the stand-in request for a message that is not JSON.
pub const PARSE_ERROR_METHOD: &str = "levh/parse-error";

/// How much of a line's head and tail is kept to find its `id`.
const ID_WINDOW: usize = 4096;

/// A JSON-RPC id: a number or a string (escapes allowed).
const ID: &str = r#"(-?[0-9]+|"(?:[^"\\]|\\.){0,200}")"#;

static ID_AT_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"^\s*\{{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*{ID}"#
    ))
    .unwrap_or_else(|e| panic!("id pattern: {e}"))
});

static ID_AT_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#""id"\s*:\s*{ID}\s*\}}\s*$"#))
        .unwrap_or_else(|e| panic!("id pattern: {e}"))
});

/// The request id of a JSON-RPC line, from the bytes seen at its head and its tail.
fn request_id(head: &[u8], tail: &[u8]) -> Option<String> {
    let found = ID_AT_HEAD
        .captures(head)
        .or_else(|| ID_AT_TAIL.captures(tail))?;
    std::str::from_utf8(found.get(1)?.as_bytes())
        .ok()
        .map(str::to_owned)
}

/// stdin, line by line, with lines over [`MAX_MESSAGE_BYTES`] replaced (see the module).
#[derive(Debug)]
pub struct Oversize<R> {
    inner: R,
    limit: usize,
    /// The line being read (until its newline, or until it is too long).
    line: Vec<u8>,
    /// Set while the rest of a too-long line is skipped: its head, its last bytes and
    /// its size so far.
    skipping: Option<Skipped>,
    /// Bytes ready for the reader, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    eof: bool,
}

#[derive(Debug)]
struct Skipped {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    bytes: usize,
}

impl<R> Oversize<R> {
    /// Wraps `inner`, replacing lines longer than `limit` bytes.
    pub fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            line: Vec::new(),
            skipping: None,
            ready: Vec::new(),
            ready_at: 0,
            eof: false,
        }
    }

    /// Takes in bytes read from `inner`.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match newline {
                Some(at) => bytes.split_at(at + 1),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if let Some(skipped) = &mut self.skipping {
                skipped.bytes += part.len();
                skipped
                    .tail
                    .extend(&part[part.len().saturating_sub(ID_WINDOW)..]);
                let excess = skipped.tail.len().saturating_sub(ID_WINDOW);
                skipped.tail.drain(..excess);
                if newline.is_some() {
                    self.end_skipping();
                }
                continue;
            }
            self.line.extend_from_slice(part);
            if self.line.len() > self.limit {
                let mut tail: VecDeque<u8> = VecDeque::with_capacity(ID_WINDOW);
                tail.extend(&self.line[self.line.len().saturating_sub(ID_WINDOW)..]);
                self.skipping = Some(Skipped {
                    head: self.line[..ID_WINDOW.min(self.line.len())].to_vec(),
                    tail,
                    bytes: self.line.len(),
                });
                // Give the memory back: a 16 MiB line must not stay allocated.
                self.line = Vec::new();
                if newline.is_some() {
                    self.end_skipping();
                }
            } else if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                self.pass_on(line);
            }
        }
    }

    /// A whole line goes to the reader — unless it is not JSON: rmcp would drop it without
    /// a word and its sender would wait forever. Then, when the line still shows its
    /// request `id`, a stand-in request ([`PARSE_ERROR_METHOD`]) carries the parser's
    /// message, and the handler answers that id with JSON-RPC's parse error (-32700).
    fn pass_on(&mut self, line: Vec<u8>) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let error = match serde_json::from_slice::<serde::de::IgnoredAny>(&line) {
            Ok(_) => {
                self.ready.extend_from_slice(&line);
                return;
            }
            Err(error) => error,
        };
        let head = &line[..ID_WINDOW.min(line.len())];
        let tail = &line[line.len().saturating_sub(ID_WINDOW)..];
        let tail = tail.strip_suffix(b"\n").unwrap_or(tail);
        let tail = tail.strip_suffix(b"\r").unwrap_or(tail);
        let Some(id) = request_id(head, tail) else {
            tracing::warn!(%error, bytes = line.len(), "dropped an MCP message that is not JSON and shows no request id");
            return;
        };
        tracing::warn!(%error, "an MCP message that is not JSON: answering it with a parse error");
        let stand_in = serde_json::json!({
            "jsonrpc": "2.0",
            "method": PARSE_ERROR_METHOD,
            "params": { "error": error.to_string() },
        });
        // The id is spliced in as it was written (a number or a string literal).
        let mut text = stand_in.to_string();
        text.insert_str(1, &format!("\"id\":{id},"));
        text.push('\n');
        self.ready.extend_from_slice(text.as_bytes());
    }

    /// A too-long line ended: its stand-in request goes to the reader.
    fn end_skipping(&mut self) {
        let Some(skipped) = self.skipping.take() else {
            return;
        };
        let tail: Vec<u8> = skipped.tail.into_iter().collect();
        let tail = tail.strip_suffix(b"\n").unwrap_or(&tail);
        let tail = tail.strip_suffix(b"\r").unwrap_or(tail);
        let Some(id) = request_id(&skipped.head, tail) else {
            // No id: a notification, or nothing we can answer. Nothing waits for it.
            tracing::warn!(
                bytes = skipped.bytes,
                limit = self.limit,
                "dropped an MCP message over the size limit that carried no request id"
            );
            return;
        };
        tracing::warn!(
            bytes = skipped.bytes,
            limit = self.limit,
            "an MCP message over the size limit: answering it with an error"
        );
        let stand_in = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{TOO_LARGE_METHOD}\",\"params\":{{\"bytes\":{},\"limit\":{}}}}}\n",
            skipped.bytes, self.limit
        );
        self.ready.extend_from_slice(stand_in.as_bytes());
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Oversize<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            if this.ready_at < this.ready.len() {
                let pending = &this.ready[this.ready_at..];
                let n = buf.remaining().min(pending.len());
                buf.put_slice(&pending[..n]);
                this.ready_at += n;
                if this.ready_at == this.ready.len() {
                    this.ready.clear();
                    this.ready_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    // The last line may lack its newline; a too-long one ends here too.
                    this.eof = true;
                    if this.skipping.is_some() {
                        this.end_skipping();
                    } else {
                        let line = std::mem::take(&mut this.line);
                        this.pass_on(line);
                    }
                }
                Poll::Ready(Ok(())) => this.take(read.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    fn through(input: &[u8], limit: usize) -> Vec<u8> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut out = Vec::new();
            Oversize::new(input, limit)
                .read_to_end(&mut out)
                .await
                .unwrap();
            out
        })
    }

    #[test]
    fn lines_within_the_limit_pass_unchanged() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"a\":2}\n{\"b\":3}";
        assert_eq!(through(input, 64), input.to_vec());
    }

    /// A line that is not JSON gets a parse error for its id, when the line shows one;
    /// without one it is dropped (nothing waits for it) and the stream goes on.
    #[test]
    fn a_line_that_is_not_json_becomes_a_parse_error_stand_in_with_its_id() {
        let input =
            b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\n\
                      not json at all\n\
                      {\"jsonrpc\":\"2.0\",\"id\":\"q-1\",\"method\":\"ping\",}\n\
                      {\"ok\":1}\n";
        let out = String::from_utf8(through(input, 1024)).unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0]["id"], 12);
        assert_eq!(lines[0]["method"], PARSE_ERROR_METHOD);
        assert!(
            lines[0]["params"]["error"]
                .as_str()
                .unwrap()
                .contains("EOF"),
            "{out}"
        );
        assert_eq!(lines[1]["id"], "q-1");
        assert_eq!(lines[2]["ok"], 1);
    }

    #[test]
    fn a_line_over_the_limit_becomes_a_stand_in_with_its_id_from_the_head_or_the_tail() {
        let big = "x".repeat(500);
        let head_id = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"c\":\"{big}\"}}}}\n"
        );
        let tail_id = format!(
            "{{\"method\":\"tools/call\",\"params\":{{\"id\":1,\"c\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":\"req-9\"}}\r\n"
        );
        let out = String::from_utf8(through(
            format!("{head_id}{tail_id}{{\"after\":true}}\n").as_bytes(),
            200,
        ))
        .unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0]["id"], 7);
        assert_eq!(lines[0]["method"], TOO_LARGE_METHOD);
        assert_eq!(lines[0]["params"]["bytes"], head_id.len());
        assert_eq!(lines[1]["id"], "req-9");
        assert_eq!(lines[2]["after"], true);
    }

    #[test]
    fn a_too_long_line_without_an_id_is_dropped_and_the_stream_goes_on() {
        let input = format!(
            "{{\"method\":\"notify\",\"x\":\"{}\"}}\n{{\"ok\":1}}\n",
            "y".repeat(300)
        );
        assert_eq!(through(input.as_bytes(), 100), b"{\"ok\":1}\n".to_vec());
    }
}
