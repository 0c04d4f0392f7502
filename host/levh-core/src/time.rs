//! Time is injected: the model and the engine take `now` from a [`Clock`], never from the
//! system directly, so tests and simulations (`LEVH_NOW`) can move it.

use std::fmt;

pub use jiff::Timestamp;

/// The one reading of a time a person or client gives (CLI options, REST and MCP
/// arguments, `LEVH_NOW`): RFC 3339 (`2026-11-30T09:00:00Z`, any offset), or a date
/// (`2026-11-30`, midnight UTC). An RFC 3339 time past the last instant levh can hold
/// (`9999-12-31T23:59:59Z` with a positive offset, or beyond) means "the end of time" and
/// is clamped to it, the same on every surface. `None`: not a time.
pub fn parse_instant(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(at) = text.parse::<Timestamp>() {
        return Some(within_range(at));
    }
    // Only a date alone: jiff reads the date of a date and time too, and a time without
    // an offset must be refused, not moved to midnight.
    let date_alone = !text.contains(['T', 't', ' ']);
    if date_alone && let Ok(date) = text.parse::<jiff::civil::Date>() {
        // The last day or two of year 9999 start past the last instant: the end of time.
        return Some(date.to_zoned(jiff::tz::TimeZone::UTC).map_or_else(
            |_| clamp_beyond(date.year()),
            |z| within_range(z.timestamp()),
        ));
    }
    beyond_range(text)
}

/// The first instant levh can store: what SQLite's integer microseconds read back as
/// (jiff's own range reaches a few nanoseconds further, which a read would refuse).
pub fn earliest() -> Timestamp {
    Timestamp::from_microsecond(EARLIEST_MICROS).expect("jiff's range holds its own bound")
}

/// The last instant levh can store ("the end of time": 9999-12-30T22:00:00Z, the last
/// instant that is a valid date and time in every time zone).
pub fn latest() -> Timestamp {
    Timestamp::from_microsecond(LATEST_MICROS).expect("jiff's range holds its own bound")
}

/// [`earliest`] in microseconds.
pub const EARLIEST_MICROS: i64 = -377_705_023_201_000_000;
/// [`latest`] in microseconds.
pub const LATEST_MICROS: i64 = 253_402_207_200_000_000;

/// A time as every store keeps it: integer microseconds, within what a read can turn back
/// into a time (an instant past the end of time is stored as the end of time). One rule
/// for SQLite and PostgreSQL, so a store moved from one to the other reads the same.
pub fn stored_micros(at: Timestamp) -> i64 {
    at.as_microsecond().clamp(EARLIEST_MICROS, LATEST_MICROS)
}

/// A stored time read back. A value outside the range (written by an older levh, which
/// stored the end of time a few nanoseconds too late) reads as the nearest instant in
/// it, logged, instead of failing the whole read it is part of.
pub fn from_stored_micros(value: i64) -> Timestamp {
    let kept = value.clamp(EARLIEST_MICROS, LATEST_MICROS);
    if kept != value {
        tracing::warn!(
            stored = value,
            "a stored time lies outside what levh can show; read as the nearest one (levh doctor counts them)"
        );
    }
    Timestamp::from_microsecond(kept).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `at`, or the nearest instant levh can store.
pub fn within_range(at: Timestamp) -> Timestamp {
    at.clamp(earliest(), latest())
}

fn clamp_beyond(year: i16) -> Timestamp {
    if year > 0 { latest() } else { earliest() }
}

/// The nearest instant levh can hold, for an RFC 3339 time outside its range (a date
/// and time that parse, with an offset, but land past the last representable instant).
fn beyond_range(text: &str) -> Option<Timestamp> {
    let split = text.rfind(['Z', 'z', '+']).or_else(|| {
        // A negative offset: the last '-' after the time's 'T'.
        let time = text.find(['T', 't', ' '])?;
        text[time..].rfind('-').map(|i| time + i)
    })?;
    let local: jiff::civil::DateTime = text[..split].parse().ok()?;
    Some(clamp_beyond(local.year()))
}

/// Where the engine gets `now` from.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock stuck at one instant (`LEVH_NOW`, tests).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// Hours from `from` to `to`; negative when `to` is earlier.
pub(crate) fn hours_between(from: Timestamp, to: Timestamp) -> f64 {
    to.duration_since(from).as_secs_f64() / 3600.0
}

/// `at` moved forward by a (possibly fractional) number of hours, saturating at the
/// representable range.
pub(crate) fn add_hours(at: Timestamp, hours: f64) -> Timestamp {
    let span = jiff::SignedDuration::from_secs_f64(hours * 3600.0);
    at.checked_add(span).unwrap_or(if hours >= 0.0 {
        Timestamp::MAX
    } else {
        Timestamp::MIN
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_needs_its_offset_and_a_date_alone_is_midnight_utc() {
        assert_eq!(
            parse_instant("2026-10-19"),
            "2026-10-19T00:00:00Z".parse().ok()
        );
        assert_eq!(
            parse_instant("2026-10-19T11:48:30+02:00"),
            "2026-10-19T09:48:30Z".parse().ok()
        );
        assert_eq!(parse_instant("2026-10-19T11:48:30"), None);
        assert_eq!(parse_instant("2026-10-19 11:48"), None);
    }
}
