//! `.ics` files (RFC 5545) into the event occurrences that fall inside a time window.
//!
//! The libraries do the standard's work: `icalendar` parses (line unfolding, components,
//! parameters, TEXT unescaping), `rrule` expands recurrence rules with their EXDATE and
//! RDATE sets, `chrono-tz` knows the zones. What is written here is glue: reading values
//! into instants (`time`), applying `RECURRENCE-ID` overrides, cutting to the window, and
//! naming every problem so one bad event never costs the rest of its file.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use icalendar::parser::{Component, Property, read_components};
use rrule::{RRule, RRuleError, RRuleSet, Unvalidated};

use crate::identity::uid;
use crate::property::{all, find, param, text, unfolded, zoned_value};
use crate::records::{self, Record, RecordKind};
use crate::scan::{Block, Scan, clip, scan};
use crate::time::{Length, Stamp};
use crate::zones::{Zone, Zones};

/// The most days `past_days` or `future_days` may reach back or ahead (a century).
pub const MAX_WINDOW_DAYS: u64 = 36_525;
/// Occurrences kept per event inside the window; of a rule making more (a weekly series
/// since 2016 in a window of decades, every minute for a month), the ones nearest now are
/// kept and the cut is named in the report as a skip.
pub const MAX_OCCURRENCES: usize = 1_000;
/// Recurrences stepped through per event before giving up (a rule from 1970 stepping by
/// the second would otherwise never reach the window).
const MAX_STEPS: usize = 500_000;

/// The span of time a sync looks at: [now − past days, now + future days].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// The sync's now: a series too long to keep whole keeps the occurrences nearest it.
    pub now: DateTime<Utc>,
}

impl Window {
    /// The window around `now`; days beyond [`MAX_WINDOW_DAYS`] are refused.
    pub fn around(now: DateTime<Utc>, past_days: u64, future_days: u64) -> Result<Self, String> {
        let days = |key: &str, n: u64| {
            (n <= MAX_WINDOW_DAYS)
                .then(|| Duration::days(n as i64))
                .ok_or_else(|| format!("`{key}` must be at most {MAX_WINDOW_DAYS}, got {n}"))
        };
        Ok(Window {
            start: now - days("past_days", past_days)?,
            end: now + days("future_days", future_days)?,
            now,
        })
    }

    /// Whether an occurrence from `start` to `end` overlaps the window (an event still
    /// going on when the window opens counts).
    fn overlaps(&self, start: DateTime<Utc>, end: DateTime<Utc>) -> bool {
        start <= self.end && end.max(start) >= self.start
    }
}

/// Someone in an event: its organizer or an attendee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attendee {
    /// `CN`.
    pub name: Option<String>,
    /// From a `mailto:` address.
    pub email: Option<String>,
    /// `PARTSTAT`, lowercased (accepted, declined, tentative), when answered.
    pub status: Option<String>,
}

impl Attendee {
    fn label(&self) -> String {
        let mut label = match (&self.name, &self.email) {
            (Some(name), Some(email)) => format!("{name} <{email}>"),
            (Some(name), None) => name.clone(),
            (None, Some(email)) => email.clone(),
            (None, None) => String::new(),
        };
        if let Some(status) = &self.status {
            label.push_str(&format!(" ({status})"));
        }
        label
    }
}

/// One occurrence of an event: what becomes one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// `<file>#<UID>`, or `<file>#<UID>@<original start>` for one of a series.
    pub source_id: String,
    /// The file, relative to the configured path.
    pub file: String,
    pub uid: String,
    /// `SUMMARY`.
    pub title: String,
    pub start: DateTime<Utc>,
    /// Exclusive; equal to `start` for an event without an end or duration.
    pub end: DateTime<Utc>,
    /// Dated (`VALUE=DATE`): `start` and `end` are midnights UTC.
    pub all_day: bool,
    /// The zone the start was written in, when not UTC.
    pub time_zone: Option<Zone>,
    pub location: Option<String>,
    pub description: Option<String>,
    pub organizer: Option<Attendee>,
    pub attendees: Vec<Attendee>,
    /// Part of a series (`RRULE` or `RDATE`).
    pub recurring: bool,
    /// The series' `RRULE` as written, when it has one.
    pub rule: Option<String>,
    /// `STATUS` (confirmed, tentative, cancelled), lowercased.
    pub status: Option<String>,
}

pub use crate::time::rfc3339;

impl Occurrence {
    /// Readable text: the title first (so the host does not prepend it again), then when,
    /// where, who, and the description.
    pub fn content(&self) -> String {
        let mut when = format!("When: {}", self.when());
        if let Some(local) = self.local_time() {
            when.push_str(&format!("\nLocal time: {local}"));
        }
        self.content_with(&when)
    }

    /// The content with `when` (one or more lines) in place of the time lines: a series
    /// lists its occurrences there.
    pub fn content_with(&self, when: &str) -> String {
        let mut text = format!("{}\n{when}", self.title);
        if let Some(status) = &self.status
            && status != "confirmed"
        {
            text.push_str(&format!("\nStatus: {status}"));
        }
        if let Some(location) = &self.location {
            text.push_str(&format!("\nWhere: {location}"));
        }
        if let Some(organizer) = &self.organizer {
            text.push_str(&format!("\nOrganizer: {}", organizer.label()));
        }
        if !self.attendees.is_empty() {
            let names: Vec<String> = self.attendees.iter().map(Attendee::label).collect();
            text.push_str(&format!("\nAttendees: {}", names.join(", ")));
        }
        if let Some(description) = &self.description {
            text.push_str(&format!("\n\n{description}"));
        }
        text
    }

    /// `Tue 2026-03-24 08:30 – 08:45 (UTC)`, `Thu 2026-03-26 – Fri 2026-03-27 (all day)`.
    pub fn when(&self) -> String {
        if self.all_day {
            let first = self.start.date_naive();
            let last = (self.end - Duration::days(1)).date_naive().max(first);
            return if first == last {
                format!("{} (all day)", first.format("%a %Y-%m-%d"))
            } else {
                format!(
                    "{} – {} (all day)",
                    first.format("%a %Y-%m-%d"),
                    last.format("%a %Y-%m-%d")
                )
            };
        }
        format!("{} (UTC)", span(self.start, self.end))
    }

    /// The same span on the wall clock of the zone the event was written in.
    fn local_time(&self) -> Option<String> {
        let zone = self
            .time_zone
            .as_ref()
            .filter(|zone| !zone.is_utc() && !self.all_day)?;
        let here = |at: DateTime<Utc>| at.with_timezone(&zone.offset(at));
        Some(format!(
            "{} {}",
            span(here(self.start), here(self.end)),
            zone.name()
        ))
    }

    /// The item's metadata (a JSON object).
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "uid": self.uid,
            "start": rfc3339(self.start),
            "end": rfc3339(self.end),
            "all_day": self.all_day,
            "time_zone": self.time_zone.as_ref().map(Zone::name),
            "location": self.location,
            "recurring": self.recurring,
            "status": self.status,
            "file": self.file,
        })
    }
}

/// `Tue 2026-03-24 08:30 – 08:45`, with the end's date only when it differs.
fn span<Z: chrono::TimeZone>(start: DateTime<Z>, end: DateTime<Z>) -> String
where
    Z::Offset: std::fmt::Display,
{
    let from = start.format("%a %Y-%m-%d %H:%M").to_string();
    if end <= start {
        from
    } else if end.date_naive() == start.date_naive() {
        format!("{from} – {}", end.format("%H:%M"))
    } else {
        format!("{from} – {}", end.format("%a %Y-%m-%d %H:%M"))
    }
}

/// A problem with one event; the file's other events are still read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError {
    /// `<file>#<UID>`: where it is, and the event's source id.
    pub location: String,
    pub message: String,
}

/// Something passed over on purpose, named in the sync report (not a failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub source_id: String,
    pub reason: String,
}

/// What one file gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// In file order, each series' occurrences in time order.
    pub occurrences: Vec<Occurrence>,
    pub errors: Vec<EventError>,
    pub skipped: Vec<Skipped>,
    /// Events and occurrences the file says are gone (`STATUS:CANCELLED`, an `EXDATE`):
    /// reported to the host, which retires what it stored of them.
    pub removed: Vec<Skipped>,
    /// To-dos (tasks) and journal entries (notes) inside the window or without a time.
    pub records: Vec<Record>,
}

/// Reads one `.ics` file: its events' occurrences inside `window`. An error for the
/// whole file (not UTF-8, empty, truncated, not iCalendar) is `Err`; a bad event is
/// one entry of [`Parsed::errors`] and the others are still read.
pub fn parse(file: &str, bytes: &[u8], window: &Window) -> Result<Parsed, String> {
    let scanned = scan(bytes)?;
    Ok(read_groups(
        file,
        &mut std::io::Cursor::new(bytes),
        &scanned,
        0..scanned.groups.len(),
        window,
    ))
}

/// The largest event read; a bigger one (an attachment written inline, most likely) is
/// one error line rather than the plugin's memory.
pub const MAX_EVENT_BYTES: u64 = 4 << 20;

/// Reads the events of some of a scanned file's groups (`range`) from `source`, the file
/// the scan read: their occurrences inside `window`, and an error for each event that
/// cannot be read. A group is a whole series, so its changed occurrences are never apart
/// from it.
pub fn read_groups<R: Read + Seek>(
    file: &str,
    source: &mut R,
    scanned: &Scan,
    range: Range<usize>,
    window: &Window,
) -> Parsed {
    let zones = Zones::read(&scanned.zones, scanned.calendar_zone.as_deref());
    let mut parsed = Parsed::default();
    if range.start == 0 {
        for (line, message) in &scanned.skipped {
            parsed.errors.push(EventError {
                location: format!("{file} line {line}"),
                message: message.clone(),
            });
        }
        for other in &scanned.others {
            parsed.skipped.push(Skipped {
                source_id: match &other.uid {
                    Some(uid) => format!("{file}#{uid}"),
                    None => format!("{file} line {}", other.line),
                },
                reason: match other.name.as_str() {
                    "VFREEBUSY" => "a VFREEBUSY (free/busy times, no event in it): not read".into(),
                    name => format!(
                        "a {name} component (not an event, to-do or journal entry): not read"
                    ),
                },
            });
        }
    }
    let place = |uid: Option<&str>, block: &Block| match uid {
        Some(uid) => format!("{file}#{uid}"),
        None => format!("{file} line {}", block.line),
    };
    // Each event's own text beside the block it came from.
    let mut texts: Vec<(String, &Block, Option<&str>)> = Vec::new();
    for group in scanned.groups.get(range).unwrap_or_default() {
        let uid = group.uid.as_deref();
        for block in &group.events {
            if block.len > MAX_EVENT_BYTES {
                parsed.errors.push(EventError {
                    location: place(uid, block),
                    message: format!(
                        "the event on line {} is {:.1} MiB (over {} MiB: an attachment written inline?); not read",
                        block.line,
                        block.len as f64 / f64::from(1 << 20),
                        MAX_EVENT_BYTES >> 20
                    ),
                });
                continue;
            }
            match read_block(source, block) {
                Ok(text) => texts.push((text, block, uid)),
                Err(message) => parsed.errors.push(EventError {
                    location: place(uid, block),
                    message,
                }),
            }
        }
    }
    let joined: Vec<String> = texts.iter().map(|(text, _, _)| unfolded(text)).collect();
    let mut events: Vec<Component> = Vec::new();
    let mut records_read: HashSet<String> = HashSet::new();
    for ((text, block, uid), joined) in texts.iter().zip(&joined) {
        match read_components(joined) {
            Ok(components) => {
                for component in components {
                    let name = component.name.as_str();
                    if name.eq_ignore_ascii_case("VEVENT") {
                        events.push(component);
                    } else if let Some(kind) = RecordKind::of(name) {
                        match records::read(file, kind, &component, &zones) {
                            Ok(record) if record.at.is_none_or(|at| window.overlaps(at, at)) => {
                                if records_read.insert(record.source_id.clone()) {
                                    parsed.records.push(record);
                                } else {
                                    parsed.skipped.push(Skipped {
                                        source_id: record.source_id,
                                        reason: format!("another {} with this UID in this file (a changed occurrence of a recurring one, or a copy); read once", name.to_ascii_uppercase()),
                                    });
                                }
                            }
                            Ok(_) => {}
                            Err(message) => parsed.errors.push(EventError {
                                location: place(*uid, block),
                                message,
                            }),
                        }
                    }
                }
            }
            Err(report) => parsed.errors.push(EventError {
                location: place(*uid, block),
                message: format!(
                    "not valid iCalendar: {}",
                    nom_error(&report, text, block.line)
                ),
            }),
        }
    }

    // Group by UID: the series' master (no RECURRENCE-ID) and its overrides.
    let mut series: Vec<Series> = Vec::new();
    let mut by_uid: HashMap<String, usize> = HashMap::new();
    for event in &events {
        let uid = uid(event);
        let index = *by_uid.entry(uid.clone()).or_insert_with(|| {
            series.push(Series {
                uid: uid.clone(),
                master: None,
                overrides: Vec::new(),
            });
            series.len() - 1
        });
        let entry = &mut series[index];
        if find(event, "RECURRENCE-ID").is_some() {
            entry.overrides.push(event);
        } else if entry.master.is_none() {
            entry.master = Some(event);
        } else if text(event, "UID").is_none() {
            // Its id is its content's hash: the same text twice, not two events.
            parsed.skipped.push(Skipped {
                source_id: format!("{file}#{uid}"),
                reason: "a copy of an earlier event in this file (no UID, the same time, title, place and description); read once".into(),
            });
        } else {
            parsed.errors.push(EventError {
                location: format!("{file}#{uid}"),
                message: "another event in this file has the same UID; only the first was read"
                    .into(),
            });
        }
    }
    for s in &series {
        let location = format!("{file}#{}", s.uid);
        match s.occurrences(file, window, &zones) {
            Ok(SeriesRead {
                mut occurrences,
                warnings,
                cut,
                mut removed,
            }) => {
                // A cancelled event is gone, not an event to remember. A series is one
                // memory (`file#UID`): a cancelled or excluded occurrence changes its text
                // (an update); only a series with nothing left but cancellations is gone.
                let (cancelled, kept): (Vec<_>, Vec<_>) = occurrences
                    .drain(..)
                    .partition(|o| o.status.as_deref() == Some("cancelled"));
                let mut gone: Vec<String> = cancelled
                    .into_iter()
                    .filter(|o| !o.recurring || kept.iter().all(|k| k.uid != o.uid))
                    .map(|o| {
                        if o.recurring {
                            format!("{file}#{}", o.uid)
                        } else {
                            o.source_id
                        }
                    })
                    .collect();
                gone.dedup();
                removed.extend(gone.into_iter().map(|source_id| Skipped {
                    source_id,
                    reason: CANCELLED.into(),
                }));
                occurrences = kept;
                parsed.removed.append(&mut removed);
                parsed.occurrences.append(&mut occurrences);
                parsed.skipped.extend(cut.map(|reason| Skipped {
                    source_id: location.clone(),
                    reason,
                }));
                parsed
                    .errors
                    .extend(warnings.into_iter().map(|message| EventError {
                        location: location.clone(),
                        message,
                    }));
            }
            Err(message) => parsed.errors.push(EventError { location, message }),
        }
    }
    parsed
}

/// One block's bytes from the file (UTF-8: the scan checked every line).
fn read_block<R: Read + Seek>(source: &mut R, block: &Block) -> Result<String, String> {
    let mut bytes = vec![0; block.len as usize];
    source
        .seek(SeekFrom::Start(block.offset))
        .and_then(|_| source.read_exact(&mut bytes))
        .map_err(|e| format!("the event on line {} cannot be read: {e}", block.line))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the event on line {} changed while it was read (not UTF-8 at byte {})",
            block.line,
            e.utf8_error().valid_up_to()
        )
    })
}

/// nom's report is a stack of frames (`0: at line 3, in Tag:` then the line and a
/// caret). The innermost frame with a named context says what was wrong; its line
/// number counts unfolded lines of `original` (one event's text), so it is mapped back to
/// the file's own lines, `original` starting on line `first_line`.
fn nom_error(report: &str, original: &str, first_line: usize) -> String {
    let lines: Vec<&str> = report.lines().collect();
    let mut frames = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((_, rest)) = line.split_once(": at line ") else {
            continue;
        };
        let Some((number, context)) = rest.split_once(", in ") else {
            continue;
        };
        let (Ok(number), context) = (
            number.trim().parse::<usize>(),
            context.trim_end_matches(':'),
        ) else {
            continue;
        };
        let text = lines.get(i + 1).map(|l| l.trim()).unwrap_or_default();
        frames.push((number, context, text));
    }
    // Contexts the parser names are lower case; nom's own error kinds are CamelCase
    // (`Many0`, `Tag`) and say nothing in the file's terms.
    let Some(&(number, context, text)) = frames
        .iter()
        .find(|(_, context, _)| context.starts_with(|c: char| c.is_lowercase()))
        .or(frames.first())
    else {
        return "unreadable".into();
    };
    let what = match context {
        "mismatching end" => "this END does not close the component that is open",
        "property cannot be END or BEGIN" => "a BEGIN or END where a property should be",
        "component" => "a component that is never closed",
        _ => "not a property line (NAME:value, or NAME;PARAM=value:value)",
    };
    // Unfolded line n is the n-th line of the text that is not a continuation.
    let line = original
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.starts_with([' ', '\t']))
        .nth(number.saturating_sub(1))
        .map_or(number, |(index, _)| index + 1);
    format!("line {} ({:?}): {what}", first_line + line - 1, clip(text))
}

fn attendee(property: &Property) -> Option<Attendee> {
    let value = property.val.as_str().trim();
    let email = match value.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case("mailto:") => Some(value[7..].trim()),
        _ if value.contains('@') && !value.contains(':') => Some(value),
        _ => None,
    }
    .filter(|e| !e.is_empty())
    .map(str::to_owned);
    let name = param(property, "CN").map(str::to_owned);
    let status = param(property, "PARTSTAT")
        .map(str::to_lowercase)
        .filter(|s| s != "needs-action");
    (name.is_some() || email.is_some()).then_some(Attendee {
        name,
        email,
        status,
    })
}

/// What an event says besides its times.
#[derive(Debug, Clone)]
struct Details {
    title: String,
    location: Option<String>,
    description: Option<String>,
    organizer: Option<Attendee>,
    attendees: Vec<Attendee>,
    status: Option<String>,
}

impl Details {
    /// The series of overrides that came without it.
    fn empty() -> Details {
        Details {
            title: "(untitled event)".into(),
            location: None,
            description: None,
            organizer: None,
            attendees: Vec::new(),
            status: None,
        }
    }

    /// An override's details; what it leaves out comes from its series.
    fn read(event: &Component, series: Option<&Details>) -> Details {
        let attendees: Vec<Attendee> = all(event, "ATTENDEE").filter_map(attendee).collect();
        Details {
            title: text(event, "SUMMARY")
                .or_else(|| series.map(|s| s.title.clone()))
                .unwrap_or_else(|| "(untitled event)".into()),
            location: text(event, "LOCATION").or_else(|| series.and_then(|s| s.location.clone())),
            description: text(event, "DESCRIPTION")
                .or_else(|| series.and_then(|s| s.description.clone())),
            organizer: find(event, "ORGANIZER")
                .and_then(attendee)
                .or_else(|| series.and_then(|s| s.organizer.clone())),
            attendees: if attendees.is_empty() {
                series.map(|s| s.attendees.clone()).unwrap_or_default()
            } else {
                attendees
            },
            status: text(event, "STATUS").map(|s| s.to_lowercase()),
        }
    }
}

/// When an event starts and how long it lasts.
#[derive(Debug, Clone)]
struct Timing {
    start: Stamp,
    length: Length,
}

fn stamp(property: &Property, name: &str, zones: &Zones) -> Result<Stamp, String> {
    let (tzid, value) = zoned_value(property);
    Stamp::read(value, tzid.as_deref(), param(property, "VALUE"), zones)
        .map_err(|e| format!("bad {name}: {e}"))
}

impl Timing {
    fn read(event: &Component, zones: &Zones) -> Result<Timing, String> {
        let start = stamp(
            find(event, "DTSTART").ok_or("no DTSTART: the event has no start")?,
            "DTSTART",
            zones,
        )?;
        let length = if let Some(end) = find(event, "DTEND") {
            let end = stamp(end, "DTEND", zones)?;
            let (from, to) = (start.instant(), end.instant());
            if to < from {
                return Err(format!(
                    "DTEND ({}) is before DTSTART ({})",
                    rfc3339(to),
                    rfc3339(from)
                ));
            }
            Length::between(from, to)
        } else if let Some(duration) = find(event, "DURATION") {
            Length::parse(duration.val.as_str()).map_err(|e| format!("bad DURATION: {e}"))?
        } else if start.is_date() {
            // RFC 5545 §3.6.1: a dated event without an end lasts the day.
            Length {
                days: 1,
                exact: Duration::zero(),
            }
        } else {
            Length::default()
        };
        Ok(Timing { start, length })
    }
}

/// One UID: the master event and the overrides of some of its occurrences.
struct Series<'c> {
    uid: String,
    master: Option<&'c Component<'c>>,
    overrides: Vec<&'c Component<'c>>,
}

/// What one series gave: its occurrences in the window, what could not be read of it,
/// and, when [`MAX_OCCURRENCES`] cut it, the skip that says so.
struct SeriesRead {
    occurrences: Vec<Occurrence>,
    warnings: Vec<String>,
    cut: Option<String>,
    /// What the series says is gone (filled in by the caller from the occurrences).
    removed: Vec<Skipped>,
}

/// Why a cancelled event is gone.
pub const CANCELLED: &str = "cancelled in the calendar (STATUS:CANCELLED)";

/// An occurrence before its details are attached.
struct Slot {
    /// Its original start (the RECURRENCE-ID an override would name).
    original: DateTime<Utc>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    all_day: bool,
    /// The zone its start was written in.
    zone: Zone,
}

impl Series<'_> {
    /// The occurrences inside the window, messages about what could not be read (a bad
    /// override), and what was left out on purpose (occurrences past
    /// [`MAX_OCCURRENCES`]). `Err` when the series is unusable.
    fn occurrences(
        &self,
        file: &str,
        window: &Window,
        zones: &Zones,
    ) -> Result<SeriesRead, String> {
        let mut warnings = Vec::new();
        let mut cut = None;
        let removed: Vec<Skipped> = Vec::new();
        let (series_details, recurring, single, mut slots) = match self.master {
            Some(master) => {
                let details = Details::read(master, None);
                let timing = Timing::read(master, zones)?;
                let (recurring, slots, was_cut) = expand(master, &timing, window, zones)?;
                if was_cut && let (Some(first), Some(last)) = (slots.first(), slots.last()) {
                    cut = Some(format!(
                        "more than {MAX_OCCURRENCES} occurrences in the window: the series is kept with the {MAX_OCCURRENCES} nearest now ({} to {}), the others are left out",
                        rfc3339(first.start),
                        rfc3339(last.start),
                    ));
                }
                let single = (!recurring).then(|| timing.start.instant());
                (details, recurring, single, slots)
            }
            // Overrides without their series (an invitation to one occurrence).
            None => (Details::empty(), true, None, Vec::new()),
        };

        // Overrides by the occurrence they name; of two for the same one, the higher
        // SEQUENCE wins (the later in the file on a tie).
        let mut overrides: Vec<(DateTime<Utc>, i64, &Component)> = Vec::new();
        for event in &self.overrides {
            let Some(id) = find(event, "RECURRENCE-ID") else {
                continue;
            };
            match stamp(id, "RECURRENCE-ID", zones) {
                Ok(original) => {
                    let sequence = text(event, "SEQUENCE")
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    let original = original.instant();
                    match overrides.iter_mut().find(|(o, _, _)| *o == original) {
                        Some(entry) if entry.1 > sequence => {}
                        Some(entry) => *entry = (original, sequence, event),
                        None => overrides.push((original, sequence, event)),
                    }
                }
                Err(message) => warnings.push(message),
            }
        }

        // Each replaces the occurrence it names, wherever it moves it. One that cannot be
        // read still removes it: the organizer changed that occurrence, so its old time
        // would be wrong; the error line names it.
        let mut replaced = Vec::new();
        for (original, _, event) in overrides {
            slots.retain(|s| s.original != original);
            let cancelled =
                text(event, "STATUS").is_some_and(|s| s.eq_ignore_ascii_case("CANCELLED"));
            if cancelled {
                continue;
            }
            let timing = match Timing::read(event, zones) {
                Ok(timing) => timing,
                Err(message) => {
                    warnings.push(format!(
                        "the change to the occurrence of {}: {message}",
                        rfc3339(original)
                    ));
                    continue;
                }
            };
            let start = timing.start.instant();
            let zone = timing.start.zone();
            let end = timing.length.after(start, &zone);
            if window.overlaps(start, end) {
                replaced.push((
                    Slot {
                        original,
                        start,
                        end,
                        all_day: timing.start.is_date(),
                        zone,
                    },
                    Details::read(event, Some(&series_details)),
                ));
            }
        }

        let mut occurrences: Vec<(Slot, Details)> = slots
            .into_iter()
            .map(|slot| (slot, series_details.clone()))
            .chain(replaced)
            .collect();
        occurrences.sort_by_key(|(slot, _)| slot.start);
        Ok(SeriesRead {
            removed,
            occurrences: occurrences
                .into_iter()
                .map(|(slot, details)| {
                    let start = slot.start;
                    Occurrence {
                        // A one-off event is its UID; an override naming some other time
                        // than its start still needs an id of its own.
                        source_id: if single == Some(slot.original) {
                            format!("{file}#{}", self.uid)
                        } else {
                            format!("{file}#{}@{}", self.uid, rfc3339(slot.original))
                        },
                        file: file.to_owned(),
                        uid: self.uid.clone(),
                        title: details.title,
                        start,
                        end: slot.end,
                        all_day: slot.all_day,
                        time_zone: Some(slot.zone).filter(|zone| !zone.is_utc()),
                        location: details.location,
                        description: details.description,
                        organizer: details.organizer,
                        attendees: details.attendees,
                        recurring,
                        rule: self
                            .master
                            .and_then(|m| find(m, "RRULE"))
                            .map(|r| r.val.as_str().trim().to_owned()),
                        status: details.status,
                    }
                })
                .collect(),
            warnings,
            cut,
        })
    }
}

/// The master's occurrences that overlap the window: whether it recurs, the slots, and
/// whether [`MAX_OCCURRENCES`] cut them (keeping those nearest the window's now).
///
/// The rule is expanded on the series' wall clock (RFC 5545 repeats local times: 09:00
/// stays 09:00 across a DST change), handed to `rrule` as if it were UTC, and each wall
/// time is then placed in the series' zone. So a zone the file defines works like a
/// database one, though `rrule` computes only in the latter.
fn expand(
    master: &Component,
    timing: &Timing,
    window: &Window,
    zones: &Zones,
) -> Result<(bool, Vec<Slot>, bool), String> {
    let zone = timing.start.zone();
    let all_day = timing.start.is_date();
    let slot = |start: DateTime<Utc>| Slot {
        original: start,
        start,
        end: timing.length.after(start, &zone),
        all_day,
        zone: zone.clone(),
    };
    let rules: Vec<&Property> = all(master, "RRULE").collect();
    let rdates: Vec<&Property> = all(master, "RDATE").collect();
    if rules.is_empty() && rdates.is_empty() {
        let only = slot(timing.start.instant());
        let inside = window.overlaps(only.start, only.end);
        return Ok((false, if inside { vec![only] } else { Vec::new() }, false));
    }

    // Wall-clock times, as `rrule` sees them.
    let clock = |wall: NaiveDateTime| rrule::Tz::UTC.from_utc_datetime(&wall);
    let on_clock = |at: DateTime<Utc>| clock(zone.wall(at));
    let dt_start = clock(timing.start.wall());
    // The set's DTSTART is always its first instance (RFC 5545 §3.8.5.3); rrule only
    // yields it when the rule matches it, so it goes in as an RDATE too (deduplicated).
    let mut set = RRuleSet::new(dt_start).rdate(dt_start);
    for rule in rules {
        set = set.rrule(recurrence_rule(rule.val.as_str(), &timing.start, dt_start)?);
    }
    // A PERIOD (RFC 5545 §3.3.9) says how long that occurrence lasts: its own end, by the
    // wall time it starts.
    let mut periods: HashMap<i64, DateTime<Utc>> = HashMap::new();
    for rdate in rdates {
        let period = param(rdate, "VALUE").is_some_and(|v| v.eq_ignore_ascii_case("PERIOD"));
        let (tzid, values) = zoned_value(rdate);
        let tzid = tzid.as_deref();
        for value in values.split(',') {
            let (value, until) = match value.split_once('/') {
                Some((start, until)) if period => (start, Some(until)),
                _ => (value, None),
            };
            let at = Stamp::read(
                value,
                tzid,
                if period { None } else { param(rdate, "VALUE") },
                zones,
            )
            .map_err(|e| format!("bad RDATE: {e}"))?;
            let start = at.instant();
            if let Some(until) = until {
                let end = if until.trim_start().starts_with(['P', 'p', '+']) {
                    Length::parse(until)
                        .map_err(|e| format!("bad RDATE period {value}/{until}: {e}"))?
                        .after(start, &at.zone())
                } else {
                    Stamp::read(until, tzid, None, zones)
                        .map_err(|e| format!("bad RDATE period {value}/{until}: {e}"))?
                        .instant()
                };
                if end < start {
                    return Err(format!(
                        "bad RDATE period {value}/{until}: it ends before it starts"
                    ));
                }
                periods.insert(on_clock(start).timestamp(), end);
            }
            set = set.rdate(on_clock(start));
        }
    }
    // An EXDATE that is a date on a timed series removes that day's occurrence.
    let mut excluded_days: BTreeSet<NaiveDate> = BTreeSet::new();
    for exdate in all(master, "EXDATE") {
        let (tzid, values) = zoned_value(exdate);
        for value in values.split(',') {
            let at = Stamp::read(value, tzid.as_deref(), param(exdate, "VALUE"), zones)
                .map_err(|e| format!("bad EXDATE: {e}"))?;
            match at {
                Stamp::Date(day) if !all_day => {
                    excluded_days.insert(day);
                }
                _ => set = set.exdate(on_clock(at.instant())),
            }
        }
    }

    // Stepped through from DTSTART in time order: stop past the window's end, keep what
    // overlaps it. `limit()` turns on rrule's guard against rules that never match.
    let mut slots: VecDeque<Slot> = VecDeque::new();
    let mut seen: HashSet<i64> = HashSet::new();
    let mut cut = false;
    for (step, wall) in set.limit().into_iter().enumerate() {
        if step >= MAX_STEPS {
            return Err(format!(
                "the RRULE makes more than {MAX_STEPS} occurrences before the window ends; not expanded"
            ));
        }
        let at = zone.instant(wall.naive_utc());
        if at > window.end {
            break;
        }
        if !seen.insert(at.timestamp()) || excluded_days.contains(&wall.date_naive()) {
            continue;
        }
        let mut candidate = slot(at);
        if let Some(end) = periods.get(&wall.timestamp()) {
            candidate.end = *end;
        }
        if window.overlaps(candidate.start, candidate.end) {
            if slots.len() == MAX_OCCURRENCES {
                cut = true;
                // Full: the earliest kept one goes while the new one is nearer now (always
                // before now); once it is not, no later one is either.
                let away = |slot: &Slot| (slot.start - window.now).abs();
                if slots
                    .front()
                    .is_some_and(|earliest| away(&candidate) < away(earliest))
                {
                    slots.pop_front();
                } else {
                    break;
                }
            }
            slots.push_back(candidate);
        }
    }
    Ok((true, slots.into(), cut))
}

/// One `RRULE` value, validated against the series start. `UNTIL` is read here rather
/// than by `rrule`, which would take a floating or dated UNTIL in the machine's zone
/// and refuse it next to a TZID start; RFC 5545 means the series' own zone.
fn recurrence_rule(
    value: &str,
    start: &Stamp,
    dt_start: DateTime<rrule::Tz>,
) -> Result<RRule, String> {
    let broken = |e: RRuleError| {
        let reason = match e {
            RRuleError::ParserError(e) => e.to_string(),
            RRuleError::ValidationError(e) => e.to_string(),
            RRuleError::IterError(e) => e,
        };
        format!("broken RRULE {value:?}: {reason}")
    };
    let mut until = None;
    let mut parts = Vec::new();
    for part in value.trim().split(';').filter(|p| !p.trim().is_empty()) {
        match part.split_once('=') {
            Some((key, v)) if key.trim().eq_ignore_ascii_case("UNTIL") => until = Some(v.trim()),
            _ => parts.push(part.trim()),
        }
    }
    let mut rule: RRule<Unvalidated> = parts.join(";").parse().map_err(broken)?;
    if let Some(until) = until {
        let at = Stamp::parse(until, None, None)
            .map_err(|e| format!("broken RRULE {value:?}: UNTIL {e}"))?;
        // On the series' wall clock, as the rule is expanded (see `expand`).
        let wall = match (at, start) {
            // A dated series ends on that day's occurrence.
            (Stamp::Date(day), Stamp::Date(_)) => day.and_time(NaiveTime::MIN),
            // A date ending a timed series: the whole of that day, in the series' zone.
            (Stamp::Date(day), _) => day.and_hms_opt(23, 59, 59).unwrap_or_default(),
            (Stamp::Floating(naive), _) => naive,
            (other, _) => start.zone().wall(other.instant()),
        };
        rule = rule.until(rrule::Tz::UTC.from_utc_datetime(&wall));
    }
    rule.validate(dt_start).map_err(broken)
}

#[cfg(test)]
mod tests;
