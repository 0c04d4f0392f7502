//! Spaced-repetition review of fading memories: a person goes through the fading queue
//! and decides each memory — keep it as it is, reinforce it, weaken it, pin it, snooze it
//! for some days, or forget it. Every decision is recorded in the memory's history (a
//! `review` event) and schedules when the queue shows the memory again: a keep doubles the
//! interval since the last one (1, 2, 4, 8… days, at most [`MAX_INTERVAL_DAYS`]), a snooze
//! hides it for the days given, and a memory reinforced or pinned leaves the queue on its
//! own (its retention rises; pinned memories never fade).

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// The longest interval a keep gives.
pub const MAX_INTERVAL_DAYS: u32 = 365;
/// The longest snooze.
pub const MAX_SNOOZE_DAYS: u32 = 3650;

/// A person's decision on a fading memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Still right, leave it be: shown again after a growing interval.
    Keep,
    /// Worth keeping strong: reinforced as if recalled.
    Reinforce,
    /// Less worth keeping: weakened, it fades sooner.
    Weaken,
    /// Never fades.
    Pin,
    /// Not now: hidden from the queue for some days.
    Snooze {
        /// For how many days.
        days: u32,
    },
    /// Retired from every read (kept for history until purged).
    Forget,
}

impl ReviewDecision {
    /// Its name: `keep`, `reinforce`, `weaken`, `pin`, `snooze`, `forget`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Reinforce => "reinforce",
            Self::Weaken => "weaken",
            Self::Pin => "pin",
            Self::Snooze { .. } => "snooze",
            Self::Forget => "forget",
        }
    }
}

/// When the review queue shows a memory again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReviewSchedule {
    /// Not shown before this.
    pub due_at: Timestamp,
    /// The interval the last keep gave, in days (0 before any keep).
    pub interval_days: u32,
    /// Decisions taken on the memory.
    pub reviews: u32,
}

impl ReviewSchedule {
    /// The schedule after `decision` at `now`, from the one before it (none: never
    /// reviewed).
    pub fn after(
        before: Option<&ReviewSchedule>,
        decision: ReviewDecision,
        now: Timestamp,
    ) -> ReviewSchedule {
        let interval = before.map_or(0, |s| s.interval_days);
        let reviews = before.map_or(0, |s| s.reviews) + 1;
        let (wait_days, interval_days) = match decision {
            ReviewDecision::Keep | ReviewDecision::Reinforce => {
                let next = (interval.max(1) * 2).min(MAX_INTERVAL_DAYS);
                let next = if interval == 0 { 1 } else { next };
                (next, next)
            }
            ReviewDecision::Snooze { days } => (days, interval),
            // A weakened memory is looked at again tomorrow if it is still fading then.
            ReviewDecision::Weaken => (1, interval),
            ReviewDecision::Pin | ReviewDecision::Forget => (0, interval),
        };
        ReviewSchedule {
            due_at: crate::time::add_hours(now, f64::from(wait_days) * 24.0),
            interval_days,
            reviews,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_keep_doubles_the_interval_and_a_snooze_keeps_it() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut schedule = None;
        let mut intervals = Vec::new();
        for _ in 0..5 {
            let next = ReviewSchedule::after(schedule.as_ref(), ReviewDecision::Keep, now);
            intervals.push(next.interval_days);
            schedule = Some(next);
        }
        assert_eq!(intervals, [1, 2, 4, 8, 16]);
        let snoozed =
            ReviewSchedule::after(schedule.as_ref(), ReviewDecision::Snooze { days: 3 }, now);
        assert_eq!(snoozed.interval_days, 16);
        assert_eq!(snoozed.reviews, 6);
        assert_eq!(
            snoozed.due_at,
            "2026-01-04T00:00:00Z".parse::<Timestamp>().unwrap()
        );
        let mut long = schedule.unwrap();
        long.interval_days = 300;
        assert_eq!(
            ReviewSchedule::after(Some(&long), ReviewDecision::Keep, now).interval_days,
            MAX_INTERVAL_DAYS
        );
    }
}
