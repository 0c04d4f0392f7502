//! Conflict candidates: pairs of valid memories that may disagree, for a person to
//! resolve. Found whenever a memory is stored or changed (against its full-text neighbours,
//! [`Levh::check_conflicts`]) and
//! by `detect` (over the newest memories of the workspace), judged by levh-knowledge's
//! [`relate`](levh_knowledge::conflicts::relate) — narrow on purpose: only pairs that
//! share an entity and an attribute, and a newer memory that says the fact changed is a
//! supersession, not a conflict. Never a deletion and never automatic: a person keeps
//! both, says it is not a conflict, or supersedes one (retired, kept for `--as-of`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use levh_core::entities::{ConflictRecord, ConflictResolution};
use levh_core::{Levh, MemoryFilter, MemoryId, Scope, in_order, judge_conflicts};
use levh_knowledge::conflicts::{MIN_SHARED, content_words};

use crate::requests::{ConflictDetectArgs, ConflictListArgs, ResolveConflictBody, memory_id};
use crate::views::{ConflictList, ConflictView, DetectView};
use crate::{Error, Result};

/// Memories a detection reads, newest first: a bounded cost at any size.
pub const DETECT_MEMORIES: usize = 5000;
/// A word in more memories than this says nothing about which two are about one thing.
const COMMON_WORD: usize = 50;

/// After `memory` was stored or changed: the conflict candidates found with the memories
/// it may contradict ([`Levh::check_conflicts`]). Returns their ids.
pub fn found_at_admission(levh: &Levh, scope: &Scope, memory: MemoryId) -> Result<Vec<String>> {
    Ok(levh
        .check_conflicts(scope, memory)?
        .into_iter()
        .map(|c| c.id)
        .collect())
}

/// [`Operation::DetectConflicts`](crate::Operation::DetectConflicts): the newest
/// [`DETECT_MEMORIES`] valid memories (of a project), compared pairwise where they share
/// [`MIN_SHARED`] uncommon words; new candidates recorded.
pub fn detect(levh: &Levh, scope: &Scope, args: ConflictDetectArgs) -> Result<DetectView> {
    let filter = MemoryFilter {
        project: args.project.clone(),
        ..MemoryFilter::default()
    }
    .read_at(None, levh.now());
    let memories = levh.list(
        scope,
        filter,
        levh_core::Page {
            limit: DETECT_MEMORIES,
            offset: 0,
        },
    )?;
    let words: Vec<BTreeSet<String>> = memories.iter().map(|m| content_words(&m.content)).collect();
    let mut index: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, set) in words.iter().enumerate() {
        for word in set {
            index.entry(word.as_str()).or_default().push(i);
        }
    }
    let mut shared: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for holders in index.values().filter(|h| h.len() <= COMMON_WORD) {
        for (n, &a) in holders.iter().enumerate() {
            for &b in &holders[n + 1..] {
                *shared.entry((a, b)).or_default() += 1;
            }
        }
    }
    let candidates: Vec<(usize, usize)> = shared
        .into_iter()
        .filter(|(_, count)| *count >= MIN_SHARED)
        .map(|(pair, _)| pair)
        .collect();
    let compared = candidates.len();
    let found = judge_conflicts(
        candidates
            .into_iter()
            .map(|(a, b)| in_order(memories[a].clone(), memories[b].clone())),
    );
    let recorded = levh.record_conflicts(scope, &found)?;
    Ok(DetectView {
        memories: memories.len(),
        compared,
        found: recorded.len(),
        open: levh.conflicts(scope, true)?.len(),
    })
}

/// [`Operation::ListConflicts`](crate::Operation::ListConflicts): the open candidates
/// (with `include_resolved`, the resolved ones too), newest first, each with both texts.
pub fn list(levh: &Levh, scope: &Scope, args: ConflictListArgs) -> Result<ConflictList> {
    let records = levh.conflicts(scope, !args.include_resolved.unwrap_or(false))?;
    let limit = crate::requests::limit(args.limit, 100)?;
    let mut conflicts = Vec::new();
    for record in records.into_iter().take(limit) {
        conflicts.push(view(levh, scope, record)?);
    }
    Ok(ConflictList { conflicts })
}

fn view(levh: &Levh, scope: &Scope, record: ConflictRecord) -> Result<ConflictView> {
    // A memory retired since keeps its text for the record.
    let text = |id: MemoryId| -> Result<String> {
        match levh.get(scope, id) {
            Ok(memory) => Ok(memory.content),
            Err(levh_core::Error::NotFound(_)) => Ok(levh
                .get_forgotten(scope, id)?
                .map(|(memory, _)| memory.content)
                .unwrap_or_default()),
            Err(other) => Err(other.into()),
        }
    };
    Ok(ConflictView {
        id: record.id,
        kind: record.kind,
        older: record.older.to_string(),
        older_content: text(record.older)?,
        newer: record.newer.to_string(),
        newer_content: text(record.newer)?,
        found_at: record.found_at.to_string(),
        resolution: record.resolution,
        resolved_at: record.resolved_at.map(|t| t.to_string()),
        superseded: record.superseded.map(|m| m.to_string()),
    })
}

/// [`Operation::ResolveConflict`](crate::Operation::ResolveConflict): a person's decision.
pub fn resolve(
    levh: &Levh,
    scope: &Scope,
    id: &str,
    body: ResolveConflictBody,
) -> Result<ConflictView> {
    let id = id.trim();
    let resolution = match body.resolution.as_str() {
        "keep_both" => Some(ConflictResolution::KeepBoth),
        "not_a_conflict" => Some(ConflictResolution::NotAConflict),
        "supersede" => None,
        other => {
            return Err(Error::invalid(format!(
                "invalid resolution: '{}' is not keep_both, not_a_conflict or supersede",
                other.escape_debug()
            )));
        }
    };
    let all = levh.conflicts(scope, false)?;
    let Some(record) = all.iter().find(|c| c.id == id) else {
        return Err(Error::NotFound(format!(
            "no conflict '{}' in this workspace (`levh conflicts` lists them) (nothing was changed)",
            id.escape_debug()
        )));
    };
    if record.resolution.is_some() {
        return Err(Error::Conflict(format!(
            "conflict {id} is already resolved ({}) (nothing was changed)",
            record.resolution.as_deref().unwrap_or("")
        )));
    }
    let resolution = match resolution {
        Some(resolution) => resolution,
        None => {
            let retire = body.retire.as_deref().ok_or_else(|| {
                Error::invalid("invalid retire: `supersede` needs the id of the memory to retire")
            })?;
            let retire = memory_id("retire", retire)?;
            let winner = if retire == record.older {
                record.newer
            } else if retire == record.newer {
                record.older
            } else {
                return Err(Error::invalid(format!(
                    "invalid retire: {retire} is not one of the pair ({} or {})",
                    record.older, record.newer
                )));
            };
            ConflictResolution::Supersede { winner }
        }
    };
    if !levh.resolve_conflict(scope, id, resolution)? {
        return Err(Error::Conflict(format!(
            "conflict {id} was resolved meanwhile (nothing was changed)"
        )));
    }
    let record = levh
        .conflicts(scope, false)?
        .into_iter()
        .find(|c| c.id == id)
        .ok_or_else(|| Error::internal("a resolved conflict vanished"))?;
    view(levh, scope, record)
}
