//! Goals: what an agent or a person works towards over many sessions, with milestones, a
//! status and a progress log. A goal is a keyed memory of kind `goal` under `goal:TITLE`
//! in its project (so each change replaces it and the one before is kept, superseded);
//! each progress note is a memory of its own (kind `progress`), stored through the gate
//! and linked from the goal's log. Active goals are part of `continue`.

use levh_core::{Kind, Levh, ListOrder, MemoryFilter, Page, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::requests::StoreArgs;
use crate::views::UpsertView;
use crate::{Error, Result};

/// The kind goals are stored as.
pub const GOAL_KIND: &str = "goal";
/// The kind of a goal's progress notes.
pub const PROGRESS_KIND: &str = "progress";
/// A goal's statuses.
pub const STATUSES: [&str; 4] = ["active", "blocked", "done", "dropped"];

/// Arguments of create_goal.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalArgs {
    /// The goal, in words (its name: one goal per title and project).
    pub title: String,
    /// Its milestones, in order.
    #[serde(default)]
    pub milestones: Vec<String>,
    /// The project.
    pub project: Option<String>,
}

/// Arguments of update_goal.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalUpdateArgs {
    /// The goal's title.
    pub goal: String,
    /// The project.
    pub project: Option<String>,
    /// A new status: active, blocked, done or dropped.
    pub status: Option<String>,
    /// Milestones reached (by their text).
    #[serde(default)]
    pub reached: Vec<String>,
    /// Milestones to add.
    #[serde(default)]
    pub add_milestones: Vec<String>,
    /// A progress note: stored as a memory of its own and linked from the goal's log.
    pub note: Option<String>,
}

/// Arguments of list_goals.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalListArgs {
    /// Only this project's.
    pub project: Option<String>,
    /// Only goals with this status (default: every status).
    pub status: Option<String>,
}

/// A goal as it stands.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GoalView {
    /// Its title.
    pub title: String,
    /// active, blocked, done or dropped.
    pub status: String,
    /// Its milestones, in order.
    pub milestones: Vec<MilestoneView>,
    /// Its progress notes, oldest first (memory ids).
    pub log: Vec<String>,
    /// Its project.
    pub project: Option<String>,
    /// The memory holding it now.
    #[serde(default)]
    pub memory_id: String,
    /// When it last changed.
    #[serde(default)]
    pub updated_at: String,
}

/// One milestone.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneView {
    /// What it is.
    pub name: String,
    /// Whether it was reached.
    pub reached: bool,
}

/// Goals.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GoalList {
    /// Most recently changed first.
    pub goals: Vec<GoalView>,
}

/// What a goal change did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GoalChange {
    /// The goal as it stands after the call.
    pub goal: GoalView,
    /// What the write of the goal did (stored, unchanged, held, rejected).
    pub write: UpsertView,
    /// The progress note's memory, when one was given and stored.
    pub note: Option<String>,
}

fn key_of(title: &str) -> String {
    format!("goal:{title}")
}

fn title_of(text: &str) -> Result<String> {
    let title = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() || title.chars().count() > 150 {
        return Err(Error::invalid("invalid title: 1-150 characters"));
    }
    Ok(title)
}

/// The goal's text, as a person (and recall) reads it.
fn render(goal: &GoalView) -> String {
    let mut text = format!("Goal: {} ({})", goal.title, goal.status);
    for m in &goal.milestones {
        text.push_str(&format!(
            "\n[{}] {}",
            if m.reached { "x" } else { " " },
            m.name
        ));
    }
    text
}

fn parse(memory: &levh_core::Memory) -> Option<GoalView> {
    let mut goal: GoalView = serde_json::from_value(memory.metadata.get("value")?.clone()).ok()?;
    goal.memory_id = memory.id.to_string();
    goal.updated_at = memory.state.created_at.to_string();
    goal.project = memory.project.clone();
    Some(goal)
}

fn write(levh: &Levh, scope: &Scope, goal: &GoalView) -> Result<UpsertView> {
    let mut value = serde_json::to_value(goal).map_err(Error::internal)?;
    if let Some(object) = value.as_object_mut() {
        object.remove("memory_id");
        object.remove("updated_at");
        object.remove("project");
    }
    let key = key_of(&goal.title);
    let outcome = levh.upsert(
        scope,
        levh_core::Upsert {
            project: goal.project.clone(),
            key: key.clone(),
            content: render(goal),
            value: Some(value),
            importance: Some(0.7),
            kind: Some(Kind::new(GOAL_KIND).map_err(|e| Error::invalid(e.to_string()))?),
        },
    )?;
    Ok(crate::memories::upserted(levh, key, outcome))
}

fn current(
    levh: &Levh,
    scope: &Scope,
    project: Option<&str>,
    title: &str,
) -> Result<Option<GoalView>> {
    Ok(levh
        .keyed_memory(scope, project, &key_of(title), None)?
        .as_ref()
        .and_then(parse))
}

/// [`Operation::CreateGoal`](crate::Operation::CreateGoal).
pub fn create(levh: &Levh, scope: &Scope, args: GoalArgs) -> Result<GoalChange> {
    let title = title_of(&args.title)?;
    if current(levh, scope, args.project.as_deref(), &title)?.is_some() {
        return Err(Error::invalid(format!(
            "invalid title: a goal '{}' already exists here (update_goal changes it)",
            title.escape_debug()
        )));
    }
    let goal = GoalView {
        title,
        status: "active".into(),
        milestones: args
            .milestones
            .iter()
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
            .map(|name| MilestoneView {
                name: name.to_owned(),
                reached: false,
            })
            .collect(),
        log: Vec::new(),
        project: args.project,
        memory_id: String::new(),
        updated_at: String::new(),
    };
    let written = write(levh, scope, &goal)?;
    finish(levh, scope, &goal, written, None)
}

fn finish(
    levh: &Levh,
    scope: &Scope,
    goal: &GoalView,
    write: UpsertView,
    note: Option<String>,
) -> Result<GoalChange> {
    let now =
        current(levh, scope, goal.project.as_deref(), &goal.title)?.unwrap_or_else(|| goal.clone());
    Ok(GoalChange {
        goal: now,
        write,
        note,
    })
}

/// [`Operation::UpdateGoal`](crate::Operation::UpdateGoal): status, milestones reached or
/// added, and a progress note (a memory of its own, linked from the goal's log).
pub fn update(
    levh: &Levh,
    scope: &Scope,
    args: GoalUpdateArgs,
    source: String,
) -> Result<GoalChange> {
    let title = title_of(&args.goal)?;
    let Some(mut goal) = current(levh, scope, args.project.as_deref(), &title)? else {
        return Err(Error::NotFound(format!(
            "no goal '{}'{} (`create_goal` makes one) (nothing was changed)",
            title.escape_debug(),
            args.project
                .as_deref()
                .map(|p| format!(" in project '{}'", p.escape_debug()))
                .unwrap_or_default()
        )));
    };
    if let Some(status) = args.status.as_deref().map(str::trim) {
        if !STATUSES.contains(&status) {
            return Err(Error::invalid(format!(
                "invalid status: '{}' is not active, blocked, done or dropped",
                status.escape_debug()
            )));
        }
        goal.status = status.to_owned();
    }
    for reached in &args.reached {
        let Some(milestone) = goal
            .milestones
            .iter_mut()
            .find(|m| m.name.eq_ignore_ascii_case(reached.trim()))
        else {
            return Err(Error::invalid(format!(
                "invalid reached: the goal has no milestone '{}'",
                reached.trim().escape_debug()
            )));
        };
        milestone.reached = true;
    }
    for name in args
        .add_milestones
        .iter()
        .map(|m| m.trim())
        .filter(|m| !m.is_empty())
    {
        if !goal
            .milestones
            .iter()
            .any(|m| m.name.eq_ignore_ascii_case(name))
        {
            goal.milestones.push(MilestoneView {
                name: name.to_owned(),
                reached: false,
            });
        }
    }
    let mut note_id = None;
    if let Some(note) = args
        .note
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let stored = crate::memories::store(
            levh,
            scope,
            StoreArgs {
                content: format!("Progress on {}: {note}", goal.title),
                project: goal.project.clone(),
                kind: Some(PROGRESS_KIND.into()),
                importance: None,
                pin: None,
                valid_from: None,
                valid_to: None,
                session_id: None,
                metadata: Some(serde_json::json!({ "goal": goal.title })),
                prior: None,
            },
            source,
        )?;
        match stored.memory_id {
            Some(id) => {
                goal.log.push(id.clone());
                note_id = Some(id);
            }
            None => {
                return Err(Error::invalid(format!(
                    "invalid note: the gate did not store it ({})",
                    stored.reason.as_deref().unwrap_or("held for a person")
                )));
            }
        }
    }
    let written = write(levh, scope, &goal)?;
    finish(levh, scope, &goal, written, note_id)
}

/// [`Operation::ListGoals`](crate::Operation::ListGoals): the current goals, most recently
/// changed first.
pub fn list(levh: &Levh, scope: &Scope, args: GoalListArgs) -> Result<GoalList> {
    if let Some(status) = args.status.as_deref()
        && !STATUSES.contains(&status)
    {
        return Err(Error::invalid(format!(
            "invalid status: '{}' is not active, blocked, done or dropped",
            status.escape_debug()
        )));
    }
    let memories = levh.list(
        scope,
        MemoryFilter {
            project: args.project,
            kind: Some(Kind::new(GOAL_KIND).map_err(|e| Error::invalid(e.to_string()))?),
            order: ListOrder::Created,
            ..MemoryFilter::default()
        }
        .read_at(None, levh.now()),
        Page {
            limit: 200,
            offset: 0,
        },
    )?;
    Ok(GoalList {
        goals: memories
            .iter()
            .filter(|m| m.superseded_by.is_none())
            .filter_map(parse)
            .filter(|g| args.status.as_deref().is_none_or(|s| g.status == s))
            .collect(),
    })
}
