//! The conversational benchmark: long two-person conversations over dated sessions, and
//! questions labelled with the turns that answer them (`fixtures/benchmark/
//! conversational/`, [`Dataset::builtin`]).
//!
//! The protocol is the one an outsider would use through the API: one memory per turn
//! (`"speaker: text"`, pinned, project = the conversation, world time = the session's
//! date), stored through the admission gate on a throwaway store; then every question is
//! recalled inside its conversation's project, top 10, without reinforcement. A plain
//! BM25 over the same turns, computed in the same run ([`Bm25`]), is the baseline every
//! ranking change is read against. Reported per question kind: hit@1/5/10 and MRR@10,
//! and which evidence turns the gate did not store.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use levh_core::{Config, Embedder, MemoryId, NewMemory, RecallRequest, Timestamp};
use serde::{Deserialize, Serialize};

use crate::benchmark::percentile;
use crate::{Sandbox, measure_name};

/// The sets shipped with levh, by the name that picks each on the command line: each a
/// `dataset.json` and one file per conversation. Of different character on purpose, so a
/// ranking default can be chosen on some and checked on the others: `conversational`
/// (long chats, a quarter of the questions sharing no word with the answer), `chat`
/// (ordinary chat, questions reusing the answer's words, much small talk) and `worknotes`
/// (a team's short factual notes, meetings and mail, with many near-misses).
const BUILTINS: &[(&str, &[(&str, &str)])] = &[
    (
        "conversational",
        &include!(concat!(env!("OUT_DIR"), "/builtin_conversations.rs")),
    ),
    (
        "chat",
        &include!(concat!(env!("OUT_DIR"), "/builtin_chat.rs")),
    ),
    (
        "worknotes",
        &include!(concat!(env!("OUT_DIR"), "/builtin_worknotes.rs")),
    ),
];

/// The name that picks the first shipped dataset on the command line.
pub const BUILTIN_NAME: &str = "conversational";

/// The names of the shipped sets.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS
        .iter()
        .filter(|(_, files)| !files.is_empty())
        .map(|(name, _)| *name)
        .collect()
}

/// The file of a dataset directory that names it and holds its thresholds.
pub const MANIFEST: &str = "dataset.json";

/// Results asked of every question.
pub const DEPTH: usize = 10;

/// The kind name that stands for every question.
pub const ALL: &str = "all";

/// The question kinds.
pub const KINDS: &[&str] = &["single-hop", "multi-hop", "temporal", "paraphrased"];

/// A dataset's name, version and thresholds (`dataset.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Its name.
    pub name: String,
    /// Its version: results of different versions are not comparable.
    pub version: u32,
    /// What it measures and how it was built.
    #[serde(default)]
    pub description: String,
    /// Minimums by measure (`lexical`, `semantic`), then by kind (or `all`).
    #[serde(default)]
    pub thresholds: BTreeMap<String, BTreeMap<String, Thresholds>>,
}

/// Minimum scores; an absent one is not checked. The `_over_bm25` ones are margins over
/// the BM25 baseline of the same run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Minimum hit@1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_1: Option<f64>,
    /// Minimum hit@5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_5: Option<f64>,
    /// Minimum hit@10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_10: Option<f64>,
    /// Minimum MRR@10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrr: Option<f64>,
    /// Minimum of levh's hit@10 minus BM25's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_at_10_over_bm25: Option<f64>,
    /// Minimum of levh's MRR minus BM25's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrr_over_bm25: Option<f64>,
}

impl Thresholds {
    fn named(&self) -> Vec<(&'static str, f64)> {
        [
            ("hit_at_1", self.hit_at_1),
            ("hit_at_5", self.hit_at_5),
            ("hit_at_10", self.hit_at_10),
            ("mrr", self.mrr),
            ("hit_at_10_over_bm25", self.hit_at_10_over_bm25),
            ("mrr_over_bm25", self.mrr_over_bm25),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name, v)))
        .collect()
    }
}

/// One conversation file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// Its id: the project its turns are stored in.
    pub id: String,
    /// The two people.
    pub speakers: Vec<String>,
    /// Who they are.
    #[serde(default)]
    pub description: String,
    /// Dated sessions, oldest first.
    pub sessions: Vec<Session>,
    /// Labelled questions.
    pub questions: Vec<Question>,
}

/// A dated chat session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// When it happened (RFC 3339).
    pub date: String,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
}

/// One turn of a session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// `s<session>t<turn>`.
    pub id: String,
    /// One of the conversation's speakers.
    pub speaker: String,
    /// What they said.
    pub text: String,
}

impl Turn {
    /// The memory stored for this turn.
    pub fn content(&self) -> String {
        format!("{}: {}", self.speaker, self.text)
    }
}

/// A question and the turns that answer it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// Unique within the conversation.
    pub id: String,
    /// One of [`KINDS`].
    pub kind: String,
    /// The question.
    pub question: String,
    /// Turn ids holding the answer; finding any one counts as a hit.
    pub evidence: Vec<String>,
}

/// A whole dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Name, version, thresholds.
    pub manifest: Manifest,
    /// The conversations, in file-name order.
    pub conversations: Vec<Conversation>,
}

impl Dataset {
    /// The first dataset shipped with levh (`conversational`).
    pub fn builtin() -> Result<Self> {
        Self::builtin_named(BUILTIN_NAME).context("the conversational set is shipped")?
    }

    /// The shipped set called `name`, if there is one.
    pub fn builtin_named(name: &str) -> Option<Result<Self>> {
        let (_, files) = BUILTINS
            .iter()
            .find(|(n, files)| *n == name && !files.is_empty())?;
        Some(Self::from_files(
            files
                .iter()
                .map(|(file, text)| (file.to_string(), text.to_string())),
            &format!("the built-in {name} dataset (fixtures/benchmark/{name})"),
        ))
    }

    /// A dataset directory: `dataset.json` and one `*.json` per conversation.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                files.push((name.unwrap_or_default(), text));
            }
        }
        files.sort();
        Self::from_files(files, &dir.display().to_string())
    }

    fn from_files(files: impl IntoIterator<Item = (String, String)>, origin: &str) -> Result<Self> {
        let mut manifest = None;
        let mut conversations = Vec::new();
        for (name, text) in files {
            if name == MANIFEST {
                manifest = Some(
                    serde_json::from_str::<Manifest>(&text)
                        .with_context(|| format!("{origin}: {name} is not a valid manifest"))?,
                );
            } else {
                let conversation: Conversation = serde_json::from_str(&text)
                    .with_context(|| format!("{origin}: {name} is not a valid conversation"))?;
                conversation
                    .check()
                    .with_context(|| format!("{origin}: {name}"))?;
                conversations.push(conversation);
            }
        }
        let Some(manifest) = manifest else {
            bail!("{origin}: no {MANIFEST} names the dataset");
        };
        if conversations.is_empty() {
            bail!("{origin}: no conversation files");
        }
        let mut ids = HashSet::new();
        for c in &conversations {
            if !ids.insert(c.id.as_str()) {
                bail!("{origin}: conversation id `{}` is used twice", c.id);
            }
        }
        for (measure, by_kind) in &manifest.thresholds {
            if measure != "lexical" && measure != "semantic" {
                bail!(
                    "{origin}: thresholds: `{measure}` is not a measure (use `lexical` or `semantic`)"
                );
            }
            for kind in by_kind.keys() {
                if kind != ALL && !KINDS.contains(&kind.as_str()) {
                    bail!("{origin}: thresholds.{measure}: `{kind}` is not a question kind");
                }
            }
        }
        Ok(Self {
            manifest,
            conversations,
        })
    }

    /// Every turn of every conversation.
    pub fn turns(&self) -> usize {
        self.conversations
            .iter()
            .flat_map(|c| &c.sessions)
            .map(|s| s.turns.len())
            .sum()
    }

    /// Every question.
    pub fn questions(&self) -> usize {
        self.conversations.iter().map(|c| c.questions.len()).sum()
    }
}

impl Conversation {
    fn check(&self) -> Result<()> {
        if self.speakers.len() != 2 {
            bail!("`speakers` must name two people");
        }
        let mut turns = HashSet::new();
        let mut last: Option<Timestamp> = None;
        for (n, session) in self.sessions.iter().enumerate() {
            let date: Timestamp = session.date.parse().with_context(|| {
                format!(
                    "sessions[{n}]: date {:?} is not an RFC 3339 time",
                    session.date
                )
            })?;
            if last.is_some_and(|l| date <= l) {
                bail!(
                    "sessions[{n}]: date {} is not after the session before",
                    session.date
                );
            }
            last = Some(date);
            for (t, turn) in session.turns.iter().enumerate() {
                if !turns.insert(turn.id.as_str()) {
                    bail!("sessions[{n}].turns[{t}]: id `{}` is used twice", turn.id);
                }
                if !self.speakers.contains(&turn.speaker) {
                    bail!(
                        "sessions[{n}].turns[{t}] ({}): speaker `{}` is not one of {:?}",
                        turn.id,
                        turn.speaker,
                        self.speakers
                    );
                }
            }
        }
        let mut questions = HashSet::new();
        for (n, q) in self.questions.iter().enumerate() {
            if !questions.insert(q.id.as_str()) {
                bail!("questions[{n}]: id `{}` is used twice", q.id);
            }
            if !KINDS.contains(&q.kind.as_str()) {
                bail!(
                    "questions[{n}] ({}): kind `{}` is not one of {KINDS:?}",
                    q.id,
                    q.kind
                );
            }
            if q.evidence.is_empty() {
                bail!("questions[{n}] ({}): `evidence` is empty", q.id);
            }
            if let Some(missing) = q.evidence.iter().find(|e| !turns.contains(e.as_str())) {
                bail!(
                    "questions[{n}] ({}): evidence `{missing}` is not a turn",
                    q.id
                );
            }
        }
        Ok(())
    }
}

/// Okapi BM25 over a conversation's turns, the baseline: lowercase Unicode words, no
/// stemming, no stop words, k1 = 1.2, b = 0.75, and the non-negative IDF
/// ln(1 + (N − n + 0.5)/(n + 0.5)) — what "a few lines of Python" over the turns does.
#[derive(Debug)]
pub struct Bm25 {
    documents: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    average_length: f64,
    frequency: HashMap<String, f64>,
}

impl Bm25 {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;

    /// Indexes the texts.
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut documents = Vec::new();
        let mut lengths = Vec::new();
        let mut frequency: HashMap<String, f64> = HashMap::new();
        for text in texts {
            let mut counts: HashMap<String, f64> = HashMap::new();
            let mut length = 0.0;
            for word in levh_core::text::words(text) {
                *counts.entry(word).or_default() += 1.0;
                length += 1.0;
            }
            for word in counts.keys() {
                *frequency.entry(word.clone()).or_default() += 1.0;
            }
            documents.push(counts);
            lengths.push(length);
        }
        let average_length = lengths.iter().sum::<f64>() / (lengths.len().max(1) as f64);
        Self {
            documents,
            lengths,
            average_length: average_length.max(1.0),
            frequency,
        }
    }

    /// Each text's score for the query, in index order.
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let n = self.documents.len() as f64;
        let terms: Vec<String> = levh_core::text::words(query).collect();
        self.documents
            .iter()
            .zip(&self.lengths)
            .map(|(counts, length)| {
                terms
                    .iter()
                    .filter_map(|term| {
                        let tf = *counts.get(term)?;
                        let df = self.frequency.get(term).copied().unwrap_or(0.0);
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        let norm =
                            Self::K1 * (1.0 - Self::B + Self::B * length / self.average_length);
                        Some(idf * tf * (Self::K1 + 1.0) / (tf + norm))
                    })
                    .sum()
            })
            .collect()
    }

    /// Indexes of the `k` best-scoring texts with a score above 0, best first (ties by
    /// index).
    pub fn top(&self, query: &str, k: usize) -> Vec<usize> {
        let scores = self.scores(query);
        let mut ranked: Vec<usize> = (0..scores.len()).filter(|i| scores[*i] > 0.0).collect();
        ranked.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
        ranked.truncate(k);
        ranked
    }
}

/// Scores of one question kind (or `all`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindScore {
    /// The kind.
    pub kind: String,
    /// How many questions.
    pub questions: usize,
    /// Share answered by the first result.
    pub hit_at_1: f64,
    /// ... within the first five.
    pub hit_at_5: f64,
    /// ... within the first ten.
    pub hit_at_10: f64,
    /// Mean reciprocal rank of the first answering result within ten (0 when none).
    pub mrr: f64,
}

impl KindScore {
    /// The scores of `ranks` (1-based rank of the first answer in the top ten, if any).
    pub fn of_ranks(kind: &str, ranks: &[Option<usize>]) -> Self {
        Self::of(kind, ranks)
    }

    fn of(kind: &str, ranks: &[Option<usize>]) -> Self {
        let n = ranks.len().max(1) as f64;
        let hit = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
        Self {
            kind: kind.to_owned(),
            questions: ranks.len(),
            hit_at_1: hit(1),
            hit_at_5: hit(5),
            hit_at_10: hit(10),
            mrr: (ranks.iter().flatten().map(|r| 1.0 / *r as f64).sum::<f64>() + 0.0) / n,
        }
    }

    fn metric(&self, name: &str) -> f64 {
        match name {
            "hit_at_1" => self.hit_at_1,
            "hit_at_5" => self.hit_at_5,
            "hit_at_10" => self.hit_at_10,
            _ => self.mrr,
        }
    }
}

/// What one question found, by levh and by the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionOutcome {
    /// The conversation.
    pub conversation: String,
    /// The question's id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// The question.
    pub question: String,
    /// The turns that answer it.
    pub evidence: Vec<String>,
    /// 1-based rank of the first answering turn in levh's top 10.
    pub rank: Option<usize>,
    /// ... in BM25's top 10.
    pub bm25_rank: Option<usize>,
    /// The turn ids of levh's first three results.
    pub top: Vec<String>,
    /// Words in its first evidence turn's text (the band it is scored in by length).
    #[serde(default)]
    pub evidence_words: usize,
}

/// Evidence lengths the report scores apart (`[from, to)` words of the first evidence
/// turn): one vector for a long, many-topic turn blurs the clause that answers, so a
/// sentence model can lose to the lexical side on long turns while winning on short ones
/// — an average hides that.
pub const LENGTH_BANDS: [(&str, usize, usize); 4] = [
    ("under 15 words", 0, 15),
    ("15-29 words", 15, 30),
    ("30-44 words", 30, 45),
    ("45+ words", 45, usize::MAX),
];

/// A turn the gate did not store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotStored {
    /// `conversation/turn`.
    pub turn: String,
    /// `review` or `reject`.
    pub verdict: String,
    /// Why, and the turn it was compared with when there was one.
    pub reason: String,
    /// Whether a question names it as evidence.
    pub evidence: bool,
}

/// A run of the conversational benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The dataset's name.
    pub dataset: String,
    /// The dataset's version.
    pub dataset_version: u32,
    /// The embedder's model id.
    pub embedder: String,
    /// `semantic` or `lexical`.
    pub measure: String,
    /// Turns offered to the gate.
    pub turns: usize,
    /// Turns stored.
    pub stored: usize,
    /// Every turn the gate held or rejected.
    pub not_stored: Vec<NotStored>,
    /// levh: every question, then each kind.
    pub levh: Vec<KindScore>,
    /// The BM25 baseline over every turn, same questions.
    pub bm25: Vec<KindScore>,
    /// levh by the length of the evidence ([`LENGTH_BANDS`]).
    #[serde(default)]
    pub levh_by_length: Vec<KindScore>,
    /// BM25 by the length of the evidence.
    #[serde(default)]
    pub bm25_by_length: Vec<KindScore>,
    /// Time to store every turn through the gate, milliseconds.
    pub ingest_ms: f64,
    /// Median recall time, milliseconds.
    pub search_p50_ms: f64,
    /// 99th percentile recall time, milliseconds.
    pub search_p99_ms: f64,
    /// Every question's outcome.
    pub questions: Vec<QuestionOutcome>,
}

impl Report {
    /// levh's and BM25's scores of a kind (or `all`).
    pub fn score(&self, kind: &str) -> Option<(&KindScore, &KindScore)> {
        let levh = self.levh.iter().find(|s| s.kind == kind)?;
        let bm25 = self.bm25.iter().find(|s| s.kind == kind)?;
        Some((levh, bm25))
    }

    /// Evidence turns the gate did not store.
    pub fn evidence_not_stored(&self) -> impl Iterator<Item = &NotStored> {
        self.not_stored.iter().filter(|n| n.evidence)
    }
}

/// Stores every conversation through the gate on a fresh store, then asks every question
/// of levh and of the BM25 baseline.
/// A dataset stored through the gate on a fresh sandbox, one memory per turn.
pub(crate) struct Ingested {
    sandbox: Sandbox,
    labels: HashMap<MemoryId, String>,
    stored: usize,
    not_stored: Vec<NotStored>,
    ingest_ms: f64,
}

fn ingest(dataset: &Dataset, embedder: Arc<dyn Embedder>, config: Config) -> Result<Ingested> {
    let sandbox = Sandbox::new(embedder, config)?;
    // Recall reads at "now": put it a day after the last session, so every turn is in
    // the past, as it is for someone asking about a conversation later.
    let last = dataset
        .conversations
        .iter()
        .filter_map(|c| c.sessions.last())
        .filter_map(|s| s.date.parse::<Timestamp>().ok())
        .max()
        .context("the dataset has no session")?;
    let hours = (last.as_second() - sandbox.now().as_second()) as f64 / 3600.0 + 24.0;
    if hours > 0.0 {
        sandbox.advance_hours(hours)?;
    }

    let evidence: HashSet<(String, String)> = dataset
        .conversations
        .iter()
        .flat_map(|c| {
            c.questions
                .iter()
                .flat_map(|q| q.evidence.iter().map(|e| (c.id.clone(), e.clone())))
        })
        .collect();
    let started = Instant::now();
    let mut labels: HashMap<MemoryId, String> = HashMap::new();
    let mut not_stored = Vec::new();
    let mut stored = 0;
    for conversation in &dataset.conversations {
        for session in &conversation.sessions {
            let date: Timestamp = session.date.parse()?;
            for turn in &session.turns {
                let outcome = sandbox
                    .levh
                    .capture(
                        &sandbox.scope,
                        NewMemory {
                            content: turn.content(),
                            project: Some(conversation.id.clone()),
                            source: Some("benchmark".to_owned()),
                            pinned: true,
                            valid_from: Some(date),
                            ..NewMemory::default()
                        },
                    )
                    .with_context(|| format!("storing {}/{}", conversation.id, turn.id))?;
                if let Some(id) = outcome.memory_id {
                    labels.insert(id, turn.id.clone());
                    stored += 1;
                    continue;
                }
                let near = outcome
                    .nearest()
                    .and_then(|n| labels.get(&n.id).map(|l| format!(" (nearest: {l})")))
                    .unwrap_or_default();
                not_stored.push(NotStored {
                    turn: format!("{}/{}", conversation.id, turn.id),
                    verdict: outcome.verdict.name().to_owned(),
                    reason: format!("{}{near}", outcome.reason().unwrap_or_default()),
                    evidence: evidence.contains(&(conversation.id.clone(), turn.id.clone())),
                });
            }
        }
    }
    let ingest_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(Ingested {
        sandbox,
        labels,
        stored,
        not_stored,
        ingest_ms,
    })
}

/// Every question recalled with `levh` (top [`DEPTH`] in its conversation, no
/// reinforcement) beside BM25; the outcomes and each recall's milliseconds.
fn rank(
    dataset: &Dataset,
    levh: &levh_core::Levh,
    scope: &levh_core::Scope,
    labels: &HashMap<MemoryId, String>,
) -> Result<(Vec<QuestionOutcome>, Vec<f64>)> {
    let mut outcomes = Vec::new();
    let mut timings = Vec::new();
    for conversation in &dataset.conversations {
        let turns: Vec<&Turn> = conversation
            .sessions
            .iter()
            .flat_map(|s| &s.turns)
            .collect();
        let contents: Vec<String> = turns.iter().map(|t| t.content()).collect();
        let bm25 = Bm25::new(contents.iter().map(String::as_str));
        let words_of: HashMap<&str, usize> = turns
            .iter()
            .map(|t| (t.id.as_str(), t.text.split_whitespace().count()))
            .collect();
        for question in &conversation.questions {
            let rank_of = |found: &[&str]| {
                found
                    .iter()
                    .position(|id| question.evidence.iter().any(|e| e == id))
                    .map(|i| i + 1)
            };
            let request = RecallRequest {
                limit: DEPTH,
                project: Some(conversation.id.clone()),
                reinforce: false,
                ..RecallRequest::new(question.question.clone())
            };
            let started = Instant::now();
            let output = levh
                .recall(scope, &request)
                .with_context(|| format!("recalling {:?}", question.question))?;
            timings.push(started.elapsed().as_secs_f64() * 1e3);
            let found: Vec<&str> = output
                .hits
                .iter()
                .map(|hit| labels.get(&hit.memory.id).map_or("?", String::as_str))
                .collect();
            let baseline: Vec<&str> = bm25
                .top(&question.question, DEPTH)
                .into_iter()
                .map(|i| turns[i].id.as_str())
                .collect();
            outcomes.push(QuestionOutcome {
                conversation: conversation.id.clone(),
                id: question.id.clone(),
                kind: question.kind.clone(),
                question: question.question.clone(),
                evidence: question.evidence.clone(),
                rank: rank_of(&found),
                bm25_rank: rank_of(&baseline),
                top: found.iter().take(3).map(|s| (*s).to_owned()).collect(),
                evidence_words: question
                    .evidence
                    .first()
                    .and_then(|id| words_of.get(id.as_str()))
                    .copied()
                    .unwrap_or(0),
            });
        }
    }

    Ok((outcomes, timings))
}

/// Hit@k and MRR for all questions and per kind, by `rank`.
fn scores(
    outcomes: &[QuestionOutcome],
    rank: fn(&QuestionOutcome) -> Option<usize>,
) -> Vec<KindScore> {
    let mut scores = vec![KindScore::of(
        ALL,
        &outcomes.iter().map(rank).collect::<Vec<_>>(),
    )];
    for kind in KINDS {
        let ranks: Vec<Option<usize>> = outcomes
            .iter()
            .filter(|o| o.kind == *kind)
            .map(rank)
            .collect();
        scores.push(KindScore::of(kind, &ranks));
    }
    scores
}

/// Hit@k and MRR by the length of the evidence ([`LENGTH_BANDS`]), by `rank`.
pub fn scores_by_length(
    outcomes: &[QuestionOutcome],
    rank: fn(&QuestionOutcome) -> Option<usize>,
) -> Vec<KindScore> {
    LENGTH_BANDS
        .iter()
        .map(|(band, from, to)| {
            let ranks: Vec<Option<usize>> = outcomes
                .iter()
                .filter(|o| (*from..*to).contains(&o.evidence_words))
                .map(rank)
                .collect();
            KindScore::of(band, &ranks)
        })
        .collect()
}

/// Runs the benchmark: the dataset through the gate, every question recalled beside BM25.
pub fn run(dataset: &Dataset, embedder: Arc<dyn Embedder>, config: Config) -> Result<Report> {
    let embedder_id = embedder.model_id().to_owned();
    let measure = measure_name(embedder.as_ref());
    let Ingested {
        sandbox,
        labels,
        stored,
        not_stored,
        ingest_ms,
    } = ingest(dataset, embedder, config)?;
    let (outcomes, mut timings) = rank(dataset, &sandbox.levh, &sandbox.scope, &labels)?;
    timings.sort_by(f64::total_cmp);
    Ok(Report {
        dataset: dataset.manifest.name.clone(),
        dataset_version: dataset.manifest.version,
        embedder: embedder_id,
        measure: measure.to_owned(),
        turns: dataset.turns(),
        stored,
        not_stored,
        levh: scores(&outcomes, |o| o.rank),
        bm25: scores(&outcomes, |o| o.bm25_rank),
        levh_by_length: scores_by_length(&outcomes, |o| o.rank),
        bm25_by_length: scores_by_length(&outcomes, |o| o.bm25_rank),
        ingest_ms,
        search_p50_ms: percentile(&timings, 0.50),
        search_p99_ms: percentile(&timings, 0.99),
        questions: outcomes,
    })
}

/// One fusion weight's scores on a dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WeightScore {
    /// The semantic share of relevance (`LEVH_FUSION_SEMANTIC_WEIGHT` with a model,
    /// `LEVH_FUSION_HASH_WEIGHT` with the hash embedder).
    pub weight: f64,
    /// Hit@k and MRR over all questions.
    pub levh: KindScore,
}

/// A dataset stored once and ranked with each of `weights` (the embedder's fusion
/// weight), beside BM25 over the same turns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WeightSweep {
    /// The dataset.
    pub dataset: String,
    /// Its version, turns and questions: a recorded sweep of another version is stale.
    pub version: u32,
    /// Turns in it.
    pub turns: usize,
    /// Questions in it.
    pub questions: usize,
    /// BM25's scores over all questions.
    pub bm25: KindScore,
    /// Each weight's.
    pub weights: Vec<WeightScore>,
    /// Evidence turns the gate did not store.
    pub evidence_not_stored: usize,
}

impl Ingested {
    /// Evidence turns the gate did not store.
    pub(crate) fn evidence_not_stored(&self) -> usize {
        self.not_stored.iter().filter(|n| n.evidence).count()
    }
}

/// `dataset` stored once for `levh tune` ([`crate::tune`]).
pub(crate) fn ingest_for_tuning(
    dataset: &Dataset,
    embedder: Arc<dyn Embedder>,
    config: Config,
) -> Result<Ingested> {
    ingest(dataset, embedder, config)
}

/// Every question of `dataset` ranked over what `ingested` stored, with `config`.
pub(crate) fn rank_for_tuning(
    dataset: &Dataset,
    ingested: &Ingested,
    config: Config,
) -> Result<Vec<QuestionOutcome>> {
    let levh = ingested.sandbox.engine_with(config);
    Ok(rank(dataset, &levh, &ingested.sandbox.scope, &ingested.labels)?.0)
}

/// Stores `dataset` once, then ranks every question with each of `weights`.
pub fn sweep_fusion(
    dataset: &Dataset,
    embedder: Arc<dyn Embedder>,
    config: Config,
    weights: &[f64],
) -> Result<WeightSweep> {
    let semantic = embedder.is_semantic();
    let ingested = ingest(dataset, embedder, config)?;
    let mut out = Vec::with_capacity(weights.len());
    let mut bm25 = None;
    for &weight in weights {
        let mut tuned = config;
        if semantic {
            tuned.recall.fusion.semantic_weight = weight;
        } else {
            tuned.recall.fusion.hash_weight = weight;
        }
        let levh = ingested.sandbox.engine_with(tuned);
        let (outcomes, _) = rank(dataset, &levh, &ingested.sandbox.scope, &ingested.labels)?;
        bm25.get_or_insert_with(|| scores(&outcomes, |o| o.bm25_rank).remove(0));
        out.push(WeightScore {
            weight,
            levh: scores(&outcomes, |o| o.rank).remove(0),
        });
    }
    Ok(WeightSweep {
        dataset: dataset.manifest.name.clone(),
        version: dataset.manifest.version,
        turns: dataset.turns(),
        questions: dataset.questions(),
        bm25: bm25.context("no weight to sweep")?,
        weights: out,
        evidence_not_stored: ingested.not_stored.iter().filter(|n| n.evidence).count(),
    })
}

/// The fusion weight a model's default must be, by the rule (#42): of the weights whose
/// hit@10 and MRR beat BM25 and the hash embedder at its default on *every* set — not on
/// the mean — the one with the best mean MRR over the sets. `hash` holds the hash
/// embedder's sweeps over the same sets; `hash_weight` its default. `None` when no
/// weight beats both everywhere.
pub fn rule_weight(model: &[WeightSweep], hash: &[WeightSweep], hash_weight: f64) -> Option<f64> {
    let hash_at = |dataset: &str| -> Option<&KindScore> {
        hash.iter()
            .find(|s| s.dataset == dataset)?
            .weights
            .iter()
            .find(|w| (w.weight - hash_weight).abs() < 1e-9)
            .map(|w| &w.levh)
    };
    let weights: Vec<f64> = model.first()?.weights.iter().map(|w| w.weight).collect();
    let mut best: Option<(f64, f64)> = None;
    for weight in weights {
        let mut mrrs = Vec::new();
        let mut beats_everywhere = true;
        for set in model {
            let score = set.weights.iter().find(|w| w.weight == weight)?;
            let hash = hash_at(&set.dataset)?;
            let s = &score.levh;
            beats_everywhere &= s.hit_at_10 > set.bm25.hit_at_10
                && s.mrr > set.bm25.mrr
                && s.hit_at_10 > hash.hit_at_10
                && s.mrr > hash.mrr;
            mrrs.push(s.mrr);
        }
        let mean = mrrs.iter().sum::<f64>() / mrrs.len().max(1) as f64;
        if beats_everywhere && best.is_none_or(|(_, m)| mean > m) {
            best = Some((weight, mean));
        }
    }
    best.map(|(w, _)| w)
}

/// The weight each held-out dataset gets when it is chosen on the others (the best mean
/// MRR over them), and that weight's score on the held-out set: `(dataset, weight, score)`.
pub fn leave_one_out(sweeps: &[WeightSweep]) -> Vec<(String, f64, KindScore)> {
    sweeps
        .iter()
        .map(|held| {
            let others: Vec<&WeightSweep> = sweeps
                .iter()
                .filter(|s| s.dataset != held.dataset)
                .collect();
            let mean = |w: f64| -> f64 {
                let mrrs: Vec<f64> = others
                    .iter()
                    .filter_map(|s| s.weights.iter().find(|x| x.weight == w))
                    .map(|x| x.levh.mrr)
                    .collect();
                mrrs.iter().sum::<f64>() / mrrs.len().max(1) as f64
            };
            let best = held
                .weights
                .iter()
                .map(|x| x.weight)
                .fold((f64::NAN, f64::NEG_INFINITY), |(bw, bm), w| {
                    let m = mean(w);
                    if m > bm { (w, m) } else { (bw, bm) }
                })
                .0;
            let score = held
                .weights
                .iter()
                .find(|x| x.weight == best)
                .map(|x| x.levh.clone())
                .expect("the best weight is one of the held-out set's");
            (held.dataset.clone(), best, score)
        })
        .collect()
}

/// Compares a report with the dataset's thresholds for the report's measure; an evidence
/// turn the gate did not store always fails. An error when the dataset sets no
/// thresholds for the measure: a check that checks nothing must not pass.
pub fn check(dataset: &Dataset, report: &Report) -> Result<Vec<crate::benchmark::ThresholdCheck>> {
    use crate::benchmark::ThresholdCheck;
    let Some(by_kind) = dataset.manifest.thresholds.get(&report.measure) else {
        bail!(
            "dataset {} sets no thresholds for {} embedders, so there is nothing to check",
            dataset.manifest.name,
            report.measure
        );
    };
    let mut checks = Vec::new();
    for (kind, thresholds) in by_kind {
        let (levh, bm25) = report
            .score(kind)
            .with_context(|| format!("the report has no kind `{kind}`"))?;
        for (metric, minimum) in thresholds.named() {
            let actual = match metric.strip_suffix("_over_bm25") {
                Some(base) => levh.metric(base) - bm25.metric(base),
                None => levh.metric(metric),
            };
            checks.push(ThresholdCheck {
                slice: kind.clone(),
                metric: metric.to_owned(),
                minimum,
                actual,
                passed: actual + 1e-9 >= minimum,
            });
        }
    }
    let lost = report.evidence_not_stored().count();
    checks.push(ThresholdCheck {
        slice: ALL.to_owned(),
        metric: "evidence turns not stored".to_owned(),
        minimum: 0.0,
        actual: lost as f64,
        passed: lost == 0,
    });
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_matches_hand_computed_scores() {
        let index = Bm25::new(["the cat sat", "the dog", "cat cat cat dog"]);
        // N = 3; "cat" is in 2 texts: idf = ln(1 + 1.5/2.5); lengths 3, 2, 4: average 3.
        let idf = (1.0f64 + 1.5 / 2.5).ln();
        let scores = index.scores("cat");
        let norm = |len: f64| 1.2 * (1.0 - 0.75 + 0.75 * len / 3.0);
        let expected0 = idf * 1.0 * 2.2 / (1.0 + norm(3.0));
        let expected2 = idf * 3.0 * 2.2 / (3.0 + norm(4.0));
        assert!((scores[0] - expected0).abs() < 1e-12, "{scores:?}");
        assert_eq!(scores[1], 0.0);
        assert!((scores[2] - expected2).abs() < 1e-12);
        assert_eq!(index.top("cat", 10), vec![2, 0]);
        assert_eq!(
            index.top("Cat!", 1),
            vec![2],
            "case and punctuation are folded"
        );
        assert!(index.top("bird", 10).is_empty());
    }

    #[test]
    fn scores_count_the_first_evidence_rank() {
        let s = KindScore::of("x", &[Some(1), Some(7), None, Some(2)]);
        assert_eq!((s.hit_at_1, s.hit_at_5, s.hit_at_10), (0.25, 0.5, 0.75));
        assert!((s.mrr - (1.0 + 1.0 / 7.0 + 0.5) / 4.0).abs() < 1e-12);
    }

    #[test]
    fn the_shipped_dataset_loads_and_is_as_large_as_promised() {
        let d = Dataset::builtin().unwrap();
        assert!(d.conversations.len() >= 5);
        assert!(d.turns() >= 1500, "{}", d.turns());
        assert!(d.questions() >= 300, "{}", d.questions());
        for kind in KINDS {
            let n = d
                .conversations
                .iter()
                .flat_map(|c| &c.questions)
                .filter(|q| q.kind == *kind)
                .count();
            assert!(n >= 50, "{kind}: {n}");
        }
        assert!(d.manifest.thresholds.contains_key("lexical"));
        assert!(d.manifest.thresholds.contains_key("semantic"));
    }

    #[test]
    fn bad_files_are_refused_naming_the_place() {
        let manifest = (
            MANIFEST.to_owned(),
            r#"{"name":"d","version":1}"#.to_owned(),
        );
        let bad = r#"{"id":"c","speakers":["A","B"],"sessions":[{"date":"2025-01-01T10:00:00Z","turns":[{"id":"s1t1","speaker":"C","text":"hi there"}]}],"questions":[]}"#;
        let e = format!(
            "{:#}",
            Dataset::from_files([manifest.clone(), ("c.json".into(), bad.into())], "dir")
                .unwrap_err()
        );
        assert!(
            e.contains("c.json") && e.contains("s1t1") && e.contains("`C`"),
            "{e}"
        );
        let label = r#"{"id":"c","speakers":["A","B"],"sessions":[{"date":"2025-01-01T10:00:00Z","turns":[{"id":"s1t1","speaker":"A","text":"hi there"}]}],
            "questions":[{"id":"q1","kind":"single-hop","question":"hi?","evidence":["s9t9"]}]}"#;
        let e = format!(
            "{:#}",
            Dataset::from_files([manifest, ("c.json".into(), label.into())], "dir").unwrap_err()
        );
        assert!(e.contains("q1") && e.contains("s9t9"), "{e}");
        let e = format!(
            "{:#}",
            Dataset::from_files([("c.json".to_owned(), bad.to_owned())], "dir").unwrap_err()
        );
        assert!(e.contains("c.json") || e.contains(MANIFEST), "{e}");
    }
}

#[cfg(test)]
mod fusion_table {
    use super::*;

    fn sweeps(table: &serde_json::Value, embedder: &str) -> Vec<WeightSweep> {
        serde_json::from_value(table[embedder]["sweeps"].clone())
            .unwrap_or_else(|e| panic!("fusion-sweep.json, {embedder}: {e}"))
    }

    /// The fusion defaults are what the rule chooses on the recorded cross-set table, and
    /// that table is of the shipped sets as they are now: change a default, or a set,
    /// without regenerating it (`scripts/record-fusion-sweep.sh`) and this fails.
    #[test]
    fn the_fusion_defaults_are_the_rules_choice_on_the_recorded_cross_set_table() {
        let table: serde_json::Value = serde_json::from_str(include_str!(
            "../../../fixtures/benchmark/fusion-sweep.json"
        ))
        .expect("fusion-sweep.json is JSON");
        let (model, hash) = (sweeps(&table, "local"), sweeps(&table, "hash"));
        for name in builtin_names() {
            let set = Dataset::builtin_named(name)
                .expect("shipped")
                .expect("parses");
            for recorded in [&model, &hash] {
                let s = recorded
                    .iter()
                    .find(|s| s.dataset == set.manifest.name)
                    .unwrap_or_else(|| {
                        panic!("{name} is not in the recorded table: regenerate it")
                    });
                assert_eq!(
                    (s.version, s.turns, s.questions),
                    (set.manifest.version, set.turns(), set.questions()),
                    "{name} changed since the table was recorded: regenerate it"
                );
            }
        }
        let fusion = levh_core::rank::FusionConfig::default();
        assert_eq!(
            rule_weight(&model, &hash, fusion.hash_weight),
            Some(fusion.semantic_weight),
            "the model's fusion weight is not the rule's choice on the recorded table"
        );
        // The hash embedder's weight: above BM25 on every set, and on the plateau (within
        // .005 mean MRR of the best weight; 0.1 to 0.5 are that close).
        let mean = |w: f64| -> f64 {
            let mrrs: Vec<f64> = hash
                .iter()
                .map(|s| {
                    s.weights
                        .iter()
                        .find(|x| x.weight == w)
                        .expect("swept")
                        .levh
                        .mrr
                })
                .collect();
            mrrs.iter().sum::<f64>() / mrrs.len() as f64
        };
        let best = hash[0]
            .weights
            .iter()
            .map(|w| mean(w.weight))
            .fold(0.0, f64::max);
        assert!(mean(fusion.hash_weight) >= best - 0.005);
        for s in &hash {
            let at = s
                .weights
                .iter()
                .find(|w| w.weight == fusion.hash_weight)
                .expect("swept");
            assert!(
                at.levh.mrr > s.bm25.mrr && at.levh.hit_at_10 > s.bm25.hit_at_10,
                "{}",
                s.dataset
            );
        }
    }
}
