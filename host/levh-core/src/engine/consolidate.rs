//! Consolidation through the engine: reading the aged, unpinned memories of each project,
//! clustering them ([`crate::consolidation`]), and writing one summary per cluster that
//! retires its members (kept, linked, visible with `as_of`); and the undo.

use std::collections::BTreeMap;

use serde::Serialize;

use super::*;
use crate::AdmissionVerdict;
use crate::consolidation::{self, Episode, Item};

/// Kind of a consolidation's summary memory.
pub const SUMMARY_KIND: &str = "summary";
/// Source of a consolidation's summary memory.
pub const SUMMARY_SOURCE: &str = "consolidation";
/// Most memories one run reads by default: its cost is linear in them, and a run past this
/// goes on where the next one starts (the oldest are read first).
pub const DEFAULT_CONSIDERED: usize = 200_000;

/// What to consolidate.
#[derive(Debug, Clone, Default)]
pub struct ConsolidationRequest {
    /// Only this project (each project is clustered apart from the others anyway).
    pub project: Option<String>,
    /// Report the clusters without writing anything.
    pub dry_run: bool,
    /// Only memories recorded at least this many days ago (the setting when `None`).
    pub older_than_days: Option<f64>,
    /// Read at most this many candidates ([`DEFAULT_CONSIDERED`] when `None`).
    pub limit: Option<usize>,
}

/// One cluster and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct ConsolidatedCluster {
    /// The summary memory written (`None` in a dry run).
    pub summary_id: Option<MemoryId>,
    /// Its text.
    pub summary: String,
    /// The project of the cluster.
    pub project: Option<String>,
    /// Its members, oldest first.
    pub members: Vec<MemoryId>,
}

/// What a consolidation run found and did.
#[derive(Debug, Clone, Serialize)]
pub struct ConsolidationReport {
    /// Nothing was written.
    pub dry_run: bool,
    /// Memories old enough, unpinned and live that were compared.
    pub considered: usize,
    /// `semantic` (vector cosine) or `lexical` (TF-IDF cosine).
    pub measure: &'static str,
    /// The similarity a pair needed.
    pub threshold: f64,
    /// Only memories recorded before this were candidates.
    pub recorded_before: Timestamp,
    /// The clusters, each with its summary.
    pub clusters: Vec<ConsolidatedCluster>,
    /// Memories retired into summaries (0 in a dry run).
    pub retired: usize,
}

/// Writes a cluster's summary in other words (a language model), or `None` to keep the
/// extractive one. Given the members oldest first and the extractive summary.
pub type SummaryWriter<'a> = &'a dyn Fn(&[Memory], &str) -> Option<String>;

impl Levh {
    /// Consolidates clusters of related memories: in each project, the live, unpinned
    /// memories recorded before `older_than_days` (neither summaries themselves, nor
    /// connector items that their source keeps in step, nor memories whose validity
    /// already ends) are clustered by the active measure; each cluster of three or more
    /// becomes one `summary` memory that supersedes its members. `rewrite` may put the
    /// summary in other words. A dry run reports the same clusters and writes nothing.
    pub fn consolidate(
        &self,
        scope: &Scope,
        request: &ConsolidationRequest,
        rewrite: Option<SummaryWriter<'_>>,
    ) -> Result<ConsolidationReport> {
        let settings = self.config.consolidation;
        let days = request.older_than_days.unwrap_or(settings.after_days);
        if !(days.is_finite() && days >= 0.0) {
            return Err(Error::invalid(
                "older_than_days",
                format!("{days} is not a number of days (0 or more)"),
            ));
        }
        let now = self.clock.now();
        let recorded_before = add_hours(now, -days * 24.0);
        let limit = request.limit.unwrap_or(DEFAULT_CONSIDERED).max(1);
        let candidates = self.consolidation_candidates(
            scope,
            check_label("project", request.project.clone())?,
            recorded_before,
            limit,
        )?;
        let semantic = self.embedder.is_semantic();
        let threshold = settings.threshold(semantic);
        let considered = candidates.len();
        // Moved, not copied: a run holds every candidate, and a second copy of 100k
        // memories was most of its peak.
        let mut by_project: BTreeMap<Option<String>, Vec<Memory>> = BTreeMap::new();
        for memory in candidates {
            by_project
                .entry(memory.project.clone())
                .or_default()
                .push(memory);
        }
        let mut report = ConsolidationReport {
            dry_run: request.dry_run,
            considered,
            measure: if semantic { "semantic" } else { "lexical" },
            threshold,
            recorded_before,
            clusters: Vec::new(),
            retired: 0,
        };
        for (project, mut memories) in by_project {
            // Oldest first, so that the clusters (and their summaries) do not depend on
            // the order the store listed them in.
            memories.sort_by(|a, b| {
                a.state
                    .created_at
                    .cmp(&b.state.created_at)
                    .then(a.id.cmp(&b.id))
            });
            let vectors = if semantic {
                let ids: Vec<MemoryId> = memories.iter().map(|m| m.id).collect();
                let stored: HashMap<MemoryId, Vec<f32>> = self
                    .store
                    .embeddings(&scope.workspace, &ids, self.embedder.model_id())?
                    .into_iter()
                    .collect();
                memories
                    .iter()
                    .map(|m| stored.get(&m.id).cloned())
                    .collect()
            } else {
                vec![None; memories.len()]
            };
            let items: Vec<Item<'_>> = memories
                .iter()
                .zip(&vectors)
                .map(|(m, v)| Item {
                    content: &m.content,
                    vector: v.as_deref(),
                })
                .collect();
            for group in consolidation::clusters(&items, semantic, threshold) {
                let members: Vec<Memory> = group.iter().map(|&i| memories[i].clone()).collect();
                let cluster =
                    self.write_cluster(scope, project.clone(), members, request.dry_run, rewrite)?;
                report.retired += if request.dry_run {
                    0
                } else {
                    cluster.members.len()
                };
                report.clusters.push(cluster);
            }
        }
        Ok(report)
    }

    /// The candidates of a run, oldest first, read a page at a time.
    fn consolidation_candidates(
        &self,
        scope: &Scope,
        project: Option<String>,
        recorded_before: Timestamp,
        limit: usize,
    ) -> Result<Vec<Memory>> {
        const PAGE: usize = 1_000;
        let now = self.clock.now();
        // The list is newest first and the oldest are the ones a run owes most: read it to
        // its end, keeping only the `limit` oldest seen (memory bounded by the limit).
        let mut found = std::collections::VecDeque::new();
        let mut after = None;
        loop {
            let filter = MemoryFilter {
                workspace: scope.workspace.clone(),
                project: project.clone(),
                created_before: Some(recorded_before),
                pinned: Some(false),
                listed_after: after,
                ..MemoryFilter::default()
            }
            .read_at(None, now);
            let page = self.store.list(
                &filter,
                Page {
                    limit: PAGE,
                    offset: 0,
                },
            )?;
            let done = page.len() < PAGE;
            after = page.last().map(|m| m.id);
            for memory in page.into_iter().filter(|m| {
                m.kind.as_str() != SUMMARY_KIND
                    && m.superseded_by.is_none()
                    && m.valid_to.is_none()
                    && capture::source_id(&m.metadata).is_none()
            }) {
                found.push_back(memory);
                if found.len() > limit {
                    found.pop_front();
                }
            }
            if done {
                break;
            }
        }
        let mut found: Vec<Memory> = found.into();
        found.reverse();
        Ok(found)
    }

    /// Writes one cluster's summary (unless `dry_run`) and says what it did.
    fn write_cluster(
        &self,
        scope: &Scope,
        project: Option<String>,
        mut members: Vec<Memory>,
        dry_run: bool,
        rewrite: Option<SummaryWriter<'_>>,
    ) -> Result<ConsolidatedCluster> {
        members.sort_by(|a, b| a.valid_from.cmp(&b.valid_from).then(a.id.cmp(&b.id)));
        let episodes: Vec<Episode<'_>> = members
            .iter()
            .map(|m| Episode {
                at: m.valid_from,
                content: &m.content,
            })
            .collect();
        let extractive = consolidation::extractive_summary(project.as_deref(), &episodes);
        let ids: Vec<MemoryId> = members.iter().map(|m| m.id).collect();
        if dry_run {
            return Ok(ConsolidatedCluster {
                summary_id: None,
                summary: extractive,
                project,
                members: ids,
            });
        }
        let written = rewrite
            .and_then(|write| write(&members, &extractive))
            .filter(|text| text::has_visible(text));
        // A model's words pass the secret filter like anything else stored.
        let (content, _) = gate::secrets::redact(written.as_deref().unwrap_or(&extractive));
        // Cut to what any memory may hold (whole characters), keeping its lines.
        let content: String = content.chars().take(self.config.gate.max_chars).collect();
        let now = self.clock.now();
        let model = self.config.model;
        let state = MemoryState {
            importance: members
                .iter()
                .map(|m| m.state.importance)
                .fold(0.0, f64::max),
            pinned: false,
            stability_hours: members
                .iter()
                .map(|m| m.state.stability_hours)
                .fold(model.initial_stability_hours, f64::max)
                .min(model.max_stability_hours),
            last_recalled_at: members
                .iter()
                .filter_map(|m| m.state.last_recalled_at)
                .max(),
            recall_count: members
                .iter()
                .map(|m| m.state.recall_count)
                .fold(0u32, u32::saturating_add),
            created_at: now,
        };
        let embedding = self.embed_one(&content)?;
        let memory = Memory {
            id: MemoryId::new_at(now),
            workspace: scope.workspace.clone(),
            project: project.clone(),
            content_hash: text::content_hash(&content),
            kind: Kind::new(SUMMARY_KIND)?,
            source: SUMMARY_SOURCE.to_owned(),
            state,
            valid_from: members.iter().map(|m| m.valid_from).min().unwrap_or(now),
            valid_to: None,
            superseded_by: None,
            admission: AdmissionRecord {
                verdict: AdmissionVerdict::Admit,
                reasons: vec![format!(
                    "consolidation of {} related memories{}",
                    members.len(),
                    if written.is_some() {
                        ", written by a language model"
                    } else {
                        ""
                    }
                )],
                decided_by: SUMMARY_SOURCE.to_owned(),
            },
            metadata: serde_json::json!({ "consolidated": members.len() }),
            session_id: None,
            embedding_model: Some(embedding.model.clone()),
            embedding_dimension: Some(embedding.vector.len() as u32),
            content,
        };
        let record = NewMemoryRecord {
            near_duplicate_keys: text::near_duplicate_keys(&memory.content),
            memory,
            embedding: Some(embedding),
            working: false,
            forgotten_at: None,
        };
        let retired = self.store.consolidate(&record, &ids, &scope.actor)?;
        Ok(ConsolidatedCluster {
            summary_id: Some(record.memory.id),
            summary: record.memory.content,
            project,
            members: retired,
        })
    }

    /// Undoes a consolidation: its members live again as they were, the summary is
    /// forgotten. Returns the members restored.
    pub fn undo_consolidation(&self, scope: &Scope, summary: MemoryId) -> Result<Vec<MemoryId>> {
        self.store
            .undo_consolidation(&scope.workspace, summary, self.clock.now(), &scope.actor)?
            .ok_or_else(|| {
                Error::invalid(
                    "id",
                    format!(
                        "{summary} is not the summary of a consolidation (or was undone already)"
                    ),
                )
            })
    }

    /// The memories a consolidation summary replaced, oldest first (empty for any other
    /// memory).
    pub fn consolidated_members(&self, scope: &Scope, summary: MemoryId) -> Result<Vec<Memory>> {
        let ids = self.store.consolidated_members(&scope.workspace, summary)?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut members = self.store.get_many(&scope.workspace, &ids)?;
        members.sort_by_key(|m| ids.iter().position(|id| *id == m.id));
        Ok(members)
    }
}
