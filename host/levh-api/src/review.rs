//! Spaced-repetition review of the fading queue ([`levh_core::review`]): the memories to
//! look at, and a person's decision on each, recorded in the memory's history.

use levh_core::review::ReviewDecision;
use levh_core::{Levh, Scope};

use crate::requests::{ReviewBody, ReviewQueueArgs, limit, memory_id};
use crate::views::{MemoryView, ReviewItemView, ReviewQueueView, ReviewView};
use crate::{Error, Result};

/// How many the queue shows when no limit is given.
pub const DEFAULT_LIMIT: usize = 20;

/// [`Operation::ListReviewMemories`](crate::Operation::ListReviewMemories).
pub fn queue(levh: &Levh, scope: &Scope, args: ReviewQueueArgs) -> Result<ReviewQueueView> {
    let limit = limit(args.limit, DEFAULT_LIMIT)?;
    let items = levh.review_queue(scope, args.project, limit)?;
    Ok(ReviewQueueView {
        memories: items
            .into_iter()
            .map(|item| ReviewItemView {
                memory: MemoryView::of(levh, &item.fading.memory),
                reviews: item.schedule.map_or(0, |s| s.reviews),
                interval_days: item.schedule.map_or(0, |s| s.interval_days),
            })
            .collect(),
    })
}

/// The decision a request names.
pub fn decision(name: &str, days: Option<u32>) -> Result<ReviewDecision> {
    let decision = match name.trim() {
        "keep" => ReviewDecision::Keep,
        "reinforce" => ReviewDecision::Reinforce,
        "weaken" => ReviewDecision::Weaken,
        "pin" => ReviewDecision::Pin,
        "forget" => ReviewDecision::Forget,
        "snooze" => ReviewDecision::Snooze {
            days: days.ok_or_else(|| {
                Error::invalid("invalid days: `snooze` needs the number of days (1..3650)")
            })?,
        },
        other => {
            return Err(Error::invalid(format!(
                "invalid decision: '{}' is not keep, reinforce, weaken, pin, snooze or forget",
                other.escape_debug()
            )));
        }
    };
    if days.is_some() && !matches!(decision, ReviewDecision::Snooze { .. }) {
        return Err(Error::invalid(format!(
            "invalid days: only `snooze` takes days, not `{}`",
            decision.as_str()
        )));
    }
    Ok(decision)
}

/// [`Operation::ReviewMemory`](crate::Operation::ReviewMemory): a person's decision.
pub fn review(levh: &Levh, scope: &Scope, id: &str, body: ReviewBody) -> Result<ReviewView> {
    let id = memory_id("id", id)?;
    let decision = decision(&body.decision, body.days)?;
    let reviewed = levh.review(scope, id, decision)?;
    Ok(ReviewView {
        memory_id: id.to_string(),
        decision: decision.as_str().to_owned(),
        memory: reviewed.memory.as_ref().map(|m| MemoryView::of(levh, m)),
        next_review: reviewed.schedule.due_at.to_string(),
        interval_days: reviewed.schedule.interval_days,
        reviews: reviewed.schedule.reviews,
    })
}
