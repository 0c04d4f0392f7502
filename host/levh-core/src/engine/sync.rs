//! Connector sync (SPEC §6): pages from a source through the gate, a page per
//! transaction (each item judged as if stored alone after the page's earlier items).

use std::collections::HashSet;

use crate::SyncedPage;
use crate::sync::{NOT_LISTED, Retirement, SourceRemoval};

use super::*;

impl Levh {
    /// Runs a connector sync: every page, every item through the gate. A failing item is
    /// counted and described, and the run goes on; a failing page fetch ends the run as
    /// `failed` (the cursor then still points at the last stored page, so re-running
    /// resumes there). `progress` is called after every item.
    pub fn sync(
        &self,
        started_by: &Scope,
        source: &mut dyn Source,
        options: SyncOptions,
        project: Option<String>,
        progress: &mut dyn FnMut(&SyncReport),
    ) -> Result<SyncReport> {
        let project = check_label("project", project)?;
        let connector = source.connector().to_owned();
        // The run is recorded as whoever started it; what it writes is the connector's
        // doing, so each item's events say `sync` and name the connector (the feed's
        // "sync" filter, a synced mail's history).
        let synced = started_by.synced(&connector);
        let scope = &synced;
        let now = self.clock.now();
        let mut report = SyncReport {
            run_id: MemoryId::new_at(now).to_string(),
            connector: connector.clone(),
            status: if options.dry_run {
                SyncStatus::DryRun
            } else {
                SyncStatus::Running
            },
            started_at: Some(now),
            ..SyncReport::default()
        };
        if !options.dry_run {
            self.store
                .save_sync_run(&started_by.workspace, &report, &started_by.actor)?;
        }
        let cursor_key = source.cursor_key();
        let mut cursor = self.store.sync_cursor(&scope.workspace, &cursor_key)?;
        // A dry run stores nothing, so the run's own items are simulated as neighbours:
        // the tenth copy of a template is judged against the first nine, as it would be.
        let mut simulated = options.dry_run.then(DryRun::default);
        let mut failure = None;
        // What happens to items gone from the source (see [`Retiring`]).
        let mut retiring = Retiring::default();
        loop {
            let page = match source.fetch(cursor.clone()) {
                Ok(page) => page,
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            };
            report.pages += 1;
            report.fetched += page.items.len() as u64;
            // Named unchanged without their text: counted as the unchanged items they are.
            report.unchanged += page.unchanged.len() as u64;
            if page.listing_started {
                retiring.listing = Some(HashSet::new());
                retiring.complete = false;
                retiring.unnamed_errors = false;
                retiring.names_overflowed = false;
            }
            // An item that could not be read and names no id may be one the listing would
            // otherwise retire.
            retiring.unnamed_errors |= page.errors.iter().any(|e| e.source_id.is_none());
            retiring.names_overflowed |= page.names_overflowed;
            // Every item the page names, read or not: a full listing keeps them all.
            let named: Vec<String> = page
                .items
                .iter()
                .map(|item| item.source_id.as_str())
                .chain(page.errors.iter().filter_map(|e| e.source_id.as_deref()))
                .chain(page.skipped.iter().map(|skip| skip.source_id.as_str()))
                .chain(page.unchanged.iter().map(String::as_str))
                .map(gate::secrets::kept_source_id)
                .collect();
            for error in &page.errors {
                report.failed += 1;
                let location = gate::secrets::kept_source_id(&error.location);
                let message = gate::secrets::redact(&error.message).0;
                note(&mut report, format!("{location}: {message}"));
                not_stored(&mut report, NotStoredItem::failed(&location, &message));
            }
            for skip in &page.skipped {
                report.skipped += 1;
                not_stored(
                    &mut report,
                    NotStoredItem {
                        source_id: gate::secrets::kept_source_id(&skip.source_id),
                        fate: ItemFate::Skipped,
                        reason: gate::secrets::redact(&skip.reason).0,
                        nearest: None,
                        held_id: None,
                    },
                );
            }
            // New items wait here and are stored together, with what became of each and
            // the cursor past the page, in one transaction: a run killed mid-page leaves
            // none of the page, and the next run fetches it again.
            let mut pending = Pending::default();
            for mut item in page.items {
                item.source_id = gate::secrets::kept_source_id(&item.source_id);
                let location = item.source_id.clone();
                if pending.has(&location) {
                    // The same item twice in a page: the first must be stored before the
                    // second can be told apart from it.
                    let suspects = retiring.listing.is_some().then_some(&mut retiring.suspects);
                    self.store_pending(
                        scope,
                        &connector,
                        &mut pending,
                        None,
                        &mut report,
                        suspects,
                    )?;
                    progress(&report);
                }
                match self.sync_item(
                    scope,
                    &connector,
                    project.as_deref(),
                    item,
                    simulated.as_mut(),
                ) {
                    Ok(SyncStep::Done(synced)) => count(&mut report, location, synced),
                    Ok(SyncStep::New(new)) => pending.push(*new),
                    Err(error) => failed(&mut report, location, &error),
                }
                progress(&report);
            }
            // The page is stored: only now may the cursor move past it, and the run's
            // record say so (a run killed later still shows what it stored).
            if !options.dry_run {
                let next = (cursor_key.clone(), page.next_cursor.clone());
                let suspects = retiring.listing.is_some().then_some(&mut retiring.suspects);
                self.store_pending(
                    scope,
                    &connector,
                    &mut pending,
                    Some(next),
                    &mut report,
                    suspects,
                )?;
            }
            if let Some(listed) = retiring.listing.as_mut() {
                if !options.dry_run {
                    self.store
                        .mark_listed(&scope.workspace, &connector, &cursor_key, &named)?;
                }
                listed.extend(named);
                retiring.complete |= page.listing_complete;
            }
            let removed: Vec<SourceRemoval> = page
                .removed
                .into_iter()
                .map(|removal| SourceRemoval {
                    source_id: gate::secrets::kept_source_id(&removal.source_id),
                    reason: gate::secrets::redact(&removal.reason).0,
                })
                .collect();
            self.retire(
                scope,
                &connector,
                removed,
                options.dry_run,
                &mut report,
                &mut retiring,
            )?;
            if !options.dry_run {
                report.updated_at = Some(self.clock.now());
                self.store
                    .save_sync_run(&started_by.workspace, &report, &started_by.actor)?;
                progress(&report);
            }
            if page.done || page.next_cursor.is_none() || page.next_cursor == cursor {
                break;
            }
            cursor = page.next_cursor;
        }
        // A complete listing that ran to its end: what it did not name is gone. A failed
        // run may have missed pages, so it retires nothing; nor does a listing that could
        // not name every item it read.
        if failure.is_none()
            && retiring.complete
            && let Some(listed) = retiring.listing.take()
        {
            let gone: Vec<SourceRemoval> = self
                .store
                .listed_items(&scope.workspace, &connector, &cursor_key)?
                .into_iter()
                .filter(|id| !listed.contains(id))
                .map(|source_id| SourceRemoval {
                    source_id,
                    reason: NOT_LISTED.to_owned(),
                })
                .collect();
            let unsure = if retiring.unnamed_errors {
                Some("it could not read every item (see the lines above)")
            } else if retiring.names_overflowed {
                Some(
                    "a page named more items than levh keeps for one call (10,000 skipped or \
                     unchanged)",
                )
            } else {
                None
            };
            match unsure {
                Some(why) if !gone.is_empty() => note(
                    &mut report,
                    format!(
                        "nothing retired: the full listing did not name {} stored item(s), but \
                         {why}, so they may still be at the source",
                        gone.len()
                    ),
                ),
                Some(_) => {}
                None => self.retire(
                    scope,
                    &connector,
                    gone,
                    options.dry_run,
                    &mut report,
                    &mut retiring,
                )?,
            }
        }
        if !options.dry_run {
            self.rejudge(scope, &connector, &mut retiring, &mut report)?;
        }
        report.finished_at = Some(self.clock.now());
        if let Some(error) = failure {
            report.status = SyncStatus::Failed;
            report.failure = Some(error.kind);
            note(&mut report, format!("fetching a page: {error}"));
        } else if !options.dry_run {
            report.status = SyncStatus::Ok;
        }
        if !options.dry_run {
            self.store
                .save_sync_run(&started_by.workspace, &report, &started_by.actor)?;
        }
        progress(&report);
        Ok(report)
    }

    /// One item: unchanged, updated in place, or through the gate.
    pub(super) fn sync_item(
        &self,
        scope: &Scope,
        connector: &str,
        project: Option<&str>,
        item: SourceItem,
        mut dry_run: Option<&mut DryRun>,
    ) -> Result<SyncStep> {
        let source = format!("connector:{connector}");
        let title = item.title.trim();
        // A body with nothing visible (zero-width characters, NULs) is no body: the title
        // must not carry it past the gate's emptiness check.
        let body = if text::has_visible(&item.content) {
            item.content.as_str()
        } else {
            ""
        };
        let content = if title.is_empty() || body.trim_start().starts_with(title) {
            body.to_owned()
        } else if body.is_empty() {
            title.to_owned()
        } else {
            format!("{title}\n\n{body}")
        };
        // The hash is of the whole item — its text past the cut, and its time — so an
        // event moved to another day is a change even when its text is not.
        let hash = item_hash(&content, item.occurred_at);
        let (content, truncated) = fit(
            content,
            self.config.gate.max_chars,
            item.source_uri.as_deref(),
        );
        let known = self
            .store
            .synced_item(&scope.workspace, connector, &item.source_id)?;
        if known.as_ref().is_some_and(|k| k.content_hash == hash) {
            return Ok(SyncStep::Done(SyncedOutcome::just(ItemOutcome::Unchanged)));
        }
        let now = self.clock.now();
        if let Some(known) = &known
            && let Some(memory_id) = known.memory_id
            && let Some(memory) = self.store.get(&scope.workspace, memory_id)?
        {
            let moved = item.occurred_at.filter(|at| *at != memory.valid_from);
            // The same text as when it was stored (with the time it had then, or before
            // item times were hashed): only its time may have changed.
            let same_text = known.content_hash == item_hash(&content, Some(memory.valid_from))
                || known.content_hash == text::content_hash(&content);
            if dry_run.is_some() {
                let outcome = if same_text && moved.is_none() {
                    ItemOutcome::Unchanged
                } else {
                    ItemOutcome::Update
                };
                return Ok(SyncStep::Done(SyncedOutcome::just(outcome)));
            }
            let (verdict, update) = if same_text {
                (
                    if moved.is_some() {
                        ItemOutcome::Update
                    } else {
                        ItemOutcome::Unchanged
                    },
                    None,
                )
            } else {
                // The changed item passes the gate like any update: a duplicate of another
                // memory is rejected, one close to another is held for a person.
                let update =
                    self.update_content_from(scope, memory_id, &content, Some(connector))?;
                let verdict = match update.verdict {
                    Verdict::Admit | Verdict::Redact => ItemOutcome::Update,
                    ref other => ItemOutcome::of(other),
                };

                (verdict, Some(update))
            };
            if let Some(at) = moved
                && verdict == ItemOutcome::Update
            {
                self.store.set_valid_from(
                    &scope.workspace,
                    memory_id,
                    at,
                    EventKind::Update,
                    serde_json::json!({
                        "connector": connector,
                        "valid_from": { "from": memory.valid_from, "to": at },
                    }),
                    now,
                    &scope.actor,
                )?;
            }
            let Some(update) = update else {
                self.store.record_synced_item(
                    &scope.workspace,
                    connector,
                    &item.source_id,
                    &SyncedItem {
                        content_hash: hash,
                        memory_id: Some(memory_id),
                        held_id: None,
                        verdict,
                    },
                    now,
                )?;
                return Ok(SyncStep::Done(SyncedOutcome::just(verdict)));
            };
            let record = SyncedItem {
                content_hash: hash,
                memory_id: Some(memory_id),
                held_id: update.held_id,
                verdict,
            };
            self.store.record_synced_item(
                &scope.workspace,
                connector,
                &item.source_id,
                &record,
                now,
            )?;
            let mut synced = SyncedOutcome::of(verdict, &update.verdict, update.held_id);
            if verdict == ItemOutcome::Update {
                // The changed text may now contradict another memory.
                synced.conflicts = self.check_conflicts(scope, memory_id)?.len() as u64;
            }
            return Ok(SyncStep::Done(synced));
        }

        let mut metadata = match item.metadata {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        metadata.insert("connector".into(), connector.into());
        metadata.insert("source_id".into(), item.source_id.clone().into());
        metadata.insert("title".into(), item.title.clone().into());
        if let Some(uri) = &item.source_uri {
            metadata.insert("source_uri".into(), uri.clone().into());
        }
        if let Some((total, kept)) = truncated {
            metadata.insert(
                "truncated".into(),
                serde_json::json!({ "chars": total, "kept": kept }),
            );
        }
        if !item.people.is_empty() {
            metadata.insert(
                "people".into(),
                serde_json::to_value(&item.people).unwrap_or_default(),
            );
        }
        let new = NewMemory {
            content,
            project: project.map(str::to_owned),
            kind: Some(
                Kind::new(&item.kind.to_lowercase())
                    .unwrap_or_else(|_| Kind::new("document").unwrap_or_default()),
            ),
            source: Some(source.clone()),
            valid_from: item.occurred_at,
            metadata: Some(serde_json::Value::Object(metadata)),
            ..NewMemory::default()
        };
        if let Some(run) = dry_run.as_mut() {
            return Ok(SyncStep::Done(self.simulate(
                scope,
                new,
                &item.source_id,
                run,
            )?));
        }
        Ok(SyncStep::New(Box::new(NewItem {
            source_id: item.source_id,
            hash,
            source,
            new,
        })))
    }

    /// Stores a page's new items through the gate as one batch, with what became of each
    /// and (`cursor`: key and next position) the cursor, in one transaction; counts each
    /// item in the report. A batch the store refuses fails its items, each named, and the
    /// run goes on.
    fn store_pending(
        &self,
        scope: &Scope,
        connector: &str,
        pending: &mut Pending,
        cursor: Option<(String, Option<String>)>,
        report: &mut SyncReport,
        mut suspects: Option<&mut Vec<Suspect>>,
    ) -> Result<()> {
        let items = std::mem::take(pending).items;
        if items.is_empty() && cursor.is_none() {
            return Ok(());
        }
        let now = self.clock.now();
        let (meta, news): (Vec<_>, Vec<_>) = items
            .into_iter()
            .map(|item| ((item.source_id, item.hash, item.source), item.new))
            .unzip();
        // During a full listing, a copy of each item, to judge again one that the gate
        // held or refused for its likeness to a memory the same listing retires (a
        // renamed or moved file).
        let copies = suspects
            .as_ref()
            .is_some_and(|s| s.len() < MAX_SUSPECTS)
            .then(|| news.clone());
        let attempt = || -> Result<(Vec<Result<SyncedOutcome>>, Vec<MemoryId>)> {
            let plan = self.plan_batch(scope, news.clone())?;
            let mut records = Vec::new();
            let mut stored = Vec::new();
            let mut synced = Vec::with_capacity(meta.len());
            for ((source_id, hash, source), planned) in meta.iter().zip(&plan.items) {
                let Ok(planned) = planned else {
                    synced.push(None);
                    continue;
                };
                let outcome = &planned.outcome;
                let mut verdict = ItemOutcome::of(&outcome.verdict);
                let mut memory_id = outcome.memory_id;
                // A run of an older levh that died after storing an item but before
                // recording it: the item now duplicates its own memory. Link it instead of
                // counting a duplicate.
                if let (Verdict::Reject { .. }, Some(nearest)) =
                    (&outcome.verdict, outcome.nearest())
                    && let Some(existing) = self.store.get(&scope.workspace, nearest.id)?
                    && existing.source == *source
                    && existing.metadata.get("source_id").and_then(|v| v.as_str())
                        == Some(source_id.as_str())
                {
                    memory_id = Some(existing.id);
                    verdict = ItemOutcome::Unchanged;
                }
                if matches!(verdict, ItemOutcome::Admit | ItemOutcome::Redact) {
                    stored.extend(memory_id);
                }
                let record = SyncedItem {
                    content_hash: hash.clone(),
                    memory_id,
                    held_id: outcome.held_id,
                    verdict,
                };
                records.push((source_id.clone(), record));
                synced.push(Some(verdict));
            }
            let page = SyncedPage {
                workspace: scope.workspace.clone(),
                connector: connector.to_owned(),
                items: records,
                cursor: cursor.clone(),
                now,
            };
            let outcomes = self.commit_batch(scope, plan, Some(page))?;
            let outcomes = outcomes
                .into_iter()
                .zip(synced)
                .map(|(outcome, verdict)| {
                    outcome.map(|outcome| {
                        SyncedOutcome::of(
                            verdict.unwrap_or_else(|| ItemOutcome::of(&outcome.verdict)),
                            &outcome.verdict,
                            outcome.held_id,
                        )
                    })
                })
                .collect();
            Ok((outcomes, stored))
        };
        match super::batch::judged_again_when_raced(attempt) {
            Ok((outcomes, stored)) => {
                // What the page stored may contradict what was there.
                report.conflicts += self.check_conflicts_of(scope, &stored)? as u64;
                for (index, ((source_id, hash, source), outcome)) in
                    meta.into_iter().zip(outcomes).enumerate()
                {
                    match outcome {
                        Ok(synced) => {
                            if let (Some(suspects), Some(copies), Some(nearest)) =
                                (suspects.as_deref_mut(), copies.as_ref(), synced.nearest)
                                && matches!(
                                    synced.outcome,
                                    ItemOutcome::Review | ItemOutcome::Reject
                                )
                                && suspects.len() < MAX_SUSPECTS
                            {
                                suspects.push(Suspect {
                                    item: NewItem {
                                        source_id: source_id.clone(),
                                        hash,
                                        source,
                                        new: copies[index].clone(),
                                    },
                                    nearest,
                                    outcome: synced.outcome,
                                    held_id: synced.held_id,
                                });
                            }
                            count(report, source_id, synced)
                        }
                        Err(error) => failed(report, source_id, &error),
                    }
                }
            }
            Err(error) => {
                for (source_id, _, _) in meta {
                    failed(report, source_id, &error);
                }
                // The cursor still moves past the page, as it did when items failed one
                // by one: a later full sync retries what was never recorded.
                if let Some((key, next)) = cursor {
                    self.store.save_sync_cursor(
                        &scope.workspace,
                        &key,
                        next.as_deref(),
                        self.clock.now(),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Retires items gone from the source and names each in the report; a dry run only
    /// names what it would retire.
    fn retire(
        &self,
        scope: &Scope,
        connector: &str,
        removals: Vec<SourceRemoval>,
        dry_run: bool,
        report: &mut SyncReport,
        retiring: &mut Retiring,
    ) -> Result<()> {
        if removals.is_empty() {
            return Ok(());
        }
        let retirements = if dry_run {
            let mut would = Vec::new();
            for removal in removals {
                let Some(known) =
                    self.store
                        .synced_item(&scope.workspace, connector, &removal.source_id)?
                else {
                    continue;
                };
                let memory = match known.memory_id {
                    Some(id) => self.store.get(&scope.workspace, id)?,
                    None => None,
                };
                let pinned = memory.as_ref().is_some_and(|m| m.state.pinned);
                would.push(Retirement {
                    source_id: removal.source_id,
                    reason: removal.reason,
                    memory_id: memory.as_ref().filter(|_| !pinned).map(|m| m.id),
                    kept_pinned: memory.as_ref().filter(|_| pinned).map(|m| m.id),
                    held_id: known.held_id,
                });
            }
            would
        } else {
            self.store.retire_synced_items(
                &scope.workspace,
                connector,
                &removals,
                &report.run_id,
                self.clock.now(),
                &scope.actor,
            )?
        };
        for retirement in retirements {
            report.retired += 1;
            if let Some(id) = retirement.memory_id {
                retiring.memories.insert(id);
            }
            if report.retirements.len() < MAX_NOT_STORED {
                report.retirements.push(retirement);
            }
        }
        Ok(())
    }

    /// Judges again the items of this run held or refused for their likeness to a memory
    /// the run then retired: a file renamed (or moved) between two syncs is a new item
    /// with the old one's text, and the old one is gone only once the listing ends.
    fn rejudge(
        &self,
        scope: &Scope,
        connector: &str,
        retiring: &mut Retiring,
        report: &mut SyncReport,
    ) -> Result<()> {
        let suspects = std::mem::take(&mut retiring.suspects);
        let mut pending = Pending::default();
        for suspect in suspects {
            if !retiring.memories.contains(&suspect.nearest) {
                continue;
            }
            if let Some(held) = suspect.held_id {
                self.store.close_held(
                    &scope.workspace,
                    held,
                    HeldStatus::Discarded,
                    None,
                    self.clock.now(),
                    &scope.actor,
                )?;
            }
            uncount(report, &suspect.item.source_id, suspect.outcome);
            if pending.has(&suspect.item.source_id) {
                self.store_pending(scope, connector, &mut pending, None, report, None)?;
            }
            pending.push(suspect.item);
        }
        self.store_pending(scope, connector, &mut pending, None, report, None)
    }

    /// One sync run, by its id.
    pub fn sync_run(&self, scope: &Scope, id: &str) -> Result<Option<SyncReport>> {
        Ok(self
            .store
            .sync_run(&scope.workspace, id.trim())?
            .map(|run| self.with_liveness(run)))
    }

    /// A run left `running` with no page recorded for a while was interrupted.
    fn with_liveness(&self, mut run: SyncReport) -> SyncReport {
        let last = run.updated_at.or(run.started_at);
        let stale = last.is_some_and(|at| {
            self.clock.now().as_second() - at.as_second() > crate::sync::STALE_RUN_MINUTES * 60
        });
        if run.status == SyncStatus::Running && stale {
            run.status = SyncStatus::Interrupted;
        }
        run
    }

    /// Recent sync runs, newest first.
    pub fn sync_runs(
        &self,
        scope: &Scope,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>> {
        Ok(self
            .store
            .sync_runs(&scope.workspace, connector, limit)?
            .into_iter()
            .map(|run| self.with_liveness(run))
            .collect())
    }
}

impl Levh {
    /// A dry run's verdict on one item: the gate against the store and against the
    /// items of this run that would have been stored or held before it.
    fn simulate(
        &self,
        scope: &Scope,
        new: NewMemory,
        source_id: &str,
        run: &mut DryRun,
    ) -> Result<SyncedOutcome> {
        let p = self.prepare(scope, new, None)?;
        let hash = text::content_hash(&p.content);
        let (mut nearest, mut nearest_content) = (p.nearest, p.nearest_content.clone());
        let mut from_run = None;
        if let Some((index, similarity)) = run.nearest(&p, self.embedder.is_semantic())
            && nearest.is_none_or(|n| similarity > n.similarity)
        {
            let earlier = &run.items[index];
            nearest = Some(Nearest {
                id: earlier.stand_in,
                similarity,
                measure: if self.embedder.is_semantic() {
                    Measure::Cosine
                } else {
                    Measure::Lexical
                },
            });
            nearest_content = Some(earlier.content.clone());
            from_run = Some(earlier);
        }
        let mut verdict = gate::decide(
            &self.config.gate,
            &p.content,
            &p.redactions,
            nearest,
            nearest_content.as_deref(),
        );
        if !matches!(verdict, Verdict::Reject { .. })
            && let Some(first) = run.held.get(&hash)
        {
            verdict = Verdict::Reject {
                reason: format!(
                    "duplicate of item {first} of this run, which would wait for a person"
                ),
                nearest: None,
            };
        } else if !matches!(verdict, Verdict::Reject { .. })
            && self
                .store
                .waiting_held(&scope.workspace, p.project.as_deref(), &hash)?
                .is_some()
        {
            verdict = Verdict::Reject {
                reason: "duplicate of a held candidate waiting for a person's decision".into(),
                nearest: None,
            };
        }
        let outcome = ItemOutcome::of(&verdict);
        let mut synced = SyncedOutcome::of(outcome, &verdict, None);
        if let Some(earlier) = from_run
            && verdict.nearest().is_some()
        {
            // The collision is with an item of this run, not a stored memory.
            synced.reason = synced.reason.map(|reason| {
                reason.replace(
                    &earlier.stand_in.to_string(),
                    &format!("item {} of this run", earlier.source_id),
                )
            });
            synced.nearest = None;
        }
        match outcome {
            ItemOutcome::Admit | ItemOutcome::Redact => run.add(source_id, &p, self.clock.now()),
            ItemOutcome::Review => {
                run.held.entry(hash).or_insert_with(|| source_id.to_owned());
            }
            _ => {}
        }
        Ok(synced)
    }
}

/// The items a dry run would have stored so far, for judging the next ones.
#[derive(Debug, Default)]
pub(super) struct DryRun {
    items: Vec<Simulated>,
    /// Near-duplicate key → items having it (how the store finds lexical neighbours).
    by_key: HashMap<i64, Vec<usize>>,
    /// Content hash of a would-be held item → its source id.
    held: HashMap<String, String>,
}

#[derive(Debug)]
struct Simulated {
    source_id: String,
    /// An id standing for the item in the gate's reasons (replaced before reporting).
    stand_in: MemoryId,
    content: String,
    vector: Vec<f32>,
}

impl DryRun {
    fn add(&mut self, source_id: &str, p: &Prepared, now: Timestamp) {
        let index = self.items.len();
        for key in &p.keys {
            self.by_key.entry(*key).or_default().push(index);
        }
        self.items.push(Simulated {
            source_id: source_id.to_owned(),
            stand_in: MemoryId::new_at(now),
            content: p.content.clone(),
            vector: p.embedding.vector.clone(),
        });
    }

    /// The closest earlier item that could be copied or revised by this one. Candidates
    /// come through shared near-duplicate keys, as in the store (a paraphrase among the
    /// run's own items is not simulated); they are scored by the gate's measure.
    fn nearest(&self, p: &Prepared, semantic: bool) -> Option<(usize, f64)> {
        // As the store does for a real sync: the few earlier items sharing the most keys
        // are compared, not every item sharing one. Mail from one template shares keys by
        // the thousand, and comparing each item with all of them made a dry run quadratic
        // (4,000 messages: 128 s against 10.8 s for the real sync). A key that thousands
        // of items share says nothing about which is near, so it is not counted.
        let mut shared: HashMap<usize, u32> = HashMap::new();
        for key in &p.keys {
            let Some(items) = self.by_key.get(key) else {
                continue;
            };
            if items.len() > COMMON_KEY {
                continue;
            }
            for &item in items {
                *shared.entry(item).or_default() += 1;
            }
        }
        let mut candidates: Vec<(usize, u32)> = shared.into_iter().collect();
        candidates.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        candidates.truncate(COMPARE_NEIGHBOURS);
        candidates
            .into_iter()
            .map(|(item, _)| item)
            .filter(|&i| gate::comparable(&p.content, &self.items[i].content))
            .map(|i| {
                let other = &self.items[i];
                let similarity = if semantic {
                    cosine(&p.embedding.vector, &other.vector)
                } else {
                    text::shingle_similarity(&p.content, &other.content)
                };
                (i, similarity)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Earlier items of a dry run sharing a near-duplicate key with more than this many
/// others: too common a key to point at a near one.
const COMMON_KEY: usize = 1_000;

/// Room left under the gate's limit for the truncation marker and for redaction markers
/// that come out longer than the secrets they replace.
const TRUNCATION_MARGIN: usize = 400;

/// An item longer than the gate admits is cut to fit — at a paragraph, line or sentence
/// end near the limit when there is one — with a marker saying how much was kept and
/// where the rest is, rather than rejected whole. Returns the content and, when cut,
/// (characters in all, characters kept).
fn fit(
    content: String,
    max_chars: usize,
    source_uri: Option<&str>,
) -> (String, Option<(usize, usize)>) {
    let total = content.chars().count();
    if total <= max_chars {
        return (content, None);
    }
    let budget = max_chars.saturating_sub(TRUNCATION_MARGIN).max(1);
    let cut = content
        .char_indices()
        .nth(budget)
        .map_or(content.len(), |(at, _)| at);
    let head = &content[..cut];
    // A natural end in the last fifth of the budget, else the hard cut.
    let floor = head.len() * 4 / 5;
    let end = ["\n\n", "\n", ". "]
        .iter()
        .filter_map(|mark| head.rfind(mark).map(|at| at + mark.len()))
        .find(|&at| at >= floor)
        .unwrap_or(cut);
    let kept_text = head[..end].trim_end();
    let kept = kept_text.chars().count();
    let place = source_uri
        .map(|uri| format!("; the whole item is at {uri}"))
        .unwrap_or_default();
    (
        format!("{kept_text}\n\n[… cut by levh: {kept} of {total} characters kept{place}]"),
        Some((total, kept)),
    )
}

/// Where one item of a page stands after the first look at it.
pub(super) enum SyncStep {
    /// Decided: unchanged, updated in place, simulated (dry run).
    Done(SyncedOutcome),
    /// New: waits to be stored with the rest of its page (boxed: it carries the
    /// memory's content, many times the size of a decided outcome).
    New(Box<NewItem>),
}

/// A new item waiting for its page's batch.
pub(super) struct NewItem {
    source_id: String,
    /// Hash of the whole item as the source gave it.
    hash: String,
    /// `connector:<name>`.
    source: String,
    new: NewMemory,
}

/// The hash a synced item is known by: its text, and its time when it has one.
fn item_hash(content: &str, occurred_at: Option<Timestamp>) -> String {
    match occurred_at {
        None => text::content_hash(content),
        Some(at) => text::content_hash(&format!("{content}\n\u{1f}occurred_at={at}")),
    }
}

/// What a run knows of items gone from its source.
#[derive(Default)]
struct Retiring {
    /// The items named since the connector began a full listing in this run (`None`
    /// until it does).
    listing: Option<HashSet<String>>,
    /// The listing ran to its last page.
    complete: bool,
    /// An item of the listing could not be read and named no id.
    unnamed_errors: bool,
    /// A page of the listing named more items than the host keeps for one call.
    names_overflowed: bool,
    /// Memories retired by this run.
    memories: HashSet<MemoryId>,
    /// Items of the listing held or refused as like a memory (see [`Levh::rejudge`]).
    suspects: Vec<Suspect>,
}

/// Items of one run kept to be judged again (each with its content): a run that renames
/// more files than this leaves the rest held or refused as the report names them, for a
/// person to decide, rather than holding every near-duplicate of a large folder in memory.
const MAX_SUSPECTS: usize = 10_000;

/// An item held or refused for its likeness to `nearest`.
struct Suspect {
    item: NewItem,
    nearest: MemoryId,
    outcome: ItemOutcome,
    held_id: Option<HeldId>,
}

/// Takes back the count of an item judged again.
fn uncount(report: &mut SyncReport, source_id: &str, outcome: ItemOutcome) {
    let fate = match outcome {
        ItemOutcome::Review => {
            report.held = report.held.saturating_sub(1);
            ItemFate::Held
        }
        ItemOutcome::Reject => {
            report.rejected = report.rejected.saturating_sub(1);
            ItemFate::Rejected
        }
        _ => return,
    };
    report
        .not_stored
        .retain(|item| !(item.source_id == source_id && item.fate == fate));
}

/// A page's new items, in order.
#[derive(Default)]
struct Pending {
    items: Vec<NewItem>,
    source_ids: std::collections::HashSet<String>,
}

impl Pending {
    fn has(&self, source_id: &str) -> bool {
        self.source_ids.contains(source_id)
    }

    fn push(&mut self, item: NewItem) {
        self.source_ids.insert(item.source_id.clone());
        self.items.push(item);
    }
}

/// Counts a decided item in the report, naming it when it was not stored.
fn count(report: &mut SyncReport, location: String, synced: SyncedOutcome) {
    report.conflicts += synced.conflicts;
    match synced.outcome {
        ItemOutcome::Admit => report.admitted += 1,
        ItemOutcome::Redact => report.redacted += 1,
        ItemOutcome::Review => report.held += 1,
        ItemOutcome::Reject => report.rejected += 1,
        ItemOutcome::Update => report.updated += 1,
        ItemOutcome::Unchanged => report.unchanged += 1,
    }
    let fate = match synced.outcome {
        ItemOutcome::Review => Some(ItemFate::Held),
        ItemOutcome::Reject => Some(ItemFate::Rejected),
        _ => None,
    };
    if let Some(fate) = fate {
        not_stored(
            report,
            NotStoredItem {
                source_id: location,
                fate,
                reason: synced.reason.unwrap_or_default(),
                nearest: synced.nearest,
                held_id: synced.held_id,
            },
        );
    }
}

/// Counts an item that failed, with why.
fn failed(report: &mut SyncReport, location: String, error: &Error) {
    report.failed += 1;
    note(report, format!("{location}: {error}"));
    not_stored(report, NotStoredItem::failed(location, error.to_string()));
}

fn not_stored(report: &mut SyncReport, item: NotStoredItem) {
    if report.not_stored.len() < MAX_NOT_STORED {
        report.not_stored.push(item);
    }
}

/// What one item came to, and (when it was not stored) why.
pub(super) struct SyncedOutcome {
    outcome: ItemOutcome,
    reason: Option<String>,
    nearest: Option<MemoryId>,
    held_id: Option<HeldId>,
    /// Conflict candidates its changed text formed.
    conflicts: u64,
}

impl SyncedOutcome {
    fn just(outcome: ItemOutcome) -> Self {
        Self {
            outcome,
            reason: None,
            nearest: None,
            held_id: None,
            conflicts: 0,
        }
    }

    fn of(outcome: ItemOutcome, verdict: &Verdict, held_id: Option<HeldId>) -> Self {
        Self {
            outcome,
            reason: verdict.reason(),
            nearest: verdict.nearest().map(|n| n.id),
            held_id,
            conflicts: 0,
        }
    }
}

fn note(report: &mut SyncReport, line: String) {
    if report.errors.len() < MAX_ERROR_LINES {
        report.errors.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn a_long_item_is_cut_at_a_paragraph_near_the_limit_with_a_marker() {
        let paragraph = "word ".repeat(199) + "end.";
        let long = vec![paragraph.as_str(); 40].join("\n\n");
        let total = long.chars().count();
        let (fitted, cut) = fit(long, 32_000, Some("file:/notes/long.md"));
        let (chars, kept) = cut.unwrap();
        assert_eq!(chars, total);
        assert!(fitted.chars().count() <= 32_000);
        assert!(fitted.ends_with(&format!(
            "[… cut by levh: {kept} of {total} characters kept; the whole item is at file:/notes/long.md]"
        )));
        let body = fitted.split("\n\n[… cut").next().unwrap();
        assert!(body.ends_with("end."), "cut at a paragraph end");
        let (short, none) = fit("short".into(), 32_000, None);
        assert_eq!((short.as_str(), none), ("short", None));
        // No natural end anywhere: a hard cut, still under the limit.
        let (hard, cut) = fit("x".repeat(50_000), 32_000, None);
        assert!(cut.is_some() && hard.chars().count() <= 32_000);
    }
}
