//! One `sync` call in plain Rust: the config read, the mailbox opened where the cursor
//! points, at most one page of messages parsed, and the cursor of the next page.
//!
//! The component only translates these types to WIT; tests and benches call [`fetch`]
//! natively on real files.
//!
//! Cursors (opaque to the host, saved after each stored page):
//! - mbox: `mbox:1:<offset>:<number>:<taken>:<fingerprint>`: the byte offset of the next
//!   message's `From ` line, its 1-based number, how many messages this run has read,
//!   and a hash of the bytes before the offset. A cursor that does not fit the file (the
//!   file was rewritten, or it is another connector config's cursor) is dropped and the
//!   sync starts from the top; appending to the mailbox keeps it valid.
//! - eml_dir: `dir:1:<index>:<taken>:<fingerprint>`: the index of the next file in the
//!   sorted list of `.eml` files, and a hash of that list.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use levh_connector_sdk::rfc3339_utc;

use crate::mbox::{MAX_MESSAGE_BYTES, MboxError, MboxReader};
use crate::parse::{Participant, Rejection, Rules, parse_message_at, stable_hash};

/// Messages (or .eml files) read per page.
pub const PAGE_SIZE: usize = 500;
/// Raw mailbox bytes read per page, at most (then the page ends early).
const PAGE_RAW_BYTES: u64 = 64 << 20;
/// Item text per page, at most (the host caps a page's size).
const PAGE_OUTPUT_BYTES: usize = 8 << 20;

/// The config keys that name the mailbox; exactly one is set.
pub const PATH_KEYS: [&str; 3] = ["mbox_path", "eml_path", "eml_dir"];
/// `max_messages` by default.
pub const DEFAULT_MAX_MESSAGES: u64 = 10_000;
/// `body_chars` by default.
pub const DEFAULT_BODY_CHARS: u64 = 2000;
/// `past_days` by default: no age limit.
pub const DEFAULT_PAST_DAYS: u64 = 0;
/// `exclude_senders` by default.
pub const DEFAULT_EXCLUDE_SENDERS: &str =
    "noreply,no-reply,donotreply,do-not-reply,mailer-daemon,notifications";

/// Where the mail is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mailbox {
    /// One mbox file.
    Mbox(PathBuf),
    /// One message file.
    Eml(PathBuf),
    /// A directory of `.eml` files (searched recursively).
    EmlDir(PathBuf),
}

/// What a sync call was asked.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The mailbox.
    pub mailbox: Mailbox,
    /// Skip messages older than this many days (0: keep all).
    pub past_days: u64,
    /// Read at most this many messages per sync run (0: no cap).
    pub max_messages: u64,
    /// Longest body excerpt kept, in characters.
    pub body_chars: usize,
    /// Senders to skip.
    pub rules: Rules,
    /// Now, as Unix seconds (`past_days` counts back from it).
    pub now: i64,
    /// Messages per page.
    pub page_size: usize,
}

impl Settings {
    /// Reads the connector config. The error names the key that is wrong.
    pub fn from_config(config: &[(String, String)], now: i64) -> Result<Self, String> {
        let raw = |key: &str| config.iter().find(|(k, _)| k == key).map(|(_, v)| v.trim());
        let set: Vec<(&str, &str)> = PATH_KEYS
            .iter()
            .filter_map(|&key| raw(key).filter(|v| !v.is_empty()).map(|v| (key, v)))
            .collect();
        let mailbox = match set.as_slice() {
            [] => return Err("set one of `mbox_path`, `eml_path` or `eml_dir`".into()),
            [(key, value)] => {
                let path = PathBuf::from(value);
                match *key {
                    "mbox_path" => Mailbox::Mbox(path),
                    "eml_path" => Mailbox::Eml(path),
                    _ => Mailbox::EmlDir(path),
                }
            }
            several => {
                let keys: Vec<String> = several.iter().map(|(k, _)| format!("`{k}`")).collect();
                return Err(format!(
                    "set only one of `mbox_path`, `eml_path` and `eml_dir`, not {}",
                    keys.join(" and ")
                ));
            }
        };
        let integer = |key: &str, default: u64| -> Result<u64, String> {
            match raw(key) {
                None => Ok(default),
                Some(text) => text
                    .parse()
                    .map_err(|_| format!("`{key}` must be a whole number, got {text:?}")),
            }
        };
        let exclude_senders = raw("exclude_senders")
            .unwrap_or(DEFAULT_EXCLUDE_SENDERS)
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        Ok(Self {
            mailbox,
            past_days: integer("past_days", DEFAULT_PAST_DAYS)?,
            max_messages: integer("max_messages", DEFAULT_MAX_MESSAGES)?,
            body_chars: usize::try_from(integer("body_chars", DEFAULT_BODY_CHARS)?)
                .unwrap_or(usize::MAX),
            rules: Rules { exclude_senders },
            now,
            page_size: PAGE_SIZE,
        })
    }

    fn oldest(&self) -> Option<i64> {
        (self.past_days > 0).then(|| {
            self.now.saturating_sub(
                i64::try_from(self.past_days.saturating_mul(86_400)).unwrap_or(i64::MAX),
            )
        })
    }
}

/// One message, ready to become a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Message-ID, or a stable hash when it has none.
    pub source_id: String,
    /// Subject.
    pub title: String,
    /// Headers and body excerpt.
    pub content: String,
    /// Date, RFC 3339 UTC.
    pub occurred_at: String,
    /// Sender, recipients, cc.
    pub people: Vec<Participant>,
    /// `file:<path>`, `#<n>` in an mbox.
    pub source_uri: String,
    /// A JSON object.
    pub metadata: String,
}

/// A message or file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The message, as far as known.
    pub source_id: Option<String>,
    /// `inbox.mbox#3`, or the .eml file's name.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

/// One page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// Messages read.
    pub items: Vec<Item>,
    /// Messages or files that could not be.
    pub errors: Vec<Problem>,
    /// Messages skipped because of `exclude_senders`.
    pub excluded: u64,
    /// Messages skipped because of `past_days`.
    pub too_old: u64,
    /// Every message skipped on purpose (excluded or too old): its source id and why.
    pub skipped: Vec<(String, String)>,
    /// Messages (or files) read from the mailbox in this call, whatever became of them.
    pub read: u64,
    /// The saved cursor did not fit the mailbox; this page starts from the top.
    pub restarted: bool,
    /// This call began reading the mailbox from its first message: a full listing starts.
    pub listing_started: bool,
    /// This call read the mailbox to its end (no cap, no broken message): with
    /// `listing_started` on this or an earlier page of the run, every message was named.
    pub listing_complete: bool,
    /// Where the next call continues.
    pub next_cursor: Option<String>,
    /// Nothing more this run.
    pub done: bool,
}

/// Why a whole call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A config value is wrong; names the key.
    InvalidConfig(String),
}

/// Reads the next page of the mailbox after `cursor`.
pub fn fetch(settings: &Settings, cursor: Option<&str>) -> Result<Page, Failure> {
    match &settings.mailbox {
        Mailbox::Mbox(path) => Ok(fetch_mbox(settings, path, cursor)),
        Mailbox::Eml(path) => {
            let mut page = Page {
                done: true,
                ..Page::default()
            };
            let name = file_name(path);
            read_eml(settings, &mut page, path, &name);
            Ok(page)
        }
        Mailbox::EmlDir(dir) => fetch_dir(settings, dir, cursor),
    }
}

/// Where a message came from.
struct Origin<'a> {
    /// The file's name (for the fallback id).
    file: &'a str,
    /// Where an error points.
    location: String,
    /// The item's source URI.
    uri: String,
    /// Its number in the file (0 for an .eml).
    position: u64,
    /// The date of its mbox postmark (for an `.eml`, its file's modification time): the
    /// last fallback for a message with neither `Date:` nor `Received:`.
    postmark_date: Option<i64>,
}

/// Parses one message into an item, an error, or a skip count.
fn take(settings: &Settings, page: &mut Page, raw: &[u8], origin: Origin<'_>) {
    page.read += 1;
    let email = match parse_message_at(raw, &settings.rules, origin.postmark_date) {
        Ok(email) => email,
        Err(Rejection::Excluded { message_id, reason }) => {
            page.excluded += 1;
            let source_id = message_id.unwrap_or_else(|| origin.location.clone());
            page.skipped.push((source_id, reason));
            return;
        }
        Err(Rejection::Invalid(message)) => {
            page.errors.push(Problem {
                source_id: Some(origin.location.clone()),
                location: origin.location,
                message,
            });
            return;
        }
    };
    let source_id = email.message_id.clone().unwrap_or_else(|| {
        let hash = stable_hash(&[
            origin.file.as_bytes(),
            origin.position.to_string().as_bytes(),
            email.subject.as_bytes(),
        ]);
        format!("no-message-id:{hash:016x}")
    });
    if settings.oldest().is_some_and(|oldest| email.date < oldest) {
        page.too_old += 1;
        page.skipped.push((
            source_id,
            format!(
                "dated {}, older than past_days ({} days)",
                rfc3339_utc(email.date),
                settings.past_days
            ),
        ));
        return;
    }
    page.items.push(Item {
        source_id,
        title: email.title(),
        content: email.content(settings.body_chars),
        occurred_at: rfc3339_utc(email.date),
        people: email.people().cloned().collect(),
        source_uri: origin.uri,
        metadata: email.metadata().to_string(),
    });
}

fn output_bytes(page: &Page) -> usize {
    page.items
        .iter()
        .map(|i| i.content.len() + i.metadata.len() + i.title.len())
        .sum()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn problem(location: &str, message: impl Into<String>) -> Problem {
    Problem {
        source_id: Some(location.to_owned()),
        location: location.to_owned(),
        message: message.into(),
    }
}

// ---- mbox ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MboxCursor {
    offset: u64,
    number: u64,
    taken: u64,
}

impl Default for MboxCursor {
    fn default() -> Self {
        Self {
            offset: 0,
            number: 1,
            taken: 0,
        }
    }
}

/// A hash of what lies before `offset`: the first 4 KiB (or less) and the 256 bytes just
/// before it. Appending to the file leaves it unchanged; rewriting it does not.
fn fingerprint(path: &Path, offset: u64) -> std::io::Result<u64> {
    let mut file = File::open(path)?;
    let head_len = offset.min(4096);
    let mut head = vec![0; head_len as usize];
    file.read_exact(&mut head)?;
    let tail_start = offset.saturating_sub(256);
    let mut tail = vec![0; (offset - tail_start) as usize];
    file.seek(SeekFrom::Start(tail_start))?;
    file.read_exact(&mut tail)?;
    let mut next = [0; 5];
    file.read_exact(&mut next)?;
    Ok(stable_hash(&[&head, &tail, &next]))
}

fn mbox_cursor_text(path: &Path, cursor: MboxCursor) -> Option<String> {
    let fp = fingerprint(path, cursor.offset).ok()?;
    Some(format!(
        "mbox:1:{}:{}:{}:{fp:016x}",
        cursor.offset, cursor.number, cursor.taken
    ))
}

/// The cursor, if it is an mbox cursor that fits this file.
fn read_mbox_cursor(path: &Path, text: &str) -> Option<MboxCursor> {
    let mut fields = text.strip_prefix("mbox:1:")?.split(':');
    let offset: u64 = fields.next()?.parse().ok()?;
    let number: u64 = fields.next()?.parse().ok()?;
    let taken: u64 = fields.next()?.parse().ok()?;
    let fp = u64::from_str_radix(fields.next()?, 16).ok()?;
    if fields.next().is_some() || number == 0 {
        return None;
    }
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut postmark = [0; 5];
    file.read_exact(&mut postmark).ok()?;
    (&postmark == b"From " && fingerprint(path, offset).ok()? == fp).then_some(MboxCursor {
        offset,
        number,
        taken,
    })
}

fn fetch_mbox(settings: &Settings, path: &Path, cursor: Option<&str>) -> Page {
    let name = file_name(path);
    let mut page = Page {
        done: true,
        ..Page::default()
    };
    let start = match cursor {
        None => MboxCursor::default(),
        Some(text) => read_mbox_cursor(path, text).unwrap_or_else(|| {
            page.restarted = true;
            MboxCursor::default()
        }),
    };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) => {
            page.errors.push(problem(&name, e.to_string()));
            return page;
        }
    };
    if file.seek(SeekFrom::Start(start.offset)).is_err() {
        page.errors.push(problem(&name, "cannot seek in the file"));
        return page;
    }
    page.listing_started = start.offset == 0;
    let mut reader = MboxReader::new(BufReader::with_capacity(256 << 10, file), start.offset);
    let mut number = start.number;
    let mut taken = start.taken;
    let mut raw_bytes = 0u64;
    let mut count = 0usize;
    // Why the loop stopped with messages left: the page is full, or the run's cap.
    let mut stop = None;
    loop {
        if settings.max_messages > 0 && taken >= settings.max_messages {
            stop = Some(Stop::Cap);
            break;
        }
        if count >= settings.page_size.max(1)
            || raw_bytes >= PAGE_RAW_BYTES
            || output_bytes(&page) >= PAGE_OUTPUT_BYTES
        {
            stop = Some(Stop::PageFull);
            break;
        }
        match reader.next_message() {
            Ok(None) => {
                if start.offset == 0 && count == 0 {
                    page.errors.push(problem(&name, "empty file: no messages"));
                } else {
                    page.listing_complete = true;
                }
                break;
            }
            Ok(Some(message)) => {
                count += 1;
                taken += 1;
                raw_bytes += message.file_bytes;
                let location = format!("{name}#{number}");
                if message.oversized {
                    page.read += 1;
                    page.errors.push(problem(
                        &location,
                        format!(
                            "message larger than {} MiB: skipped",
                            MAX_MESSAGE_BYTES >> 20
                        ),
                    ));
                } else {
                    let origin = Origin {
                        file: &name,
                        uri: format!("file:{}#{number}", path.display()),
                        location,
                        position: number,
                        postmark_date: message.postmark_date,
                    };
                    take(settings, &mut page, &message.bytes, origin);
                }
                number += 1;
            }
            Err(MboxError::NotMbox) => {
                page.errors
                    .push(problem(&name, MboxError::NotMbox.to_string()));
                break;
            }
            Err(e) => {
                page.errors
                    .push(problem(&format!("{name}#{number}"), e.to_string()));
                break;
            }
        }
    }
    let Some(stop) = stop else {
        return page;
    };
    // Where the next message starts: after the last one read, or where this call began.
    let resume = match reader.next_offset() {
        Some(offset) => offset,
        None if count == 0 => start.offset,
        None => return page,
    };
    let taken = if stop == Stop::Cap { 0 } else { taken };
    page.next_cursor = mbox_cursor_text(
        path,
        MboxCursor {
            offset: resume,
            number,
            taken,
        },
    );
    // At the cap the run ends; the next run continues where this one stopped.
    page.done = stop == Stop::Cap || page.next_cursor.is_none();
    page
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    PageFull,
    Cap,
}

// ---- .eml ---------------------------------------------------------------------------

fn read_eml(settings: &Settings, page: &mut Page, path: &Path, name: &str) {
    let (size, modified) = match std::fs::metadata(path) {
        Ok(meta) => (meta.len(), meta.modified().ok()),
        Err(e) => {
            page.errors.push(problem(name, e.to_string()));
            return;
        }
    };
    if size > MAX_MESSAGE_BYTES as u64 {
        page.read += 1;
        page.errors.push(problem(
            name,
            format!(
                "message larger than {} MiB: skipped",
                MAX_MESSAGE_BYTES >> 20
            ),
        ));
        return;
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            page.errors.push(problem(name, e.to_string()));
            return;
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        page.read += 1;
        page.errors.push(problem(name, "empty file"));
        return;
    }
    let origin = Origin {
        file: name,
        location: name.to_owned(),
        uri: format!("file:{}", path.display()),
        position: 0,
        // A saved message with neither Date nor Received is dated by its file, as the
        // other connectors date what carries no date of its own.
        postmark_date: modified
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_secs()).ok()),
    };
    take(settings, page, &bytes, origin);
}

/// The `.eml` files under `dir`, as sorted relative paths (hidden entries skipped).
pub fn eml_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = pending.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            // The top folder must be readable; a sub-folder that is not is left out.
            Err(e) if prefix.is_empty() => return Err(e),
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let relative = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push((entry.path(), relative));
            } else if Path::new(&name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("eml"))
            {
                found.push(relative);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn fetch_dir(settings: &Settings, dir: &Path, cursor: Option<&str>) -> Result<Page, Failure> {
    let files = eml_files(dir)
        .map_err(|e| Failure::InvalidConfig(format!("`eml_dir` {}: {e}", dir.display())))?;
    let list_hash = stable_hash(&[files.join("\n").as_bytes()]);
    let mut page = Page {
        done: true,
        ..Page::default()
    };
    let (start, mut taken) = match cursor {
        None => (0, 0),
        Some(text) => read_dir_cursor(text, list_hash, files.len()).unwrap_or_else(|| {
            page.restarted = true;
            (0, 0)
        }),
    };
    page.listing_started = start == 0;
    let mut index = start;
    let mut stop = None;
    while index < files.len() {
        if settings.max_messages > 0 && taken >= settings.max_messages {
            stop = Some(Stop::Cap);
            break;
        }
        if index - start >= settings.page_size.max(1) || output_bytes(&page) >= PAGE_OUTPUT_BYTES {
            stop = Some(Stop::PageFull);
            break;
        }
        let name = &files[index];
        read_eml(settings, &mut page, &dir.join(name), name);
        index += 1;
        taken += 1;
    }
    if let Some(stop) = stop {
        let taken = if stop == Stop::Cap { 0 } else { taken };
        page.next_cursor = Some(format!("dir:1:{index}:{taken}:{list_hash:016x}"));
        page.done = stop == Stop::Cap;
    } else {
        // Every file to the end was read (a file that failed is named as an error).
        page.listing_complete = true;
    }
    Ok(page)
}

fn read_dir_cursor(text: &str, list_hash: u64, files: usize) -> Option<(usize, u64)> {
    let mut fields = text.strip_prefix("dir:1:")?.split(':');
    let index: usize = fields.next()?.parse().ok()?;
    let taken: u64 = fields.next()?.parse().ok()?;
    let hash = u64::from_str_radix(fields.next()?, 16).ok()?;
    (fields.next().is_none() && hash == list_hash && index <= files).then_some((index, taken))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::io::Write;

    use super::*;

    /// 2026-03-20T12:00:00Z, the integration tests' `LEVH_NOW`.
    const NOW: i64 = 1_774_008_000;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/email")
    }

    fn settings(key: &str, path: &Path) -> Settings {
        let config = vec![(key.to_owned(), path.display().to_string())];
        Settings::from_config(&config, NOW).unwrap()
    }

    fn config(pairs: &[(&str, &str)]) -> Result<Settings, String> {
        let config: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::from_config(&config, NOW)
    }

    /// An mbox of `n` small distinct messages; `from_line` numbers them from 1.
    fn generated(n: usize) -> Vec<u8> {
        let mut mbox = Vec::new();
        for i in 1..=n {
            write!(
                mbox,
                "From sender{i}@example.com Mon Mar  2 08:15:00 2026\n\
                 Message-ID: <gen-{i}@example.com>\n\
                 Date: Mon, 02 Mar 2026 09:{:02}:00 +0100\n\
                 From: Sender {i} <sender{i}@example.com>\n\
                 To: ada@example.com\n\
                 Subject: Message number {i}\n\
                 \n\
                 Body of message {i}.\n\
                 >From the archive.\n\n",
                i % 60
            )
            .unwrap();
        }
        mbox
    }

    fn write_temp(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.mbox");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    /// Every page of one run: (pages, items' ids, the final cursor).
    fn run(settings: &Settings, mut cursor: Option<String>) -> (Vec<Page>, Vec<String>) {
        let mut pages = Vec::new();
        let mut ids = Vec::new();
        loop {
            let page = fetch(settings, cursor.as_deref()).unwrap();
            ids.extend(page.items.iter().map(|i| i.source_id.clone()));
            cursor = page.next_cursor.clone();
            let done = page.done || cursor.is_none();
            pages.push(page);
            if done {
                return (pages, ids);
            }
        }
    }

    #[test]
    fn config_needs_exactly_one_mailbox_and_whole_numbers() {
        assert_eq!(
            config(&[]).unwrap_err(),
            "set one of `mbox_path`, `eml_path` or `eml_dir`"
        );
        assert_eq!(
            config(&[("mbox_path", "/a"), ("eml_dir", "/b")]).unwrap_err(),
            "set only one of `mbox_path`, `eml_path` and `eml_dir`, not `mbox_path` and `eml_dir`"
        );
        assert_eq!(
            config(&[("eml_path", "/a"), ("past_days", "a week")]).unwrap_err(),
            "`past_days` must be a whole number, got \"a week\""
        );
        assert!(
            config(&[("eml_path", "/a"), ("max_messages", "-1")])
                .unwrap_err()
                .starts_with("`max_messages` must be a whole number")
        );
        let defaults = config(&[("eml_dir", "/m"), ("mbox_path", "  ")]).unwrap();
        assert_eq!(defaults.mailbox, Mailbox::EmlDir("/m".into()));
        assert_eq!(
            (
                defaults.past_days,
                defaults.max_messages,
                defaults.body_chars
            ),
            (0, 10_000, 2000)
        );
        assert!(
            defaults
                .rules
                .exclude_senders
                .contains(&"no-reply".to_owned())
        );
        let chosen = config(&[
            ("mbox_path", "/x"),
            ("exclude_senders", " Alerts@, ,billing "),
            ("body_chars", "10"),
        ])
        .unwrap();
        assert_eq!(chosen.rules.exclude_senders, ["alerts@", "billing"]);
        assert_eq!(chosen.body_chars, 10);
        let none = config(&[("mbox_path", "/x"), ("exclude_senders", "")]).unwrap();
        assert!(none.rules.exclude_senders.is_empty());
    }

    #[test]
    fn the_fixture_mailbox_gives_items_skips_noise_and_reports_the_bad_message() {
        let settings = settings("mbox_path", &fixtures().join("inbox.mbox"));
        let page = fetch(&settings, None).unwrap();
        assert!(page.done && page.next_cursor.is_none());
        // The ninth message has no Date header: its postmark dates it (#17).
        assert_eq!((page.items.len(), page.excluded, page.read), (8, 1, 9));
        assert_eq!(page.errors, []);
        assert_eq!(page.items[7].occurred_at, "2026-03-10T18:30:00Z");
        let reply = &page.items[5];
        assert_eq!(reply.source_id, "re-atlas-budget-1@example.com");
        assert_eq!(reply.title, "Re: Atlas budget review moved to Thursday");
        assert_eq!(reply.occurred_at, "2026-03-09T15:05:00Z");
        assert!(
            reply.source_uri.ends_with("inbox.mbox#7"),
            "{}",
            reply.source_uri
        );
        assert_eq!(
            reply
                .people
                .iter()
                .map(|p| (p.email.as_deref().unwrap(), p.role))
                .collect::<Vec<_>>(),
            [
                ("grace@example.com", "sender"),
                ("ada@example.com", "recipient"),
                ("linus@example.org", "cc")
            ]
        );
        let metadata: serde_json::Value = serde_json::from_str(&page.items[4].metadata).unwrap();
        assert_eq!(metadata["attachments"][0], "vendor-contract-signed.pdf");
    }

    #[test]
    fn past_days_skips_old_mail() {
        let mut settings = settings("mbox_path", &fixtures().join("inbox.mbox"));
        settings.past_days = 30;
        let page = fetch(&settings, None).unwrap();
        assert_eq!((page.items.len(), page.too_old), (7, 1));
        assert!(
            page.items
                .iter()
                .all(|i| i.source_id != "travel-2025@example.org")
        );
        settings.past_days = 16; // back to 2026-03-04T12:00Z: the 2, 3 and 4 March mails go too
        assert_eq!(fetch(&settings, None).unwrap().too_old, 4);
    }

    #[test]
    fn a_large_mailbox_pages_and_resumes_from_its_cursor_without_duplicates() {
        let (_dir, path) = write_temp(&generated(23));
        let mut settings = settings("mbox_path", &path);
        settings.page_size = 5;
        let (pages, ids) = run(&settings, None);
        assert_eq!(pages.len(), 5);
        assert!(pages[..4].iter().all(|p| !p.done && p.items.len() == 5));
        assert_eq!(pages[4].items.len(), 3);
        assert!(pages[4].done && pages[4].next_cursor.is_none());
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!((ids.len(), unique.len()), (23, 23));
        assert_eq!(ids[22], "gen-23@example.com");
        assert_eq!(
            pages[2].items[0].source_uri,
            format!("file:{}#11", path.display())
        );
        assert_eq!(
            pages[2].items[0].content.lines().last(),
            Some("From the archive.")
        );

        // a run killed after page 2 resumes at page 3 and reads only the rest
        let cursor = pages[1].next_cursor.clone();
        let (_, rest) = run(&settings, cursor);
        assert_eq!(rest, ids[10..]);
    }

    #[test]
    fn a_cursor_that_does_not_fit_the_mailbox_restarts_and_appending_keeps_it() {
        let (_dir, path) = write_temp(&generated(6));
        let mut settings = settings("mbox_path", &path);
        settings.page_size = 4;
        let first = fetch(&settings, None).unwrap();
        let cursor = first.next_cursor.clone().unwrap();
        assert!(cursor.starts_with("mbox:1:"), "{cursor}");

        // more mail appended: the cursor still fits
        let mut grown = generated(6);
        let extra = generated(8);
        let from_7 = extra
            .windows(15)
            .position(|w| w == b"From sender7@ex")
            .unwrap();
        grown.extend_from_slice(&extra[from_7..]);
        std::fs::write(&path, &grown).unwrap();
        let (_, ids) = run(&settings, Some(cursor.clone()));
        assert_eq!(ids.len(), 4, "{ids:?}");
        assert_eq!(ids[0], "gen-5@example.com");

        // the mailbox rewritten (first message gone): the cursor no longer fits
        let rewritten = &grown[grown
            .windows(15)
            .position(|w| w == b"From sender2@ex")
            .unwrap()..];
        std::fs::write(&path, rewritten).unwrap();
        let restarted = fetch(&settings, Some(&cursor)).unwrap();
        assert!(restarted.restarted);
        assert_eq!(restarted.items[0].source_id, "gen-2@example.com");

        for nonsense in [
            "",
            "mbox:1:x",
            "dir:1:0:0:00",
            "mbox:1:3:1:0:0000000000000000",
        ] {
            let page = fetch(&settings, Some(nonsense)).unwrap();
            assert!(page.restarted, "{nonsense}");
            assert_eq!(page.items[0].source_id, "gen-2@example.com");
        }
    }

    #[test]
    fn max_messages_caps_a_run_and_the_next_run_goes_on() {
        let (_dir, path) = write_temp(&generated(23));
        let mut settings = settings("mbox_path", &path);
        settings.page_size = 4;
        settings.max_messages = 10;
        let (pages, first) = run(&settings, None);
        assert_eq!(first.len(), 10);
        let last = pages.last().unwrap();
        assert!(last.done);
        let (pages, second) = run(&settings, last.next_cursor.clone());
        assert_eq!(second.len(), 10);
        assert_eq!(second[0], "gen-11@example.com");
        let (pages, third) = run(&settings, pages.last().unwrap().next_cursor.clone());
        assert_eq!(third.len(), 3);
        assert_eq!(third[2], "gen-23@example.com");
        assert!(
            pages.last().unwrap().next_cursor.is_none(),
            "the end: the next run starts over"
        );
    }

    #[test]
    fn an_eml_directory_gives_one_item_per_good_file_and_one_error_per_bad_one() {
        let settings = settings("eml_dir", &fixtures().join("eml"));
        let page = fetch(&settings, None).unwrap();
        assert!(page.done);
        let ids: Vec<&str> = page.items.iter().map(|i| i.source_id.as_str()).collect();
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[0], "kickoff-2026@example.com");
        assert!(ids[1].starts_with("no-message-id:"), "{ids:?}");
        // Cut off before its closing boundary: kept as far as it goes (#17).
        assert_eq!(ids[2], "slides-q1@example.com");
        let errors: Vec<(&str, &str)> = page
            .errors
            .iter()
            .map(|e| (e.location.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            errors,
            [
                ("empty.eml", "empty file"),
                ("garbage.eml", "not an email: no headers"),
            ]
        );
        let truncated: serde_json::Value = serde_json::from_str(&page.items[2].metadata).unwrap();
        assert_eq!(
            truncated["incomplete"],
            "multipart boundary \"q1-slides-boundary\" never closes"
        );
        let parking = &page.items[1];
        assert!(
            parking
                .content
                .contains("20 parking spaces in the basement"),
            "base64 body: {}",
            parking.content
        );
        // the fallback id is stable
        assert_eq!(fetch(&settings, None).unwrap().items[1].source_id, ids[1]);

        let mut paged = settings.clone();
        paged.page_size = 2;
        let (pages, paged_ids) = run(&paged, None);
        assert_eq!(pages.len(), 3);
        assert_eq!(paged_ids, ids);
        assert_eq!(pages.iter().map(|p| p.errors.len()).sum::<usize>(), 2);
    }

    #[test]
    fn one_eml_file_and_bad_mailboxes() {
        let one = fetch(
            &settings("eml_path", &fixtures().join("eml/kickoff.eml")),
            None,
        )
        .unwrap();
        assert_eq!(one.items.len(), 1);
        assert!(
            one.items[0]
                .content
                .contains("Atlas kickoff is on Monday 16 March")
        );
        assert!(one.items[0].content.starts_with(
            "From: Ada Lovelace <ada@example.com>\nTo: Atlas Team <atlas-team@example.com>\n"
        ));

        let not_mbox = fetch(
            &settings("mbox_path", &fixtures().join("eml/kickoff.eml")),
            None,
        )
        .unwrap();
        assert_eq!(not_mbox.errors.len(), 1);
        assert_eq!(not_mbox.errors[0].location, "kickoff.eml");
        assert!(not_mbox.errors[0].message.starts_with("not an mbox"));

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.mbox");
        std::fs::write(&empty, b"").unwrap();
        let page = fetch(&settings("mbox_path", &empty), None).unwrap();
        assert_eq!(
            (
                page.errors[0].location.as_str(),
                page.errors[0].message.as_str()
            ),
            ("empty.mbox", "empty file: no messages")
        );
        let missing = fetch(&settings("mbox_path", &dir.path().join("gone.mbox")), None).unwrap();
        assert_eq!(missing.errors[0].location, "gone.mbox");
        assert!(matches!(
            fetch(&settings("eml_dir", &dir.path().join("nowhere")), None),
            Err(Failure::InvalidConfig(m)) if m.starts_with("`eml_dir` ")
        ));
    }
}
