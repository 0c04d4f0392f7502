//! Operations on memories: store, read, change, forget, purge, and what the memory model
//! says about one (curve, score, fading).

use std::collections::BTreeMap;

use levh_core::{Levh, ListOrder, Memory, MemoryFilter, MemoryId, Page, Scope};

use crate::requests::{
    CurveQuery, FadingArgs, GetArgs, ListArgs, ListSort, MoveArgs, RelatedArgs, StoreArgs,
    StoreBatchArgs, UpdateBody, UpsertArgs, kind, limit, memory_id, time,
};
use crate::views::{
    BatchItemView, BatchView, CaptureView, CurvePointView, CurveView, Done, FadingList, GotMemory,
    MemoryList, MemoryView, MovedView, NearestView, PurgeView, RelatedList, RelatedView, ScoreView,
    ShownMemory, UpdateView, UpsertView, VerdictKind,
};
use crate::{Error, Result};

/// How many memories `list_memories` returns when no limit is given.
pub const DEFAULT_LIST_LIMIT: usize = 20;

/// The writer recorded for what a client stores: its name redacted like every stored
/// label, and never a connector's. The `connector:` prefix is the sync engine's: the gate
/// trusts it to tell one source's distinct events apart, so a client naming itself
/// `connector:calendar` (an `X-Levh-Client` header, an MCP client name, `--source`) is
/// recorded as `client:connector:calendar` and judged like any capture.
fn recorded_writer(source: &str) -> String {
    let source = levh_core::gate::secrets::redact(source).0;
    if source.starts_with("connector:") {
        format!("client:{source}")
    } else {
        source
    }
}

/// [`Operation::StoreMemory`](crate::Operation::StoreMemory): through the gate, `source`
/// recorded as the writer (the client's name, or the surface's).
pub fn store(levh: &Levh, scope: &Scope, args: StoreArgs, source: String) -> Result<CaptureView> {
    // Shown back as recorded: a client's name is redacted like every stored label.
    let source = recorded_writer(&source);
    let new = args.into_new_memory(source.clone())?;
    let outcome = levh.capture(scope, new)?;
    let mut view = CaptureView::new(&outcome, source);
    if let Some(id) = outcome.memory_id {
        view.conflicts = crate::conflicts::found_at_admission(levh, scope, id)?;
    }
    Ok(view)
}

/// [`Operation::StoreMemories`](crate::Operation::StoreMemories): many memories through
/// the gate in one transaction, `source` recorded as the writer. An invalid item is
/// reported at its index and the others are stored; a batch that is empty or too large is
/// refused whole.
pub fn store_batch(
    levh: &Levh,
    scope: &Scope,
    args: StoreBatchArgs,
    source: String,
) -> Result<BatchView> {
    let source = recorded_writer(&source);
    let batch = SortedBatch::of(args, &source)?;
    let outcomes = levh.capture_batch(scope, batch.valid)?;
    let mut view = batch.report.finish(outcomes, &source);
    with_conflicts(levh, scope, &mut view)?;
    Ok(view)
}

/// Checks each memory a batch stored for conflict candidates, as a single capture is
/// checked, and names each pair found on the items it joins (both, when two items of the
/// batch contradict each other).
fn with_conflicts(levh: &Levh, scope: &Scope, view: &mut BatchView) -> Result<()> {
    let mut found = Vec::new();
    for outcome in view.results.iter().filter_map(|r| r.outcome.as_ref()) {
        if let Some(id) = outcome.memory_id.as_deref() {
            found.extend(levh.check_conflicts(scope, memory_id("memory_id", id)?)?);
        }
    }
    for outcome in view.results.iter_mut().filter_map(|r| r.outcome.as_mut()) {
        if let Some(id) = outcome.memory_id.as_deref() {
            outcome.conflicts = found
                .iter()
                .filter(|c| c.older.to_string() == id || c.newer.to_string() == id)
                .map(|c| c.id.clone())
                .collect();
        }
    }
    Ok(())
}

/// Batches stored one after another, each item judged as [`store_batch`] would judge it
/// (a bulk import: [`Levh::capture_batches`] writes several batches per transaction and
/// judges the next while they are written). `done` gets each batch's report, in order,
/// once it is stored. The batches are taken as they are needed; a batch of the wrong
/// size ends the run there (the batches before it are stored).
pub fn store_batches(
    levh: &Levh,
    scope: &Scope,
    batches: impl IntoIterator<Item = StoreBatchArgs>,
    source: String,
    mut done: impl FnMut(BatchView) -> Result<()>,
) -> Result<()> {
    let source = recorded_writer(&source);
    // Batches are sorted as the engine asks for them (an import streams its input), so
    // their reports wait in order for their outcomes; a batch refused whole ends the run.
    let reports = std::cell::RefCell::new(std::collections::VecDeque::new());
    let mut refused = None;
    let valid = batches
        .into_iter()
        .map_while(|args| match SortedBatch::of(args, &source) {
            Ok(batch) => {
                reports.borrow_mut().push_back(batch.report);
                Some(batch.valid)
            }
            Err(error) => {
                refused = Some(error);
                None
            }
        });
    levh.capture_batches(scope, valid, |outcomes| {
        let report = reports
            .borrow_mut()
            .pop_front()
            .expect("a report per batch");
        let mut view = report.finish(outcomes, &source);
        with_conflicts(levh, scope, &mut view)?;
        done(view)
    })?;
    refused.map_or(Ok(()), Err)
}

/// A batch's items sorted into those the gate will judge and those refused before it.
struct SortedBatch {
    valid: Vec<levh_core::NewMemory>,
    report: BatchReport,
}

/// Where a batch's valid items were sent, and the refused items' reports.
struct BatchReport {
    results: Vec<Option<BatchItemView>>,
    positions: Vec<usize>,
}

impl SortedBatch {
    fn of(args: StoreBatchArgs, source: &str) -> Result<Self> {
        let sent = args.memories.len();
        if sent == 0 || sent > levh_core::MAX_BATCH {
            return Err(Error::invalid(format!(
                "invalid memories: {sent} items; send 1..{} per batch",
                levh_core::MAX_BATCH
            )));
        }
        let mut results: Vec<Option<BatchItemView>> = (0..sent).map(|_| None).collect();
        let mut valid = Vec::with_capacity(sent);
        let mut positions = Vec::with_capacity(sent);
        for (index, item) in args.memories.into_iter().enumerate() {
            match item.into_new_memory(source.to_owned()) {
                Ok(new) => {
                    valid.push(new);
                    positions.push(index);
                }
                Err(error) => results[index] = Some(item_error(index, &error)),
            }
        }
        Ok(Self {
            valid,
            report: BatchReport { results, positions },
        })
    }
}

impl BatchReport {
    fn finish(
        mut self,
        outcomes: Vec<levh_core::Result<levh_core::CaptureOutcome>>,
        source: &str,
    ) -> BatchView {
        for (index, outcome) in self.positions.into_iter().zip(outcomes) {
            self.results[index] = Some(match outcome {
                Ok(outcome) => BatchItemView {
                    index,
                    outcome: Some(CaptureView::new(&outcome, source.to_owned())),
                    error: None,
                },
                Err(error) => item_error(index, &Error::from(error)),
            });
        }
        BatchView::new(self.results.into_iter().flatten().collect())
    }
}

fn item_error(index: usize, error: &Error) -> BatchItemView {
    let message = error.to_string();
    let message = message.trim_end_matches(" (nothing was changed)");
    BatchItemView {
        index,
        outcome: None,
        error: Some(format!(
            "memories[{index}]: {message} (this item was not stored)"
        )),
    }
}

/// [`Operation::ListMemories`](crate::Operation::ListMemories): newest first, valid now.
pub fn list(levh: &Levh, scope: &Scope, args: ListArgs) -> Result<MemoryList> {
    let limit = limit(args.limit, DEFAULT_LIST_LIMIT)?;
    let kind = kind(args.kind.as_deref())?;
    if args.after.is_some() && args.offset.is_some_and(|o| o > 0) {
        return Err(Error::invalid(
            "invalid after: give either `after` or `offset`, not both",
        ));
    }
    let after = args
        .after
        .as_deref()
        .map(|id| memory_id("after", id))
        .transpose()?;
    let entity = match args.entity.as_deref().map(str::trim) {
        Some("") | None => None,
        Some(entity) => Some(levh.resolve_entity(scope, entity, None)?.id),
    };
    let sort = args.sort.unwrap_or_default();
    let forgotten = args.forgotten.unwrap_or(false);
    let fading = args.fading.unwrap_or(false);
    if forgotten && (fading || sort == ListSort::Retention) {
        return Err(Error::invalid(
            "invalid forgotten: a forgotten memory has no retention; list it by created, importance or recalled, without fading",
        ));
    }
    let filter = MemoryFilter {
        project: args.project,
        kind,
        source: args.source,
        pinned: args.pinned,
        created_after: time("created_after", args.created_after.as_deref())?,
        created_before: time("created_before", args.created_before.as_deref())?,
        forgotten,
        entity,
        ..MemoryFilter::default()
    };
    // A forgotten memory's validity is history: the list shows it whatever it was.
    let filter = if forgotten {
        filter
    } else {
        filter.read_at(None, levh.now())
    };
    let order = match sort {
        ListSort::Created | ListSort::Retention => ListOrder::Created,
        ListSort::Importance => ListOrder::Importance,
        ListSort::Recalled => ListOrder::Recalled,
    };
    if sort == ListSort::Retention || fading {
        if args.offset.is_some_and(|o| o > 0) {
            return Err(Error::invalid(
                "invalid offset: a list by retention or of fading memories pages with `after`",
            ));
        }
        let (memories, total) = levh.list_by_standing(
            scope,
            MemoryFilter { order, ..filter },
            sort == ListSort::Retention,
            fading,
            after,
            limit,
        )?;
        return Ok(MemoryList {
            memories: memories.iter().map(|m| MemoryView::of(levh, m)).collect(),
            total: after.is_none().then_some(total),
        });
    }
    let total = match after {
        None => Some(levh.count(scope, filter.clone())?),
        Some(_) => None,
    };
    let memories = levh.list(
        scope,
        MemoryFilter {
            listed_after: after,
            order,
            ..filter
        },
        Page {
            limit,
            offset: args.offset.unwrap_or(0),
        },
    )?;
    Ok(MemoryList {
        memories: memories.iter().map(|m| MemoryView::of(levh, m)).collect(),
        total,
    })
}

/// Every memory the filter matches, newest first, read a page at a time (a list call is
/// bounded; a whole workspace is not), each page continuing after the last memory of the
/// one before.
pub(crate) fn all(levh: &Levh, scope: &Scope, filter: MemoryFilter) -> Result<Vec<Memory>> {
    const PAGE: usize = 1000;
    let mut memories: Vec<Memory> = Vec::new();
    loop {
        let page = levh.list(
            scope,
            MemoryFilter {
                listed_after: memories.last().map(|last| last.id),
                ..filter.clone()
            },
            Page {
                limit: PAGE,
                offset: 0,
            },
        )?;
        let done = page.len() < PAGE;
        memories.extend(page);
        if done {
            return Ok(memories);
        }
    }
}

/// [`Operation::GetMemory`](crate::Operation::GetMemory).
pub fn get(levh: &Levh, scope: &Scope, id: &str) -> Result<MemoryView> {
    let id = memory_id("id", id)?;
    Ok(MemoryView::of(levh, &levh.get(scope, id)?))
}

/// A memory by id for a person at a terminal (`levh show`): also a forgotten one, marked
/// with when it was forgotten (retired from every read, kept for history until purged).
pub fn show(levh: &Levh, scope: &Scope, id: &str) -> Result<ShownMemory> {
    let id = memory_id("id", id)?;
    let (memory, forgotten_at) = match levh.get(scope, id) {
        Ok(memory) => (memory, None),
        Err(levh_core::Error::NotFound(_)) => match levh.get_forgotten(scope, id)? {
            Some((memory, at)) => (memory, Some(at.to_string())),
            None => return Err(levh_core::Error::NotFound(id).into()),
        },
        Err(other) => return Err(other.into()),
    };
    Ok(ShownMemory {
        memory: MemoryView::of(levh, &memory),
        forgotten_at,
        working_session: levh
            .working_sessions(scope, &[id])?
            .pop()
            .map(|(_, session)| session.to_string()),
        consolidated_from: levh
            .consolidated_members(scope, id)?
            .iter()
            .map(|m| MemoryView::of(levh, m))
            .collect(),
        attachments: levh
            .attachments(scope, id)?
            .iter()
            .map(crate::views::AttachmentView::of)
            .collect(),
    })
}

/// [`Operation::UpdateMemory`](crate::Operation::UpdateMemory): new content and/or
/// importance, both validated before either changes. New content goes through the gate;
/// importance changes only when the content was applied (or none was given), so a held or
/// rejected update leaves the memory exactly as it was.
pub fn update(levh: &Levh, scope: &Scope, id: &str, body: UpdateBody) -> Result<UpdateView> {
    let id = memory_id("id", id)?;
    if body.content.is_none() && body.importance.is_none() {
        return Err(Error::invalid(
            "empty update: give content and/or importance",
        ));
    }
    if let Some(importance) = body.importance
        && !(0.0..=1.0).contains(&importance)
    {
        return Err(Error::invalid(format!(
            "invalid importance: {importance} is outside 0..1"
        )));
    }
    let (verdict, update) = match body.content {
        Some(content) => {
            let update = levh.update_content(scope, id, &content)?;
            (update.verdict.clone(), Some(update))
        }
        None => (levh_core::Verdict::Admit, None),
    };
    let applied = matches!(
        verdict,
        levh_core::Verdict::Admit | levh_core::Verdict::Redact
    );
    let memory = match body.importance {
        Some(importance) if applied => levh.set_importance(scope, id, importance)?,
        _ => levh.get(scope, id)?,
    };
    // Changed text may now contradict another memory, as a captured one may.
    let conflicts = if applied && update.is_some() {
        crate::conflicts::found_at_admission(levh, scope, id)?
    } else {
        Vec::new()
    };
    Ok(UpdateView {
        verdict: VerdictKind::from(&verdict),
        memory: MemoryView::of(levh, &memory),
        applied,
        held_id: update
            .as_ref()
            .and_then(|u| u.held_id)
            .map(|h| h.to_string()),
        reason: verdict.reason(),
        nearest: verdict.nearest().map(NearestView::from),
        redactions: update
            .map(|u| u.redactions.into_iter().map(|r| r.kind).collect())
            .unwrap_or_default(),
        conflicts,
    })
}

/// [`Operation::SetImportance`](crate::Operation::SetImportance).
pub fn set_importance(levh: &Levh, scope: &Scope, id: &str, importance: f64) -> Result<MemoryView> {
    change(levh, scope, id, |levh, scope, id| {
        levh.set_importance(scope, id, importance)
    })
}

/// What forgetting did; `was_pinned` tells MCP that the pinned resources changed.
#[derive(Debug)]
pub struct Forgotten {
    /// The acknowledgement.
    pub done: Done,
    /// Whether the memory was pinned.
    pub was_pinned: bool,
}

/// [`Operation::ForgetMemory`](crate::Operation::ForgetMemory): it stops being read;
/// kept for `known_at` history until purged.
pub fn forget(levh: &Levh, scope: &Scope, id: &str) -> Result<Forgotten> {
    let id = memory_id("id", id)?;
    let was_pinned = levh.get(scope, id)?.state.pinned;
    levh.forget(scope, id)?;
    Ok(Forgotten {
        done: Done {
            memory_id: id.to_string(),
            status: crate::views::DoneStatus::Forgotten,
        },
        was_pinned,
    })
}

fn change(
    levh: &Levh,
    scope: &Scope,
    id: &str,
    call: impl FnOnce(&Levh, &Scope, MemoryId) -> levh_core::Result<levh_core::Memory>,
) -> Result<MemoryView> {
    let id = memory_id("id", id)?;
    let memory = call(levh, scope, id)?;
    Ok(MemoryView::of(levh, &memory))
}

/// [`Operation::ReinforceMemory`](crate::Operation::ReinforceMemory).
pub fn reinforce(levh: &Levh, scope: &Scope, id: &str) -> Result<MemoryView> {
    change(levh, scope, id, Levh::reinforce)
}

/// [`Operation::PinMemory`](crate::Operation::PinMemory) and
/// [`Operation::UnpinMemory`](crate::Operation::UnpinMemory).
pub fn set_pinned(levh: &Levh, scope: &Scope, id: &str, pinned: bool) -> Result<MemoryView> {
    change(levh, scope, id, |levh, scope, id| {
        levh.set_pinned(scope, id, pinned)
    })
}

/// [`Operation::UpsertMemory`](crate::Operation::UpsertMemory).
pub fn upsert(levh: &Levh, scope: &Scope, args: UpsertArgs) -> Result<UpsertView> {
    let key = args.key.clone();
    let outcome = levh.upsert(
        scope,
        levh_core::Upsert {
            project: args.project,
            key: args.key,
            content: args.content,
            value: args.value,
            importance: args.importance,
            kind: None,
        },
    )?;
    Ok(upserted(levh, key, outcome))
}

/// The view of what an upsert under `key` did.
pub(crate) fn upserted(levh: &Levh, key: String, outcome: levh_core::Upserted) -> UpsertView {
    let mut view = UpsertView {
        status: String::new(),
        key: key.trim().to_owned(),
        memory: None,
        replaced: None,
        held_id: None,
        reason: None,
        nearest: None,
        redactions: Vec::new(),
    };
    match outcome {
        levh_core::Upserted::Stored {
            memory,
            replaced,
            redactions,
        } => {
            view.status = "stored".into();
            view.memory = Some(MemoryView::of(levh, &memory));
            view.replaced = replaced.map(|id| id.to_string());
            view.redactions = redactions.iter().map(|r| r.kind.clone()).collect();
        }
        levh_core::Upserted::Unchanged { memory } => {
            view.status = "unchanged".into();
            view.memory = Some(MemoryView::of(levh, &memory));
        }
        levh_core::Upserted::Held { held_id, reason } => {
            view.status = "held".into();
            view.held_id = Some(held_id.to_string());
            view.reason = Some(reason);
        }
        levh_core::Upserted::Rejected { reason, nearest } => {
            view.status = "rejected".into();
            view.reason = Some(reason);
            view.nearest = nearest.map(|n| n.id.to_string());
        }
    }
    view
}

/// [`Operation::GetMemory`](crate::Operation::GetMemory) by id or by key, with a JSON
/// pointer into its value.
pub fn get_by(levh: &Levh, scope: &Scope, args: GetArgs) -> Result<GotMemory> {
    let (memory, key) = match (args.id.as_deref(), args.key.as_deref()) {
        (Some(id), None) => {
            if args.as_of.is_some() || args.project.is_some() {
                return Err(Error::invalid(
                    "invalid id: `project` and `as_of` go with `key`; an id names one memory",
                ));
            }
            (levh.get(scope, memory_id("id", id)?)?, None)
        }
        (None, Some(key)) => {
            let as_of = time("as_of", args.as_of.as_deref())?;
            let found = levh.keyed_memory(scope, args.project.as_deref(), key, as_of)?;
            let Some(memory) = found else {
                return Err(Error::NotFound(format!(
                    "no memory under key '{}'{}{} (`levh upsert` writes one) (nothing was changed)",
                    key.trim().escape_debug(),
                    args.project
                        .as_deref()
                        .map(|p| format!(" in project '{}'", p.escape_debug()))
                        .unwrap_or_default(),
                    if as_of.is_some() { " at that time" } else { "" },
                )));
            };
            (memory, Some(key.trim().to_owned()))
        }
        _ => {
            return Err(Error::invalid("invalid id: give either `id` or `key`"));
        }
    };
    let whole = memory.metadata.get("value").cloned();
    let value = match args.pointer.as_deref() {
        None => whole,
        Some(pointer) => {
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(Error::invalid(format!(
                    "invalid pointer: '{}' is not a JSON pointer (it starts with /, like /deploy/region)",
                    pointer.escape_debug()
                )));
            }
            let Some(found) = whole.as_ref().and_then(|v| v.pointer(pointer)) else {
                return Err(Error::NotFound(format!(
                    "the memory's value has nothing at '{}' (nothing was changed)",
                    pointer.escape_debug()
                )));
            };
            Some(found.clone())
        }
    };
    Ok(GotMemory {
        memory: MemoryView::of(levh, &memory),
        key,
        value,
    })
}

/// [`Operation::MoveMemories`](crate::Operation::MoveMemories).
pub fn move_to_project(levh: &Levh, scope: &Scope, args: MoveArgs) -> Result<MovedView> {
    if args.ids.is_empty() {
        return Err(Error::invalid("invalid ids: give at least one memory id"));
    }
    let ids = args
        .ids
        .iter()
        .map(|id| memory_id("ids", id))
        .collect::<Result<Vec<_>>>()?;
    let project = args.project.filter(|p| !p.trim().is_empty());
    let moved = levh.move_to_project(scope, &ids, project.clone())?;
    Ok(MovedView {
        project: project.map(|p| p.trim().to_owned()),
        moved: moved.moved.iter().map(ToString::to_string).collect(),
        missing: moved.missing.iter().map(ToString::to_string).collect(),
    })
}

/// [`Operation::MemoryFeedback`](crate::Operation::MemoryFeedback).
pub fn feedback(levh: &Levh, scope: &Scope, id: &str, helpful: bool) -> Result<MemoryView> {
    change(levh, scope, id, |levh, scope, id| {
        levh.feedback(scope, id, helpful)
    })
}

/// [`Operation::PurgeMemory`](crate::Operation::PurgeMemory).
pub fn purge(levh: &Levh, scope: &Scope, id: &str) -> Result<PurgeView> {
    let id = memory_id("id", id)?;
    let report = levh.purge(scope, id)?;
    Ok(PurgeView {
        memory_id: report.memory_id.to_string(),
        held_removed: report.held_removed,
        residue: report.residue,
    })
}

/// [`Operation::RelatedMemories`](crate::Operation::RelatedMemories).
pub fn related(levh: &Levh, scope: &Scope, args: RelatedArgs) -> Result<RelatedList> {
    let id = memory_id("id", &args.id)?;
    let related = levh.related(scope, id, args.limit.unwrap_or(5))?;
    Ok(RelatedList {
        memory_id: id.to_string(),
        related: related
            .iter()
            .map(|r| RelatedView {
                memory: MemoryView::of(levh, &r.memory),
                similarity: r.similarity,
            })
            .collect(),
    })
}

/// [`Operation::ListFadingMemories`](crate::Operation::ListFadingMemories): weakest first.
pub fn fading(levh: &Levh, scope: &Scope, args: FadingArgs) -> Result<FadingList> {
    let fading = levh.fading(
        scope,
        args.project,
        args.limit.unwrap_or(DEFAULT_LIST_LIMIT),
    )?;
    Ok(FadingList {
        memories: fading
            .iter()
            .map(|f| MemoryView::of(levh, &f.memory))
            .collect(),
    })
}

/// [`Operation::ForgettingCurve`](crate::Operation::ForgettingCurve): 30 days unless asked.
pub fn curve(levh: &Levh, scope: &Scope, id: &str, query: CurveQuery) -> Result<CurveView> {
    let id = memory_id("id", id)?;
    let points = levh.curve(scope, id, query.days.unwrap_or(30))?;
    Ok(CurveView {
        memory_id: id.to_string(),
        points: points
            .into_iter()
            .map(|p| CurvePointView {
                day: p.day,
                at: p.at.to_string(),
                retention: p.retention,
            })
            .collect(),
    })
}

/// [`Operation::ScoreBreakdown`](crate::Operation::ScoreBreakdown): scored as recall
/// scores it.
pub fn score(levh: &Levh, scope: &Scope, id: &str, query: Option<&str>) -> Result<ScoreView> {
    let id = memory_id("id", id)?;
    let (score, relevance) = levh.score_breakdown(scope, id, query)?;
    Ok(ScoreView {
        memory_id: id.to_string(),
        score: score.score,
        relevance: score.relevance,
        similarity: relevance.map_or(1.0, |r| r.semantic),
        lexical: relevance.map_or(0.0, |r| r.lexical),
        bm25: relevance.and_then(|r| r.bm25),
        temporal: relevance.map_or(0.0, |r| r.temporal),
        retention: score.retention,
        importance: score.importance,
        frequency: score.frequency,
        terms: BTreeMap::from([
            ("relevance".into(), score.terms.relevance),
            ("retention".into(), score.terms.retention),
            ("importance".into(), score.terms.importance),
            ("frequency".into(), score.terms.frequency),
        ]),
    })
}

/// How many events a memory's history shows when no limit is given.
pub const DEFAULT_HISTORY_LIMIT: usize = 100;

/// [`Operation::MemoryHistory`](crate::Operation::MemoryHistory): what happened to a live
/// memory of the workspace, newest first, from the event log (never content).
pub fn history(
    levh: &Levh,
    store: &dyn levh_core::ServerStore,
    scope: &Scope,
    id: &str,
    query: crate::requests::HistoryQuery,
) -> Result<crate::views::HistoryView> {
    let id = memory_id("id", id)?;
    let limit = limit(query.limit, DEFAULT_HISTORY_LIMIT)?;
    // Only a memory the caller can read has a history to show.
    levh.get(scope, id)?;
    let events = store
        .memory_events(&scope.workspace, id, limit)
        .map_err(Error::internal)?;
    Ok(crate::views::HistoryView {
        memory_id: id.to_string(),
        events: events.iter().map(crate::views::EventView::from).collect(),
    })
}
