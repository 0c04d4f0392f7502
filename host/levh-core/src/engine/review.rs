//! The review queue through the engine: the fading memories a person has not put off, and
//! their decisions (see [`crate::review`]).

use super::{FadingMemory, Levh};
use crate::review::{MAX_SNOOZE_DAYS, ReviewDecision, ReviewSchedule};
use crate::{Error, Memory, MemoryId, Result, Scope};

/// A fading memory in the review queue, with its schedule when it was reviewed before.
#[derive(Debug, Clone)]
pub struct ReviewItem {
    /// The memory and its retention now.
    pub fading: FadingMemory,
    /// Its schedule (none: never reviewed).
    pub schedule: Option<ReviewSchedule>,
}

/// What a review decision did.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The memory after the decision (none when it was forgotten).
    pub memory: Option<Memory>,
    /// Its schedule now.
    pub schedule: ReviewSchedule,
}

impl Levh {
    /// The review queue: fading memories (weakest first, as [`Levh::fading`] lists them)
    /// less those a decision put off until later, at most `limit`.
    pub fn review_queue(
        &self,
        scope: &Scope,
        project: Option<String>,
        limit: usize,
    ) -> Result<Vec<ReviewItem>> {
        let now = self.clock.now();
        // The `limit + hidden` weakest hold at least `limit` not put off, when there are.
        let hidden = self.store.review_hidden(&scope.workspace, now)?;
        let fading = self.fading(scope, project, limit.saturating_add(hidden))?;
        let ids: Vec<MemoryId> = fading.iter().map(|f| f.memory.id).collect();
        let schedules = self.store.review_schedules(&scope.workspace, &ids)?;
        Ok(fading
            .into_iter()
            .filter_map(|fading| {
                let schedule = schedules
                    .iter()
                    .find(|(id, _)| *id == fading.memory.id)
                    .map(|(_, s)| *s);
                match schedule {
                    Some(s) if s.due_at > now => None,
                    _ => Some(ReviewItem { fading, schedule }),
                }
            })
            .take(limit)
            .collect())
    }

    /// A person's decision on a memory: applied (reinforced, weakened, pinned, forgotten;
    /// a keep or a snooze changes nothing but the schedule), recorded in its history with
    /// when the queue shows it again.
    pub fn review(
        &self,
        scope: &Scope,
        id: MemoryId,
        decision: ReviewDecision,
    ) -> Result<Reviewed> {
        if let ReviewDecision::Snooze { days } = decision
            && !(1..=MAX_SNOOZE_DAYS).contains(&days)
        {
            return Err(Error::invalid(
                "days",
                format!("{days} is outside 1..{MAX_SNOOZE_DAYS}"),
            ));
        }
        let memory = self.get(scope, id)?;
        let before = self
            .store
            .review_schedules(&scope.workspace, &[memory.id])?
            .pop()
            .map(|(_, s)| s);
        let now = self.clock.now();
        let schedule = ReviewSchedule::after(before.as_ref(), decision, now);
        // The decision is recorded before it is applied: a forget ends the memory's life,
        // and its history must say why.
        if !self.store.record_review(
            &scope.workspace,
            id,
            decision,
            &schedule,
            now,
            &scope.actor,
        )? {
            return Err(Error::NotFound(id));
        }
        let memory = match decision {
            ReviewDecision::Keep | ReviewDecision::Snooze { .. } => Some(memory),
            ReviewDecision::Reinforce => Some(self.reinforce(scope, id)?),
            ReviewDecision::Weaken => Some(self.feedback(scope, id, false)?),
            ReviewDecision::Pin => Some(self.set_pinned(scope, id, true)?),
            ReviewDecision::Forget => {
                self.forget(scope, id)?;
                None
            }
        };
        Ok(Reviewed { memory, schedule })
    }
}
