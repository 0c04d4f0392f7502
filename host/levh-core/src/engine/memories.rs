//! Reading and changing one memory's state: get, list, reinforce, feedback, pin, forget,
//! purge, curves, the fading list, statistics, importance; sessions.

use std::collections::BinaryHeap;

use super::*;

impl Levh {
    /// Erases a memory and every copy of its content, and reports any residue found.
    /// Its attachments' text memories (and their files) are purged first: the file and
    /// what was derived from it are part of what the memory held.
    pub fn purge(&self, scope: &Scope, id: MemoryId) -> Result<PurgeReport> {
        for attachment in self.store.attachments(&scope.workspace, id)? {
            self.store.purge(
                &scope.workspace,
                attachment.memory_id,
                self.clock.now(),
                &scope.actor,
            )?;
        }
        self.store
            .purge(&scope.workspace, id, self.clock.now(), &scope.actor)?
            .ok_or(Error::NotFound(id))
    }

    /// One memory of the scope's workspace.
    pub fn get(&self, scope: &Scope, id: MemoryId) -> Result<Memory> {
        self.store
            .get(&scope.workspace, id)?
            .ok_or(Error::NotFound(id))
    }

    /// A forgotten memory of the workspace and when it was forgotten: retired from every
    /// read, still there for history until purged.
    pub fn get_forgotten(
        &self,
        scope: &Scope,
        id: MemoryId,
    ) -> Result<Option<(Memory, Timestamp)>> {
        Ok(self.store.get_forgotten(&scope.workspace, id)?)
    }

    /// Memories matching the filter (its workspace is replaced by the scope's), newest first.
    pub fn list(&self, scope: &Scope, filter: MemoryFilter, page: Page) -> Result<Vec<Memory>> {
        // SQLite counts in i64: a larger offset would wrap and read from the start.
        if i64::try_from(page.offset).is_err() {
            return Err(Error::invalid(
                "offset",
                format!("{} is beyond {}", page.offset, i64::MAX),
            ));
        }
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            ..filter
        };
        Ok(self.store.list(&filter, page)?)
    }

    /// Moves live memories to `project` (`None`: out of every project), each change
    /// logged as a `move`; ids not live in the workspace are returned as missing, not
    /// failed. The project is a label like a capture's: printable, at most 200
    /// characters, and never a secret (a project name is shown in every list and on
    /// every surface, so one holding a secret is refused rather than stored).
    pub fn move_to_project(
        &self,
        scope: &Scope,
        ids: &[MemoryId],
        project: Option<String>,
    ) -> Result<Moved> {
        let project = check_label("project", project)?;
        if let Some(name) = &project {
            let kinds = gate::secrets::detect(name);
            if !kinds.is_empty() {
                return Err(Error::invalid(
                    "project",
                    "the name holds a secret; a project name is shown in every list",
                ));
            }
        }
        let now = self.clock.now();
        if ids.len() > MAX_BATCH {
            return Err(Error::invalid(
                "ids",
                format!("{} ids; at most {MAX_BATCH} a call", ids.len()),
            ));
        }
        let mut moved = Vec::new();
        for &id in ids {
            // Live memories only: a forgotten one stays where it was forgotten.
            let memory = match self.store.get(&scope.workspace, id)? {
                Some(memory) => memory,
                None => continue,
            };
            if memory.project == project {
                moved.push(memory.id);
                continue;
            }
            if self.store.replace_fields(
                &scope.workspace,
                memory.id,
                project.as_deref(),
                &memory.source,
                &memory.metadata,
                EventKind::Move,
                serde_json::json!({ "field": "project" }),
                now,
                &scope.actor,
            )? {
                moved.push(memory.id);
            }
        }
        // The knowledge graph's project entities follow the memories' projects.
        self.index_entities_of(&scope.workspace, &moved);
        let found: std::collections::HashSet<&MemoryId> = moved.iter().collect();
        let missing = ids
            .iter()
            .filter(|id| !found.contains(id))
            .copied()
            .collect();
        Ok(Moved { moved, missing })
    }

    /// How many memories of the caller's workspace match the filter (its cursor aside).
    pub fn count(&self, scope: &Scope, filter: MemoryFilter) -> Result<u64> {
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            listed_after: None,
            ..filter
        };
        Ok(self.store.count(&filter)?)
    }

    /// A page of live memories read from the standings rather than an index: weakest
    /// first by retention now (`by_retention`), or else in the filter's order; with
    /// `fading_only`, only those below the fading threshold (never a pinned one). The
    /// page continues after the memory `after` (by its key now); ties go by id. Also
    /// says how many match in all.
    ///
    /// Retention moves with the clock, so no index can hold that order, and "fading" is
    /// the same number: the standings (kept in memory; no row is read) give every live
    /// memory's state, narrowed at once by the filter's project and pinned, and by the
    /// ids the store matches when the filter says more (kind, source, dates, entity).
    /// One pass, linear in the workspace's live memories, as the fading list and
    /// statistics are; only the page is sorted.
    pub fn list_by_standing(
        &self,
        scope: &Scope,
        filter: MemoryFilter,
        by_retention: bool,
        fading_only: bool,
        after: Option<MemoryId>,
        limit: usize,
    ) -> Result<(Vec<Memory>, u64)> {
        if filter.forgotten || filter.known_at.is_some() {
            return Err(Error::invalid(
                "fading",
                "retention is of live memories now; a forgotten or past one has none",
            ));
        }
        let now = self.clock.now();
        let order = filter.order;
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            listed_after: None,
            order: crate::ListOrder::Created,
            ..filter
        };
        // The list's key, smallest first.
        let key = |state: &MemoryState| -> f64 {
            let micros = |t: Timestamp| t.as_microsecond() as f64;
            if by_retention {
                return model::retention(state, now);
            }
            match order {
                crate::ListOrder::Created => -micros(state.created_at),
                crate::ListOrder::Importance => -state.importance,
                crate::ListOrder::Recalled => -state.last_recalled_at.map_or(0.0, micros),
            }
        };
        // Whatever the standings cannot judge is asked of the store as a set of ids.
        let narrowed = MemoryFilter {
            project: None,
            pinned: None,
            not_retired_at: None,
            working_except: None,
            ..filter.clone()
        } != MemoryFilter::workspace(scope.workspace.clone());
        let allowed: Option<std::collections::HashSet<MemoryId>> = if narrowed {
            Some(self.store.matching_ids(&filter)?.into_iter().collect())
        } else {
            None
        };
        let threshold = self.config.model.fading_threshold;
        let mut ranked: Vec<(Weakness, MemoryId)> = Vec::new();
        self.store.standings(
            &scope.workspace,
            filter.project.as_deref(),
            now,
            &mut |id, state| {
                if filter.pinned.is_some_and(|pinned| pinned != state.pinned)
                    || allowed.as_ref().is_some_and(|ids| !ids.contains(&id))
                    || fading_only && (state.pinned || model::retention(state, now) >= threshold)
                {
                    return;
                }
                ranked.push((Weakness(key(state)), id));
            },
        )?;
        let total = ranked.len() as u64;
        if let Some(cursor) = after {
            let memory = self.get(scope, cursor)?;
            let from = (Weakness(key(&memory.state)), cursor);
            ranked.retain(|entry| *entry > from);
        }
        // Only the page is ordered: the `limit` smallest of what is left, then sorted.
        let page = ranked.len().min(limit);
        if page < ranked.len() {
            ranked.select_nth_unstable(page);
        }
        ranked.truncate(page);
        ranked.sort_unstable();
        let ids: Vec<MemoryId> = ranked.iter().map(|(_, id)| *id).collect();
        let mut memories = self.store.get_many(&scope.workspace, &ids)?;
        let position: std::collections::HashMap<MemoryId, usize> =
            ids.iter().enumerate().map(|(n, id)| (*id, n)).collect();
        memories.sort_by_key(|m| position.get(&m.id).copied().unwrap_or(usize::MAX));
        Ok((memories, total))
    }

    pub(super) fn update_one(
        &self,
        scope: &Scope,
        id: MemoryId,
        event: EventKind,
        update: &mut dyn FnMut(&Memory) -> Option<MemoryState>,
    ) -> Result<Memory> {
        let now = self.clock.now();
        let mut updated =
            self.store
                .update_states(&scope.workspace, &[id], event, &scope.actor, now, update)?;
        match updated.pop() {
            Some(memory) => Ok(memory),
            // unchanged (already pinned, say) or missing: tell them apart
            None => self.get(scope, id),
        }
    }

    /// Reinforces a memory as if it had been recalled (working memory is promoted).
    pub fn reinforce(&self, scope: &Scope, id: MemoryId) -> Result<Memory> {
        let (config, now) = (self.config.model, self.clock.now());
        let memory = self.update_one(scope, id, EventKind::Reinforce, &mut |m| {
            Some(model::reinforce(&m.state, &config, now))
        })?;
        self.promote_one(scope, memory, "reinforced")
    }

    /// Helpful feedback reinforces (and promotes working memory); unhelpful weakens
    /// without resetting the decay clock.
    pub fn feedback(&self, scope: &Scope, id: MemoryId, helpful: bool) -> Result<Memory> {
        let (config, now) = (self.config.model, self.clock.now());
        let memory = self.update_one(scope, id, EventKind::Feedback, &mut |m| {
            Some(if helpful {
                model::reinforce(&m.state, &config, now)
            } else {
                model::weaken(&m.state, &config)
            })
        })?;
        if helpful {
            self.promote_one(scope, memory, "marked helpful")
        } else {
            Ok(memory)
        }
    }

    /// Pins or unpins a memory (pinning promotes working memory).
    pub fn set_pinned(&self, scope: &Scope, id: MemoryId, pinned: bool) -> Result<Memory> {
        let event = if pinned {
            EventKind::Pin
        } else {
            EventKind::Unpin
        };
        let memory = self.update_one(scope, id, event, &mut |m| {
            (m.state.pinned != pinned).then_some(MemoryState { pinned, ..m.state })
        })?;
        if pinned {
            self.promote_one(scope, memory, "pinned")
        } else {
            Ok(memory)
        }
    }

    /// Makes working memories long-term (SPEC §3): their stability becomes at least a new
    /// memory's. Returns those that were working.
    pub fn promote(&self, scope: &Scope, ids: &[MemoryId], why: &str) -> Result<Vec<MemoryId>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let stability = self.config.model.initial_stability_hours;
        Ok(self.store.promote(
            &scope.workspace,
            ids,
            stability,
            why,
            self.clock.now(),
            &scope.actor,
        )?)
    }

    /// [`Levh::promote`] of one memory, returning it as it is afterwards.
    fn promote_one(&self, scope: &Scope, memory: Memory, why: &str) -> Result<Memory> {
        if self.promote(scope, &[memory.id], why)?.is_empty() {
            Ok(memory)
        } else {
            self.get(scope, memory.id)
        }
    }

    /// Which of `ids` are working memory still, with their session.
    pub fn working_sessions(
        &self,
        scope: &Scope,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, crate::SessionId)>> {
        Ok(self.store.working_sessions(&scope.workspace, ids)?)
    }

    /// Retires a memory from every read.
    pub fn forget(&self, scope: &Scope, id: MemoryId) -> Result<()> {
        let now = self.clock.now();
        if self.store.forget(&scope.workspace, id, now, &scope.actor)? {
            Ok(())
        } else {
            Err(Error::NotFound(id))
        }
    }

    /// Predicted retention for each of the next `days` days, with no recall.
    pub fn curve(&self, scope: &Scope, id: MemoryId, days: u32) -> Result<Vec<CurvePoint>> {
        if days == 0 || days > 3650 {
            return Err(Error::invalid("days", format!("{days} is outside 1..3650")));
        }
        let memory = self.get(scope, id)?;
        Ok(
            model::forgetting_curve(&memory.state, self.clock.now(), days)
                .into_iter()
                .map(|(day, at, retention)| CurvePoint { day, at, retention })
                .collect(),
        )
    }

    /// Unpinned memories valid now whose retention is below the fading threshold,
    /// weakest first.
    pub fn fading(
        &self,
        scope: &Scope,
        project: Option<String>,
        limit: usize,
    ) -> Result<Vec<FadingMemory>> {
        let now = self.clock.now();
        let project = check_label("project", project)?;
        let config = self.config.model;
        // The `limit` weakest, kept in a max-heap of retention: one pass, no list of
        // every fading memory (at a million memories that can be most of them).
        let mut weakest: BinaryHeap<(Weakness, MemoryId)> = BinaryHeap::new();
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.store.standings(
            &scope.workspace,
            project.as_deref(),
            now,
            &mut |id, state| {
                if state.pinned {
                    return;
                }
                // Retention once per memory: the fading test is `retention < threshold`
                // (model::is_fading), and the heap orders by the same number.
                let retention = model::retention(state, now);
                if retention >= config.fading_threshold {
                    return;
                }
                let entry = (Weakness(retention), id);
                if weakest.len() < limit {
                    weakest.push(entry);
                } else if weakest.peek().is_some_and(|strongest| entry < *strongest) {
                    weakest.pop();
                    weakest.push(entry);
                }
            },
        )?;
        let fading: Vec<(MemoryId, f64)> = weakest
            .into_iter()
            .map(|(Weakness(retention), id)| (id, retention))
            .collect();
        let mut memories: Vec<FadingMemory> = self
            .with_scores(&scope.workspace, &fading)?
            .into_iter()
            .map(|(memory, retention)| FadingMemory { memory, retention })
            .collect();
        memories.sort_by(|a, b| {
            a.retention
                .total_cmp(&b.retention)
                .then(a.memory.id.cmp(&b.memory.id))
        });
        Ok(memories)
    }

    /// Statistics of the live memories valid now, optionally of one project.
    pub fn stats(&self, scope: &Scope, project: Option<String>) -> Result<Stats> {
        let now = self.clock.now();
        let project = check_label("project", project)?;
        let config = self.config.model;
        let mut stats = Stats {
            total: 0,
            pinned: 0,
            fading: 0,
            average_retention: 0.0,
            retention_histogram: [0; 10],
            recalls: 0,
            by_project: BTreeMap::new(),
            without_project: 0,
            by_source: BTreeMap::new(),
            by_kind: BTreeMap::new(),
            embedder: self.embedder.model_id().to_owned(),
        };
        let mut retention_sum = 0.0;
        let groups = self.store.standings(
            &scope.workspace,
            project.as_deref(),
            now,
            &mut |_, state| {
                let retention = model::retention(state, now);
                retention_sum += retention;
                // Truncation is the bucket: 0.37 is in the fourth tenth; 1.0 joins the last.
                stats.retention_histogram[((retention * 10.0) as usize).min(9)] += 1;
                stats.pinned += u64::from(state.pinned);
                stats.fading += u64::from(retention < config.fading_threshold);
                stats.recalls += u64::from(state.recall_count);
            },
        )?;
        for group in groups {
            stats.total += group.count;
            match group.project {
                Some(project) => *stats.by_project.entry(project).or_default() += group.count,
                None => stats.without_project += group.count,
            }
            *stats.by_source.entry(group.source).or_default() += group.count;
            *stats.by_kind.entry(group.kind.to_string()).or_default() += group.count;
        }
        if stats.total > 0 {
            stats.average_retention = retention_sum / stats.total as f64;
        }
        Ok(stats)
    }

    /// Sets a memory's importance (0..1).
    pub fn set_importance(&self, scope: &Scope, id: MemoryId, importance: f64) -> Result<Memory> {
        let importance = check_importance(importance)?;
        let memory = self.update_one(scope, id, EventKind::Importance, &mut |m| {
            (m.state.importance != importance).then_some(MemoryState {
                importance,
                ..m.state
            })
        })?;
        if importance >= self.config.model.promote_importance {
            self.promote_one(scope, memory, "marked important")
        } else {
            Ok(memory)
        }
    }

    /// Opens a session in the scope's workspace.
    pub fn create_session(&self, scope: &Scope, project: Option<String>) -> Result<Session> {
        let project = check_label("project", project)?.map(|p| gate::secrets::redact(&p).0);
        let now = self.clock.now();
        let session = Session {
            id: crate::SessionId::new(MemoryId::new_at(now).to_string()),
            workspace: scope.workspace.clone(),
            project,
            client: scope
                .actor
                .client
                .as_deref()
                .map(|client| gate::secrets::redact(client).0),
            started_at: now,
            ended_at: None,
        };
        self.store.start_session(&session)?;
        Ok(session)
    }

    /// The workspace's sessions, newest first, each with its live memories counted: at
    /// most `limit` (1 to 500), started before `before` when given (the next page).
    pub fn sessions(
        &self,
        scope: &Scope,
        before: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<crate::SessionListing>> {
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid(
                "limit",
                format!("must be between 1 and 500 (got {limit})"),
            ));
        }
        Ok(self.store.sessions(&scope.workspace, before, limit)?)
    }

    /// A session and the live memories stored in it (oldest first, at most `limit`).
    pub fn session_memories(
        &self,
        scope: &Scope,
        id: &crate::SessionId,
        limit: usize,
    ) -> Result<(Session, Vec<Memory>)> {
        let session = self
            .store
            .session(&scope.workspace, id)?
            .ok_or_else(|| Error::invalid("session_id", format!("no session with id {id}")))?;
        let memories = self
            .store
            .session_memories(&scope.workspace, &session, limit)?;
        Ok((session, memories))
    }

    /// Ends a session (ending it twice keeps the first end), promoting the working memory
    /// it used (recalled or reinforced) or marked important; the rest stays working
    /// memory, out of other sessions' recall, and fades.
    pub fn end_session(&self, scope: &Scope, id: &crate::SessionId) -> Result<Session> {
        let session = self
            .store
            .end_session(&scope.workspace, id, self.clock.now())?
            .ok_or_else(|| Error::invalid("session_id", format!("no session with id {id}")))?;
        let stored = self
            .store
            .session_memories(&scope.workspace, &session, usize::MAX)?;
        let used: Vec<MemoryId> = stored
            .iter()
            .filter(|m| {
                m.state.recall_count > 0
                    || m.state.pinned
                    || m.state.importance >= self.config.model.promote_importance
            })
            .map(|m| m.id)
            .collect();
        self.promote(scope, &used, "used in its session")?;
        Ok(session)
    }
}

/// A retention ordered for the fading heap (retentions are finite: `total_cmp` is exact).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Weakness(f64);

impl Eq for Weakness {}

impl PartialOrd for Weakness {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Weakness {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// What [`Levh::move_to_project`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The memories now in the project (those already there included).
    pub moved: Vec<MemoryId>,
    /// The ids given that name no live memory of the workspace.
    pub missing: Vec<MemoryId>,
}
