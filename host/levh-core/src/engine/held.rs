//! The held queue: what the gate declined to judge, and a person's decisions on it.

use super::*;

impl Levh {
    /// Held candidates of the workspace, oldest first; expired ones are marked first.
    pub fn held_list(
        &self,
        scope: &Scope,
        status: Option<HeldStatus>,
    ) -> Result<Vec<HeldCandidate>> {
        Ok(self
            .store
            .list_held(&scope.workspace, status, self.clock.now(), &scope.actor)?)
    }

    /// One held candidate.
    pub fn held_get(&self, scope: &Scope, id: HeldId) -> Result<HeldCandidate> {
        // Expiry first, so a candidate shown (or decided) is never stale.
        self.store
            .expire_held(&scope.workspace, self.clock.now(), &scope.actor)?;
        self.store
            .get_held(&scope.workspace, id)?
            .ok_or(Error::HeldNotFound(id))
    }

    /// A person admits a held candidate. The memory is stored first, then the row is
    /// closed (compare-and-set): a crash between the two loses nothing, and admitting
    /// again completes it. With `supersede`, the memory that caused the hold is retired
    /// (its `valid_to` and `superseded_by` set).
    pub fn held_admit(&self, scope: &Scope, id: HeldId, supersede: bool) -> Result<HeldAdmission> {
        let held = self.held_get(scope, id)?;
        if held.status != HeldStatus::Held {
            return Err(Error::AlreadyDecided {
                id,
                status: held.status,
            });
        }
        let superseded = match (supersede, held.nearest) {
            (false, _) => None,
            (true, Some(nearest)) => Some(nearest.id),
            (true, None) => {
                return Err(Error::invalid(
                    "supersede",
                    "this candidate has no nearest memory to replace",
                ));
            }
        };
        let new = NewMemory {
            content: held.content.clone(),
            project: held.project.clone(),
            kind: Some(held.kind.clone()),
            source: Some(held.source.clone()),
            importance: Some(held.importance),
            pinned: held.pinned,
            // A replacement takes effect when a person confirms it, so the retired fact's
            // window (closed at the same instant) and the new one's abut, never overlap.
            valid_from: Some(if superseded.is_some() {
                held.valid_from.max(self.clock.now())
            } else {
                held.valid_from
            }),
            valid_to: held.valid_to,
            metadata: Some(held.metadata.clone()),
            session_id: held.session_id.clone(),
        };
        let mut p = self.prepare(scope, new)?;
        p.neighbours
            .retain(|(neighbour, _)| Some(*neighbour) != superseded);
        let admission = AdmissionRecord {
            verdict: "review".into(),
            reasons: vec![
                held.reason.clone(),
                format!("admitted by {}", scope.actor.decider()),
            ],
            decided_by: scope.actor.decider(),
        };
        let neighbours = p.neighbours.clone();
        let record = self.record(scope, p, admission);
        let model = self.config.model;
        let memory_id = self.store.store_held_memory(
            id,
            &record,
            &neighbours,
            &|state| model::interfere(state, &model),
            superseded,
            &scope.actor,
        )?;
        match self.store.close_held(
            &scope.workspace,
            id,
            HeldStatus::Admitted,
            Some(memory_id),
            self.clock.now(),
            &scope.actor,
        )? {
            HeldClose::Closed => Ok(HeldAdmission {
                held_id: id,
                memory_id,
                superseded,
            }),
            HeldClose::AlreadyDecided(status) => Err(Error::AlreadyDecided { id, status }),
            HeldClose::Missing => Err(Error::HeldNotFound(id)),
            HeldClose::AdmissionIncomplete => Err(Error::AdmissionIncomplete(id)),
        }
    }

    /// A person discards a held candidate (compare-and-set).
    pub fn held_discard(&self, scope: &Scope, id: HeldId) -> Result<HeldCandidate> {
        let now = self.clock.now();
        self.store
            .expire_held(&scope.workspace, now, &scope.actor)?;
        match self.store.close_held(
            &scope.workspace,
            id,
            HeldStatus::Discarded,
            None,
            now,
            &scope.actor,
        )? {
            HeldClose::Closed => self
                .store
                .get_held(&scope.workspace, id)?
                .ok_or(Error::HeldNotFound(id)),
            HeldClose::AlreadyDecided(status) => Err(Error::AlreadyDecided { id, status }),
            HeldClose::Missing => Err(Error::HeldNotFound(id)),
            HeldClose::AdmissionIncomplete => Err(Error::AdmissionIncomplete(id)),
        }
    }
}
