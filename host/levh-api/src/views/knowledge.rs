//! Views of what the memories say: decisions, commitments, the timeline.

use super::*;

/// A decision a memory states.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FoundDecisionView {
    /// The memory that states it.
    pub memory_id: String,
    /// The sentence.
    pub sentence: String,
    /// When it was said (the memory's world time).
    pub at: String,
    /// Where it came from.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// Who was there (the people the connector recorded: attendees, senders, speakers).
    pub people: Vec<String>,
    /// Who said it, when the memory names a speaker or sender.
    pub by: Option<String>,
}

/// Decisions, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DecisionList {
    /// The decisions.
    pub decisions: Vec<FoundDecisionView>,
}

/// A promise a memory makes in its writer's words.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommitmentView {
    /// Its id, for marking it done (`levh commitments done ID`).
    pub id: String,
    /// The memory that makes it.
    pub memory_id: String,
    /// The sentence.
    pub sentence: String,
    /// When it was written (the memory's world time).
    pub written_at: String,
    /// The day it is due, when it names one, in the user's calendar (YYYY-MM-DD).
    pub due: Option<String>,
    /// Whether that day has passed.
    pub overdue: bool,
    /// Where it came from.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// Who else was there.
    pub people: Vec<String>,
    /// Who said it, when the memory names a speaker or sender (a transcript's speaker, a
    /// mail's sender); none when the user (or their agent) wrote it.
    pub by: Option<String>,
    /// Whether it was marked done, by a person or by a later memory saying so.
    pub done: bool,
    /// When it was marked done.
    pub done_at: Option<String>,
    /// The later memory that said it was done.
    pub done_by_memory: Option<String>,
}

/// Commitments, soonest due first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommitmentList {
    /// The zone due dates are in (`LEVH_TZ` or the system's).
    pub time_zone: String,
    /// The commitments.
    pub commitments: Vec<CommitmentView>,
}

/// A memory on the timeline.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineItem {
    /// The memory.
    pub memory_id: String,
    /// When it happened, in the user's zone (RFC 3339 with the offset of that day).
    pub at: String,
    /// The local time of day (HH:MM).
    pub time: String,
    /// The memory's kind.
    pub kind: String,
    /// Its source.
    pub source: String,
    /// Its project.
    pub project: Option<String>,
    /// The start of its text (a connector item's title when it has one).
    pub preview: String,
    /// The people it names (names, else addresses).
    pub people: Vec<String>,
}

/// One day of the timeline.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineDay {
    /// The day (YYYY-MM-DD) in the user's zone.
    pub day: String,
    /// Its weekday (Monday, ...).
    pub weekday: String,
    /// Its memories, earliest first.
    pub memories: Vec<TimelineItem>,
}

/// Memories grouped by the day they happened.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimelineView {
    /// The zone the days are in (`LEVH_TZ` or the system's).
    pub time_zone: String,
    /// The first day shown.
    pub from: String,
    /// The last day shown.
    pub to: String,
    /// Days with memories, earliest first.
    pub days: Vec<TimelineDay>,
    /// Whether more memories fell in the range than the limit let through.
    pub truncated: bool,
}
