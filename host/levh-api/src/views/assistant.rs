//! Views of the assistant: answers with their citations, the daily briefing, meeting prep.

use super::*;

/// A memory an answer draws on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CitationView {
    /// The memory's id.
    pub memory_id: String,
    /// When it happened (its `valid_from`), RFC 3339.
    pub at: String,
    /// Its day in the user's zone, `YYYY-MM-DD`.
    pub day: String,
    /// Where it came from (`cli`, `connector:email`, an agent's name).
    pub source: String,
    /// Its kind (`email`, `event`, `transcript`, `note`, ...).
    pub kind: String,
    /// The people recorded with it (sender, attendees, speakers).
    pub people: Vec<String>,
    /// Its sentence that best matches the question.
    pub sentence: String,
}

/// Evidence of one entity (a person, or none), in the order of its best memory.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerGroupView {
    /// The person the memories are about or from; none for the rest.
    pub entity: Option<String>,
    /// Their memories, oldest first.
    pub citations: Vec<CitationView>,
}

/// An answer to a question, with the memories it used.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerView {
    /// The question as asked.
    pub question: String,
    /// The answer: the model's words, or (without a model) the evidence as readable text.
    pub answer: String,
    /// `model` or `deterministic`.
    pub mode: String,
    /// The model that wrote it, when one did.
    pub model: Option<String>,
    /// The memories the answer cites (all of the evidence, without a model).
    pub citations: Vec<CitationView>,
    /// The evidence grouped by entity (deterministic answers).
    pub groups: Vec<AnswerGroupView>,
    /// Ids the model cited that were not among the evidence: removed from the answer.
    pub dropped_citations: Vec<String>,
    /// The days the question's time words chose ("last week"), `from`..`to` inclusive.
    pub time_range: Option<Vec<String>>,
    /// The people the question names, whose memories were preferred.
    pub people: Vec<String>,
    /// Estimated tokens of evidence used.
    pub tokens: usize,
    /// Evidence left out by the token budget.
    pub omitted: usize,
    /// What did not go as asked (the model failed and the answer is deterministic).
    pub warnings: Vec<String>,
}

/// A calendar event as a briefing shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CalendarEventView {
    /// The event's memory.
    pub memory_id: String,
    /// Its source id (file and UID).
    pub source_id: Option<String>,
    /// Its title.
    pub title: String,
    /// When it starts, RFC 3339.
    pub start: String,
    /// When it ends, RFC 3339, when known.
    pub end: Option<String>,
    /// Its start in the user's zone, `HH:MM` (`all day` for a day's event).
    pub local_time: String,
    /// Where.
    pub location: Option<String>,
    /// Who takes part (the user included, when the calendar names them).
    pub attendees: Vec<String>,
}

/// A memory named in a briefing: one line of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MemoryLineView {
    /// The memory.
    pub memory_id: String,
    /// When it happened, RFC 3339.
    pub at: String,
    /// Its day in the user's zone, `YYYY-MM-DD`.
    pub day: String,
    /// Its kind.
    pub kind: String,
    /// Its title or first line.
    pub line: String,
}

/// A person met on the day, with what was last discussed with them.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PersonTodayView {
    /// Their name (or address).
    pub name: String,
    /// Their newest memory before the day, when there is one.
    pub last_discussed: Option<MemoryLineView>,
}

/// The day at a glance: deterministic, from the memories.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BriefingView {
    /// The day, `YYYY-MM-DD` in `time_zone`.
    pub date: String,
    /// The user's zone.
    pub time_zone: String,
    /// The day's events, by start.
    pub events: Vec<CalendarEventView>,
    /// The user's open promises due that day or earlier, soonest first.
    pub due: Vec<CommitmentView>,
    /// Open promises others made (in transcripts and mail), due that day or earlier.
    pub owed_to_me: Vec<CommitmentView>,
    /// Decisions of the seven days up to the day, newest first.
    pub decisions: Vec<FoundDecisionView>,
    /// The people of the day's events, with what was last discussed with each.
    pub people: Vec<PersonTodayView>,
    /// Important memories (importance at least 0.7) that are fading.
    pub fading: Vec<MemoryLineView>,
}

/// One attendee of a meeting.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AttendeeView {
    /// Their name (or address).
    pub name: String,
    /// Their memories before the meeting, newest first (at most five).
    pub last_discussed: Vec<MemoryLineView>,
    /// Open promises made before the meeting by them, or the user's that name them.
    pub commitments: Vec<CommitmentView>,
}

/// What to know before a meeting.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MeetingPrepView {
    /// The meeting.
    pub event: CalendarEventView,
    /// Everyone but the user, each with what was last discussed and what is open.
    pub attendees: Vec<AttendeeView>,
    /// Decisions of the last 30 days said with an attendee or about the meeting's subject,
    /// newest first.
    pub decisions: Vec<FoundDecisionView>,
    /// Documents and notes about the meeting's subject.
    pub documents: Vec<MemoryLineView>,
    /// Earlier meetings with the same title, newest first.
    pub previous: Vec<MemoryLineView>,
}

/// A pair of memories that may disagree.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConflictView {
    /// The pair's id (for `resolve`).
    pub id: String,
    /// `value`, `negation`, `antonym` or `swap`.
    pub kind: String,
    /// The older memory and its text.
    pub older: String,
    pub older_content: String,
    /// The newer memory and its text.
    pub newer: String,
    pub newer_content: String,
    /// When it was found, RFC 3339.
    pub found_at: String,
    /// `keep_both`, `not_a_conflict` or `superseded`; none while open.
    pub resolution: Option<String>,
    /// When it was resolved.
    pub resolved_at: Option<String>,
    /// The memory a supersession retired.
    pub superseded: Option<String>,
}

/// Conflict candidates, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConflictList {
    /// The candidates.
    pub conflicts: Vec<ConflictView>,
}

/// What a detection did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DetectView {
    /// Memories read (the newest, at most 5,000).
    pub memories: usize,
    /// Pairs compared (those sharing two uncommon words).
    pub compared: usize,
    /// New candidates recorded.
    pub found: usize,
    /// Open candidates now.
    pub open: usize,
}

/// One factor of a memory's trust.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TrustFactorView {
    /// `source`, `admitted by a person`, `said to help`, `said to be wrong`,
    /// `corroborated`, `age`, `open conflict`, `redacted`, `superseded`.
    pub factor: String,
    /// What it adds (the source: the base value) or takes away.
    pub effect: f64,
    /// Why, in words.
    pub why: String,
}

/// How far a memory can be believed: separate from ranking.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TrustView {
    /// The memory.
    pub memory_id: String,
    /// 0..1: the factors' sum, clamped.
    pub value: f64,
    /// `high` (≥ 0.75), `medium` (≥ 0.5) or `low`.
    pub label: String,
    /// The breakdown.
    pub factors: Vec<TrustFactorView>,
}

/// The review queue: fading memories a person has not put off, weakest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReviewQueueView {
    /// Each with its review history.
    pub memories: Vec<ReviewItemView>,
}

/// A fading memory to review.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReviewItemView {
    /// The memory (its retention now, its importance, its text).
    pub memory: MemoryView,
    /// Decisions taken on it before.
    pub reviews: u32,
    /// The interval its last keep gave, in days (0: never kept).
    pub interval_days: u32,
}

/// What a review decision did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReviewView {
    /// The memory.
    pub memory_id: String,
    /// The decision taken.
    pub decision: String,
    /// The memory after it (none when it was forgotten).
    pub memory: Option<MemoryView>,
    /// When the review queue shows it again (if it is still fading then).
    pub next_review: String,
    /// The interval a keep gave, in days.
    pub interval_days: u32,
    /// Decisions taken on it, this one included.
    pub reviews: u32,
}

/// One cluster of a consolidation and its summary.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConsolidatedClusterView {
    /// The summary memory written (none in a dry run).
    pub summary_id: Option<String>,
    /// The summary's text.
    pub summary: String,
    /// The cluster's project.
    pub project: Option<String>,
    /// The memories it replaces, oldest first: retired from default recall, kept, shown
    /// with `as_of` before the consolidation and on the summary's page.
    pub members: Vec<String>,
}

/// What a consolidation found and did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConsolidationView {
    /// Nothing was written.
    pub dry_run: bool,
    /// Live, unpinned memories old enough that were compared.
    pub considered: usize,
    /// `semantic` (vector cosine) or `lexical` (TF-IDF cosine, with the hash embedder).
    pub measure: String,
    /// The similarity two memories needed to be related.
    pub threshold: f64,
    /// Only memories recorded before this were candidates, RFC 3339.
    pub recorded_before: String,
    /// The clusters.
    pub clusters: Vec<ConsolidatedClusterView>,
    /// Memories retired into summaries.
    pub retired: usize,
}

/// What an undone consolidation restored.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UndoConsolidationView {
    /// The summary, now forgotten.
    pub summary_id: String,
    /// The members live again, oldest first.
    pub restored: Vec<String>,
}
