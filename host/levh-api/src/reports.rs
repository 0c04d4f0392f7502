//! Reports from the append-only event log: what agents asked and what they did with the
//! answers (`levh report recalls`), what each token and client stored and recalled per day
//! (`levh report usage`), and which MCP sessions are connected now (presence).
//!
//! Each recall, search and ask logs one `recall` event with the ids it returned, their
//! tokens and bytes — never the query unless the operator set `LEVH_LOG_QUERIES` (then its
//! text, secrets redacted). A returned memory counts as *used* when it is later marked
//! helpful, reinforced or pinned, and as *unhelpful* when marked so; each such event is
//! credited to the latest recall that returned that memory.

use std::collections::{BTreeMap, HashMap};

use levh_core::{EventKind, Levh, Presence, Principal, Scope, ServerStore, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The newest events a report reads at most, whatever the log's length (as the Agents
/// listing); a report says when that left older events of its time out.
pub const SCAN_AT_MOST: usize = crate::agents::SCAN_AT_MOST;

/// How far back a report looks when no `since` is given.
const DEFAULT_DAYS: i64 = 7;

/// Which events a report covers.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportArgs {
    /// From this time (RFC 3339, or a date); default 7 days ago.
    pub since: Option<String>,
    /// Only what this token did: its id, as `levh token list` shows it (`local` for the
    /// person at this machine, `operator` for LEVH_TOKEN's holder).
    pub token: Option<String>,
    /// Only what this client did (an MCP client's name, `X-LEVH-Client`, ...).
    pub client: Option<String>,
    /// The recall report only: recalls listed at most, newest first (1..1000, default
    /// 100); the totals count all.
    pub limit: Option<usize>,
}

/// What agents asked and what they did with the answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecallReportView {
    /// The start of the time covered (RFC 3339).
    pub since: String,
    /// Whether older events of that time were left unread (the scan's bound).
    pub cut_short: bool,
    /// Whether query text is being logged (`LEVH_LOG_QUERIES`); without it, `query` is
    /// absent and only its length in words is known.
    pub queries_logged: bool,
    /// Counts over every recall of the time covered.
    pub totals: RecallTotals,
    /// The recalls, newest first (at most `limit`).
    pub recalls: Vec<RecallEntry>,
    /// The recalls that found nothing, newest first (at most `limit`).
    pub found_nothing: Vec<RecallEntry>,
}

/// Counts of a recall report.
#[derive(Debug, Default, Serialize, JsonSchema, PartialEq, Eq)]
pub struct RecallTotals {
    /// Recalls, searches and asks.
    pub recalls: u64,
    /// Of them, those that returned nothing.
    pub found_nothing: u64,
    /// Memories returned, counted once per recall that returned them.
    pub returned: u64,
    /// Returned memories then marked helpful, reinforced or pinned.
    pub used: u64,
    /// Returned memories then marked unhelpful.
    pub unhelpful: u64,
    /// Tokens of context returned.
    pub tokens: u64,
}

/// One recall.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecallEntry {
    /// When (RFC 3339).
    pub at: String,
    /// `recall`, `search` or `ask`.
    pub operation: String,
    /// `mcp`, `http`, `cli`, `dashboard`.
    pub surface: String,
    /// The client, when known.
    pub client: Option<String>,
    /// The token behind it, when it came with one.
    pub token: Option<String>,
    /// The project it was scoped to.
    pub project: Option<String>,
    /// The query, when query logging is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The query's length in words.
    pub words: u64,
    /// Ids returned, in rank order.
    pub returned: Vec<String>,
    /// Tokens of context returned.
    pub tokens: u64,
    /// Of the returned ids, those then marked helpful, reinforced or pinned.
    pub used: Vec<String>,
    /// Of the returned ids, those then marked unhelpful.
    pub unhelpful: Vec<String>,
}

/// [`Operation::ReportRecalls`](crate::Operation::ReportRecalls).
pub fn recalls(
    levh: &Levh,
    store: &dyn ServerStore,
    scope: &Scope,
    args: ReportArgs,
) -> Result<RecallReportView> {
    let limit = crate::requests::limit(args.limit, 100)?;
    let since = since(levh, args.since.as_deref())?;
    check_token(store, scope, args.token.as_deref())?;
    let levh_core::KindsRead { events, cut_short } = store
        .events_of_kinds(
            &scope.workspace,
            since,
            &[
                EventKind::Recall,
                EventKind::Feedback,
                EventKind::Reinforce,
                EventKind::Pin,
            ],
            SCAN_AT_MOST,
        )
        .map_err(Error::internal)?;
    let mut entries: Vec<RecallEntry> = Vec::new();
    // The latest recall (its index in `entries`) that returned each memory.
    let mut latest: HashMap<String, usize> = HashMap::new();
    for (event, principal) in events {
        if event.kind == EventKind::Recall.as_str() {
            if !matches(&args, principal.as_deref(), event.client.as_deref()) {
                continue;
            }
            let detail = &event.detail;
            let text = |key: &str| detail[key].as_str().map(str::to_owned);
            let returned: Vec<String> = detail["returned"]
                .as_array()
                .map(|ids| {
                    ids.iter()
                        .filter_map(|id| id.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            for id in &returned {
                latest.insert(id.clone(), entries.len());
            }
            entries.push(RecallEntry {
                at: event.at.to_string(),
                operation: text("operation").unwrap_or_else(|| "recall".into()),
                surface: event.surface,
                client: event.client,
                token: principal,
                project: text("project"),
                query: text("query"),
                words: detail["words"].as_u64().unwrap_or(0),
                returned,
                tokens: detail["tokens"].as_u64().unwrap_or(0),
                used: Vec::new(),
                unhelpful: Vec::new(),
            });
            continue;
        }
        let Some(id) = event.memory_id.map(|id| id.to_string()) else {
            continue;
        };
        let Some(&index) = latest.get(&id) else {
            continue;
        };
        let entry = &mut entries[index];
        let helpful = event.detail["helpful"].as_bool();
        let list = if event.kind == EventKind::Feedback.as_str() && helpful == Some(false) {
            &mut entry.unhelpful
        } else {
            &mut entry.used
        };
        if !list.contains(&id) {
            list.push(id);
        }
    }
    let mut totals = RecallTotals::default();
    for entry in &entries {
        totals.recalls += 1;
        totals.found_nothing += u64::from(entry.returned.is_empty());
        totals.returned += entry.returned.len() as u64;
        totals.used += entry.used.len() as u64;
        totals.unhelpful += entry.unhelpful.len() as u64;
        totals.tokens += entry.tokens;
    }
    entries.reverse();
    let found_nothing: Vec<RecallEntry> = entries
        .iter()
        .filter(|e| e.returned.is_empty())
        .take(limit)
        .cloned()
        .collect();
    entries.truncate(limit);
    Ok(RecallReportView {
        since: since.to_string(),
        cut_short,
        queries_logged: levh.config().recall.log_queries,
        totals,
        recalls: entries,
        found_nothing,
    })
}

/// What each token and client stored and recalled, per day.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageView {
    /// The start of the time covered (RFC 3339).
    pub since: String,
    /// Whether older events of that time were left unread (the scan's bound).
    pub cut_short: bool,
    /// Sums over every row.
    pub totals: UsageCounts,
    /// One row per day (UTC), token, surface and client, oldest first.
    pub days: Vec<UsageDay>,
}

/// One day of one token and client.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageDay {
    /// The day, UTC (`YYYY-MM-DD`).
    pub day: String,
    /// The token (its id; `local` for the person at this machine); absent for MCP over
    /// stdio.
    pub token: Option<String>,
    /// `mcp`, `http`, `cli`, `dashboard`, `sync`.
    pub surface: String,
    /// The client, when known.
    pub client: Option<String>,
    /// What it did that day.
    #[serde(flatten)]
    pub counts: UsageCounts,
}

/// What was stored and recalled.
#[derive(Debug, Default, Serialize, JsonSchema, PartialEq, Eq, Clone, Copy)]
pub struct UsageCounts {
    /// Memories stored.
    pub stored: u64,
    /// Bytes of content stored.
    pub stored_bytes: u64,
    /// Memories rewritten in place.
    pub updated: u64,
    /// Recalls, searches and asks.
    pub recalls: u64,
    /// Memories the recalls returned.
    pub returned: u64,
    /// Tokens of context the recalls returned.
    pub returned_tokens: u64,
    /// Bytes of content the recalls returned.
    pub returned_bytes: u64,
}

impl UsageCounts {
    fn add(&mut self, other: &Self) {
        self.stored += other.stored;
        self.stored_bytes += other.stored_bytes;
        self.updated += other.updated;
        self.recalls += other.recalls;
        self.returned += other.returned;
        self.returned_tokens += other.returned_tokens;
        self.returned_bytes += other.returned_bytes;
    }
}

/// [`Operation::ReportUsage`](crate::Operation::ReportUsage).
pub fn usage(
    levh: &Levh,
    store: &dyn ServerStore,
    scope: &Scope,
    args: ReportArgs,
) -> Result<UsageView> {
    if args.limit.is_some() {
        return Err(Error::invalid(
            "invalid limit: the usage report has one row per day, token and client, all of them; `limit` is the recall report's",
        ));
    }
    let since = since(levh, args.since.as_deref())?;
    check_token(store, scope, args.token.as_deref())?;
    let usage = store
        .usage(&scope.workspace, since, SCAN_AT_MOST)
        .map_err(Error::internal)?;
    type Key = (String, Option<String>, String, Option<String>);
    let mut days: BTreeMap<Key, UsageCounts> = BTreeMap::new();
    for row in usage.rows {
        if !matches(&args, row.principal.as_deref(), row.client.as_deref()) {
            continue;
        }
        let counts = days
            .entry((row.day, row.principal, row.surface, row.client))
            .or_default();
        match row.kind.as_str() {
            "store" => {
                counts.stored += row.count;
                counts.stored_bytes += row.bytes;
            }
            "update" => counts.updated += row.count,
            "recall" => {
                counts.recalls += row.count;
                counts.returned += row.returned;
                counts.returned_tokens += row.tokens;
                counts.returned_bytes += row.bytes;
            }
            _ => {}
        }
    }
    let mut totals = UsageCounts::default();
    let days = days
        .into_iter()
        .map(|((day, token, surface, client), counts)| {
            totals.add(&counts);
            UsageDay {
                day,
                token,
                surface,
                client,
                counts,
            }
        })
        .collect();
    Ok(UsageView {
        since: since.to_string(),
        cut_short: usage.cut_short,
        totals,
        days,
    })
}

/// The MCP sessions connected now, and those ended in the last day.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PresenceView {
    /// Sessions connected now.
    pub connected: u64,
    /// Connected first, most recently active first.
    pub sessions: Vec<SessionPresenceView>,
}

/// One MCP session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionPresenceView {
    /// levh's id for it.
    pub id: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The name its client gave.
    pub client: Option<String>,
    /// The token behind it (HTTP).
    pub token: Option<String>,
    /// The project of its latest call that named one.
    pub project: Option<String>,
    /// Whether it is connected now: not ended, and its process is alive.
    pub connected: bool,
    /// When it began (RFC 3339).
    pub started_at: String,
    /// Its latest call (RFC 3339; calls within a few seconds of the last are counted, not
    /// timed).
    pub last_seen_at: String,
    /// When it ended, if it did (for a process that is gone: its last activity).
    pub ended_at: Option<String>,
    /// Tool calls made.
    pub calls: u64,
}

/// [`Operation::ListPresence`](crate::Operation::ListPresence).
pub fn presence(levh: &Levh, store: &dyn ServerStore, scope: &Scope) -> Result<PresenceView> {
    let day_ago = levh.now() - jiff::SignedDuration::from_hours(24);
    let rows = store
        .presences(&scope.workspace, day_ago)
        .map_err(Error::internal)?;
    let here = this_host();
    let mut sessions: Vec<SessionPresenceView> = rows
        .into_iter()
        .filter_map(|p| {
            let gone = p.ended_at.is_none() && !alive(&p, &here, levh.now());
            let ended_at = p.ended_at.or(gone.then_some(p.last_seen_at));
            // A session that died without a word is shown for a day like one that ended.
            if ended_at.is_some_and(|at| at < day_ago) {
                return None;
            }
            Some(SessionPresenceView {
                connected: ended_at.is_none(),
                id: p.id,
                transport: p.transport,
                client: p.client,
                token: p.principal,
                project: p.project,
                started_at: p.started_at.to_string(),
                last_seen_at: p.last_seen_at.to_string(),
                ended_at: ended_at.map(|at| at.to_string()),
                calls: p.calls,
            })
        })
        .collect();
    sessions.sort_by_key(|s| !s.connected);
    Ok(PresenceView {
        connected: sessions.iter().filter(|s| s.connected).count() as u64,
        sessions,
    })
}

/// How long a session on another machine (whose process cannot be looked at) counts as
/// connected after its latest call.
const REMOTE_IDLE: jiff::SignedDuration = jiff::SignedDuration::from_mins(10);

/// Whether a session that never said it ended is still there: its process is alive, when
/// it runs on this machine; otherwise it was active lately.
fn alive(p: &Presence, here: &str, now: Timestamp) -> bool {
    match process_alive(p.pid) {
        Some(alive) if p.host == here => alive,
        _ => now - REMOTE_IDLE < p.last_seen_at,
    }
}

/// Whether process `pid` exists, where the system says (`/proc` on Linux); `None` where
/// it cannot be known.
fn process_alive(pid: u32) -> Option<bool> {
    let proc = std::path::Path::new("/proc");
    proc.join("self")
        .exists()
        .then(|| proc.join(pid.to_string()).exists())
}

/// This machine's name, as presence records it beside a process id.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Whether an event of `principal` and `client` passes the report's filters.
fn matches(args: &ReportArgs, principal: Option<&str>, client: Option<&str>) -> bool {
    args.token.as_deref().is_none_or(|t| principal == Some(t))
        && args.client.as_deref().is_none_or(|c| client == Some(c))
}

/// The report's start: `since` given, or a week ago.
fn since(levh: &Levh, text: Option<&str>) -> Result<Timestamp> {
    Ok(match crate::requests::time("since", text)? {
        Some(at) => at,
        None => levh.now() - jiff::SignedDuration::from_hours(24 * DEFAULT_DAYS),
    })
}

/// A token filter must name one of the workspace's tokens: a typo would report nothing.
fn check_token(store: &dyn ServerStore, scope: &Scope, token: Option<&str>) -> Result<()> {
    let Some(token) = token else { return Ok(()) };
    // The person at this machine (the CLI, the dashboard on loopback) and `LEVH_TOKEN`'s
    // holder are principals without a stored token.
    let host_principals = [Principal::local().name, Principal::operator().name];
    if host_principals.iter().flatten().any(|name| name == token) {
        return Ok(());
    }
    let known = store
        .workspace_tokens(&scope.workspace)
        .map_err(Error::internal)?
        .iter()
        .any(|t| t.id == token);
    if known {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "invalid token: no token '{token}' in workspace {} (`levh token list` shows their ids; `local` is the person at this machine)",
            scope.workspace
        )))
    }
}
