//! A `TZID` to a zone: the one place that says which zone a name means.
//!
//! IANA names (`Europe/Berlin`), the same behind a vendor prefix, and the Windows names
//! Outlook writes go straight to the database (`chrono-tz`), whose history is better than
//! a file's summary of it.
//!
//! Any other name the file defines in its own `VTIMEZONE` (Exchange's `"GMT +0100
//! (Standard) / GMT +0200 (Daylight)"`, `"MyTimezone"`, a legacy `EST` given summer time)
//! is that definition: its STANDARD/DAYLIGHT observances, each offset from its onsets on
//! (DTSTART, RRULE, RDATE). A definition is never swapped for a database zone that looks
//! alike: a zone no place uses (+12 in winter, +10 from May) or one listing only this
//! year's changes has no IANA twin, and the closest one was hours off. Names neither
//! known nor defined: a known name inside the TZID, then an offset written in it
//! (`UTC+11`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{
    DateTime, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc,
};
use chrono_tz::Tz;
use icalendar::parser::{Component, read_components};

use crate::property::{date_time, unfolded, value};

/// Onsets of a definition's yearly rules are computed up to this year: past the furthest
/// window (a century from now).
const LAST_YEAR: i32 = 2200;
/// Onsets computed per observance before giving up on its rule.
const MAX_ONSETS: usize = 2_000;

/// A zone times are written in: one of the database, or one the file defines.
#[derive(Debug, Clone, PartialEq)]
pub enum Zone {
    Database(Tz),
    Defined(Arc<Definition>),
}

impl Zone {
    pub const UTC: Zone = Zone::Database(Tz::UTC);

    /// The database's name, or the TZID the file defined.
    pub fn name(&self) -> &str {
        match self {
            Zone::Database(tz) => tz.name(),
            Zone::Defined(definition) => &definition.name,
        }
    }

    pub fn is_utc(&self) -> bool {
        *self == Zone::UTC
    }

    /// The offset from UTC in force at an instant.
    pub fn offset(&self, at: DateTime<Utc>) -> FixedOffset {
        match self {
            Zone::Database(tz) => tz.offset_from_utc_datetime(&at.naive_utc()).fix(),
            Zone::Defined(definition) => {
                FixedOffset::east_opt(definition.offset_at(at.timestamp()))
                    .unwrap_or(FixedOffset::east_opt(0).expect("zero is an offset"))
            }
        }
    }

    /// The wall-clock time here at an instant.
    pub fn wall(&self, at: DateTime<Utc>) -> NaiveDateTime {
        at.naive_utc() + Duration::seconds(i64::from(self.offset(at).local_minus_utc()))
    }

    /// The instant of a wall-clock time here, as RFC 5545 §3.3.5 reads it: a time that
    /// occurs twice (autumn) is the first one; a time skipped by a spring-forward gap is
    /// read with the UTC offset in force before the gap (02:30 on the day Berlin skips
    /// 02:00–03:00 is 01:30 UTC, i.e. 03:30 summer time).
    pub fn instant(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        match self {
            Zone::Database(tz) => match tz.from_local_datetime(&wall) {
                LocalResult::Single(t) => t.with_timezone(&Utc),
                LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
                LocalResult::None => self.before_gap(wall),
            },
            Zone::Defined(definition) => {
                let seconds = wall.and_utc().timestamp();
                // Offsets change at most once within a day either side.
                let mut offsets = [
                    definition.offset_at(seconds - 86_400),
                    definition.offset_at(seconds + 86_400),
                ];
                offsets.sort_unstable_by(|a, b| b.cmp(a));
                offsets
                    .iter()
                    .map(|offset| seconds - i64::from(*offset))
                    .find(|at| i64::from(definition.offset_at(*at)) == seconds - at)
                    .and_then(|at| DateTime::from_timestamp(at, 0))
                    .unwrap_or_else(|| self.before_gap(wall))
            }
        }
    }

    /// A wall time in a gap, with the offset in force a day earlier: gaps are hours long
    /// and months apart, so that is the one just before this gap.
    fn before_gap(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        let day_before = (wall - Duration::days(1)).and_utc();
        let before = self.offset(day_before).local_minus_utc();
        (wall - Duration::seconds(i64::from(before))).and_utc()
    }
}

/// The zones of one file: its `VTIMEZONE` definitions, its calendar's own zone, and every
/// `TZID` resolved so far.
#[derive(Debug, Default)]
pub struct Zones {
    definitions: HashMap<String, Arc<Definition>>,
    resolved: RefCell<HashMap<String, Result<Zone, String>>>,
    floating: Option<Zone>,
}

impl Zones {
    /// Reads the `VTIMEZONE` blocks (each a whole component's text); one that cannot be
    /// read is left out, and its TZID then resolves as if it were not defined.
    /// `calendar_zone` is the file's `X-WR-TIMEZONE`; one that names no zone is passed
    /// over, and floating times stay UTC.
    pub fn read(blocks: &[String], calendar_zone: Option<&str>) -> Zones {
        let mut definitions = HashMap::new();
        for block in blocks {
            let text = unfolded(block);
            let Ok(components) = read_components(&text) else {
                continue;
            };
            for component in &components {
                if let Some(definition) = Definition::read(component) {
                    definitions
                        .entry(definition.name.clone())
                        .or_insert(Arc::new(definition));
                }
            }
        }
        let mut zones = Zones {
            definitions,
            resolved: RefCell::default(),
            floating: None,
        };
        zones.floating = calendar_zone.and_then(|name| zones.resolve(name).ok());
        zones
    }

    /// The zone of times written without `Z` or `TZID` (RFC 5545's "floating" times):
    /// the calendar's own, when it names one.
    pub fn floating(&self) -> Option<&Zone> {
        self.floating.as_ref()
    }

    /// The zone a `TZID` parameter names.
    pub fn resolve(&self, tzid: &str) -> Result<Zone, String> {
        let name = tzid.trim().trim_matches('"');
        if let Some(known) = self.resolved.borrow().get(name) {
            return known.clone();
        }
        let resolved = match (database_zone(name), self.definitions.get(name)) {
            // An Area/Location zone (behind a prefix too) or a Windows name's.
            (Ok(tz), _) if tz.name().contains('/') => Ok(Zone::Database(tz)),
            // Any other name the file defines, a legacy `EST` included: the file says
            // what it means by it.
            (_, Some(definition)) => Ok(Zone::Defined(definition.clone())),
            (Ok(tz), None) => Ok(Zone::Database(tz)),
            (Err(_), None) => name_inside(name)
                .or_else(|| offset_in_name(name))
                .map(Zone::Database)
                .ok_or_else(|| format!("unknown time zone {tzid:?}")),
        };
        self.resolved
            .borrow_mut()
            .insert(name.to_owned(), resolved.clone());
        resolved
    }
}

/// A `TZID` the database knows: IANA names (`Europe/Berlin`), the same behind a vendor
/// prefix (`/mozilla.org/20050126_1/Europe/Berlin`), or a Windows name (Outlook).
fn database_zone(tzid: &str) -> Result<Tz, String> {
    let name = tzid.trim().trim_matches('"');
    if let Ok(tz) = Tz::from_str(name) {
        return Ok(tz);
    }
    if let Some(iana) = windows_zone(name) {
        return Tz::from_str(iana).map_err(|_| format!("unknown time zone {tzid:?}"));
    }
    // Prefixed names: try the last two, then three, path segments.
    let segments: Vec<&str> = name.split('/').filter(|s| !s.is_empty()).collect();
    for take in [2, 3, 1] {
        if segments.len() >= take
            && let Ok(tz) = Tz::from_str(&segments[segments.len() - take..].join("/"))
        {
            return Ok(tz);
        }
    }
    Err(format!("unknown time zone {tzid:?}"))
}

/// The zones most calendars are written in, first the busiest, then every zone a Windows
/// name maps to: the preferred answers when a `VTIMEZONE` matches several zones alike.
fn major_zones() -> Vec<Tz> {
    let mut zones: Vec<Tz> = [
        "Europe/Berlin",
        "Europe/London",
        "America/New_York",
        "America/Chicago",
        "America/Denver",
        "America/Los_Angeles",
        "America/Sao_Paulo",
        "Asia/Kolkata",
        "Asia/Shanghai",
        "Asia/Tokyo",
        "Australia/Sydney",
    ]
    .iter()
    .chain(WINDOWS_ZONES.iter().map(|(_, iana)| iana))
    .filter_map(|name| Tz::from_str(name).ok())
    .collect();
    let mut seen = std::collections::HashSet::new();
    zones.retain(|tz| seen.insert(*tz));
    zones
}

/// The Windows zone names Outlook and Exchange write in `TZID`, to their IANA zone
/// (the "001" territory of CLDR's windowsZones table).
fn windows_zone(name: &str) -> Option<&'static str> {
    WINDOWS_ZONES
        .iter()
        .find(|(windows, _)| windows.eq_ignore_ascii_case(name))
        .map(|(_, iana)| *iana)
}

const WINDOWS_ZONES: &[(&str, &str)] = &[
    ("AUS Eastern Standard Time", "Australia/Sydney"),
    ("Alaskan Standard Time", "America/Anchorage"),
    ("Arabian Standard Time", "Asia/Dubai"),
    ("Atlantic Standard Time", "America/Halifax"),
    ("Canada Central Standard Time", "America/Regina"),
    ("Central Europe Standard Time", "Europe/Budapest"),
    ("Central European Standard Time", "Europe/Warsaw"),
    ("Central Standard Time", "America/Chicago"),
    ("China Standard Time", "Asia/Shanghai"),
    ("E. Europe Standard Time", "Europe/Chisinau"),
    ("E. South America Standard Time", "America/Sao_Paulo"),
    ("Eastern Standard Time", "America/New_York"),
    ("FLE Standard Time", "Europe/Kiev"),
    ("GMT Standard Time", "Europe/London"),
    ("GTB Standard Time", "Europe/Bucharest"),
    ("Greenwich Standard Time", "Atlantic/Reykjavik"),
    ("Hawaiian Standard Time", "Pacific/Honolulu"),
    ("India Standard Time", "Asia/Kolkata"),
    ("Israel Standard Time", "Asia/Jerusalem"),
    ("Korea Standard Time", "Asia/Seoul"),
    ("Mountain Standard Time", "America/Denver"),
    ("New Zealand Standard Time", "Pacific/Auckland"),
    ("Pacific Standard Time", "America/Los_Angeles"),
    ("Romance Standard Time", "Europe/Paris"),
    ("Russian Standard Time", "Europe/Moscow"),
    ("Singapore Standard Time", "Asia/Singapore"),
    ("South Africa Standard Time", "Africa/Johannesburg"),
    ("Tokyo Standard Time", "Asia/Tokyo"),
    ("Turkey Standard Time", "Europe/Istanbul"),
    ("US Mountain Standard Time", "America/Phoenix"),
    ("W. Europe Standard Time", "Europe/Berlin"),
];

/// One `VTIMEZONE`: the UTC offset in force from each onset on.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// Its TZID.
    name: String,
    /// (UTC seconds of the onset, offset in seconds from then), in time order.
    onsets: Vec<(i64, i32)>,
    /// The offset before the first onset.
    before: i32,
}

impl Definition {
    fn read(component: &Component) -> Option<Definition> {
        if !component.name.as_str().eq_ignore_ascii_case("VTIMEZONE") {
            return None;
        }
        let name = value(component, "TZID")?
            .trim()
            .trim_matches('"')
            .to_owned();
        // (onset in UTC seconds, offset to, offset from)
        let mut onsets: Vec<(i64, i32, i32)> = Vec::new();
        for observance in &component.components {
            let kind = observance.name.as_str();
            if !kind.eq_ignore_ascii_case("STANDARD") && !kind.eq_ignore_ascii_case("DAYLIGHT") {
                continue;
            }
            let Some(to) = value(observance, "TZOFFSETTO").and_then(offset) else {
                continue;
            };
            let from = value(observance, "TZOFFSETFROM")
                .and_then(offset)
                .unwrap_or(to);
            // An onset is local time (RFC 5545 §3.6.5); a stray `Z` is read the same way.
            let Some((start, _)) = value(observance, "DTSTART").and_then(date_time) else {
                continue;
            };
            for local in onsets_of(observance, start) {
                let utc = (local - Duration::seconds(i64::from(from)))
                    .and_utc()
                    .timestamp();
                onsets.push((utc, to, from));
            }
        }
        onsets.sort_by_key(|(at, _, _)| *at);
        // Before the earliest onset: the offset that onset changes from.
        let before = onsets.first()?.2;
        Some(Definition {
            name,
            onsets: onsets.into_iter().map(|(at, to, _)| (at, to)).collect(),
            before,
        })
    }

    /// The offset in force at a UTC instant: the latest onset's, so a definition that
    /// lists only one year's changes keeps the last of them afterwards (RFC 5545: an
    /// observance holds until the next onset).
    fn offset_at(&self, utc: i64) -> i32 {
        match self.onsets.partition_point(|(at, _)| *at <= utc) {
            0 => self.before,
            n => self.onsets[n - 1].1,
        }
    }
}

/// `+0100`, `-0230`, `+013000` to seconds east of UTC.
fn offset(value: &str) -> Option<i32> {
    let value = value.trim();
    let (sign, digits) = match value.as_bytes().first()? {
        b'+' => (1, &value[1..]),
        b'-' => (-1, &value[1..]),
        _ => (1, value),
    };
    if !(digits.len() == 4 || digits.len() == 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..4].parse().ok()?;
    let seconds: i32 = match &digits[4..] {
        "" => 0,
        more => more.parse().ok()?,
    };
    (hours < 24 && minutes < 60 && seconds < 60)
        .then_some(sign * (hours * 3600 + minutes * 60 + seconds))
}

/// An observance's onsets on the local clock: its DTSTART, its RRULE's repetitions up to
/// [`LAST_YEAR`], and its RDATEs.
fn onsets_of(observance: &Component, start: NaiveDateTime) -> Vec<NaiveDateTime> {
    let mut onsets = vec![start];
    let dt_start = rrule::Tz::UTC.from_utc_datetime(&start);
    let end = NaiveDate::from_ymd_opt(LAST_YEAR + 1, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or(start);
    for rule in observance
        .properties
        .iter()
        .filter(|p| p.name.as_str().eq_ignore_ascii_case("RRULE"))
    {
        let Ok(rule) = rule
            .val
            .as_str()
            .parse::<rrule::RRule<rrule::Unvalidated>>()
            .and_then(|r| r.validate(dt_start))
        else {
            continue;
        };
        let set = rrule::RRuleSet::new(dt_start).rrule(rule);
        for at in set.into_iter().take(MAX_ONSETS) {
            let at = at.naive_utc();
            if at >= end {
                break;
            }
            onsets.push(at);
        }
    }
    for rdate in observance
        .properties
        .iter()
        .filter(|p| p.name.as_str().eq_ignore_ascii_case("RDATE"))
    {
        for value in rdate.val.as_str().split(',') {
            if let Some((at, _)) = date_time(value) {
                onsets.push(at);
            }
        }
    }
    onsets.sort();
    onsets.dedup();
    onsets
}

/// The zone's offset at a UTC instant, in seconds.
fn offset_of(tz: Tz, utc: i64) -> Option<i32> {
    let at = chrono::DateTime::from_timestamp(utc, 0)?.naive_utc();
    Some(tz.offset_from_utc_datetime(&at).fix().local_minus_utc())
}

/// The zones tried, in order of preference on a tie: the major ones (those Windows names
/// map to), then the rest, fixed-offset `Etc/` zones last.
fn candidates() -> impl Iterator<Item = Tz> {
    let major = major_zones();
    let preferred: std::collections::HashSet<Tz> = major.iter().copied().collect();
    let rest = chrono_tz::TZ_VARIANTS
        .iter()
        .copied()
        .filter(move |tz| !preferred.contains(tz) && !tz.name().starts_with("Etc/"));
    let fixed = chrono_tz::TZ_VARIANTS
        .iter()
        .copied()
        .filter(|tz| tz.name().starts_with("Etc/"));
    major.into_iter().chain(rest).chain(fixed)
}

/// A known name at the end of a TZID after some prefix: `custom_America/New_York`,
/// `Lotus: Europe/Berlin`. The longest such tail that is a zone wins.
fn name_inside(name: &str) -> Option<Tz> {
    name.char_indices()
        .filter(|(_, c)| matches!(c, '_' | ' ' | '-' | '.' | ':' | '(' | ')' | ','))
        .map(|(i, c)| name[i + c.len_utf8()..].trim())
        .filter(|tail| tail.contains('/'))
        .find_map(|tail| Tz::from_str(tail).ok())
}

/// An offset written in the name: `UTC+11`, `GMT +0100 (Standard) / …` (the first one),
/// `(UTC-03:00) Brasília`. Whole hours become the fixed `Etc/GMT` zone (whose sign is
/// POSIX's, the reverse); other offsets a zone that keeps that offset all year.
fn offset_in_name(name: &str) -> Option<Tz> {
    let upper = name.to_ascii_uppercase();
    let seconds = ["UTC", "GMT"].iter().find_map(|prefix| {
        upper.match_indices(prefix).find_map(|(at, _)| {
            let rest = upper[at + prefix.len()..].trim_start();
            let (sign, rest) = match rest.chars().next()? {
                '+' => (1, &rest[1..]),
                '-' | '−' => (-1, &rest[rest.chars().next()?.len_utf8()..]),
                _ => return None,
            };
            let digits: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ':')
                .collect();
            let (hours, minutes) = match digits.split_once(':') {
                Some((h, m)) => (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?),
                None if digits.len() > 2 => (
                    digits[..digits.len() - 2].parse().ok()?,
                    digits[digits.len() - 2..].parse().ok()?,
                ),
                None => (digits.parse().ok()?, 0),
            };
            (hours <= 14 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
        })
    })?;
    if seconds % 3600 == 0 {
        let hours = seconds / 3600;
        let name = match hours {
            0 => "Etc/UTC".to_owned(),
            h if h > 0 => format!("Etc/GMT-{h}"),
            h => format!("Etc/GMT+{}", -h),
        };
        return Tz::from_str(&name).ok();
    }
    let year = |month| {
        NaiveDate::from_ymd_opt(2026, month, 15)
            .and_then(|d| d.and_hms_opt(12, 0, 0))
            .map(|at| at.and_utc().timestamp())
    };
    let (winter, summer) = (year(1)?, year(7)?);
    candidates().find(|tz| {
        offset_of(*tz, winter) == Some(seconds) && offset_of(*tz, summer) == Some(seconds)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(blocks: &[&str]) -> Zones {
        Zones::read(
            &blocks.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
            None,
        )
    }

    /// The zone's offset at a UTC time, in hours.
    fn hours(zone: &Zone, utc: &str) -> f64 {
        let at: DateTime<Utc> = utc.parse().unwrap();
        f64::from(zone.offset(at).local_minus_utc()) / 3600.0
    }

    const EXCHANGE: &str = "BEGIN:VTIMEZONE\nTZID:GMT +0100 (Standard) / GMT +0200 (Daylight)\nBEGIN:STANDARD\nDTSTART:16010101T030000\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:16010101T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\nEND:DAYLIGHT\nEND:VTIMEZONE\n";

    #[test]
    fn a_defined_zone_with_european_rules_keeps_them() {
        let name = "GMT +0100 (Standard) / GMT +0200 (Daylight)";
        let zone = zones(&[EXCHANGE]).resolve(name).unwrap();
        for (utc, local) in [
            ("2026-03-28T12:00:00Z", 1.0),
            ("2026-03-30T12:00:00Z", 2.0),
            ("2026-10-26T12:00:00Z", 1.0),
            // Its rules go on past the database's usual horizon.
            ("2150-07-01T12:00:00Z", 2.0),
        ] {
            assert_eq!(hours(&zone, utc), local, "{utc}");
        }
        assert_eq!(zone.name(), name);
    }

    #[test]
    fn a_defined_zone_no_place_uses_is_read_as_defined() {
        // +12 until May, +10 from the first Sunday of May, +12 again from October.
        let mine = "BEGIN:VTIMEZONE\nTZID:MyTimezone\nBEGIN:STANDARD\nDTSTART:19700503T030000\nTZOFFSETFROM:+1200\nTZOFFSETTO:+1000\nRRULE:FREQ=YEARLY;BYMONTH=5;BYDAY=1SU\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:19701004T020000\nTZOFFSETFROM:+1000\nTZOFFSETTO:+1200\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU\nEND:DAYLIGHT\nEND:VTIMEZONE\n";
        let zone = zones(&[mine]).resolve("MyTimezone").unwrap();
        assert_eq!(hours(&zone, "2026-04-01T00:00:00Z"), 12.0);
        assert_eq!(hours(&zone, "2026-06-01T00:00:00Z"), 10.0);
        assert_eq!(hours(&zone, "2026-12-01T00:00:00Z"), 12.0);
        let wall = |text: &str| NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S").unwrap();
        assert_eq!(
            zone.instant(wall("20260401T100000")).to_rfc3339(),
            "2026-03-31T22:00:00+00:00"
        );
        assert_eq!(
            zone.instant(wall("20260601T100000")).to_rfc3339(),
            "2026-06-01T00:00:00+00:00"
        );
    }

    #[test]
    fn a_definition_of_one_years_changes_keeps_the_observance_in_force() {
        // STANDARD listed first: the offset before the earliest onset (March) is the one
        // that onset changes from (+01), not STANDARD's.
        let one_year = "BEGIN:VTIMEZONE\nTZID:Local Time\nBEGIN:STANDARD\nDTSTART:20261025T030000\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:20260329T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nEND:DAYLIGHT\nEND:VTIMEZONE\n";
        let zone = zones(&[one_year]).resolve("Local Time").unwrap();
        assert_eq!(hours(&zone, "2026-01-15T12:00:00Z"), 1.0);
        assert_eq!(hours(&zone, "2026-07-01T12:00:00Z"), 2.0);
        assert_eq!(hours(&zone, "2026-11-15T12:00:00Z"), 1.0);
        // The spring gap and the autumn repeat, as for database zones.
        let wall = |text: &str| NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S").unwrap();
        assert_eq!(
            zone.instant(wall("20260329T023000")).to_rfc3339(),
            "2026-03-29T01:30:00+00:00"
        );
        assert_eq!(
            zone.instant(wall("20261025T023000")).to_rfc3339(),
            "2026-10-25T00:30:00+00:00"
        );
    }

    #[test]
    fn a_legacy_name_the_file_defines_is_the_files_and_iana_names_stay_the_databases() {
        // `EST` is a fixed -05:00 in the database; this file gives it summer time.
        let est = "BEGIN:VTIMEZONE\nTZID:EST\nBEGIN:STANDARD\nDTSTART:20071104T020000\nTZOFFSETFROM:-0400\nTZOFFSETTO:-0500\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:20070311T020000\nTZOFFSETFROM:-0500\nTZOFFSETTO:-0400\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\nEND:DAYLIGHT\nEND:VTIMEZONE\n";
        let fake_berlin = EXCHANGE.replace(
            "GMT +0100 (Standard) / GMT +0200 (Daylight)",
            "Europe/Berlin",
        );
        let z = zones(&[est, &fake_berlin]);
        assert_eq!(
            hours(&z.resolve("EST").unwrap(), "2026-07-01T12:00:00Z"),
            -4.0
        );
        assert_eq!(
            z.resolve("Europe/Berlin").unwrap(),
            Zone::Database(Tz::Europe__Berlin)
        );
        assert_eq!(
            z.resolve("W. Europe Standard Time").unwrap(),
            Zone::Database(Tz::Europe__Berlin)
        );
        // Not defined: the database's own EST.
        assert_eq!(
            Zones::default().resolve("EST").unwrap(),
            Zone::Database(Tz::EST)
        );
    }

    #[test]
    fn southern_and_fixed_definitions_and_names_with_offsets_or_prefixes() {
        let brasilia = "BEGIN:VTIMEZONE\nTZID:(UTC-03:00) Brasília\nBEGIN:STANDARD\nDTSTART:16010101T000000\nTZOFFSETFROM:-0300\nTZOFFSETTO:-0300\nEND:STANDARD\nEND:VTIMEZONE\n";
        let z = zones(&[brasilia]);
        let zone = z.resolve("(UTC-03:00) Brasília").unwrap();
        assert_eq!(hours(&zone, "2026-01-15T12:00:00Z"), -3.0);
        // Not defined: a name inside, or an offset in the name.
        let none = Zones::default();
        let database = |name: &str| match none.resolve(name).unwrap() {
            Zone::Database(tz) => tz,
            other => panic!("{other:?}"),
        };
        assert_eq!(database("custom_America/New_York"), Tz::America__New_York);
        assert_eq!(database("UTC+11"), Tz::Etc__GMTMinus11);
        assert_eq!(database("GMT-0500"), Tz::Etc__GMTPlus5);
        let india = none.resolve("(UTC+05:30) Chennai, Kolkata").unwrap();
        assert_eq!(hours(&india, "2026-01-15T12:00:00Z"), 5.5);
        assert_eq!(
            none.resolve("Western/Central Europe").unwrap_err(),
            "unknown time zone \"Western/Central Europe\""
        );
        assert_eq!(database("Europe/Berlin"), Tz::Europe__Berlin);
    }

    #[test]
    fn vendor_prefixed_and_windows_zone_names_resolve() {
        assert_eq!(
            database_zone("/mozilla.org/20050126_1/Europe/Berlin").unwrap(),
            Tz::Europe__Berlin
        );
        assert_eq!(
            database_zone("America/Argentina/Buenos_Aires").unwrap(),
            Tz::America__Argentina__Buenos_Aires
        );
        assert_eq!(
            database_zone("W. Europe Standard Time").unwrap(),
            Tz::Europe__Berlin
        );
        assert_eq!(
            database_zone("Pacific Standard Time").unwrap(),
            Tz::America__Los_Angeles
        );
    }

    #[test]
    fn offsets_and_broken_definitions() {
        assert_eq!(offset("+0100"), Some(3600));
        assert_eq!(offset("-0230"), Some(-9000));
        assert_eq!(offset("+013015"), Some(5415));
        assert_eq!(offset("0100"), Some(3600));
        assert_eq!(offset("+1"), None);
        assert_eq!(offset("+2500"), None);
        let broken = "BEGIN:VTIMEZONE\nTZID:Nowhere\nBEGIN:STANDARD\nTZOFFSETTO:garbage\nEND:STANDARD\nEND:VTIMEZONE\n";
        assert_eq!(
            zones(&[broken]).resolve("Nowhere").unwrap_err(),
            "unknown time zone \"Nowhere\""
        );
        // An offset no place uses is still the file's word.
        let odd = "BEGIN:VTIMEZONE\nTZID:Odd\nBEGIN:STANDARD\nDTSTART:19700101T000000\nTZOFFSETFROM:+0017\nTZOFFSETTO:+0017\nEND:STANDARD\nEND:VTIMEZONE\n";
        let zone = zones(&[odd]).resolve("Odd").unwrap();
        assert_eq!(
            zone.offset("2026-01-01T00:00:00Z".parse().unwrap())
                .local_minus_utc(),
            17 * 60
        );
    }
}
