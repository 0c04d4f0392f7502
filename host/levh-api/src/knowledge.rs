//! What the memories say was decided and promised, read from their text by
//! levh-knowledge's detectors: each decision with when it was said, where, and who was
//! there; each commitment with the day it is due in the user's calendar (`LEVH_TZ`, or the
//! system's zone) and whether that day has passed.
//!
//! Read on demand from the memories valid now (no index yet: the entity index of issue #19
//! will keep these with the memories at admission).

use jiff::tz::TimeZone;
use levh_core::{Levh, Memory, MemoryFilter, Scope};

use crate::requests::{KnowledgeArgs, limit, time};
use crate::views::{CommitmentList, CommitmentView, DecisionList, FoundDecisionView};
use crate::{Error, Result};

/// How many a list returns when no limit is given.
pub const DEFAULT_LIMIT: usize = 50;

/// The user's time zone: `LEVH_TZ` (an IANA name such as `Europe/Istanbul`) or the
/// system's. A name that is not a zone is an error, not a silent UTC.
pub fn user_time_zone() -> Result<TimeZone> {
    match std::env::var("LEVH_TZ") {
        Ok(name) if !name.trim().is_empty() => TimeZone::get(name.trim()).map_err(|e| {
            Error::invalid(format!(
                "invalid LEVH_TZ: '{}' is not a time zone name like Europe/Istanbul ({e})",
                name.trim()
            ))
        }),
        _ => Ok(TimeZone::system()),
    }
}

/// Every memory valid now in the project, newest first, less those whose world time is
/// outside `from..to`.
fn memories(levh: &Levh, scope: &Scope, args: &KnowledgeArgs) -> Result<Vec<Memory>> {
    let from = time("from", args.from.as_deref())?;
    let to = time("to", args.to.as_deref())?;
    let filter = MemoryFilter {
        project: args.project.clone(),
        ..MemoryFilter::default()
    }
    .read_at(None, levh.now());
    let mut memories = crate::memories::all(levh, scope, filter)?;
    memories
        .retain(|m| from.is_none_or(|f| m.valid_from >= f) && to.is_none_or(|t| m.valid_from < t));
    Ok(memories)
}

/// A sentence as one line: a hard-wrapped one keeps its line breaks and indentation in
/// the memory, not in a list.
fn one_line(sentence: &str) -> String {
    sentence.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The people a connector recorded with the memory (attendees, senders, speakers).
fn people(memory: &Memory) -> Vec<String> {
    memory.metadata["people"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str().or_else(|| p["email"].as_str()))
        .map(str::to_owned)
        .collect()
}

/// [`Operation::ListDecisions`](crate::Operation::ListDecisions): newest first by when
/// they were said.
pub fn decisions(levh: &Levh, scope: &Scope, args: KnowledgeArgs) -> Result<DecisionList> {
    let limit = limit(args.limit, DEFAULT_LIMIT)?;
    let mut found = Vec::new();
    for memory in memories(levh, scope, &args)? {
        for sentence in levh_knowledge::decisions::decisions(&memory.content) {
            found.push(FoundDecisionView {
                memory_id: memory.id.to_string(),
                sentence: one_line(&sentence),
                at: memory.valid_from.to_string(),
                source: memory.source.clone(),
                project: memory.project.clone(),
                people: people(&memory),
            });
        }
    }
    // Newest first by when it was said (RFC 3339 in UTC sorts as time does).
    found.sort_by(|a, b| b.at.cmp(&a.at));
    found.truncate(limit);
    Ok(DecisionList { decisions: found })
}

/// [`Operation::ListCommitments`](crate::Operation::ListCommitments): soonest due first,
/// undated ones after, newest first among them.
pub fn commitments(levh: &Levh, scope: &Scope, args: KnowledgeArgs) -> Result<CommitmentList> {
    let limit = limit(args.limit, DEFAULT_LIMIT)?;
    let zone = user_time_zone()?;
    let today = levh.now().to_zoned(zone.clone()).date();
    let mut found = Vec::new();
    for memory in memories(levh, scope, &args)? {
        let written_on = memory.valid_from.to_zoned(zone.clone()).date();
        for commitment in levh_knowledge::commitments::commitments(&memory.content, written_on) {
            found.push(CommitmentView {
                memory_id: memory.id.to_string(),
                sentence: one_line(&commitment.sentence),
                written_at: memory.valid_from.to_string(),
                due: commitment.due.map(|d| d.to_string()),
                overdue: commitment.due.is_some_and(|d| d < today),
                source: memory.source.clone(),
                project: memory.project.clone(),
                people: people(&memory),
            });
        }
    }
    found.sort_by(|a, b| match (&a.due, &b.due) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.written_at.cmp(&a.written_at),
    });
    found.truncate(limit);
    Ok(CommitmentList {
        time_zone: zone.iana_name().unwrap_or("system").to_owned(),
        commitments: found,
    })
}
