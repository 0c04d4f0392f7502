//! Consolidation (SPEC §10): clusters of aged, related memories become one summary each,
//! which keeps its members linked and retired from default recall; and its undo.

use levh_core::{AnswerModel, ConsolidationRequest, Levh, Memory, Scope};

use crate::requests::{ConsolidateArgs, memory_id};
use crate::views::{
    ConsolidatedClusterView, ConsolidationView, MemoryList, MemoryView, UndoConsolidationView,
};
use crate::{Error, Result};

/// Most memories a request may ask a run to compare.
pub const MAX_LIMIT: usize = 1_000_000;

const SYSTEM: &str = "You condense a person's notes into one summary note. Keep every \
    concrete fact (names, numbers, dates, decisions, promises); drop repetition. Write \
    plain sentences, at most 150 words, in the notes' language. Do not invent anything.";

/// [`Operation::Consolidate`](crate::Operation::Consolidate). With a language model, each
/// summary is written by it (the extractive one when it fails or says nothing).
pub fn consolidate(
    levh: &Levh,
    scope: &Scope,
    args: ConsolidateArgs,
    model: Option<&dyn AnswerModel>,
) -> Result<ConsolidationView> {
    if let Some(limit) = args.limit
        && !(1..=MAX_LIMIT).contains(&limit)
    {
        return Err(Error::invalid(format!(
            "invalid limit: {limit} is outside 1..{MAX_LIMIT}"
        )));
    }
    let request = ConsolidationRequest {
        project: args.project,
        dry_run: args.dry_run.unwrap_or(false),
        older_than_days: args.older_than_days,
        limit: args.limit,
    };
    let rewrite = |members: &[Memory], extractive: &str| -> Option<String> {
        let model = model?;
        let notes: String = members
            .iter()
            .map(|m| format!("- ({}) {}\n", m.valid_from, m.content))
            .collect();
        let user = format!("Notes:\n{notes}\nExtractive draft:\n{extractive}");
        model.complete(SYSTEM, &user).ok()
    };
    let report = levh.consolidate(scope, &request, Some(&rewrite))?;
    Ok(ConsolidationView {
        dry_run: report.dry_run,
        considered: report.considered,
        measure: report.measure.to_owned(),
        threshold: report.threshold,
        recorded_before: report.recorded_before.to_string(),
        retired: report.retired,
        clusters: report
            .clusters
            .into_iter()
            .map(|c| ConsolidatedClusterView {
                summary_id: c.summary_id.map(|id| id.to_string()),
                summary: c.summary,
                project: c.project,
                members: c.members.iter().map(ToString::to_string).collect(),
            })
            .collect(),
    })
}

/// [`Operation::UndoConsolidation`](crate::Operation::UndoConsolidation).
pub fn undo(levh: &Levh, scope: &Scope, id: &str) -> Result<UndoConsolidationView> {
    let summary = memory_id("id", id)?;
    let restored = levh.undo_consolidation(scope, summary)?;
    Ok(UndoConsolidationView {
        summary_id: summary.to_string(),
        restored: restored.iter().map(ToString::to_string).collect(),
    })
}

/// [`Operation::GetMemory`](crate::Operation::GetMemory) of a summary's members: the
/// memories a consolidation replaced with it, oldest first (none for any other memory).
pub fn members(levh: &Levh, scope: &Scope, id: &str) -> Result<MemoryList> {
    let summary = memory_id("id", id)?;
    levh.get(scope, summary)?;
    Ok(MemoryList {
        memories: levh
            .consolidated_members(scope, summary)?
            .iter()
            .map(|m| MemoryView::of(levh, m))
            .collect(),
        total: None,
    })
}
