//! Who used the memory: each surface and client (an agent's MCP client name, `cli`, the
//! dashboard, a connector) with what it wrote, recalled and changed, and when — read from
//! the append-only event log, which holds ids and kinds, never content (nor queries,
//! unless the operator opted in: see [`crate::reports`]).

use std::collections::BTreeMap;

use levh_core::{Levh, Scope, ServerStore};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The newest events a listing reads at most: its cost is bounded however long the log
/// grows (about 30 ms at this size on two cores); older ones are said to be left out.
pub const SCAN_AT_MOST: usize = 200_000;

/// Which days to cover.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsArgs {
    /// The last this many days (1..366, default 30).
    pub days: Option<u32>,
}

/// Who used the memory, most recently active first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentsView {
    /// The start of the time covered (RFC 3339).
    pub since: String,
    /// Whether older events of that time were left unread (more than the newest 200,000
    /// events of the log fell in it).
    pub cut_short: bool,
    /// One entry per surface and client.
    pub agents: Vec<AgentView>,
}

/// One surface and client.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentView {
    /// `mcp`, `http`, `cli`, `dashboard`, `sync`.
    pub surface: String,
    /// The client: an MCP client's name, a connector, the `X-LEVH-Client` header.
    pub client: Option<String>,
    /// Memories it stored or rewrote.
    pub wrote: u64,
    /// Memories its recalls returned (each reinforced).
    pub recalled: u64,
    /// Every other change it made (pins, forgets, reviews, held decisions, ...).
    pub changed: u64,
    /// Every kind of event with its count.
    pub kinds: BTreeMap<String, u64>,
    /// Its first event in the time covered.
    pub first_at: String,
    /// Its last.
    pub last_at: String,
}

/// [`Operation::ListAgents`](crate::Operation::ListAgents).
pub fn list(
    levh: &Levh,
    store: &dyn ServerStore,
    scope: &Scope,
    args: AgentsArgs,
) -> Result<AgentsView> {
    let days = args.days.unwrap_or(30);
    if !(1..=366).contains(&days) {
        return Err(Error::invalid(format!(
            "invalid days: {days} is outside 1..366"
        )));
    }
    let since = levh.now() - jiff::SignedDuration::from_hours(24 * i64::from(days));
    let activity = store
        .activity(&scope.workspace, since, SCAN_AT_MOST)
        .map_err(Error::internal)?;
    // Times kept as instants until the end: their text (RFC 3339 with as many fraction
    // digits as needed) does not order as they do.
    type Span = (levh_core::Timestamp, levh_core::Timestamp);
    let mut agents: BTreeMap<(String, Option<String>), (AgentView, Span)> = BTreeMap::new();
    for row in activity.rows {
        let (agent, span) = agents
            .entry((row.surface.clone(), row.client.clone()))
            .or_insert_with(|| {
                let view = AgentView {
                    surface: row.surface.clone(),
                    client: row.client.clone(),
                    wrote: 0,
                    recalled: 0,
                    changed: 0,
                    kinds: BTreeMap::new(),
                    first_at: String::new(),
                    last_at: String::new(),
                };
                (view, (row.first, row.last))
            });
        match row.kind.as_str() {
            "store" | "update" => agent.wrote += row.count,
            "recall-reinforce" => agent.recalled += row.count,
            // Questions asked and sessions opened change nothing: counted among the kinds.
            "recall" | "session-start" | "session-end" => {}
            _ => agent.changed += row.count,
        }
        *agent.kinds.entry(row.kind).or_default() += row.count;
        span.0 = span.0.min(row.first);
        span.1 = span.1.max(row.last);
    }
    let mut agents: Vec<(AgentView, Span)> = agents.into_values().collect();
    agents.sort_by_key(|a| std::cmp::Reverse(a.1.1));
    let agents = agents
        .into_iter()
        .map(|(mut agent, (first, last))| {
            agent.first_at = first.to_string();
            agent.last_at = last.to_string();
            agent
        })
        .collect();
    Ok(AgentsView {
        since: since.to_string(),
        cut_short: activity.cut_short,
        agents,
    })
}
