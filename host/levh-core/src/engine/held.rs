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
    /// again completes it.
    ///
    /// One rule for world time: an admitted memory holds from its candidate's
    /// `valid_from` (the time it was written, unless the writer gave one), but never from
    /// before the memory it retires stops holding. With `supersede`, that memory is
    /// retired (`valid_to`, `superseded_by`) at the decision — levh believed it until then,
    /// and retiring it earlier would rewrite what `known_at` says levh knew — so the new
    /// one starts at the later of its `valid_from` and the decision, and the two windows
    /// abut. Without `supersede` nothing is retired and `valid_from` is kept as written.
    pub fn held_admit(&self, scope: &Scope, id: HeldId, supersede: bool) -> Result<HeldAdmission> {
        let held = self.held_get(scope, id)?;
        if held.status != HeldStatus::Held {
            return Err(Error::AlreadyDecided {
                id,
                status: held.status,
            });
        }
        if let Some(target) = held.updates {
            if supersede {
                return Err(Error::invalid(
                    "supersede",
                    format!(
                        "this candidate is an update of {target}: admitting it already replaces that memory's content"
                    ),
                ));
            }
            return self.admit_update(scope, &held, target);
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
            valid_from: Some(match superseded {
                Some(_) => held.valid_from.max(self.clock.now()),
                None => held.valid_from,
            }),
            valid_to: held.valid_to,
            metadata: Some(held.metadata.clone()),
            session_id: held.session_id.clone(),
        };
        let mut p = self.prepare(scope, new, None)?;
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
        self.index_entities_of(&scope.workspace, &[memory_id]);
        self.close_admitted(scope, id, memory_id, superseded, false)
    }

    /// A person admits a held update: the content replaces memory `target`'s in place,
    /// then the row is closed. Writing the same content twice is harmless, so a crash
    /// between the two is completed by admitting again.
    fn admit_update(
        &self,
        scope: &Scope,
        held: &HeldCandidate,
        target: MemoryId,
    ) -> Result<HeldAdmission> {
        let Some(memory) = self.store.get(&scope.workspace, target)? else {
            return Err(Error::invalid(
                "held_id",
                format!(
                    "{} would update memory {target}, which is gone (forgotten or purged); discard it",
                    held.id
                ),
            ));
        };
        // A person's decision: the gate has already spoken, so only the content is
        // prepared again (embedding, keys), not judged.
        let new = NewMemory {
            content: held.content.clone(),
            project: memory.project.clone(),
            metadata: Some(memory.metadata.clone()),
            valid_from: Some(memory.valid_from),
            valid_to: memory.valid_to,
            ..NewMemory::default()
        };
        let mut p = self.prepare(scope, new, Some(target))?;
        p.redactions = held.redactions.clone();
        self.apply_content(scope, target, &p, None)?;
        self.close_admitted(scope, held.id, target, None, true)
    }

    fn close_admitted(
        &self,
        scope: &Scope,
        id: HeldId,
        memory_id: MemoryId,
        superseded: Option<MemoryId>,
        updated: bool,
    ) -> Result<HeldAdmission> {
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
                updated,
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
