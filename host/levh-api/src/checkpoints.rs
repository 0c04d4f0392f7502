//! Checkpoints and `continue`: an agent writes down where a task stands — its goal, what
//! is done, what comes next, what is still open, the memories it rests on — and the next
//! session (after a restart, a compaction, another agent) asks for everything it needs to
//! resume, within a token budget.
//!
//! A checkpoint is a keyed memory of kind `checkpoint` under `checkpoint:TASK` in its
//! project: a new one replaces the last (kept, superseded, for `as_of`), and each passes
//! the admission gate like any memory.

use levh_core::{Kind, Levh, ListOrder, MemoryFilter, Page, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::requests::{KnowledgeArgs, memory_id};
use crate::views::{CommitmentView, FoundDecisionView, UpsertView};
use crate::{Error, Result};

/// The kind checkpoints are stored as.
pub const CHECKPOINT_KIND: &str = "checkpoint";

/// The task a checkpoint is of when none is named.
const DEFAULT_TASK: &str = "current task";

/// Arguments of checkpoint.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointArgs {
    /// The task (default "current task"): one current checkpoint per task and project.
    pub task: Option<String>,
    /// What the task is for.
    pub goal: String,
    /// What is done.
    #[serde(default)]
    pub done: Vec<String>,
    /// What comes next.
    #[serde(default)]
    pub next: Vec<String>,
    /// Questions still open.
    #[serde(default)]
    pub questions: Vec<String>,
    /// Ids of memories the task rests on.
    #[serde(default)]
    pub memories: Vec<String>,
    /// The project.
    pub project: Option<String>,
}

/// Arguments of continue_task.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContinueArgs {
    /// The task (default: the project's latest checkpoint, whatever its task).
    pub task: Option<String>,
    /// The project.
    pub project: Option<String>,
    /// At most this many tokens of context (about four characters each; 200..20000,
    /// default 2000). The checkpoint always comes first.
    pub max_tokens: Option<usize>,
}

/// Everything an agent needs to resume a task.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ContinueView {
    /// The task resumed.
    pub task: Option<String>,
    /// Its latest checkpoint, when there is one.
    pub checkpoint: Option<CheckpointView>,
    /// From when the rest is: the checkpoint's time (RFC 3339), or a week ago without one.
    pub since: String,
    /// Memories of the project stored since, newest first.
    pub stored_since: Vec<BriefView>,
    /// Memories of the project recalled or reinforced since, most recent first.
    pub used_since: Vec<BriefView>,
    /// Open commitments of the project, soonest due first.
    pub commitments: Vec<CommitmentView>,
    /// Decisions of the project, newest first.
    pub decisions: Vec<FoundDecisionView>,
    /// The project's goals still active or blocked, with their milestones.
    pub goals: Vec<crate::goals::GoalView>,
    /// The whole as one text, within the budget: what an agent reads.
    pub text: String,
    /// Its size in tokens (estimated: characters / 4).
    pub tokens: usize,
    /// The budget.
    pub max_tokens: usize,
    /// Items left out to stay within it.
    pub omitted: usize,
}

/// A checkpoint as written.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckpointView {
    /// Its memory.
    pub memory_id: String,
    /// When it was written.
    pub at: String,
    /// The task.
    pub task: String,
    /// The goal.
    pub goal: String,
    /// What was done.
    pub done: Vec<String>,
    /// What comes next.
    pub next: Vec<String>,
    /// Questions still open.
    pub questions: Vec<String>,
    /// The memories it rests on (those still live), each briefly.
    pub memories: Vec<BriefView>,
}

/// A memory in brief.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BriefView {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its first 200 characters.
    pub preview: String,
    /// When it was stored.
    pub at: String,
}

fn brief(memory: &levh_core::Memory) -> BriefView {
    BriefView {
        id: memory.id.to_string(),
        kind: memory.kind.to_string(),
        preview: levh_core::text::preview(&memory.content, 200),
        at: memory.state.created_at.to_string(),
    }
}

fn key_of(task: &str) -> String {
    format!("checkpoint:{task}")
}

fn task_name(task: Option<&str>) -> Result<String> {
    let task = task
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(DEFAULT_TASK);
    if task.chars().count() > 150 {
        return Err(Error::invalid("invalid task: at most 150 characters"));
    }
    Ok(task.to_owned())
}

/// [`Operation::Checkpoint`](crate::Operation::Checkpoint).
pub fn checkpoint(levh: &Levh, scope: &Scope, args: CheckpointArgs) -> Result<UpsertView> {
    let task = task_name(args.task.as_deref())?;
    let goal = args.goal.trim().to_owned();
    if goal.is_empty() {
        return Err(Error::invalid("invalid goal: say what the task is for"));
    }
    let clean = |items: Vec<String>| -> Vec<String> {
        items
            .into_iter()
            .map(|i| i.trim().to_owned())
            .filter(|i| !i.is_empty())
            .collect()
    };
    let (done, next, questions) = (clean(args.done), clean(args.next), clean(args.questions));
    // Linked memories must exist: a checkpoint resting on a typo would resume on nothing.
    let mut linked = Vec::new();
    for id in &args.memories {
        let id = memory_id("memories", id)?;
        levh.get(scope, id)?;
        linked.push(id.to_string());
    }
    let mut content = format!("Checkpoint of {task}\nGoal: {goal}");
    for (title, items) in [
        ("Done", &done),
        ("Next", &next),
        ("Open questions", &questions),
    ] {
        if !items.is_empty() {
            content.push_str(&format!("\n{title}:"));
            for item in items {
                content.push_str(&format!("\n- {item}"));
            }
        }
    }
    let value = serde_json::json!({
        "task": task, "goal": goal, "done": done, "next": next,
        "questions": questions, "memories": linked,
    });
    let key = key_of(&task);
    let outcome = levh.upsert(
        scope,
        levh_core::Upsert {
            project: args.project,
            key: key.clone(),
            content,
            value: Some(value),
            importance: Some(0.7),
            kind: Some(Kind::new(CHECKPOINT_KIND).map_err(|e| Error::invalid(e.to_string()))?),
        },
    )?;
    Ok(crate::memories::upserted(levh, key, outcome))
}

/// [`Operation::ContinueTask`](crate::Operation::ContinueTask): the latest checkpoint (of
/// `task`, or the project's latest), then what happened since in the project — memories
/// stored, memories used — and its open commitments and decisions, filled in that order
/// until the token budget is spent (the checkpoint always fits first).
pub fn resume(levh: &Levh, scope: &Scope, args: ContinueArgs) -> Result<ContinueView> {
    let max_tokens = args.max_tokens.unwrap_or(2000);
    if !(200..=20_000).contains(&max_tokens) {
        return Err(Error::invalid(format!(
            "invalid max_tokens: {max_tokens} is outside 200..20000"
        )));
    }
    let project = args.project.clone();
    let now = levh.now();
    let found = match args.task.as_deref() {
        Some(task) => levh.keyed_memory(
            scope,
            project.as_deref(),
            &key_of(&task_name(Some(task))?),
            None,
        )?,
        None => levh
            .list(
                scope,
                MemoryFilter {
                    project: project.clone(),
                    kind: Some(
                        Kind::new(CHECKPOINT_KIND).map_err(|e| Error::invalid(e.to_string()))?,
                    ),
                    order: ListOrder::Created,
                    ..MemoryFilter::default()
                }
                .read_at(None, now),
                Page {
                    limit: 1,
                    offset: 0,
                },
            )?
            .into_iter()
            .next(),
    };
    let since = found
        .as_ref()
        .map(|m| m.state.created_at)
        .unwrap_or_else(|| now - jiff::SignedDuration::from_hours(24 * 7));
    let checkpoint = match &found {
        None => None,
        Some(memory) => {
            let value = memory.metadata.get("value").cloned().unwrap_or_default();
            let list = |key: &str| -> Vec<String> {
                value[key]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let linked: Vec<levh_core::MemoryId> = list("memories")
                .iter()
                .filter_map(|id| id.parse().ok())
                .collect();
            Some(CheckpointView {
                memory_id: memory.id.to_string(),
                at: memory.state.created_at.to_string(),
                task: value["task"].as_str().unwrap_or(DEFAULT_TASK).to_owned(),
                goal: value["goal"].as_str().unwrap_or_default().to_owned(),
                done: list("done"),
                next: list("next"),
                questions: list("questions"),
                memories: linked
                    .iter()
                    .filter_map(|id| levh.get(scope, *id).ok())
                    .map(|m| brief(&m))
                    .collect(),
            })
        }
    };
    let recent = |order: ListOrder| -> Result<Vec<levh_core::Memory>> {
        Ok(levh.list(
            scope,
            MemoryFilter {
                project: project.clone(),
                order,
                ..MemoryFilter::default()
            }
            .read_at(None, now),
            Page {
                limit: 50,
                offset: 0,
            },
        )?)
    };
    // Checkpoints and goals are shown as such, not among the memories.
    let not_checkpoint = |m: &&levh_core::Memory| {
        m.kind.as_str() != CHECKPOINT_KIND && m.kind.as_str() != crate::goals::GOAL_KIND
    };
    let stored: Vec<BriefView> = recent(ListOrder::Created)?
        .iter()
        .filter(not_checkpoint)
        .filter(|m| m.state.created_at > since)
        .map(brief)
        .collect();
    let used: Vec<BriefView> = recent(ListOrder::Recalled)?
        .iter()
        .filter(not_checkpoint)
        .filter(|m| m.state.last_recalled_at.is_some_and(|at| at > since))
        .map(brief)
        .collect();
    let knowledge = || KnowledgeArgs {
        project: project.clone(),
        limit: Some(20),
        ..KnowledgeArgs::default()
    };
    let commitments = crate::knowledge::commitments(levh, scope, knowledge())?.commitments;
    let decisions = crate::knowledge::decisions(
        levh,
        scope,
        KnowledgeArgs {
            limit: Some(10),
            ..knowledge()
        },
    )?
    .decisions;
    let goals: Vec<crate::goals::GoalView> = crate::goals::list(
        levh,
        scope,
        crate::goals::GoalListArgs {
            project: project.clone(),
            status: None,
        },
    )?
    .goals
    .into_iter()
    .filter(|g| g.status == "active" || g.status == "blocked")
    .collect();

    // The text, in order, within the budget.
    let tokens = |text: &str| text.chars().count().div_ceil(4);
    let mut text = String::new();
    match &checkpoint {
        Some(c) => {
            text.push_str(&format!(
                "## Checkpoint of {} ({})\nGoal: {}\n",
                c.task, c.at, c.goal
            ));
            for (title, items) in [
                ("Done", &c.done),
                ("Next", &c.next),
                ("Open questions", &c.questions),
            ] {
                if !items.is_empty() {
                    text.push_str(&format!("{title}:\n"));
                    for item in items {
                        text.push_str(&format!("- {item}\n"));
                    }
                }
            }
            for m in &c.memories {
                text.push_str(&format!("Rests on [{}]: {}\n", m.id, m.preview));
            }
        }
        None => text.push_str("## No checkpoint yet: what happened in the last week\n"),
    }
    let mut sections: Vec<(&str, Vec<String>)> = vec![
        (
            "Goals",
            goals
                .iter()
                .map(|g| {
                    let reached = g.milestones.iter().filter(|m| m.reached).count();
                    let next = g
                        .milestones
                        .iter()
                        .find(|m| !m.reached)
                        .map(|m| format!("; next: {}", m.name))
                        .unwrap_or_default();
                    format!(
                        "- {} ({}, {reached}/{} milestones{next})",
                        g.title,
                        g.status,
                        g.milestones.len()
                    )
                })
                .collect(),
        ),
        (
            "Open commitments",
            commitments
                .iter()
                .map(|c| {
                    format!(
                        "- {}{}",
                        c.sentence,
                        c.due
                            .as_ref()
                            .map(|d| format!(" (due {d})"))
                            .unwrap_or_default()
                    )
                })
                .collect(),
        ),
        (
            "Decisions",
            decisions
                .iter()
                .map(|d| format!("- {}", d.sentence))
                .collect(),
        ),
        (
            "Stored since",
            stored
                .iter()
                .map(|m| format!("- [{}] {}", m.id, m.preview))
                .collect(),
        ),
        (
            "Used since",
            used.iter()
                .map(|m| format!("- [{}] {}", m.id, m.preview))
                .collect(),
        ),
    ];
    let mut omitted = 0;
    for (title, lines) in sections.drain(..) {
        if lines.is_empty() {
            continue;
        }
        let heading = format!("## {title}\n");
        if tokens(&text) + tokens(&heading) > max_tokens {
            omitted += lines.len();
            continue;
        }
        text.push_str(&heading);
        for line in lines {
            if tokens(&text) + tokens(&line) + 1 > max_tokens {
                omitted += 1;
                continue;
            }
            text.push_str(&line);
            text.push('\n');
        }
    }
    Ok(ContinueView {
        task: checkpoint.as_ref().map(|c| c.task.clone()).or(args.task),
        checkpoint,
        since: since.to_string(),
        stored_since: stored,
        used_since: used,
        commitments,
        decisions,
        goals,
        tokens: tokens(&text),
        text,
        max_tokens,
        omitted,
    })
}
