//! A `TZID` to a zone: the one place that says which zone a name means.
//!
//! IANA names (`Europe/Berlin`), the same behind a vendor prefix, and the Windows names
//! Outlook writes go straight to the database (`chrono-tz`), whose history is better than
//! a file's summary of it.
//!
//! For other names: Exchange writes `"GMT +0100 (Standard) / GMT +0200 (Daylight)"`, Lotus `"Western/Central
//! Europe"`, others `"(UTC-03:00) Brasília"` or `"custom_America/New_York"`, and define the
//! zone in the file's own `VTIMEZONE`. Such a definition is read (its STANDARD/DAYLIGHT
//! offsets and the rules of their onsets) and matched against the IANA zones, so that
//! recurrence expansion still works in a real `chrono-tz` zone (the only kind `rrule`
//! computes in): the zone whose offsets agree with the definition at the most sampled
//! instants from 1997 to 2037 wins, major zones before others on a tie. Then, a known name
//! inside the TZID; then an offset written in it (`UTC+11`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::str::FromStr;

use chrono::{NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;
use icalendar::parser::{Component, read_components};

use crate::property::{date_time, unfolded, value};

/// The sampled years.
const FIRST_YEAR: i32 = 1997;
const LAST_YEAR: i32 = 2037;
/// Onsets computed per observance before giving up on its rule.
const MAX_ONSETS: usize = 2_000;

/// The zones of one file: its `VTIMEZONE` definitions and every `TZID` resolved so far.
#[derive(Debug, Default)]
pub struct Zones {
    definitions: HashMap<String, Definition>,
    resolved: RefCell<HashMap<String, Result<Tz, String>>>,
}

impl Zones {
    /// Reads the `VTIMEZONE` blocks (each a whole component's text); one that cannot be
    /// read is left out, and its TZID then resolves as if it were not defined.
    pub fn read(blocks: &[String]) -> Zones {
        let mut definitions = HashMap::new();
        for block in blocks {
            let text = unfolded(block);
            let Ok(components) = read_components(&text) else {
                continue;
            };
            for component in &components {
                if let Some((id, definition)) = Definition::read(component) {
                    definitions.entry(id).or_insert(definition);
                }
            }
        }
        Zones {
            definitions,
            resolved: RefCell::default(),
        }
    }

    /// The zone a `TZID` parameter names.
    pub fn resolve(&self, tzid: &str) -> Result<Tz, String> {
        let name = tzid.trim().trim_matches('"');
        if let Some(known) = self.resolved.borrow().get(name) {
            return known.clone();
        }
        let resolved = database_zone(name)
            .or_else(|unknown| {
                self.definitions
                    .get(name)
                    .and_then(Definition::closest_zone)
                    .or_else(|| name_inside(name))
                    .or_else(|| offset_in_name(name))
                    .ok_or(unknown)
            })
            .map_err(|_| match self.definitions.contains_key(name) {
                true => format!("unknown time zone {tzid:?} (its VTIMEZONE has no usable offsets)"),
                false => format!("unknown time zone {tzid:?}"),
            });
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
struct Definition {
    /// (UTC seconds of the onset, offset in seconds from then), in time order.
    onsets: Vec<(i64, i32)>,
    /// The offset before the first onset.
    before: i32,
}

impl Definition {
    fn read(component: &Component) -> Option<(String, Definition)> {
        if !component.name.as_str().eq_ignore_ascii_case("VTIMEZONE") {
            return None;
        }
        let id = value(component, "TZID")?
            .trim()
            .trim_matches('"')
            .to_owned();
        let mut onsets = Vec::new();
        let mut before = None;
        for observance in &component.components {
            let name = observance.name.as_str();
            if !name.eq_ignore_ascii_case("STANDARD") && !name.eq_ignore_ascii_case("DAYLIGHT") {
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
            let first = onsets.len();
            for local in onsets_of(observance, start) {
                onsets.push((
                    (local - chrono::Duration::seconds(i64::from(from)))
                        .and_utc()
                        .timestamp(),
                    to,
                ));
            }
            if onsets.len() > first && before.is_none() {
                before = Some(from);
            }
        }
        if onsets.is_empty() {
            return None;
        }
        onsets.sort_by_key(|(at, _)| *at);
        // The offset before the earliest onset is the one that onset changes from.
        let earliest = onsets[0].1;
        Some((
            id,
            Definition {
                before: before.unwrap_or(earliest),
                onsets,
            },
        ))
    }

    fn offset_at(&self, utc: i64) -> i32 {
        match self.onsets.partition_point(|(at, _)| *at <= utc) {
            0 => self.before,
            n => self.onsets[n - 1].1,
        }
    }

    /// The IANA zone that agrees with this definition most often.
    fn closest_zone(&self) -> Option<Tz> {
        let mut samples: Vec<i64> = Vec::new();
        for year in FIRST_YEAR..=LAST_YEAR {
            for month in 1..=12 {
                for day in [1, 15] {
                    if let Some(at) = NaiveDate::from_ymd_opt(year, month, day)
                        .and_then(|d| d.and_hms_opt(12, 0, 0))
                    {
                        samples.push(at.and_utc().timestamp());
                    }
                }
            }
        }
        let (first, last) = (samples[0], samples[samples.len() - 1]);
        for (at, _) in &self.onsets {
            if (first..=last).contains(at) {
                samples.extend([at - 3 * 3600, at + 3 * 3600]);
            }
        }
        let expected: Vec<i32> = samples.iter().map(|at| self.offset_at(*at)).collect();
        let mut best: Option<(usize, Tz)> = None;
        for tz in candidates() {
            let limit = best.map_or(usize::MAX, |(misses, _)| misses);
            let mut misses = 0;
            for (at, want) in samples.iter().zip(&expected) {
                if offset_of(tz, *at) != Some(*want) {
                    misses += 1;
                    if misses >= limit {
                        break;
                    }
                }
            }
            if misses < limit {
                best = Some((misses, tz));
                if misses == 0 {
                    break;
                }
            }
        }
        // A zone wrong at most samples is no match (a definition with offsets no place
        // uses).
        best.filter(|(misses, _)| *misses * 2 < samples.len())
            .map(|(_, tz)| tz)
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
        Zones::read(&blocks.iter().map(|b| b.to_string()).collect::<Vec<_>>())
    }

    const EXCHANGE: &str = "BEGIN:VTIMEZONE\nTZID:GMT +0100 (Standard) / GMT +0200 (Daylight)\nBEGIN:STANDARD\nDTSTART:16010101T030000\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:16010101T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\nEND:DAYLIGHT\nEND:VTIMEZONE\n";

    #[test]
    fn a_defined_zone_with_european_rules_resolves_to_a_european_zone() {
        let tz = zones(&[EXCHANGE])
            .resolve("GMT +0100 (Standard) / GMT +0200 (Daylight)")
            .unwrap();
        for (utc, local) in [
            ("2026-03-28T12:00:00", 3600),
            ("2026-03-30T12:00:00", 7200),
            ("2026-10-26T12:00:00", 3600),
        ] {
            let at: NaiveDateTime = utc.parse().unwrap();
            assert_eq!(
                tz.offset_from_utc_datetime(&at).fix().local_minus_utc(),
                local,
                "{tz:?} at {utc}"
            );
        }
        assert!(tz.name().starts_with("Europe/"), "{tz:?}");
    }

    #[test]
    fn southern_and_fixed_definitions_and_names_with_offsets_or_prefixes() {
        let brasilia = "BEGIN:VTIMEZONE\nTZID:(UTC-03:00) Brasília\nBEGIN:STANDARD\nDTSTART:16010101T000000\nTZOFFSETFROM:-0300\nTZOFFSETTO:-0300\nEND:STANDARD\nEND:VTIMEZONE\n";
        let z = zones(&[brasilia]);
        let tz = z.resolve("(UTC-03:00) Brasília").unwrap();
        let at: NaiveDateTime = "2026-01-15T12:00:00".parse().unwrap();
        assert_eq!(
            tz.offset_from_utc_datetime(&at).fix().local_minus_utc(),
            -3 * 3600
        );
        // Not defined: a name inside, or an offset in the name.
        let none = Zones::default();
        assert_eq!(
            none.resolve("custom_America/New_York").unwrap(),
            Tz::America__New_York
        );
        assert_eq!(none.resolve("UTC+11").unwrap(), Tz::Etc__GMTMinus11);
        assert_eq!(none.resolve("GMT-0500").unwrap(), Tz::Etc__GMTPlus5);
        let india = none.resolve("(UTC+05:30) Chennai, Kolkata").unwrap();
        assert_eq!(
            india.offset_from_utc_datetime(&at).fix().local_minus_utc(),
            5 * 3600 + 1800
        );
        assert_eq!(
            none.resolve("Western/Central Europe").unwrap_err(),
            "unknown time zone \"Western/Central Europe\""
        );
        assert_eq!(none.resolve("Europe/Berlin").unwrap(), Tz::Europe__Berlin);
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
        let odd = "BEGIN:VTIMEZONE\nTZID:Odd\nBEGIN:STANDARD\nDTSTART:19700101T000000\nTZOFFSETFROM:+0017\nTZOFFSETTO:+0017\nEND:STANDARD\nEND:VTIMEZONE\n";
        assert_eq!(
            zones(&[odd]).resolve("Odd").unwrap_err(),
            "unknown time zone \"Odd\" (its VTIMEZONE has no usable offsets)"
        );
    }
}
