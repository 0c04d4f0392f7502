//! The admission gate and the held queue: what the gate would decide, and a person's
//! decisions on what it held.

use levh_core::{HeldId, HeldStatus, Levh, NewMemory, Scope};

use crate::requests::{EvaluateArgs, HeldListArgs, held_id};
use crate::views::{AdmitView, EvaluationView, HeldList, HeldView};
use crate::{Error, Result};

/// Where a person decides held candidates, on every surface (agents cannot).
pub const HOW_TO_DECIDE: &str = "a person decides held candidates: `levh held list`, `levh held show ID`, `levh held admit ID [--supersede]`, `levh held discard ID`; POST /api/memories/held/{id}/admit or /discard with an admin token; the dashboard's Held page (/held on `levh serve`); over MCP only through decide_held_memory in a client that supports elicitation";

/// [`Operation::EvaluateAdmission`](crate::Operation::EvaluateAdmission): stores nothing.
pub fn evaluate(levh: &Levh, scope: &Scope, args: EvaluateArgs) -> Result<EvaluationView> {
    let evaluation = levh.evaluate(
        scope,
        NewMemory {
            content: args.content,
            project: args.project,
            ..NewMemory::default()
        },
    )?;
    Ok(EvaluationView::from(&evaluation))
}

/// [`Operation::ListHeldMemories`](crate::Operation::ListHeldMemories).
pub fn list(levh: &Levh, scope: &Scope, args: HeldListArgs) -> Result<HeldList> {
    let held = levh.held_list(scope, args.status.unwrap_or_default().status())?;
    Ok(HeldList {
        held: held.iter().map(HeldView::from).collect(),
        how_to_decide: HOW_TO_DECIDE.into(),
    })
}

/// [`Operation::GetHeldMemory`](crate::Operation::GetHeldMemory).
pub fn get(levh: &Levh, scope: &Scope, id: &str) -> Result<HeldView> {
    let id = held_id("id", id)?;
    Ok(HeldView::from(&levh.held_get(scope, id)?))
}

/// A candidate still waiting for a decision, with the memory it resembles (for showing
/// a person both before they decide).
pub fn waiting(
    levh: &Levh,
    scope: &Scope,
    id: HeldId,
) -> Result<(levh_core::HeldCandidate, Option<levh_core::Memory>)> {
    let held = levh.held_get(scope, id)?;
    if held.status != HeldStatus::Held {
        return Err(Error::Conflict(format!(
            "held candidate {id} was already decided ({}); nothing was decided",
            held.status.as_str()
        )));
    }
    let nearest = held.nearest.and_then(|n| levh.get(scope, n.id).ok());
    Ok((held, nearest))
}

/// [`Operation::AdmitHeldMemory`](crate::Operation::AdmitHeldMemory): a person's
/// decision, recorded with the scope's surface and principal.
pub fn admit(levh: &Levh, scope: &Scope, id: HeldId, supersede: bool) -> Result<AdmitView> {
    let admission = levh.held_admit(scope, id, supersede)?;
    let conflicts = crate::conflicts::found_at_admission(levh, scope, admission.memory_id)?;
    Ok(AdmitView {
        conflicts,
        held_id: admission.held_id.to_string(),
        memory_id: admission.memory_id.to_string(),
        superseded: admission.superseded.map(|id| id.to_string()),
        updated: admission.updated,
    })
}

/// [`Operation::DiscardHeldMemory`](crate::Operation::DiscardHeldMemory).
pub fn discard(levh: &Levh, scope: &Scope, id: HeldId) -> Result<HeldView> {
    Ok(HeldView::from(&levh.held_discard(scope, id)?))
}
