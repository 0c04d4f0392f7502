//! What the memories say was decided and promised, read from their text by
//! levh-knowledge's detectors: each decision with when it was said, where, and who was
//! there; each commitment with the day it is due in the user's calendar (`LEVH_TZ`, or the
//! system's zone) and whether that day has passed.
//!
//! Read on demand from the memories valid now: a promise is kept when a person marks it
//! done or when a later memory by the same person says it was ("I sent the budget").

use jiff::tz::TimeZone;
use std::collections::HashSet;

use levh_core::{Levh, Memory, MemoryFilter, MemoryId, Scope};

use crate::requests::{KnowledgeArgs, limit, time};
use crate::views::{CommitmentList, CommitmentView, DecisionList, FoundDecisionView};
use crate::{Error, Result};

/// How many a list returns when no limit is given.
pub const DEFAULT_LIMIT: usize = 50;

/// The user's time zone: `LEVH_TZ` (an IANA name such as `Europe/Istanbul`, from the
/// environment or `config.toml`, as the engine was configured) or the system's. A name
/// that is not a zone is an error, not a silent UTC.
pub fn user_time_zone(levh: &Levh) -> Result<TimeZone> {
    let configured = levh
        .person()
        .time_zone
        .clone()
        .or_else(|| std::env::var("LEVH_TZ").ok());
    match configured {
        Some(name) if !name.trim().is_empty() => TimeZone::get(name.trim()).map_err(|e| {
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
pub(crate) fn memories(levh: &Levh, scope: &Scope, args: &KnowledgeArgs) -> Result<Vec<Memory>> {
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
pub(crate) fn people(memory: &Memory) -> Vec<String> {
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
        // A memory that quotes itself (a transcript's summary, then its text) states each
        // decision once.
        let mut said = HashSet::new();
        for sentence in levh_knowledge::decisions::decisions(&memory.content) {
            let by = speaker_of(&memory, &sentence);
            let sentence = without_speaker(&sentence, by.as_deref());
            if !said.insert((by.clone(), sentence.clone())) {
                continue;
            }
            found.push(FoundDecisionView {
                memory_id: memory.id.to_string(),
                sentence,
                by,
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

/// The user, as `LEVH_ME` names them: names and e-mail addresses, comma-separated
/// (`Deniz Kaya, deniz.kaya@gmail.com`). Without it, every first-person promise counts as
/// the user's (levh cannot tell whose a transcript's words are), each with who said it.
#[derive(Debug, Default)]
pub(crate) struct Me(Vec<String>);

impl Me {
    pub(crate) fn configured(levh: &Levh) -> Option<Self> {
        let text = levh
            .person()
            .me
            .clone()
            .or_else(|| std::env::var("LEVH_ME").ok())?;
        let names: Vec<String> = text
            .split(',')
            .map(levh_knowledge::people::normalized_name)
            .filter(|n| !n.is_empty())
            .collect();
        (!names.is_empty()).then_some(Self(names))
    }

    /// Whether the name or address is the user's.
    pub(crate) fn is(&self, who: &str) -> bool {
        self.0
            .contains(&levh_knowledge::people::normalized_name(who))
    }
}

/// Who said `sentence` of `memory`: a transcript line's speaker, a mail's sender, or
/// nobody (the user or their agent wrote it).
fn speaker_of(memory: &Memory, sentence: &str) -> Option<String> {
    let people = memory.metadata["people"].as_array();
    let with_role = |role: &str| {
        people.into_iter().flatten().find_map(|p| {
            (p["role"].as_str() == Some(role))
                .then(|| p["name"].as_str().or_else(|| p["email"].as_str()))
                .flatten()
                .map(str::to_owned)
        })
    };
    let speakers: Vec<&str> = memory.metadata["speakers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str())
        .collect();
    if !speakers.is_empty() {
        // Transcript lines read `Speaker: words`; the sentence starts on one of them.
        let start: String = sentence.chars().take(40).collect();
        let line = memory.content.lines().find(|l| l.contains(start.trim()))?;
        let (who, _) = line.split_once(':')?;
        return speakers
            .iter()
            .find(|s| s.trim() == who.trim())
            .map(|s| (*s).to_owned());
    }
    with_role("sender").or_else(|| with_role("organizer"))
}

/// A transcript sentence without its `Speaker:` prefix.
fn without_speaker(sentence: &str, by: Option<&str>) -> String {
    let line = one_line(sentence);
    match by.and_then(|who| line.strip_prefix(who)) {
        Some(rest) => rest.trim_start_matches(':').trim().to_owned(),
        None => line,
    }
}

/// Commitments in the user's own words, of `of` (memories to read promises from), each
/// with its done state: marked by a person, or kept in a later memory of `all` by the
/// same person ("I sent the budget…"). Soonest due first, undated after.
pub(crate) fn found_commitments(
    levh: &Levh,
    scope: &Scope,
    of: &[Memory],
    all: &[Memory],
    zone: &TimeZone,
) -> Result<Vec<CommitmentView>> {
    Ok(found_commitments_by_whom(levh, scope, of, all, zone)?.0)
}

/// [`found_commitments`], read once: the user's, and everyone else's (known only when
/// `LEVH_ME` names the user; without it every promise counts as the user's).
pub(crate) fn found_commitments_by_whom(
    levh: &Levh,
    scope: &Scope,
    of: &[Memory],
    all: &[Memory],
    zone: &TimeZone,
) -> Result<(Vec<CommitmentView>, Vec<CommitmentView>)> {
    let me = Me::configured(levh);
    let today = levh.now().to_zoned(zone.clone()).date();
    let marked = levh.commitments_done(scope)?;
    // Every sentence that reads as a kept promise, with who said it and when.
    let mut completions: Vec<(levh_core::Timestamp, Option<String>, MemoryId, String)> = Vec::new();
    for memory in all {
        for sentence in levh_knowledge::sentences(&memory.content) {
            if levh_knowledge::commitments::is_completion(sentence.text) {
                completions.push((
                    memory.valid_from,
                    speaker_of(memory, sentence.text),
                    memory.id,
                    sentence.text.to_owned(),
                ));
            }
        }
    }
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    for memory in of {
        let written_on = memory.valid_from.to_zoned(zone.clone()).date();
        let mut promised = HashSet::new();
        for commitment in levh_knowledge::commitments::commitments(&memory.content, written_on) {
            let by = speaker_of(memory, &commitment.sentence);
            if !promised.insert((
                by.clone(),
                without_speaker(&commitment.sentence, by.as_deref()),
            )) {
                continue; // quoted twice in one memory (a summary, then the text)
            }
            let someone_elses = match (&me, &by) {
                (Some(me), Some(who)) => !me.is(who),
                _ => false,
            };
            let id = levh_core::entities::commitment_id(memory.id, &commitment.sentence);
            let sentence = without_speaker(&commitment.sentence, by.as_deref());
            let kept = completions.iter().find(|(at, who, other, said)| {
                *at > memory.valid_from
                    && *other != memory.id
                    && *who == by
                    && levh_knowledge::commitments::names_the_promise(&sentence, said)
            });
            let done = marked.iter().find(|d| d.id == id);
            let found = if someone_elses {
                &mut theirs
            } else {
                &mut mine
            };
            found.push(CommitmentView {
                id,
                memory_id: memory.id.to_string(),
                sentence,
                written_at: memory.valid_from.to_string(),
                due: commitment.due.map(|d| d.to_string()),
                overdue: done.is_none()
                    && kept.is_none()
                    && commitment.due.is_some_and(|d| d < today),
                source: memory.source.clone(),
                project: memory.project.clone(),
                people: people(memory),
                by,
                done: done.is_some() || kept.is_some(),
                done_at: done
                    .map(|d| d.at.to_string())
                    .or_else(|| kept.map(|(at, ..)| at.to_string())),
                done_by_memory: done
                    .and_then(|d| d.by_memory)
                    .or(kept.map(|(_, _, m, _)| *m))
                    .map(|m| m.to_string()),
            });
        }
    }
    for found in [&mut mine, &mut theirs] {
        found.sort_by(|a, b| match (&a.due, &b.due) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.written_at.cmp(&a.written_at),
        });
    }
    Ok((mine, theirs))
}

/// [`Operation::ListCommitments`](crate::Operation::ListCommitments): open ones (with
/// `include_done`, done ones too), soonest due first, undated ones after.
pub fn commitments(levh: &Levh, scope: &Scope, args: KnowledgeArgs) -> Result<CommitmentList> {
    let limit = limit(args.limit, DEFAULT_LIMIT)?;
    let zone = user_time_zone(levh)?;
    let of = memories(levh, scope, &args)?;
    let all = memories(levh, scope, &KnowledgeArgs::default())?;
    let mut found = found_commitments(levh, scope, &of, &all, &zone)?;
    if !args.include_done.unwrap_or(false) {
        found.retain(|c| !c.done);
    }
    found.truncate(limit);
    Ok(CommitmentList {
        time_zone: zone.iana_name().unwrap_or("system").to_owned(),
        commitments: found,
    })
}

/// [`Operation::CompleteCommitment`](crate::Operation::CompleteCommitment): a person
/// marks one of the listed commitments done.
pub fn complete(levh: &Levh, scope: &Scope, id: &str) -> Result<CommitmentView> {
    let id = id.trim();
    let zone = user_time_zone(levh)?;
    let all = memories(levh, scope, &KnowledgeArgs::default())?;
    let found = found_commitments(levh, scope, &all, &all, &zone)?;
    let Some(commitment) = found.into_iter().find(|c| c.id == id) else {
        return Err(Error::NotFound(format!(
            "no commitment with id '{}' in this workspace (`levh commitments --include-done` lists them) (nothing was changed)",
            id.escape_debug()
        )));
    };
    let memory: MemoryId = commitment
        .memory_id
        .parse()
        .map_err(|_| Error::internal("a listed commitment's memory id does not parse"))?;
    levh.mark_commitment_done(scope, memory, id, None)?;
    let found = found_commitments(
        levh,
        scope,
        &all.into_iter()
            .filter(|m| m.id == memory)
            .collect::<Vec<_>>(),
        &[],
        &zone,
    )?;
    found
        .into_iter()
        .find(|c| c.id == id)
        .ok_or_else(|| Error::internal("a commitment marked done vanished"))
}
