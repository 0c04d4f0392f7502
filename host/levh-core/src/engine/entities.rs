//! The entity index through the engine: kept at admission (every write that stores or
//! changes a memory indexes it), rebuilt by `reindex`, read by the people, organizations,
//! graph and `about` views.

use std::sync::Arc;

use levh_knowledge::organizations::PersonalDomains;
use serde::Serialize;

use super::{Levh, PersonSettings};
use crate::entities::{
    CommitmentDone, EntityEdge, EntityId, EntityKey, EntityKind, EntityMemory, EntityQuery,
    EntityRole, EntitySummary, INDEX_VERSION, IndexedMemory, KnownPeople, sightings,
};
use crate::{Error, Memory, MemoryId, Result, Scope, Workspace};

/// Memories indexed per transaction by a reindex.
pub const REINDEX_BATCH: usize = 500;

/// What a reindex did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReindexReport {
    /// Memories indexed in this run.
    pub indexed: u64,
    /// Memories still waiting (non-zero only when the run was stopped early).
    pub remaining: u64,
    /// Entities the workspace has now (with at least one memory).
    pub entities: u64,
}

impl Levh {
    /// Takes organizations from e-mail domains except these personal providers (the
    /// built-in list when never called).
    pub fn with_personal_domains(mut self, personal: PersonalDomains) -> Self {
        self.personal = Arc::new(personal);
        self
    }

    /// The user's time zone and names, as configured.
    pub fn with_person(mut self, person: PersonSettings) -> Self {
        self.person = Arc::new(person);
        self
    }

    /// The user's time zone and names, as configured.
    pub fn person(&self) -> &PersonSettings {
        &self.person
    }

    fn indexed(&self, memories: &[Memory], known: &KnownPeople) -> Vec<IndexedMemory> {
        memories
            .iter()
            .map(|memory| IndexedMemory {
                memory_id: memory.id,
                content_hash: memory.content_hash.clone(),
                sightings: sightings(memory, known, &self.personal),
            })
            .collect()
    }

    /// Indexes memories just stored or changed. The write already succeeded, so a failure
    /// here does not undo it: it is logged, and `levh entities reindex` (which finds every
    /// memory not indexed at its content) completes it.
    pub(super) fn index_entities_of(&self, workspace: &Workspace, ids: &[MemoryId]) {
        match self.store.get_many(workspace, ids) {
            Ok(memories) => self.index_stored(workspace, &memories),
            Err(error) => {
                tracing::warn!(%error, memories = ids.len(), "entity index not updated; `levh entities reindex` will catch up");
            }
        }
    }

    /// [`Levh::index_entities_of`] for memories already in hand (a capture has the row it
    /// just wrote: no need to read it back).
    pub(super) fn index_stored(&self, workspace: &Workspace, memories: &[Memory]) {
        let attempt = || -> Result<()> {
            let known = KnownPeople::new(&self.store.known_people(workspace)?);
            let batch = self.indexed(memories, &known);
            self.store
                .index_entities(workspace, &batch, INDEX_VERSION, self.clock.now())?;
            Ok(())
        };
        if let Err(error) = attempt() {
            tracing::warn!(%error, memories = memories.len(), "entity index not updated; `levh entities reindex` will catch up");
        }
    }

    /// Indexes every memory of the workspace not indexed at its content by today's rules
    /// (with `all`, every memory), `batch` per transaction, calling `progress(done, total)`
    /// after each. Resumable: what a stopped run indexed stays indexed, and the next run
    /// does the rest. `stop_after` bounds one run (for tests of that, and for a caller
    /// that wants to yield).
    pub fn reindex_entities(
        &self,
        scope: &Scope,
        all: bool,
        batch: usize,
        stop_after: Option<u64>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ReindexReport> {
        let workspace = &scope.workspace;
        if all {
            self.store.mark_all_unindexed(workspace)?;
        }
        let total = self.store.count_unindexed(workspace, INDEX_VERSION)?;
        let mut indexed = 0;
        let mut after = None;
        while stop_after.is_none_or(|stop| indexed < stop) {
            let room = stop_after.map_or(batch as u64, |stop| (stop - indexed).min(batch as u64));
            let memories = self.store.unindexed_memories(
                workspace,
                INDEX_VERSION,
                after,
                room.max(1) as usize,
            )?;
            let Some(last) = memories.last() else {
                break;
            };
            after = Some(last.id);
            // Names learnt from the batch before are searched for in this one.
            let known = KnownPeople::new(&self.store.known_people(workspace)?);
            let page = self.indexed(&memories, &known);
            self.store
                .index_entities(workspace, &page, INDEX_VERSION, self.clock.now())?;
            indexed += memories.len() as u64;
            progress(indexed, total);
        }
        Ok(ReindexReport {
            indexed,
            remaining: self.store.count_unindexed(workspace, INDEX_VERSION)?,
            entities: self
                .store
                .entities(
                    workspace,
                    &EntityQuery {
                        limit: usize::MAX,
                        ..EntityQuery::default()
                    },
                )?
                .len() as u64,
        })
    }

    /// The memories of these ids in the workspace (forgotten ones too), in no order.
    pub fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        Ok(self.store.get_many(&scope.workspace, ids)?)
    }

    /// Entities with memories, most memories first.
    pub fn entities(&self, scope: &Scope, query: &EntityQuery) -> Result<Vec<EntitySummary>> {
        Ok(self.store.entities(&scope.workspace, query)?)
    }

    /// The entities of these ids, in the order given (missing ones left out).
    pub fn entities_by_id(&self, scope: &Scope, ids: &[EntityId]) -> Result<Vec<EntitySummary>> {
        let found = self.store.entities_by_id(&scope.workspace, ids)?;
        Ok(ids
            .iter()
            .filter_map(|id| found.iter().find(|e| e.id == *id).cloned())
            .collect())
    }

    /// The entity `text` names: its id, an e-mail address, an `@handle`, a name, a
    /// domain or a project — of `kind` when given. A name that fits several is an error
    /// listing them.
    pub fn resolve_entity(
        &self,
        scope: &Scope,
        text: &str,
        kind: Option<EntityKind>,
    ) -> Result<EntitySummary> {
        let text = text.trim();
        // A NUL would end SQLite's LIKE pattern early and match every entity.
        if text.is_empty() || text.chars().any(char::is_control) {
            return Err(Error::invalid(
                "entity",
                format!(
                    "'{}' is empty or holds control characters; give an id, an e-mail address, a name or a domain",
                    text.escape_debug()
                ),
            ));
        }
        let workspace = &scope.workspace;
        let fits = |e: &EntitySummary| kind.is_none_or(|k| e.kind == k);
        if let Ok(id) = text.parse::<EntityId>() {
            return self
                .store
                .entities_by_id(workspace, &[id])?
                .into_iter()
                .find(fits)
                .ok_or_else(|| Error::EntityNotFound(text.to_owned()));
        }
        let keys = if text.starts_with('@') {
            vec![EntityKey::handle(text)]
        } else if text.contains('@') {
            vec![EntityKey::email(text)]
        } else {
            vec![
                EntityKey::person_name(text),
                EntityKey::domain(text),
                EntityKey::project(text),
            ]
        };
        let mut ids = Vec::new();
        for key in &keys {
            if let Some(id) = self.store.entity_by_key(workspace, key)?
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        }
        let mut found: Vec<EntitySummary> = self
            .store
            .entities_by_id(workspace, &ids)?
            .into_iter()
            .filter(fits)
            .collect();
        if found.is_empty() {
            found = self.store.entities(
                workspace,
                &EntityQuery {
                    kind,
                    name: Some(text.to_owned()),
                    project: None,
                    limit: 20,
                },
            )?;
        }
        match found.len() {
            0 => Err(Error::EntityNotFound(text.to_owned())),
            1 => Ok(found.remove(0)),
            _ => Err(Error::AmbiguousEntity {
                name: text.to_owned(),
                candidates: found
                    .iter()
                    .map(|e| format!("{} ({} {})", e.id, e.kind, e.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// An entity's memories, newest first.
    pub fn entity_memories(
        &self,
        scope: &Scope,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<EntityMemory>> {
        Ok(self.store.entity_memories(&scope.workspace, id, limit)?)
    }

    /// The entities a memory involves (people first, then by name), each with its parts
    /// in it. The memory must be live.
    pub fn memory_entities(
        &self,
        scope: &Scope,
        memory: MemoryId,
    ) -> Result<Vec<(EntitySummary, Vec<EntityRole>)>> {
        self.get(scope, memory)?;
        let links = self.store.memory_entities(&scope.workspace, memory)?;
        let ids: Vec<EntityId> = links.iter().map(|(id, _)| *id).collect();
        let summaries = self.store.entities_by_id(&scope.workspace, &ids)?;
        let mut found: Vec<(EntitySummary, Vec<EntityRole>)> = summaries
            .into_iter()
            .filter_map(|summary| {
                let roles = links.iter().find(|(id, _)| *id == summary.id)?.1.clone();
                Some((summary, roles))
            })
            .collect();
        found.sort_by(|(a, _), (b, _)| {
            (a.kind != EntityKind::Person, &a.name).cmp(&(b.kind != EntityKind::Person, &b.name))
        });
        Ok(found)
    }

    /// Entities sharing memories with this one, most shared first.
    pub fn related_entities(
        &self,
        scope: &Scope,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<(EntitySummary, u64)>> {
        let related = self.store.related_entities(&scope.workspace, id, limit)?;
        let ids: Vec<EntityId> = related.iter().map(|(id, _)| *id).collect();
        let summaries = self.entities_by_id(scope, &ids)?;
        Ok(summaries
            .into_iter()
            .filter_map(|s| {
                let weight = related.iter().find(|(id, _)| *id == s.id)?.1;
                Some((s, weight))
            })
            .collect())
    }

    /// For an organization its people; for a person their organizations.
    pub fn memberships(&self, scope: &Scope, id: EntityId) -> Result<Vec<EntitySummary>> {
        let ids = self.store.memberships(&scope.workspace, id)?;
        self.entities_by_id(scope, &ids)
    }

    /// Co-occurrence edges among these entities, heaviest first.
    pub fn entity_edges(
        &self,
        scope: &Scope,
        among: &[EntityId],
        limit: usize,
    ) -> Result<Vec<EntityEdge>> {
        Ok(self.store.entity_edges(&scope.workspace, among, limit)?)
    }

    /// Merges entity `from` into `into` (both as [`Levh::resolve_entity`] reads them) and
    /// returns the merged entity.
    pub fn merge_entities(&self, scope: &Scope, into: &str, from: &str) -> Result<EntitySummary> {
        let target = self.resolve_entity(scope, into, None)?;
        let source = self.resolve_entity(scope, from, None)?;
        if target.id == source.id {
            return Err(Error::invalid(
                "entity",
                format!(
                    "'{into}' and '{from}' are already one entity ({})",
                    target.id
                ),
            ));
        }
        if target.kind != source.kind {
            return Err(Error::invalid(
                "entity",
                format!(
                    "'{into}' is a {} and '{from}' a {}: only entities of one kind merge",
                    target.kind, source.kind
                ),
            ));
        }
        self.store.merge_entities(
            &scope.workspace,
            target.id,
            source.id,
            self.clock.now(),
            &scope.actor,
        )?;
        self.resolve_entity(scope, &target.id.to_string(), None)
    }

    /// The commitments marked done in the workspace.
    pub fn commitments_done(&self, scope: &Scope) -> Result<Vec<CommitmentDone>> {
        Ok(self.store.commitments_done(&scope.workspace)?)
    }

    /// Records conflict candidates (older, newer, kind) found now; each pair once.
    pub fn record_conflicts(
        &self,
        scope: &Scope,
        found: &[(MemoryId, MemoryId, String)],
    ) -> Result<Vec<crate::entities::ConflictRecord>> {
        Ok(self
            .store
            .record_conflicts(&scope.workspace, found, self.clock.now(), &scope.actor)?)
    }

    /// The conflict candidates, newest first (only the open ones with `open`).
    pub fn conflicts(
        &self,
        scope: &Scope,
        open: bool,
    ) -> Result<Vec<crate::entities::ConflictRecord>> {
        Ok(self.store.conflicts(&scope.workspace, open)?)
    }

    /// A person resolves an open conflict candidate; false when it is not open.
    pub fn resolve_conflict(
        &self,
        scope: &Scope,
        id: &str,
        resolution: crate::entities::ConflictResolution,
    ) -> Result<bool> {
        Ok(self.store.resolve_conflict(
            &scope.workspace,
            id,
            resolution,
            self.clock.now(),
            &scope.actor,
        )?)
    }

    /// Records commitment `id` of `memory` as done now, by a person (`by_memory` none)
    /// or because a later memory said so.
    pub fn mark_commitment_done(
        &self,
        scope: &Scope,
        memory: MemoryId,
        id: &str,
        by_memory: Option<MemoryId>,
    ) -> Result<CommitmentDone> {
        let done = CommitmentDone {
            id: id.to_owned(),
            at: self.clock.now(),
            by_memory,
        };
        self.store
            .mark_commitment_done(&scope.workspace, memory, &done, &scope.actor)?;
        Ok(done)
    }
}
