//! Time is injected: the model and the engine take `now` from a [`Clock`], never from the
//! system directly, so tests and simulations (`LEVH_NOW`) can move it.

use std::fmt;

pub use jiff::Timestamp;

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
