//! Mistakes an agent (or a person) made, and what to check before acting: each mistake is
//! a memory of kind `mistake` stored through the gate like any other, with why it happened
//! and how to avoid it; `check_action` returns the mistakes and pinned rules that apply to
//! an action, ranked, or says plainly that none is known. A mistake an action matches is
//! reinforced, so mistakes that keep mattering never fade; one nothing matches any more
//! fades like any memory.

use levh_core::{Kind, Levh, RecallRequest, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::memories;
use crate::requests::StoreArgs;
use crate::views::CaptureView;
use crate::{Error, Result};

/// The kind mistakes are stored as.
pub const MISTAKE_KIND: &str = "mistake";

/// Arguments of record_mistake.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MistakeArgs {
    /// What happened ("ran the migration on production without a backup").
    pub what: String,
    /// Why it happened.
    pub why: Option<String>,
    /// How to avoid it next time.
    pub avoid: Option<String>,
    /// The project it belongs to.
    pub project: Option<String>,
    /// Tags (`deploy`, `database`, ...).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Arguments of check_action.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// What you are about to do, in words ("deploy the database migration to prod").
    pub action: String,
    /// Only this project's mistakes (pinned rules of every project apply).
    pub project: Option<String>,
    /// At most this many of each (1..20, default 5).
    pub limit: Option<usize>,
}

/// What applies to an action.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckView {
    /// The action checked.
    pub action: String,
    /// Whether anything applies.
    pub known_issues: bool,
    /// In words: "no known issue" or how many apply.
    pub summary: String,
    /// Recorded mistakes that apply, most relevant first (each reinforced: it still
    /// matters).
    pub mistakes: Vec<AppliesView>,
    /// Pinned memories (rules that never fade) that apply, most relevant first.
    pub rules: Vec<AppliesView>,
}

/// A mistake or rule that applies to an action, and why.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AppliesView {
    /// The memory.
    pub id: String,
    /// Its text.
    pub content: String,
    /// Why the mistake happened, as recorded.
    pub why: Option<String>,
    /// How to avoid it, as recorded.
    pub avoid: Option<String>,
    /// Its project.
    pub project: Option<String>,
    /// The content words the action shares with it (first five letters each).
    pub shared_words: Vec<String>,
    /// How close its meaning is to the action's (cosine, 0..1).
    pub similarity: f64,
}

/// [`Operation::RecordMistake`](crate::Operation::RecordMistake): a memory of kind
/// `mistake` through the gate, its text holding what happened, why and how to avoid it (so
/// recall finds it by any of them), and each part in its metadata.
pub fn record(
    levh: &Levh,
    scope: &Scope,
    args: MistakeArgs,
    source: String,
) -> Result<CaptureView> {
    let what = args.what.trim();
    if what.is_empty() {
        return Err(Error::invalid("invalid what: say what happened"));
    }
    let mut content = what.to_owned();
    let part = |text: &Option<String>| {
        text.as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let (why, avoid) = (part(&args.why), part(&args.avoid));
    if let Some(why) = &why {
        content.push_str(&format!("\nWhy: {why}"));
    }
    if let Some(avoid) = &avoid {
        content.push_str(&format!("\nAvoid: {avoid}"));
    }
    let tags: Vec<String> = args
        .tags
        .iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    memories::store(
        levh,
        scope,
        StoreArgs {
            content,
            project: args.project,
            kind: Some(MISTAKE_KIND.into()),
            // A mistake matters more than a note: it grows durable faster when it recurs.
            importance: Some(0.8),
            pin: None,
            valid_from: None,
            valid_to: None,
            session_id: None,
            metadata: Some(
                serde_json::json!({ "what": what, "why": why, "avoid": avoid, "tags": tags }),
            ),
            prior: None,
        },
        source,
    )
}

/// [`Operation::CheckAction`](crate::Operation::CheckAction): the recorded mistakes and
/// pinned rules that apply to `action`. One applies when recall ranks it for the action
/// and it shares a content word with it (or, with a semantic model, its meaning is close:
/// cosine ≥ 0.55) — recall alone would always return its nearest, however unrelated.
pub fn check(levh: &Levh, scope: &Scope, args: CheckArgs) -> Result<CheckView> {
    let action = args.action.trim().to_owned();
    if action.is_empty() {
        return Err(Error::invalid(
            "invalid action: say what you are about to do",
        ));
    }
    let limit = args.limit.unwrap_or(5);
    if !(1..=20).contains(&limit) {
        return Err(Error::invalid(format!(
            "invalid limit: {limit} is outside 1..20"
        )));
    }
    let semantic = levh.embedder().is_semantic();
    let applies = |hit: &levh_core::RecallHit| -> Option<AppliesView> {
        let shared = levh_core::text::shared_content_stems(&action, &hit.memory.content);
        let similarity = hit.relevance.semantic;
        if shared.is_empty() && !(semantic && similarity >= 0.55) {
            return None;
        }
        let meta = |key: &str| {
            hit.memory
                .metadata
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        Some(AppliesView {
            id: hit.memory.id.to_string(),
            content: hit.memory.content.clone(),
            why: meta("why"),
            avoid: meta("avoid"),
            project: hit.memory.project.clone(),
            shared_words: shared,
            similarity,
        })
    };
    let search = |kind: Option<Kind>, project: Option<String>, limit: usize| {
        let mut request = RecallRequest::new(action.clone());
        request.limit = limit;
        request.kind = kind;
        request.project = project;
        request.reinforce = false;
        levh.recall(scope, &request)
    };
    let mistake = Kind::new(MISTAKE_KIND).map_err(|e| Error::invalid(e.to_string()))?;
    let found = search(Some(mistake), args.project.clone(), limit)?;
    let mistakes: Vec<AppliesView> = found.hits.iter().filter_map(applies).collect();
    // What still matches keeps: each applying mistake is reinforced.
    for hit in &mistakes {
        if let Ok(id) = hit.id.parse() {
            levh.reinforce(scope, id)?;
        }
    }
    // Pinned memories are the standing rules; the nearest fifty of any kind are enough
    // to find the few that are pinned.
    let nearest = search(None, None, 50)?;
    let rules: Vec<AppliesView> = nearest
        .hits
        .iter()
        .filter(|hit| hit.memory.state.pinned && hit.memory.kind.as_str() != MISTAKE_KIND)
        .filter_map(applies)
        .take(limit)
        .collect();
    let known = mistakes.len() + rules.len();
    Ok(CheckView {
        action,
        known_issues: known > 0,
        summary: match (mistakes.len(), rules.len()) {
            (0, 0) => "no known issue".into(),
            (m, r) => format!(
                "{m} recorded {} and {r} pinned {} apply",
                if m == 1 { "mistake" } else { "mistakes" },
                if r == 1 { "rule" } else { "rules" }
            ),
        },
        mistakes,
        rules,
    })
}
