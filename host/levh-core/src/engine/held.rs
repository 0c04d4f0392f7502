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

    /// A person admits a held candidate. The memory is stored and the row closed in one
    /// transaction, if and only if the candidate is still held (compare-and-set): two
    /// people (or processes, or surfaces) deciding at once get exactly one decision.
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
            prior: None,
        };
        let mut p = self.prepare(scope, new, None)?;
        p.neighbours
            .retain(|(neighbour, _)| Some(*neighbour) != superseded);
        let admission = AdmissionRecord {
            verdict: crate::AdmissionVerdict::Review,
            reasons: vec![
                held.reason.clone(),
                format!("admitted by {}", scope.actor.decider()),
            ],
            decided_by: scope.actor.decider(),
        };
        let neighbours = p.neighbours.clone();
        let record = self.record(scope, p, admission);
        let model = self.config.model;
        let memory_id = record.memory.id;
        let closed = self.store.store_held_memory(
            &scope.workspace,
            id,
            &record,
            &neighbours,
            &|state| model::interfere(state, &model),
            superseded,
            self.clock.now(),
            &scope.actor,
        )?;
        self.closed(id, closed)?;
        // A memory stored by an admission that crashed before closing keeps its own id.
        let memory_id = self
            .store
            .get_held(&scope.workspace, id)?
            .and_then(|held| held.memory_id)
            .unwrap_or(memory_id);
        self.index_entities_of(&scope.workspace, &[memory_id]);
        self.adopt_admitted_key(scope, &held, memory_id)?;
        Ok(HeldAdmission {
            held_id: id,
            memory_id,
            superseded,
            updated: false,
        })
    }

    /// What a compare-and-set on a held candidate's status means for its caller.
    fn closed(&self, id: HeldId, outcome: HeldClose) -> Result<()> {
        match outcome {
            HeldClose::Closed => Ok(()),
            HeldClose::AlreadyDecided(status) => Err(Error::AlreadyDecided { id, status }),
            HeldClose::Missing => Err(Error::HeldNotFound(id)),
            HeldClose::AdmissionIncomplete => Err(Error::AdmissionIncomplete(id)),
        }
    }

    /// A person admits a held update: the content replaces memory `target`'s in place and
    /// the row is closed, in one transaction.
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
        let kinds: Vec<&str> = p.redactions.iter().map(|r| r.kind.as_str()).collect();
        // The content and the decision in one transaction: a discard racing this admission
        // either comes first (nothing changes here) or finds the candidate admitted.
        let outcome = self.store.admit_held_update(
            &scope.workspace,
            held.id,
            target,
            &p.content,
            Some(&p.embedding),
            &p.keys,
            serde_json::json!({ "redacted": kinds, "held_id": held.id }),
            self.clock.now(),
            &scope.actor,
        )?;
        if outcome == HeldClose::Missing
            && self.store.get_held(&scope.workspace, held.id)?.is_some()
        {
            return Err(Error::invalid(
                "held_id",
                format!(
                    "{} would update memory {target}, which is gone (forgotten or purged); discard it",
                    held.id
                ),
            ));
        }
        self.closed(held.id, outcome)?;
        self.index_entities_of(&scope.workspace, &[target]);
        Ok(HeldAdmission {
            held_id: held.id,
            memory_id: target,
            superseded: None,
            updated: true,
        })
    }

    /// A person discards a held candidate (compare-and-set).
    pub fn held_discard(&self, scope: &Scope, id: HeldId) -> Result<HeldCandidate> {
        let now = self.clock.now();
        self.store
            .expire_held(&scope.workspace, now, &scope.actor)?;
        let outcome = self.store.close_held(
            &scope.workspace,
            id,
            HeldStatus::Discarded,
            None,
            now,
            &scope.actor,
        )?;
        self.closed(id, outcome)?;
        self.store
            .get_held(&scope.workspace, id)?
            .ok_or(Error::HeldNotFound(id))
    }
}
