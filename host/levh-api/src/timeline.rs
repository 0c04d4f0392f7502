//! The timeline: memories grouped by the day they happened (their world time), in the
//! user's calendar — `LEVH_TZ` or the system's zone — so a meeting at 00:30 in Berlin is
//! on Berlin's day, not UTC's, on either side of a daylight-saving change.

use std::collections::{BTreeMap, HashSet};

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{ToSpan, Zoned};
use levh_core::{Kind, Levh, Memory, Scope, Timestamp};

use crate::knowledge::{people, user_time_zone};
use crate::requests::{KnowledgeArgs, TimelineArgs, limit};
use crate::views::{TimelineDay, TimelineItem, TimelineView};
use crate::{Error, Result};

/// Memories shown when no limit is given.
pub const DEFAULT_LIMIT: usize = 200;

fn invalid_range(text: &str) -> Error {
    Error::invalid(format!(
        "invalid range: '{}' is not one of today, yesterday, tomorrow, this/last/next week, this/last/next month, last N days, next N days",
        text.trim().escape_debug()
    ))
}

fn shift(date: Date, days: i64) -> Result<Date> {
    date.checked_add(days.days())
        .map_err(|e| Error::invalid(format!("invalid range: {e}")))
}

/// The first and last day (both included) of a named range, around `today`.
pub fn named_range(text: &str, today: Date) -> Result<(Date, Date)> {
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let monday = shift(today, -i64::from(today.weekday().to_monday_zero_offset()))?;
    let first_of_month = today.first_of_month();
    Ok(match words.as_slice() {
        ["today"] => (today, today),
        ["yesterday"] => {
            let day = shift(today, -1)?;
            (day, day)
        }
        ["this", "week"] => (monday, shift(monday, 6)?),
        ["last", "week"] => (shift(monday, -7)?, shift(monday, -1)?),
        ["this", "month"] => (first_of_month, today.last_of_month()),
        ["last", "month"] => {
            let last = shift(first_of_month, -1)?;
            (last.first_of_month(), last)
        }
        ["tomorrow"] => {
            let day = shift(today, 1)?;
            (day, day)
        }
        ["next", "week"] => (shift(monday, 7)?, shift(monday, 13)?),
        ["next", "month"] => {
            let first = shift(today.last_of_month(), 1)?;
            (first, first.last_of_month())
        }
        ["next", n, "days"] => {
            let n: i64 = n.parse().map_err(|_| invalid_range(text))?;
            if !(1..=366).contains(&n) {
                return Err(Error::invalid(format!(
                    "invalid range: next {n} days is outside 1..366 days"
                )));
            }
            (today, shift(today, n - 1)?)
        }
        ["last", n, "days"] => {
            let n: i64 = n.parse().map_err(|_| invalid_range(text))?;
            if !(1..=366).contains(&n) {
                return Err(Error::invalid(format!(
                    "invalid range: last {n} days is outside 1..366 days"
                )));
            }
            (shift(today, 1 - n)?, today)
        }
        _ => return Err(invalid_range(text)),
    })
}

/// A day given as `YYYY-MM-DD`, or the day (in `zone`) of an RFC 3339 time.
pub(crate) fn day(field: &'static str, text: &str, zone: &TimeZone) -> Result<Date> {
    let text = text.trim();
    if let Ok(date) = text.parse::<Date>() {
        return Ok(date);
    }
    match levh_core::parse_instant(text) {
        Some(at) => Ok(at.to_zoned(zone.clone()).date()),
        None => Err(Error::invalid(format!(
            "invalid {field}: '{}' is not a day like 2026-10-25 or an RFC 3339 time",
            text.escape_debug()
        ))),
    }
}

/// The instant a day starts in `zone` (its first moment, even on a day that skips or
/// repeats an hour).
pub(crate) fn start_of(date: Date, zone: &TimeZone) -> Result<Timestamp> {
    date.to_zoned(zone.clone())
        .map(|z| z.timestamp())
        .map_err(|e| Error::invalid(format!("invalid day {date}: {e}")))
}

fn weekday(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

fn item(memory: &Memory, at: &Zoned) -> TimelineItem {
    let title = memory.metadata["title"]
        .as_str()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    TimelineItem {
        memory_id: memory.id.to_string(),
        at: at.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        time: at.strftime("%H:%M").to_string(),
        kind: memory.kind.to_string(),
        source: memory.source.clone(),
        project: memory.project.clone(),
        preview: match title {
            Some(title) => levh_core::text::preview(title, levh_core::PREVIEW_CHARS),
            None => levh_core::text::preview(&memory.content, levh_core::PREVIEW_CHARS),
        },
        people: people(memory),
    }
}

/// When a memory happened: its world time, or for a recurring series (the calendar
/// connector keeps one memory per series and lists its occurrences in the sync window
/// in `metadata.occurrences`) each occurrence, so the timeline shows the standup on every
/// day it meets, not once.
fn occurrences(memory: &Memory) -> Vec<Timestamp> {
    let listed: Vec<Timestamp> = match memory.metadata.get("occurrences") {
        Some(serde_json::Value::Array(items)) if memory.metadata["recurring"] == true => items
            .iter()
            .filter_map(serde_json::Value::as_str)
            .filter_map(levh_core::parse_instant)
            .collect(),
        _ => Vec::new(),
    };
    if listed.is_empty() {
        vec![memory.valid_from]
    } else {
        listed
    }
}

/// [`Operation::Timeline`](crate::Operation::Timeline).
pub fn timeline(levh: &Levh, scope: &Scope, args: TimelineArgs) -> Result<TimelineView> {
    let limit = limit(args.limit, DEFAULT_LIMIT)?;
    let zone = user_time_zone(levh)?;
    let today = levh.now().to_zoned(zone.clone()).date();
    let (from, to) = match (&args.from, &args.to) {
        (None, None) => named_range(args.range.as_deref().unwrap_or("this week"), today)?,
        _ if args.range.is_some() => {
            return Err(Error::invalid("give either range or from/to, not both"));
        }
        (from, to) => {
            let to = to
                .as_deref()
                .map(|t| day("to", t, &zone))
                .transpose()?
                .unwrap_or(today);
            let from = match from {
                Some(f) => day("from", f, &zone)?,
                None => shift(to, -6)?,
            };
            (from, to)
        }
    };
    if to < from {
        return Err(Error::invalid(format!(
            "invalid range: the last day {to} is before the first {from}"
        )));
    }
    let start = start_of(from, &zone)?;
    let end = start_of(shift(to, 1)?, &zone)?;
    let kind = crate::requests::kind(args.kind.as_deref())?;
    let with: Option<HashSet<_>> = match args.person.as_deref().filter(|p| !p.trim().is_empty()) {
        Some(person) => {
            let entity = levh.resolve_entity(scope, person, None)?;
            Some(
                levh.entity_memories(scope, entity.id, usize::MAX)?
                    .into_iter()
                    .map(|m| m.memory_id)
                    .collect(),
            )
        }
        None => None,
    };
    let selection = KnowledgeArgs {
        project: args.project.clone(),
        ..KnowledgeArgs::default()
    };
    let memories: Vec<Memory> = crate::knowledge::memories(levh, scope, &selection)?
        .into_iter()
        .filter(|m| kind.as_ref().is_none_or(|k: &Kind| m.kind == *k))
        .filter(|m| with.as_ref().is_none_or(|ids| ids.contains(&m.id)))
        .collect();
    let mut moments: Vec<(Timestamp, &Memory)> = memories
        .iter()
        .flat_map(|memory| {
            occurrences(memory)
                .into_iter()
                .filter(|at| *at >= start && *at < end)
                .map(move |at| (at, memory))
        })
        .collect();
    moments.sort_by_key(|(at, memory)| (*at, memory.id));
    let truncated = moments.len() > limit;
    moments.truncate(limit);
    let mut days: BTreeMap<Date, Vec<TimelineItem>> = BTreeMap::new();
    for (at, memory) in moments {
        let at = at.to_zoned(zone.clone());
        days.entry(at.date()).or_default().push(item(memory, &at));
    }
    Ok(TimelineView {
        time_zone: zone.iana_name().unwrap_or("system").to_owned(),
        from: from.to_string(),
        to: to.to_string(),
        days: days
            .into_iter()
            .map(|(day, memories)| TimelineDay {
                day: day.to_string(),
                weekday: weekday(day.weekday()).to_owned(),
                memories,
            })
            .collect(),
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_ranges_start_weeks_on_monday_and_months_on_the_first() {
        let sunday: Date = "2026-10-25".parse().unwrap();
        let range = |t: &str| {
            let (a, b) = named_range(t, sunday).unwrap();
            (a.to_string(), b.to_string())
        };
        assert_eq!(
            range("this week"),
            ("2026-10-19".into(), "2026-10-25".into())
        );
        assert_eq!(
            range("last-week"),
            ("2026-10-12".into(), "2026-10-18".into())
        );
        assert_eq!(
            range("this month"),
            ("2026-10-01".into(), "2026-10-31".into())
        );
        assert_eq!(
            range("Last Month"),
            ("2026-09-01".into(), "2026-09-30".into())
        );
        assert_eq!(
            range("last 3 days"),
            ("2026-10-23".into(), "2026-10-25".into())
        );
        assert_eq!(
            range("yesterday"),
            ("2026-10-24".into(), "2026-10-24".into())
        );
        assert_eq!(
            range("tomorrow"),
            ("2026-10-26".into(), "2026-10-26".into())
        );
        assert_eq!(
            range("next week"),
            ("2026-10-26".into(), "2026-11-01".into())
        );
        assert_eq!(
            range("next month"),
            ("2026-11-01".into(), "2026-11-30".into())
        );
        assert_eq!(
            range("next 3 days"),
            ("2026-10-25".into(), "2026-10-27".into())
        );
        let error = named_range("next year", sunday).unwrap_err().to_string();
        assert!(
            error.contains("'next year'") && error.contains("next week"),
            "{error}"
        );
    }

    #[test]
    fn a_day_across_a_daylight_saving_change_starts_at_its_own_midnight() {
        let berlin = TimeZone::get("Europe/Berlin").unwrap();
        // 25 October 2026 is 25 hours long in Berlin: CEST until 03:00, then CET.
        let start = start_of("2026-10-25".parse().unwrap(), &berlin).unwrap();
        let next = start_of("2026-10-26".parse().unwrap(), &berlin).unwrap();
        assert_eq!(start.to_string(), "2026-10-24T22:00:00Z");
        assert_eq!(next.to_string(), "2026-10-25T23:00:00Z");
    }
}
