//! Reading memories to import (`levh import`): what `GET /api/export` writes (an object
//! with `memories`), a JSON array of memories, or JSON Lines (one memory per line). Each
//! memory needs `content`; `project`, `kind`, `importance`, `pinned` (or `pin`),
//! `valid_from`, `valid_to` and `metadata` are kept. An item of levh's own export (with
//! `id` and `stability_hours`) also keeps its id, decay state (stability, recalls, last
//! recall, creation), source and the memory that superseded it; derived values (retention,
//! scores) are computed again. Other products' exports (the Python levh's, the MCP memory
//! server's file) are read by their shape ([`foreign`]). The items then go through the gate
//! in batches ([`crate::memories::store_batch`]).

mod foreign;
mod stream;

use std::collections::BTreeMap;
use std::io::BufRead;

use serde_json::Value;
use serde_json::value::RawValue;

use self::stream::{Bounded, Source, Syntax};
use crate::requests::StoreArgs;
use crate::{Error, Result};

/// One memory read from the input, or why it could not be read, with where it was.
#[derive(Debug)]
pub struct ImportItem {
    /// `line 12` (JSON Lines) or `memories[3]` (a JSON document).
    pub location: String,
    /// The memory, or what was wrong with it.
    pub memory: std::result::Result<StoreArgs, String>,
}

/// The memories in `text`, all at once (for inputs that are already in memory).
pub fn parse(text: &str) -> Result<Vec<ImportItem>> {
    read(text.as_bytes())?.collect()
}

/// The memories of an input, read as they are needed: at most one memory's text
/// ([`MAX_ITEM_BYTES`]) is held at a time, whatever the input's size. What the input is
/// — an export, an array, JSON Lines — is decided from its first line; an input that is
/// none of these is an error at once. An unreadable memory is that item's error and the
/// others are read; a document broken in its structure (a bracket missing, the text cut
/// short) ends the items with an error naming the line and column, after the memories
/// before it.
pub fn read<'a>(reader: impl BufRead + 'a) -> Result<Items<'a>> {
    let mut source = Source::new(Box::new(reader));
    let syntax = |Syntax(message)| Error::invalid(message);
    source.skip_byte_order_mark().map_err(syntax)?;
    let Some(first) = source.skip_whitespace().map_err(syntax)? else {
        return Err(Error::invalid("the input is empty: nothing to import"));
    };
    let (line, column) = (source.line, source.column);
    // The first line is read (up to one memory's length) to decide, then read again.
    source.record();
    let mut head = Vec::new();
    while head.len() <= MAX_ITEM_BYTES {
        match source.next().map_err(syntax)? {
            None | Some(b'\n') => break,
            Some(byte) => head.push(byte),
        }
    }
    let whole_line = head.len() <= MAX_ITEM_BYTES;
    let mut source = source
        .replay(line, column)
        .expect("the first line is recorded up to its limit");
    let state = match first {
        b'[' => {
            source.next().map_err(syntax)?;
            State::Elements(Elements {
                source,
                index: 0,
                started: false,
                in_export: false,
            })
        }
        b'{' => {
            let parsed = whole_line
                .then(|| serde_json::from_slice::<BTreeMap<String, &RawValue>>(&head).ok())
                .flatten();
            match parsed {
                Some(fields) if !fields.contains_key("memories") => State::Lines(source),
                _ => open_document(source, line, column)?,
            }
        }
        _ if whole_line && serde_json::from_slice::<&RawValue>(&head).is_ok() => {
            return Err(Error::invalid(
                "expected an export ({\"memories\": [...]}), a JSON array of memories or JSON Lines",
            ));
        }
        _ => State::Lines(source),
    };
    Ok(Items {
        state,
        pending: std::collections::VecDeque::new(),
    })
}

/// The memories of an input, in order; see [`read`].
pub struct Items<'a> {
    state: State<'a>,
    /// Further memories of the item read last (an MCP memory server's entity, one per
    /// observation).
    pending: std::collections::VecDeque<ImportItem>,
}

impl std::fmt::Debug for Items<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Items").finish_non_exhaustive()
    }
}

enum State<'a> {
    /// JSON Lines: one memory a line.
    Lines(Source<'a>),
    /// The elements of an array (of an export's `memories`).
    Elements(Elements<'a>),
    /// A document of one memory, written over several lines.
    Single(Box<ImportItem>),
    Done,
}

struct Elements<'a> {
    source: Source<'a>,
    index: usize,
    /// Whether an element was read (a `,` comes before the next).
    started: bool,
    /// Whether the array is an export's `memories`, inside an object to be closed.
    in_export: bool,
}

/// What an object whose first line is not a whole memory turned out to be.
enum Opened {
    /// An export: the source is at its first memory.
    Export,
    /// One memory (its object has been read).
    Memory,
}

/// Opens a document that begins with `{` and is not JSON Lines of one memory a line: an
/// export (streamed from its `memories`), or one memory written over several lines. A
/// first line that breaks before that is decided is read again as JSON Lines, where it is
/// that line's error.
fn open_document<'a>(mut source: Source<'a>, line: usize, column: usize) -> Result<State<'a>> {
    source.record();
    match find_memories(&mut source) {
        Ok(Opened::Export) => {
            source.stop_recording();
            Ok(State::Elements(Elements {
                source,
                index: 0,
                started: false,
                in_export: true,
            }))
        }
        Ok(Opened::Memory) => {
            let raw = source.recorded().map(<[u8]>::to_vec);
            let rest = source
                .skip_whitespace()
                .map_err(|Syntax(m)| Error::invalid(m))?;
            match (raw, rest) {
                (Some(raw), None) => Ok(State::Single(Box::new(ImportItem {
                    location: format!("line {line}"),
                    memory: item_text(Bounded::whole_of(raw)).and_then(|mut memories| {
                        match memories.len() {
                            1 => Ok(memories.remove(0)),
                            n => Err(format!("one document of {n} memories: write them as JSON Lines, one a line")),
                        }
                    }),
                }))),
                (None, None) => Ok(State::Single(Box::new(ImportItem {
                    location: format!("line {line}"),
                    memory: Err(too_long(&format!("more than {}", 2 * MAX_ITEM_BYTES))),
                }))),
                (_, Some(_)) => source
                    .replay(line, column)
                    .map(State::Lines)
                    .ok_or_else(|| Error::invalid("expected an export, a JSON array of memories or JSON Lines (one memory a line)")),
            }
        }
        Err(Found::Bad(message)) => Err(Error::invalid(message)),
        Err(Found::Broken(Syntax(message))) => source
            .replay(line, column)
            .map(State::Lines)
            .ok_or_else(|| Error::invalid(message)),
    }
}

enum Found {
    /// `memories` is there but is not a list.
    Bad(String),
    /// The object's structure broke before `memories` was found.
    Broken(Syntax),
}

impl From<Syntax> for Found {
    fn from(syntax: Syntax) -> Self {
        Found::Broken(syntax)
    }
}

/// Reads an object's fields until `memories` (left at its first element) or its end.
fn find_memories(source: &mut Source<'_>) -> std::result::Result<Opened, Found> {
    source.expect(b'{', "at the start of the document")?;
    let mut first = true;
    loop {
        match source.skip_whitespace()? {
            Some(b'}') if first => {
                source.next()?;
                return Ok(Opened::Memory);
            }
            Some(b'"') => {}
            Some(byte) => {
                return Err(source
                    .unexpected(byte, "where a field's name was expected")
                    .into());
            }
            None => return Err(Syntax("the input ends inside the document".to_owned()).into()),
        }
        let mut name = Bounded::new(64);
        source.value(&mut name)?;
        source.expect(b':', "after a field's name")?;
        if name.whole() && name.bytes == b"\"memories\"" {
            return match source.skip_whitespace()? {
                Some(b'[') => {
                    source.next()?;
                    Ok(Opened::Export)
                }
                _ => Err(Found::Bad("`memories` is not an array".to_owned())),
            };
        }
        source.skip_whitespace()?;
        source.value(&mut Bounded::new(0))?;
        match source.skip_whitespace()? {
            Some(b',') => {
                source.next()?;
            }
            Some(b'}') => {
                source.next()?;
                return Ok(Opened::Memory);
            }
            Some(byte) => return Err(source.unexpected(byte, "after a field").into()),
            None => return Err(Syntax("the input ends inside the document".to_owned()).into()),
        }
        first = false;
    }
}

impl Iterator for Items<'_> {
    type Item = Result<ImportItem>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(item) = self.pending.pop_front() {
            return Some(Ok(item));
        }
        let outcome = match &mut self.state {
            State::Done => return None,
            State::Single(_) => {
                let State::Single(item) = std::mem::replace(&mut self.state, State::Done) else {
                    unreachable!("matched above")
                };
                return Some(Ok(*item));
            }
            State::Lines(source) => next_line(source),
            State::Elements(elements) => elements.next_item(),
        };
        match outcome {
            Ok(Some(RawItem { location, memories })) => {
                let memories = match memories {
                    Ok(memories) => memories,
                    Err(message) => {
                        return Some(Ok(ImportItem {
                            location,
                            memory: Err(message),
                        }));
                    }
                };
                let many = memories.len() > 1;
                self.pending = memories
                    .into_iter()
                    .enumerate()
                    .map(|(n, memory)| ImportItem {
                        location: if many {
                            format!("{location} ({})", n + 1)
                        } else {
                            location.clone()
                        },
                        memory: Ok(memory),
                    })
                    .collect();
                // The first of the item's memories now, the rest on later calls.
                self.next()
            }
            Ok(None) => {
                self.state = State::Done;
                None
            }
            Err(Syntax(message)) => {
                self.state = State::Done;
                // Not "invalid": the memories before the break may have been stored.
                Some(Err(Error::Unprocessable(message)))
            }
        }
    }
}

/// One item of the input as read: where, and the memories it holds (or why it holds none).
struct RawItem {
    location: String,
    memories: std::result::Result<Vec<StoreArgs>, String>,
}

fn next_line(source: &mut Source<'_>) -> std::result::Result<Option<RawItem>, Syntax> {
    loop {
        let number = source.line;
        let Some(line) = source.line(MAX_ITEM_BYTES)? else {
            return Ok(None);
        };
        if line.whole() && line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(Some(RawItem {
            location: format!("line {number}"),
            memories: item_text(line),
        }));
    }
}

impl Elements<'_> {
    fn next_item(&mut self) -> std::result::Result<Option<RawItem>, Syntax> {
        let source = &mut self.source;
        let after = || {
            if self.index == 0 {
                "at the start of `memories`".to_owned()
            } else {
                format!("after memories[{}]", self.index - 1)
            }
        };
        match source.skip_whitespace()? {
            Some(b']') => {
                source.next()?;
                self.close()?;
                return Ok(None);
            }
            Some(b',') if self.started => {
                source.next()?;
                source.skip_whitespace()?;
            }
            Some(byte) if self.started => {
                return Err(source.unexpected(byte, &format!("{} (expected `,` or `]`)", after())));
            }
            Some(_) => {}
            None => {
                return Err(Syntax(format!(
                    "the input ends {}, inside the list of memories: it was cut short",
                    after()
                )));
            }
        }
        let location = format!("memories[{}]", self.index);
        let mut raw = Bounded::new(MAX_ITEM_BYTES);
        source
            .value(&mut raw)
            .map_err(|Syntax(message)| Syntax(format!("{location}: {message}")))?;
        self.index += 1;
        self.started = true;
        Ok(Some(RawItem {
            location,
            memories: item_text(raw),
        }))
    }

    /// After the list: the rest of an export's fields, then nothing but whitespace.
    fn close(&mut self) -> std::result::Result<(), Syntax> {
        let source = &mut self.source;
        if self.in_export {
            loop {
                match source.skip_whitespace()? {
                    Some(b'}') => {
                        source.next()?;
                        break;
                    }
                    Some(b',') => {
                        source.next()?;
                        source.skip_whitespace()?;
                        source.value(&mut Bounded::new(0))?;
                        source.expect(b':', "after a field's name")?;
                        source.skip_whitespace()?;
                        source.value(&mut Bounded::new(0))?;
                    }
                    Some(byte) => return Err(source.unexpected(byte, "after the list of memories")),
                    None => {
                        return Err(Syntax(
                            "the input ends inside the document, after its memories".to_owned(),
                        ));
                    }
                }
            }
        }
        match source.skip_whitespace()? {
            None => Ok(()),
            Some(byte) => Err(source.unexpected(byte, "after the end of the document")),
        }
    }
}

fn too_long(bytes: &str) -> String {
    format!(
        "{bytes} bytes: longer than any memory can be ({} KiB at most: 32,000 characters of content and 64 KiB of metadata); not read",
        MAX_ITEM_BYTES / 1024
    )
}

/// One item's bytes parsed, unless they are too long to be a memory or not text.
fn item_text(raw: Bounded) -> std::result::Result<Vec<StoreArgs>, String> {
    if !raw.whole() {
        return Err(too_long(&raw.len.to_string()));
    }
    let text =
        std::str::from_utf8(&raw.bytes).map_err(|error| format!("not UTF-8 text: {error}"))?;
    item(text)
}

/// The fields of one exported or hand-written memory that an import keeps.
/// The longest text one memory may take in the input: its content at the gate's limit
/// (32,000 characters, up to 4 bytes each, escaped), its metadata at its cap (64 KiB), and
/// room for the rest. A longer item is refused by its size, before it is parsed: a 200 MB
/// line once took 2.6 GB to turn into a tree only to be rejected.
pub const MAX_ITEM_BYTES: usize = 512 * 1024;

/// One item's text parsed, unless it is too long to be a memory.
fn item(raw: &str) -> std::result::Result<Vec<StoreArgs>, String> {
    if raw.len() > MAX_ITEM_BYTES {
        return Err(too_long(&raw.len().to_string()));
    }
    let value = serde_json::from_str::<Value>(raw).map_err(|error| format!("not JSON: {error}"))?;
    match &value {
        Value::Object(object) if foreign::is_mcp_memory(object) => foreign::mcp_memory(object),
        Value::Object(object) if foreign::is_python_levh(object) => {
            foreign::python_levh(object).map(|m| vec![m])
        }
        _ => memory(value).map(|m| vec![m]),
    }
}

fn memory(value: Value) -> std::result::Result<StoreArgs, String> {
    let Value::Object(object) = value else {
        return Err("a memory must be a JSON object with `content`".to_owned());
    };
    let text = |field: &str| -> std::result::Result<Option<String>, String> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{field}` must be text, not {other}")),
        }
    };
    let content = text("content")?.ok_or("`content` is missing")?;
    let importance = importance(&object)?;
    let pin = pinned(object.get("pinned").or_else(|| object.get("pin")))?;
    let metadata = match object.get("metadata") {
        None | Some(Value::Null) => None,
        Some(value @ Value::Object(_)) => Some(value.clone()),
        Some(other) => return Err(format!("`metadata` must be a JSON object, not {other}")),
    };
    let prior = prior(&object, &text)?;
    Ok(StoreArgs {
        content,
        project: text("project")?,
        kind: text("kind")?,
        importance,
        pin,
        valid_from: text("valid_from")?,
        valid_to: text("valid_to")?,
        session_id: None,
        metadata,
        prior,
    })
}

/// An item's `importance`, when it has one.
fn importance(object: &serde_json::Map<String, Value>) -> std::result::Result<Option<f64>, String> {
    match object.get("importance") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("`importance` must be a number, not {value}")),
    }
}

/// An item's pin (`pinned`, or `pin`), when it says.
fn pinned(value: Option<&Value>) -> std::result::Result<Option<bool>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(pinned)) => Ok(Some(*pinned)),
        Some(other) => Err(format!("`pinned` must be true or false, not {other}")),
    }
}

/// The memory's own record when the item is one of levh's export (it has an `id` and a
/// `stability_hours`): kept, so an import reproduces the memory. Other inputs start
/// afresh.
fn prior(
    object: &serde_json::Map<String, Value>,
    text: &dyn Fn(&str) -> std::result::Result<Option<String>, String>,
) -> std::result::Result<Option<levh_core::PriorMemory>, String> {
    let (Some(id), Some(stability)) = (text("id")?, object.get("stability_hours")) else {
        return Ok(None);
    };
    let id = id
        .parse()
        .map_err(|_| format!("`id` is not a memory id: {id:?}"))?;
    let stability_hours = stability
        .as_f64()
        .filter(|h| h.is_finite() && *h > 0.0)
        .ok_or_else(|| format!("`stability_hours` must be a positive number, not {stability}"))?;
    let recall_count = match object.get("recall_count") {
        None | Some(Value::Null) => 0,
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`recall_count` must be a whole number, not {value}"))?,
    };
    let when = |field: &str| -> std::result::Result<Option<levh_core::Timestamp>, String> {
        text(field)?
            .map(|t| {
                levh_core::parse_instant(&t)
                    .ok_or_else(|| format!("`{field}` is not a time: {t:?}"))
            })
            .transpose()
    };
    let superseded_by = text("superseded_by")?
        .map(|s| {
            s.parse()
                .map_err(|_| format!("`superseded_by` is not a memory id: {s:?}"))
        })
        .transpose()?;
    Ok(Some(levh_core::PriorMemory {
        id,
        source: text("source")?,
        stability_hours,
        recall_count,
        last_recalled_at: when("last_recalled_at")?,
        created_at: when("created_at")?.ok_or("`created_at` is missing from an exported memory")?,
        superseded_by,
        forgotten_at: when("forgotten_at")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_an_array_and_json_lines_all_read_with_each_bad_item_named() {
        let export = r#"{"memories": [{"id": "x", "content": "one", "project": "p", "retention": 0.4},
                                      {"content": 5}]}"#;
        let items = parse(export).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].memory.as_ref().unwrap().project.as_deref(),
            Some("p")
        );
        assert_eq!(items[1].location, "memories[1]");
        assert!(
            items[1]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("`content` must be text")
        );

        let lines = "{\"content\": \"a\", \"pinned\": true}\n\n{oops\n{\"kind\": \"note\"}\n";
        let items = parse(lines).unwrap();
        let locations: Vec<&str> = items.iter().map(|i| i.location.as_str()).collect();
        assert_eq!(locations, ["line 1", "line 3", "line 4"]);
        assert_eq!(items[0].memory.as_ref().unwrap().pin, Some(true));
        assert!(
            items[1]
                .memory
                .as_ref()
                .unwrap_err()
                .starts_with("not JSON")
        );
        assert!(
            items[2]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("`content` is missing")
        );

        assert!(parse("  ").is_err());
        assert!(parse("42").is_err());
        assert!(parse(r#"{"memories": {"content": "a"}}"#).is_err());
        assert!(parse(r#"{"memories": null}"#).is_err());
        let single = parse(r#"{"content": "alone", "kind": "fact"}"#).unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].location, "line 1");
        assert_eq!(single[0].memory.as_ref().unwrap().content, "alone");
        let array = parse(r#"[{"content": "a"}, [], {"content": "b"}]"#).unwrap();
        assert_eq!(array.len(), 3);
        assert!(
            array[1]
                .memory
                .as_ref()
                .unwrap_err()
                .contains("JSON object")
        );
    }

    #[test]
    fn an_item_longer_than_any_memory_is_refused_by_its_size_and_the_others_are_read() {
        let huge = format!("{{\"content\": \"{}\"}}", "a".repeat(MAX_ITEM_BYTES));
        let lines = format!("{{\"content\": \"before\"}}\n{huge}\n{{\"content\": \"after\"}}\n");
        let items = parse(&lines).unwrap();
        assert_eq!(items.len(), 3);
        let refused = items[1].memory.as_ref().unwrap_err();
        assert!(refused.contains("longer than any memory"), "{refused}");
        assert_eq!(items[2].memory.as_ref().unwrap().content, "after");
        let document = format!("{{\"memories\": [{huge}, {{\"content\": \"kept\"}}]}}");
        let items = parse(&document).unwrap();
        assert!(items[0].memory.is_err());
        assert_eq!(items[1].memory.as_ref().unwrap().content, "kept");
    }

    fn contents(items: &[ImportItem]) -> Vec<String> {
        items
            .iter()
            .map(|i| match &i.memory {
                Ok(memory) => format!("{}={}", i.location, memory.content),
                Err(_) => format!("{}=!", i.location),
            })
            .collect()
    }

    #[test]
    fn documents_over_many_lines_and_their_edges_read_as_before() {
        let pretty = "\u{feff}\n{\n  \"exported_at\": \"2026-01-01\",\n  \"counts\": {\"a\": [1, \"]}\"]},\n  \"memories\": [\n    {\"content\": \"one \\\" ]\"},\n    {\"content\": \"two\"}\n  ],\n  \"total\": 2\n}\n";
        let items = parse(pretty).unwrap();
        assert_eq!(
            contents(&items),
            ["memories[0]=one \" ]", "memories[1]=two"]
        );

        let single = "{\n  \"content\": \"alone\",\n  \"kind\": \"fact\"\n}\n";
        assert_eq!(contents(&parse(single).unwrap()), ["line 1=alone"]);

        // A first line broken in JSON Lines is that line's error, not the whole input's.
        let broken_first = "{\"content\": \"a\"\n{\"content\": \"b\"}\r\n{\"content\": \"c\"}\n";
        assert_eq!(
            contents(&parse(broken_first).unwrap()),
            ["line 1=!", "line 2=b", "line 3=c"]
        );

        // An export cut short: the memories before the cut, then an error saying where.
        let cut = "{\"memories\": [{\"content\": \"kept\"}, {\"content\": \"half";
        let mut items = read(cut.as_bytes()).unwrap();
        assert_eq!(
            items.next().unwrap().unwrap().memory.unwrap().content,
            "kept"
        );
        let error = items.next().unwrap().unwrap_err().to_string();
        assert!(
            error.contains("memories[1]") && error.contains("ends inside"),
            "{error}"
        );
        assert!(items.next().is_none());

        let trailing = "[{\"content\": \"a\"}] x";
        let error = parse(trailing).unwrap_err().to_string();
        assert!(
            error.contains("line 1, column 20") && error.contains("after the end"),
            "{error}"
        );
        let missing_comma = "[{\"content\": \"a\"} {\"content\": \"b\"}]";
        let error = parse(missing_comma).unwrap_err().to_string();
        assert!(error.contains("expected `,` or `]`"), "{error}");
        assert!(parse("[]").unwrap().is_empty());
        assert!(parse("{\"memories\": []}").unwrap().is_empty());
        assert!(parse("\u{feff}  \n\t").is_err());
    }

    /// Input made on demand: `lines` lines of `size` bytes each, never held whole.
    struct Generated {
        line: Vec<u8>,
        lines: usize,
        at: usize,
    }

    impl std::io::Read for Generated {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let total = self.line.len() * self.lines;
            let mut written = 0;
            while written < out.len() && self.at < total {
                let offset = self.at % self.line.len();
                let take = (self.line.len() - offset).min(out.len() - written);
                out[written..written + take].copy_from_slice(&self.line[offset..offset + take]);
                written += take;
                self.at += take;
            }
            Ok(written)
        }
    }

    #[test]
    fn an_input_is_read_as_it_streams_however_long_its_lines() {
        // One 16 MiB item between two memories, as a line and as an array element: read
        // through, refused by its size, the next one read.
        let huge = format!("{{\"content\": \"{}\"}}", "a".repeat(16 << 20));
        let lines = format!("{{\"content\": \"x\"}}\n{huge}\n{{\"content\": \"y\"}}");
        let items = read(std::io::BufReader::new(lines.as_bytes())).unwrap();
        assert_eq!(
            contents(&items.collect::<Result<Vec<_>>>().unwrap()),
            ["line 1=x", "line 2=!", "line 3=y"]
        );
        let array = format!("[{huge}, {{\"content\": \"y\"}}]");
        let items = parse(&array).unwrap();
        assert!(
            items[0]
                .memory
                .as_ref()
                .unwrap_err()
                .starts_with(&format!("{} bytes", huge.len()))
        );
        assert_eq!(contents(&items[1..]), ["memories[1]=y"]);

        // 100k lines from a reader that makes them on demand, counted as they come.
        let source = Generated {
            line: b"{\"content\": \"a memory of some words\"}\n".to_vec(),
            lines: 100_000,
            at: 0,
        };
        let items = read(std::io::BufReader::new(source)).unwrap();
        let mut count = 0;
        for item in items {
            assert!(item.unwrap().memory.is_ok());
            count += 1;
        }
        assert_eq!(count, 100_000);
    }
}
