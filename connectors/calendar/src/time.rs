//! iCalendar date and time values (RFC 5545 §3.3.4, §3.3.5, §3.3.6) turned into instants.
//!
//! A `TZID` is handed to `zones`, the one place that says which zone a name means; what
//! comes back is a zone of the IANA database (`chrono-tz`) or one the file defines.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, SecondsFormat, Utc};

use crate::property::date_time;
use crate::zones::{Zone, Zones};

/// RFC 3339 in UTC with whole seconds: `2026-03-24T08:30:00Z`.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A DATE or DATE-TIME value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Stamp {
    /// `VALUE=DATE` (`20260326`): a whole day, as for all-day events.
    Date(NaiveDate),
    /// `20260323T130000Z`.
    Utc(NaiveDateTime),
    /// `TZID=Europe/Berlin:20260324T093000`, or a time without `TZID` in a calendar that
    /// names its own zone (`X-WR-TIMEZONE`).
    Zoned(NaiveDateTime, Zone),
    /// `20260324T093000` with neither `Z` nor `TZID`, in a calendar that names no zone:
    /// "floating", the same wall time in every zone. A memory server has no "user's zone"
    /// to pin it to, so floating times are read as UTC.
    Floating(NaiveDateTime),
}

impl Stamp {
    /// Parses one value; `tzid` and `value_type` are the property's parameters.
    pub fn parse(
        value: &str,
        tzid: Option<&str>,
        value_type: Option<&str>,
    ) -> Result<Self, String> {
        Self::read(value, tzid, value_type, &Zones::default())
    }

    /// Parses one value whose `TZID` may name a zone the file defines, and whose lack of
    /// one means the calendar's own zone when it has one.
    pub fn read(
        value: &str,
        tzid: Option<&str>,
        value_type: Option<&str>,
        zones: &Zones,
    ) -> Result<Self, String> {
        let value = value.trim();
        let is_date = value_type.is_some_and(|v| v.eq_ignore_ascii_case("DATE"))
            || (value.len() == 8 && value.bytes().all(|b| b.is_ascii_digit()));
        if is_date {
            return NaiveDate::parse_from_str(value, "%Y%m%d")
                .map(Stamp::Date)
                .map_err(|_| format!("{value:?} is not a date (YYYYMMDD)"));
        }
        let (naive, utc) = date_time(value)
            .ok_or_else(|| format!("{value:?} is not a date-time (YYYYMMDDTHHMMSS)"))?;
        if utc {
            return Ok(Stamp::Utc(naive));
        }
        match (tzid, zones.floating()) {
            (Some(name), _) => Ok(Stamp::Zoned(naive, zones.resolve(name)?)),
            (None, Some(calendar)) => Ok(Stamp::Zoned(naive, calendar.clone())),
            (None, None) => Ok(Stamp::Floating(naive)),
        }
    }

    /// The zone this value is written in (UTC for dates, UTC and floating times).
    pub fn zone(&self) -> Zone {
        match self {
            Stamp::Zoned(_, zone) => zone.clone(),
            _ => Zone::UTC,
        }
    }

    /// The wall-clock time as written (midnight for dates).
    pub fn wall(&self) -> NaiveDateTime {
        match self {
            Stamp::Date(date) => date.and_time(NaiveTime::MIN),
            Stamp::Utc(naive) | Stamp::Floating(naive) | Stamp::Zoned(naive, _) => *naive,
        }
    }

    /// The instant. Dates are midnight UTC.
    pub fn instant(&self) -> DateTime<Utc> {
        match self {
            Stamp::Zoned(naive, zone) => zone.instant(*naive),
            other => other.wall().and_utc(),
        }
    }

    pub fn is_date(&self) -> bool {
        matches!(self, Stamp::Date(_))
    }
}

/// An event's length (RFC 5545 §3.3.6): days and weeks are nominal (a day is 23 or 25
/// hours across a DST change), hours, minutes and seconds exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Length {
    pub days: i64,
    pub exact: Duration,
}

/// The longest event accepted: ten years.
const MAX_DAYS: i64 = 3653;

impl Length {
    /// Parses a `DURATION` value (`PT1H30M`, `P1D`, `P2W`) with the `iso8601` crate.
    pub fn parse(value: &str) -> Result<Self, String> {
        let value = value.trim();
        let unsigned = value.strip_prefix('+').unwrap_or(value);
        let bad = || format!("{value:?} is not a duration (like PT1H30M or P1D)");
        if unsigned.starts_with('-') {
            return Err(format!("{value:?} is a negative duration"));
        }
        let length = match iso8601::duration(unsigned).map_err(|_| bad())? {
            iso8601::Duration::Weeks(weeks) => Ok::<_, String>(Length {
                days: i64::from(weeks) * 7,
                exact: Duration::zero(),
            }),
            iso8601::Duration::YMDHMS {
                year,
                month,
                day,
                hour,
                minute,
                second,
                millisecond,
            } => {
                if year != 0 || month != 0 {
                    return Err(bad());
                }
                Ok(Length {
                    days: i64::from(day),
                    exact: Duration::hours(i64::from(hour))
                        + Duration::minutes(i64::from(minute))
                        + Duration::seconds(i64::from(second))
                        + Duration::milliseconds(i64::from(millisecond)),
                })
            }
        }?;
        // Also keeps every later date sum far from chrono's range limits.
        if length.days > MAX_DAYS || length.exact > Duration::days(MAX_DAYS) {
            return Err(format!("{value:?} is longer than {MAX_DAYS} days"));
        }
        Ok(length)
    }

    /// The exact difference between two instants.
    pub fn between(start: DateTime<Utc>, end: DateTime<Utc>) -> Self {
        Length {
            days: 0,
            exact: end - start,
        }
    }

    /// `start` plus this length, days counted on the wall clock of `zone`.
    pub fn after(&self, start: DateTime<Utc>, zone: &Zone) -> DateTime<Utc> {
        let shifted = if self.days == 0 {
            start
        } else {
            zone.instant(zone.wall(start) + Duration::days(self.days))
        };
        shifted + self.exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn berlin_wall_times_become_the_right_utc_instants_on_both_sides_of_dst() {
        let winter = Stamp::parse("20260324T093000", Some("Europe/Berlin"), None).unwrap();
        let summer = Stamp::parse("20260331T093000", Some("Europe/Berlin"), None).unwrap();
        assert_eq!(winter.instant(), utc("2026-03-24T08:30:00Z"));
        assert_eq!(summer.instant(), utc("2026-03-31T07:30:00Z"));
    }

    #[test]
    fn new_york_changes_on_its_own_date() {
        // The US moved to summer time on 8 March 2026, Europe only on 29 March.
        let before = Stamp::parse("20260306T090000", Some("America/New_York"), None).unwrap();
        let after = Stamp::parse("20260309T090000", Some("America/New_York"), None).unwrap();
        assert_eq!(before.instant(), utc("2026-03-06T14:00:00Z"));
        assert_eq!(after.instant(), utc("2026-03-09T13:00:00Z"));
    }

    #[test]
    fn a_time_in_the_spring_gap_uses_the_offset_before_it_and_a_repeated_time_the_first() {
        let gap = Stamp::parse("20260329T023000", Some("Europe/Berlin"), None).unwrap();
        assert_eq!(gap.instant(), utc("2026-03-29T01:30:00Z"));
        let twice = Stamp::parse("20261025T023000", Some("Europe/Berlin"), None).unwrap();
        assert_eq!(twice.instant(), utc("2026-10-25T00:30:00Z"));
    }

    #[test]
    fn utc_floating_and_date_values() {
        assert_eq!(
            Stamp::parse("20260323T130000Z", None, None)
                .unwrap()
                .instant(),
            utc("2026-03-23T13:00:00Z")
        );
        // A TZID next to a Z is ignored: Z wins, as RFC 5545 requires.
        assert_eq!(
            Stamp::parse("20260323T130000Z", Some("Europe/Berlin"), None)
                .unwrap()
                .instant(),
            utc("2026-03-23T13:00:00Z")
        );
        let floating = Stamp::parse("20260323T130000", None, None).unwrap();
        assert!(matches!(floating, Stamp::Floating(_)));
        assert_eq!(floating.instant(), utc("2026-03-23T13:00:00Z"));
        let date = Stamp::parse("20260326", None, Some("DATE")).unwrap();
        assert!(date.is_date());
        assert_eq!(date.instant(), utc("2026-03-26T00:00:00Z"));
    }

    #[test]
    fn floating_times_take_the_calendars_own_zone_when_it_names_one() {
        let berlin = Zones::read(&[], Some("Europe/Berlin"));
        let at = Stamp::read("20260401T100000", None, None, &berlin).unwrap();
        assert_eq!(at.instant(), utc("2026-04-01T08:00:00Z"));
        assert_eq!(at.zone().name(), "Europe/Berlin");
        // A TZID or a Z still wins.
        let tokyo = Stamp::read("20260401T100000", Some("Asia/Tokyo"), None, &berlin).unwrap();
        assert_eq!(tokyo.instant(), utc("2026-04-01T01:00:00Z"));
        let z = Stamp::read("20260401T100000Z", None, None, &berlin).unwrap();
        assert_eq!(z.instant(), utc("2026-04-01T10:00:00Z"));
        // A calendar zone no one knows leaves floating times as they were.
        let unknown = Zones::read(&[], Some("Atlantis/Capital"));
        let floating = Stamp::read("20260401T100000", None, None, &unknown).unwrap();
        assert_eq!(floating.instant(), utc("2026-04-01T10:00:00Z"));
    }

    #[test]
    fn bad_values_and_zones_are_named() {
        assert_eq!(
            Stamp::parse("2026-03-23", None, None).unwrap_err(),
            "\"2026-03-23\" is not a date-time (YYYYMMDDTHHMMSS)"
        );
        assert!(
            Stamp::parse("20261345", None, Some("DATE"))
                .unwrap_err()
                .contains("is not a date")
        );
        assert_eq!(
            Stamp::parse("20260323T130000", Some("Mars/Olympus_Mons"), None).unwrap_err(),
            "unknown time zone \"Mars/Olympus_Mons\""
        );
    }

    #[test]
    fn durations_count_days_on_the_wall_clock() {
        let length = Length::parse("PT1H30M").unwrap();
        assert_eq!(length.exact, Duration::minutes(90));
        assert_eq!(Length::parse("P2W").unwrap().days, 14);
        // One day across the spring change is 23 hours.
        let start = Stamp::parse("20260328T120000", Some("Europe/Berlin"), None).unwrap();
        assert_eq!(
            Length::parse("P1D")
                .unwrap()
                .after(start.instant(), &start.zone()),
            utc("2026-03-29T10:00:00Z")
        );
        assert!(
            Length::parse("-PT15M")
                .unwrap_err()
                .contains("negative duration")
        );
        assert!(
            Length::parse("soon")
                .unwrap_err()
                .contains("not a duration")
        );
    }
}
