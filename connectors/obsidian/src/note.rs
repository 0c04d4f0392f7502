//! Obsidian notes: front matter, tags, wikilinks and the note's own date.
//!
//! Front matter is YAML, read with yaml-rust2 (a pure-Rust YAML 1.2 parser), so `draft: true`
//! and `rating: 4` stay a boolean and a number. The body is CommonMark with Obsidian's
//! tables and wikilinks, read with pulldown-cmark: code (fenced, indented, inline, in a
//! callout too) yields no tags or links, and a table's escaped `[[Target\|alias]]` links to
//! `Target`.

use std::collections::HashMap;
use std::path::Path;

use pulldown_cmark::{
    Event as Markdown, LinkType, Options, Parser as MarkdownParser, Tag, TagEnd, TextMergeStream,
};
use serde_json::{Map, Value, json};
use yaml_rust2::parser::{Event as YamlEvent, Parser as YamlParser, Tag as YamlTag};
use yaml_rust2::scanner::{Marker, TScalarStyle};
use yaml_rust2::{ScanError, Yaml};

/// One parsed note.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The file name without `.md`, or the front matter's `title`.
    pub title: String,
    /// The Markdown body without front matter.
    pub body: String,
    /// Front matter fields, with YAML's types: strings, numbers, booleans, lists, maps.
    pub front_matter: Map<String, Value>,
    /// Why the front matter could not be read, naming its line. The note is still kept,
    /// without properties, as Obsidian still shows it: its text is the memory.
    pub front_matter_error: Option<String>,
    /// `#tags` from the body and `tags:` from the front matter, without `#`.
    pub tags: Vec<String>,
    /// `[[Wikilink]]` and `![[embed]]` targets, without heading or alias.
    pub links: Vec<String>,
    /// The note's own time as RFC 3339 UTC, from the first of: the front matter's `date`,
    /// its `created`, a date opening the note's first heading, a daily note's file name
    /// (`2026-03-02.md`). `None` when it names none that reads as a date; the component
    /// then takes the file's modification time.
    pub date: Option<String>,
}

impl Note {
    /// The metadata stored with the memory.
    pub fn metadata(&self) -> Value {
        let mut metadata =
            json!({ "front_matter": self.front_matter, "tags": self.tags, "links": self.links });
        if let Some(error) = &self.front_matter_error {
            metadata["front_matter_error"] = error.clone().into();
        }
        metadata
    }
}

/// Relative paths of the vault's notes (`.md`), sorted, and how many other files were
/// skipped. `.obsidian/`, `.trash/` and other hidden folders are not entered.
pub fn vault_notes(vault: &Path) -> Result<(Vec<String>, usize), String> {
    if !vault.is_dir() {
        return Err(format!("`vault_path` {} is not a folder", vault.display()));
    }
    fn walk(dir: &Path, vault: &Path, notes: &mut Vec<String>, skipped: &mut usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                walk(&path, vault, notes, skipped);
            } else if name.ends_with(".md") {
                notes.push(
                    path.strip_prefix(vault)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            } else {
                *skipped += 1;
            }
        }
    }
    let (mut notes, mut skipped) = (Vec::new(), 0);
    walk(vault, vault, &mut notes, &mut skipped);
    notes.sort();
    Ok((notes, skipped))
}

/// Parses one note. Errors (not UTF-8, unclosed or invalid front matter) name the problem
/// and its line.
pub fn parse(relative: &str, bytes: &[u8]) -> Result<Note, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let text = text.trim_start_matches('\u{feff}');
    let (front_matter, front_matter_error, body) = match split_front_matter(text)? {
        Some((yaml, body)) => match front_matter(yaml) {
            Ok(properties) => (properties, None, body),
            Err(error) => (Map::new(), Some(error), body),
        },
        None => (Map::new(), None, text),
    };
    let stem = relative
        .rsplit('/')
        .next()
        .unwrap_or(relative)
        .trim_end_matches(".md")
        .to_owned();
    let scanned = scan(body);
    let date = ["date", "created"]
        .iter()
        .filter_map(|key| front_matter.get(*key).and_then(Value::as_str))
        .chain(
            scanned
                .first_heading
                .as_deref()
                .and_then(|heading| heading.split_whitespace().next()),
        )
        .chain([stem.as_str()])
        .find_map(date_time);
    let title = front_matter
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or(stem);

    let mut tags: Vec<String> = match front_matter.get("tags") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|t| t.trim_start_matches('#').to_owned())
            .collect(),
        Some(Value::String(one)) => one
            .split([',', ' '])
            .filter(|t| !t.is_empty())
            .map(|t| t.trim_start_matches('#').to_owned())
            .collect(),
        _ => Vec::new(),
    };
    for tag in scanned.tags {
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(Note {
        title,
        body: body.to_owned(),
        front_matter,
        front_matter_error,
        tags,
        links: scanned.links,
        date,
    })
}

/// Splits `---` front matter from the body: the YAML up to the next line that is `---`, and
/// the body after that line. `None` when the note has no front matter.
fn split_front_matter(text: &str) -> Result<Option<(&str, &str)>, String> {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok(None);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = rest[offset + line.len()..].trim_start_matches(['\r', '\n']);
            return Ok(Some((&rest[..offset], body)));
        }
        offset += line.len();
    }
    Err("front matter starts with --- but never ends".into())
}

/// Deeper than any note's properties; keeps a hostile file from exhausting the stack.
const MAX_DEPTH: usize = 64;
/// The most values that aliases (`*name`) may copy: ten levels of ten copies each would
/// otherwise make a few hundred bytes of YAML into billions of values.
const MAX_ALIAS_VALUES: usize = 10_000;

/// A collection being built from the YAML parser's events.
enum Frame {
    Sequence {
        items: Vec<Value>,
        anchor: usize,
        values_before: usize,
    },
    Mapping {
        map: Map<String, Value>,
        /// The key read, waiting for its value.
        key: Option<String>,
        anchor: usize,
        values_before: usize,
    },
}

/// The front matter's YAML as a JSON object. Built from yaml-rust2's events rather than its
/// `Yaml` tree: one pass, JSON's string keys directly, and the depth and alias limits
/// above checked as the document is read.
fn front_matter(yaml: &str) -> Result<Map<String, Value>, String> {
    // The front matter's first line is the file's second, after the opening `---`.
    let at = |mark: &Marker| format!("front matter line {}", mark.line() + 1);
    let invalid = |e: ScanError| format!("{}: {}", at(e.marker()), e.info());
    let mut parser = YamlParser::new_from_str(yaml);
    let mut stack: Vec<Frame> = Vec::new();
    // Anchored values by id, with how many values each holds.
    let mut anchors: HashMap<usize, (Value, usize)> = HashMap::new();
    let mut values = 0usize;
    let mut alias_values = 0usize;
    let mut root: Option<Value> = None;
    loop {
        let (event, mark) = parser.next_token().map_err(invalid)?;
        let (value, anchor, size) = match event {
            YamlEvent::StreamEnd => break,
            YamlEvent::SequenceStart(anchor, _) | YamlEvent::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "{}: nested deeper than {MAX_DEPTH} levels",
                        at(&mark)
                    ));
                }
                stack.push(if matches!(event, YamlEvent::SequenceStart(..)) {
                    Frame::Sequence {
                        items: Vec::new(),
                        anchor,
                        values_before: values,
                    }
                } else {
                    Frame::Mapping {
                        map: Map::new(),
                        key: None,
                        anchor,
                        values_before: values,
                    }
                });
                continue;
            }
            YamlEvent::SequenceEnd | YamlEvent::MappingEnd => match stack.pop() {
                Some(Frame::Sequence {
                    items,
                    anchor,
                    values_before,
                }) => (Value::Array(items), anchor, values - values_before + 1),
                Some(Frame::Mapping {
                    map,
                    anchor,
                    values_before,
                    ..
                }) => (Value::Object(map), anchor, values - values_before + 1),
                // The parser pairs every end with a start.
                None => continue,
            },
            YamlEvent::Scalar(text, style, anchor, tag) => (scalar(text, style, tag), anchor, 1),
            YamlEvent::Alias(id) => {
                let Some((value, size)) = anchors.get(&id) else {
                    return Err(format!("{}: an alias to no anchor", at(&mark)));
                };
                alias_values += size;
                if alias_values > MAX_ALIAS_VALUES {
                    return Err(format!(
                        "{}: aliases copy more than {MAX_ALIAS_VALUES} values",
                        at(&mark)
                    ));
                }
                (value.clone(), 0, *size)
            }
            YamlEvent::DocumentStart if root.is_some() => {
                return Err(format!(
                    "{}: more than one YAML document (`...` ends the first)",
                    at(&mark)
                ));
            }
            YamlEvent::Nothing
            | YamlEvent::StreamStart
            | YamlEvent::DocumentStart
            | YamlEvent::DocumentEnd => continue,
        };
        values += size;
        if anchor > 0 {
            anchors.insert(anchor, (value.clone(), size));
        }
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Sequence { items, .. }) => items.push(value),
            Some(Frame::Mapping { map, key, .. }) => match key.take() {
                None => *key = Some(key_text(value)),
                Some(name) => {
                    if map.contains_key(&name) {
                        return Err(format!("{}: the key `{name}` appears twice", at(&mark)));
                    }
                    map.insert(name, value);
                }
            },
        }
    }
    match root {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err("front matter line 2: not a list of `key: value` properties".into()),
    }
}

/// A YAML scalar as JSON, typed by YAML's core schema: `true`, `4` and `0.5` are a boolean
/// and numbers, quoted text and `!!str` stay text. A number JSON cannot hold (`.inf`,
/// `.nan`) is kept as it was written.
fn scalar(text: String, style: TScalarStyle, tag: Option<YamlTag>) -> Value {
    if style != TScalarStyle::Plain || tag.is_some_and(|t| t.suffix == "str") {
        return Value::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Integer(number) => Value::from(number),
        real @ Yaml::Real(_) => real
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        Yaml::Boolean(flag) => Value::Bool(flag),
        Yaml::Null => Value::Null,
        _ => Value::String(text),
    }
}

/// A mapping key as JSON's string key: text as it is, anything else (`4:`, a list as a key)
/// as its JSON text.
fn key_text(key: Value) -> String {
    match key {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// A date or date-time as notes write it, as RFC 3339 UTC: `2024-03-05`,
/// `2024-03-05 14:30`, `2024-03-05T14:30:00`, with fractions of a second (dropped: a note's
/// time is not that precise), and with `Z` or an offset (`+01:00`, `+0100`, `+01`). A time
/// without an offset is taken as UTC: the note does not say its zone, and the component
/// has none. ISO dates only: `20240305` in a file name or heading is as often a number.
///
/// Hand-written, like the SDK's `rfc3339_utc`: jiff reads these forms too but made the
/// component 200 KB larger (685 KB instead of 485 KB) for this one function.
pub fn date_time(text: &str) -> Option<String> {
    let mut rest = text.trim().as_bytes();
    let year = digits(&mut rest, 4)?;
    let month = after(&mut rest, b"-").and_then(|()| digits(&mut rest, 2))?;
    let day = after(&mut rest, b"-").and_then(|()| digits(&mut rest, 2))?;
    let (mut hour, mut minute, mut second, mut offset) = (0, 0, 0, 0);
    if let Some((b'T' | b't' | b' ', time)) = rest.split_first() {
        rest = time;
        hour = digits(&mut rest, 2)?;
        minute = after(&mut rest, b":").and_then(|()| digits(&mut rest, 2))?;
        if after(&mut rest, b":").is_some() {
            second = digits(&mut rest, 2)?;
            if after(&mut rest, b".").is_some() || after(&mut rest, b",").is_some() {
                let fraction = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                (fraction > 0).then_some(())?;
                rest = &rest[fraction..];
            }
        }
        // YAML's timestamps allow a space before the zone.
        if let Some((b' ', zone)) = rest.split_first() {
            rest = zone;
        }
        match rest.split_first() {
            Some((b'Z' | b'z', zone)) => rest = zone,
            Some((sign @ (b'+' | b'-'), zone)) => {
                rest = zone;
                let hours = digits(&mut rest, 2)?;
                let _ = after(&mut rest, b":");
                let minutes = if rest.is_empty() {
                    0
                } else {
                    digits(&mut rest, 2)?
                };
                (hours <= 23 && minutes <= 59).then_some(())?;
                offset = (hours * 60 + minutes) * 60 * if *sign == b'-' { -1 } else { 1 };
            }
            _ => {}
        }
    }
    let days_in_month = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let valid = rest.is_empty()
        && (1..=12).contains(&month)
        && (1..=days_in_month).contains(&day)
        && hour <= 23
        && minute <= 59
        && second <= 59;
    valid.then(|| {
        // `month` and `day` were checked above: 1..=12 and 1..=31.
        let seconds = levh_connector_sdk::days_from_civil(year, month as u32, day as u32) * 86_400
            + hour * 3600
            + minute * 60
            + second
            - offset;
        levh_connector_sdk::rfc3339_utc(seconds)
    })
}

/// `count` ASCII digits from the front of `rest`, as a number.
fn digits(rest: &mut &[u8], count: usize) -> Option<i64> {
    let (number, after) = rest.split_at_checked(count)?;
    if !number.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *rest = after;
    Some(number.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0')))
}

/// Consumes `separator` from the front of `rest`, if it is there.
fn after(rest: &mut &[u8], separator: &[u8]) -> Option<()> {
    *rest = rest.strip_prefix(separator)?;
    Some(())
}

/// What the body's Markdown says besides its text.
struct Scanned {
    tags: Vec<String>,
    links: Vec<String>,
    /// The text of the heading the note opens with, if it opens with one.
    first_heading: Option<String>,
}

/// Tags, wikilinks and the opening heading of a note's body. Code blocks, inline code and
/// HTML are skipped: a colour `#ff0000` or a `[[` in a snippet is not the note's.
fn scan(body: &str) -> Scanned {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut scanned = Scanned {
        tags: Vec::new(),
        links: Vec::new(),
        first_heading: None,
    };
    let mut in_code_block = false;
    // None: no block seen yet; Some(true): inside the opening heading; Some(false): past it.
    let mut in_first_heading: Option<bool> = None;
    for event in TextMergeStream::new(MarkdownParser::new_ext(body, options)) {
        match event {
            Markdown::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Markdown::End(TagEnd::CodeBlock) => in_code_block = false,
            Markdown::Start(Tag::Heading { .. }) if in_first_heading.is_none() => {
                in_first_heading = Some(true);
                scanned.first_heading = Some(String::new());
            }
            Markdown::End(TagEnd::Heading(_)) => in_first_heading = Some(false),
            Markdown::Start(
                Tag::Link {
                    link_type: LinkType::WikiLink { .. },
                    dest_url,
                    ..
                }
                | Tag::Image {
                    link_type: LinkType::WikiLink { .. },
                    dest_url,
                    ..
                },
            ) => {
                // `Runbook#Rollback` links to `Runbook`; a table's `Target\|alias` is
                // unescaped by the table, and a stray `\` before a `#` is not the name's.
                let target = dest_url
                    .split('#')
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('\\')
                    .trim()
                    .to_owned();
                if !target.is_empty() && !scanned.links.contains(&target) {
                    scanned.links.push(target);
                }
            }
            Markdown::Text(text) if !in_code_block => {
                if in_first_heading == Some(true)
                    && let Some(heading) = &mut scanned.first_heading
                {
                    heading.push_str(&text);
                }
                for tag in tags_in(&text) {
                    if !scanned.tags.iter().any(|t| t == tag) {
                        scanned.tags.push(tag.to_owned());
                    }
                }
            }
            Markdown::Start(_) if in_first_heading.is_none() => in_first_heading = Some(false),
            _ => {}
        }
    }
    scanned
}

/// `#tags` in a run of text: `#` then a letter, then letters, digits, `_`, `-` or `/`.
fn tags_in(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '.' || c == ';')
        .filter_map(|word| word.strip_prefix('#'))
        .filter(|tag| {
            tag.chars().next().is_some_and(|c| c.is_alphabetic())
                && tag
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_tags_and_links() {
        let text = "---\ntitle: Atlas launch\ndate: 2026-03-02\ntags: [project, launch]\naliases:\n  - atlas\n---\n# Plan\nShip with [[Ada Lovelace|Ada]] and [[Runbook#Rollback]]. #release #q1/plan\n";
        let note = parse("projects/atlas.md", text.as_bytes()).unwrap();
        assert_eq!(note.title, "Atlas launch");
        assert_eq!(note.tags, ["project", "launch", "release", "q1/plan"]);
        assert_eq!(note.links, ["Ada Lovelace", "Runbook"]);
        assert_eq!(note.date.as_deref(), Some("2026-03-02T00:00:00Z"));
        assert_eq!(note.front_matter["aliases"], json!(["atlas"]));
        assert!(note.body.starts_with("# Plan"));
    }

    #[test]
    fn plain_notes_and_bad_ones() {
        let note = parse("inbox/idea.md", b"Just an idea about #caching").unwrap();
        assert_eq!(note.title, "idea");
        assert_eq!(note.tags, ["caching"]);
        assert!(
            parse("x.md", b"---\ntitle: never closed\n")
                .unwrap_err()
                .contains("never ends")
        );
        assert!(
            parse("y.md", &[0xff, 0xfe])
                .unwrap_err()
                .contains("not UTF-8")
        );
        assert!(
            parse("z.md", b"# 1 heading, not a tag")
                .unwrap()
                .tags
                .is_empty()
        );
    }

    #[test]
    fn front_matter_keeps_yaml_types() {
        let text = "---\ndraft: true\nrating: 4\nratio: 0.5\nstatus: \"4\"\nowner: Ada\ntags:\n  - project\nreview:\n  due: 2024-04-01\n  done: false\n---\nbody";
        let note = parse("typed.md", text.as_bytes()).unwrap();
        assert_eq!(
            Value::Object(note.front_matter),
            json!({
                "draft": true,
                "rating": 4,
                "ratio": 0.5,
                "status": "4",
                "owner": "Ada",
                "tags": ["project"],
                "review": { "due": "2024-04-01", "done": false },
            })
        );
        let odd = parse("odd.md", b"---\n4: four\nbig: .inf\nempty:\n---\n").unwrap();
        assert_eq!(
            Value::Object(odd.front_matter),
            json!({ "4": "four", "big": ".inf", "empty": null })
        );
        let empty = parse("empty.md", b"---\n---\n- a list item\n").unwrap();
        assert!(empty.front_matter.is_empty());
        assert_eq!(
            empty.body, "- a list item\n",
            "the body keeps its first dash"
        );
    }

    #[test]
    fn dates_in_the_shapes_notes_write_them() {
        for (written, expected) in [
            ("2024-03-05", "2024-03-05T00:00:00Z"),
            ("2024-03-05 14:30", "2024-03-05T14:30:00Z"),
            ("2024-03-05T14:30", "2024-03-05T14:30:00Z"),
            ("2024-03-05T14:30:15", "2024-03-05T14:30:15Z"),
            ("2024-03-05T14:30:00Z", "2024-03-05T14:30:00Z"),
            ("2024-03-05T14:30:00+01:00", "2024-03-05T13:30:00Z"),
            ("2024-03-05 14:30:00.250-05:00", "2024-03-05T19:30:00Z"),
            ("2024-03-05T23:30:00 -0100", "2024-03-06T00:30:00Z"),
            ("2024-02-29", "2024-02-29T00:00:00Z"),
            ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
            ("\"2024-03-05\"", "2024-03-05T00:00:00Z"),
            ("'2024-03-05 14:30'", "2024-03-05T14:30:00Z"),
        ] {
            let text = format!("---\ndate: {written}\n---\nbody");
            let note = parse("dated.md", text.as_bytes()).unwrap();
            assert_eq!(note.date.as_deref(), Some(expected), "{written}");
        }
        for unreadable in [
            "next Tuesday",
            "2024-13-45",
            "2024",
            "20240305",
            "2024-03-05 25:00",
        ] {
            let text = format!("---\ndate: {unreadable}\n---\nbody");
            let note = parse("undated.md", text.as_bytes()).unwrap();
            assert_eq!(note.date, None, "{unreadable}: left to the file's time");
            assert_eq!(note.body, "body");
        }
    }

    proptest::proptest! {
        /// The hand-written date reader agrees with jiff, the library the host reads
        /// occurred-at with, on any time in any offset.
        #[test]
        fn dates_read_as_jiff_reads_them(
            seconds in -2_208_988_800i64..4_102_444_800, // 1900 to 2100
            offset_minutes in -(23 * 60 + 59)..=(23 * 60 + 59),
        ) {
            let at = jiff::Timestamp::from_second(seconds).unwrap();
            let zone = jiff::tz::TimeZone::fixed(
                jiff::tz::Offset::from_seconds(offset_minutes * 60).unwrap(),
            );
            let written = at.to_zoned(zone).strftime("%Y-%m-%d %H:%M:%S%:z").to_string();
            proptest::prop_assert_eq!(date_time(&written), Some(at.to_string()), "{}", written);
        }
    }

    #[test]
    fn the_date_comes_from_created_a_heading_or_a_daily_notes_name() {
        let created = parse("a.md", b"---\ndate: someday\ncreated: 2024-03-05\n---\n").unwrap();
        assert_eq!(created.date.as_deref(), Some("2024-03-05T00:00:00Z"));
        let heading = parse("b.md", b"# 2024-03-07 Planning\n\nAgenda").unwrap();
        assert_eq!(heading.date.as_deref(), Some("2024-03-07T00:00:00Z"));
        let later = parse("c.md", b"Intro\n\n# 2024-03-07 history\n").unwrap();
        assert_eq!(
            later.date, None,
            "only the heading a note opens with dates it"
        );
        let daily = parse("daily/2026-03-02.md", b"standup").unwrap();
        assert_eq!(daily.date.as_deref(), Some("2026-03-02T00:00:00Z"));
        assert_eq!(parse("ideas.md", b"# Ideas").unwrap().date, None);
    }

    #[test]
    fn a_tables_escaped_pipe_separates_the_alias() {
        let text = "| Page | Why |\n| --- | --- |\n| [[Tags\\|tag list]] | see [[Roadmap#Q2\\|the plan]] |\n";
        let note = parse("table.md", text.as_bytes()).unwrap();
        assert_eq!(note.links, ["Tags", "Roadmap"]);
        assert!(note.body.contains("tag list"));
    }

    #[test]
    fn code_yields_no_tags_or_links_in_callouts_too() {
        let text = "> [!note] Colours\n> ```css\n> .warning { color: #ff0000; } /* [[NotALink]] */\n> ```\n> Use it for #design only.\n\n```\n#notatag [[Nope]]\n```\n\n    #indented [[Nope2]]\n\nInline `#code [[Nope3]]` and [[Real]].\n";
        let note = parse("callout.md", text.as_bytes()).unwrap();
        assert_eq!(note.tags, ["design"]);
        assert_eq!(note.links, ["Real"]);
    }

    #[test]
    fn invalid_front_matter_is_named_and_the_note_kept_without_properties() {
        let error = |name: &str, text: &str| {
            let note = parse(name, text.as_bytes()).unwrap();
            assert!(note.front_matter.is_empty(), "{note:?}");
            let error = note.front_matter_error.clone().unwrap();
            assert_eq!(note.metadata()["front_matter_error"], error.as_str());
            (note, error)
        };
        let (bad, message) = error("bad.md", "---\ntitle: ok\nowner: [Ada\n---\nbody");
        assert!(message.starts_with("front matter line "), "{message}");
        assert_eq!(bad.body, "body");
        assert_eq!(bad.title, "bad");
        let (_, twice) = error("twice.md", "---\ntitle: a\ntitle: b\n---\n");
        assert_eq!(twice, "front matter line 3: the key `title` appears twice");
        let (_, scalar) = error("scalar.md", "---\njust words\n---\n");
        assert!(
            scalar.contains("not a list of `key: value` properties"),
            "{scalar}"
        );
    }

    #[test]
    fn hostile_front_matter_is_refused_not_followed() {
        let refused = |text: &str| {
            parse("hostile.md", text.as_bytes())
                .unwrap()
                .front_matter_error
                .unwrap()
        };
        let deep = format!("---\n{}1\n---\n", "- ".repeat(5_000));
        assert!(refused(&deep).contains("nested deeper than 64 levels"));
        let flow = format!("---\nx: {}\n---\n", "[".repeat(1_000));
        assert!(!refused(&flow).is_empty());
        let mut bomb = String::from("---\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let previous = format!("*a{}", level - 1);
            bomb.push_str(&format!(
                "a{level}: &a{level} [{}]\n",
                [previous.as_str(); 10].join(", ")
            ));
        }
        bomb.push_str("---\n");
        assert!(refused(&bomb).contains("aliases copy more than"));
        let alias = parse("alias.md", b"---\nowner: &o Ada\nreviewer: *o\n---\n").unwrap();
        assert_eq!(alias.front_matter["reviewer"], "Ada");
    }

    #[test]
    fn the_vault_walk_skips_settings_and_attachments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".obsidian")).unwrap();
        std::fs::write(dir.path().join(".obsidian/app.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.path().join("daily")).unwrap();
        std::fs::write(dir.path().join("daily/2026-03-02.md"), "standup notes").unwrap();
        std::fs::write(dir.path().join("home.md"), "welcome").unwrap();
        std::fs::write(dir.path().join("diagram.png"), [0u8; 4]).unwrap();
        let (notes, skipped) = vault_notes(dir.path()).unwrap();
        assert_eq!(notes, ["daily/2026-03-02.md", "home.md"]);
        assert_eq!(skipped, 1);
    }
}

/// The parser on damaged copies of the fixture vaults: never a panic (a panic aborts the
/// whole sync in the component), every failure one error message, every date one the host
/// reads.
#[cfg(test)]
mod mutated {
    use levh_connector_sdk::fixture;
    use levh_connector_sdk::mutations::mutated;
    use proptest::prelude::*;

    use super::parse;

    static FIXTURES: &[(&str, &[u8])] = &[
        fixture!("vault", "Atlas launch.md"),
        fixture!("vault", "broken.md"),
        fixture!("vault", "home.md"),
        fixture!("vault", "daily/2026-03-02.md"),
        fixture!("vault-edge", "Typed properties.md"),
        fixture!("vault-edge", "Table links.md"),
        fixture!("vault-edge", "Callout code.md"),
        fixture!("vault-edge", "Undated.md"),
    ];

    /// Markdown's and YAML's delimiters, and text that is more than one byte a character
    /// (a slice at a byte offset inside one panics).
    static TOKENS: &[&str] = &[
        "---\n",
        "\n---\n",
        "\u{feff}",
        "[[",
        "]]",
        "\\|",
        "|",
        "#",
        "# ",
        "> ",
        "```",
        "`",
        "\n",
        "\r\n",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "&a ",
        "*a",
        "!!str ",
        "\"",
        "'",
        "é",
        "日本",
        "🦀",
        "2024-03-05",
        "T14:30",
        "+01:00",
        "\\",
        "<",
        "![[",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn damaged_notes_never_panic((name, bytes) in mutated(FIXTURES, TOKENS)) {
            match parse(name, &bytes) {
                Ok(note) => {
                    let _ = note.metadata().to_string();
                    if let Some(date) = &note.date {
                        prop_assert!(date.parse::<jiff::Timestamp>().is_ok(), "{date}");
                    }
                }
                Err(message) => prop_assert!(!message.trim().is_empty()),
            }
        }
    }
}
