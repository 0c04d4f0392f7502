//! Connector sync (SPEC §6): pages from a source through the gate, one item at a time.

use super::*;

impl Levh {
    /// Runs a connector sync: every page, every item through the gate. A failing item is
    /// counted and described, and the run goes on; a failing page fetch ends the run as
    /// `failed` (the cursor then still points at the last stored page, so re-running
    /// resumes there). `progress` is called after every item.
    pub fn sync(
        &self,
        scope: &Scope,
        source: &mut dyn Source,
        options: SyncOptions,
        project: Option<String>,
        progress: &mut dyn FnMut(&SyncReport),
    ) -> Result<SyncReport> {
        let project = check_label("project", project)?;
        let connector = source.connector().to_owned();
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
                .save_sync_run(&scope.workspace, &report, &scope.actor)?;
        }
        let cursor_key = source.cursor_key();
        let mut cursor = self.store.sync_cursor(&scope.workspace, &cursor_key)?;
        let mut failure = None;
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
            for error in &page.errors {
                report.failed += 1;
                note(
                    &mut report,
                    format!("{}: {}", error.location, error.message),
                );
            }
            for item in page.items {
                let location = item.source_id.clone();
                match self.sync_item(scope, &connector, project.as_deref(), item, options.dry_run) {
                    Ok(outcome) => match outcome {
                        ItemOutcome::Admit => report.admitted += 1,
                        ItemOutcome::Redact => report.redacted += 1,
                        ItemOutcome::Review => report.held += 1,
                        ItemOutcome::Reject => report.rejected += 1,
                        ItemOutcome::Update => report.updated += 1,
                        ItemOutcome::Unchanged => report.unchanged += 1,
                    },
                    Err(error) => {
                        report.failed += 1;
                        note(&mut report, format!("{location}: {error}"));
                    }
                }
                progress(&report);
            }
            // The page is stored: only now may the cursor move past it.
            if !options.dry_run {
                self.store.save_sync_cursor(
                    &scope.workspace,
                    &cursor_key,
                    page.next_cursor.as_deref(),
                    self.clock.now(),
                )?;
            }
            if page.done || page.next_cursor.is_none() || page.next_cursor == cursor {
                break;
            }
            cursor = page.next_cursor;
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
                .save_sync_run(&scope.workspace, &report, &scope.actor)?;
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
        dry_run: bool,
    ) -> Result<ItemOutcome> {
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
        let hash = text::content_hash(&content);
        let known = self
            .store
            .synced_item(&scope.workspace, connector, &item.source_id)?;
        if known.as_ref().is_some_and(|k| k.content_hash == hash) {
            return Ok(ItemOutcome::Unchanged);
        }
        let now = self.clock.now();
        if let Some(memory_id) = known.as_ref().and_then(|k| k.memory_id)
            && self.store.get(&scope.workspace, memory_id)?.is_some()
        {
            if dry_run {
                return Ok(ItemOutcome::Update);
            }
            // The changed item passes the gate like any update: a duplicate of another
            // memory is rejected, one close to another is held for a person.
            let update = self.update_content_from(scope, memory_id, &content, Some(connector))?;
            let verdict = match update.verdict {
                Verdict::Admit | Verdict::Redact => ItemOutcome::Update,
                ref other => ItemOutcome::of(other),
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
            return Ok(verdict);
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
        if dry_run {
            return Ok(ItemOutcome::of(&self.evaluate(scope, new)?.verdict));
        }
        let outcome = self.capture(scope, new)?;
        let mut verdict = ItemOutcome::of(&outcome.verdict);
        let mut memory_id = outcome.memory_id;
        // A run that died after storing an item but before recording it: the item now
        // duplicates its own memory. Link it instead of counting a duplicate.
        if let (Verdict::Reject { .. }, Some(nearest)) = (&outcome.verdict, outcome.nearest())
            && let Some(existing) = self.store.get(&scope.workspace, nearest.id)?
            && existing.source == source
            && existing.metadata.get("source_id").and_then(|v| v.as_str())
                == Some(item.source_id.as_str())
        {
            memory_id = Some(existing.id);
            verdict = ItemOutcome::Unchanged;
        }
        let record = SyncedItem {
            content_hash: hash,
            memory_id,
            held_id: outcome.held_id,
            verdict,
        };
        self.store.record_synced_item(
            &scope.workspace,
            connector,
            &item.source_id,
            &record,
            now,
        )?;
        Ok(verdict)
    }

    /// Recent sync runs, newest first.
    pub fn sync_runs(
        &self,
        scope: &Scope,
        connector: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SyncReport>> {
        Ok(self.store.sync_runs(&scope.workspace, connector, limit)?)
    }
}

fn note(report: &mut SyncReport, line: String) {
    if report.errors.len() < MAX_ERROR_LINES {
        report.errors.push(line);
    }
}
