//! Presence: which MCP sessions are connected, from every process on the store. Each
//! session (one `levh mcp stdio` process, or one HTTP session of `levh serve`) writes a
//! row when its client says `initialized` or first calls a tool, moves its last activity
//! and project as it calls tools (at most every [`TOUCH_EVERY`], so a busy agent costs
//! one small write per few seconds, not one per call), and marks itself ended when the
//! session closes. The start and the end are also events in the log, so the live feed
//! announces them. A process killed before it could say so is judged gone by its pid
//! (see `levh_api::reports::presence`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use levh_core::{EventKind, Levh, Presence, Scope, ServerStore};

/// The least time between two writes of one session's activity.
const TOUCH_EVERY: Duration = Duration::from_secs(5);

/// One session's presence; ended when the last clone of its server is dropped.
pub(crate) struct PresenceSlot {
    store: Arc<dyn ServerStore>,
    levh: Levh,
    transport: &'static str,
    state: Mutex<Option<Tracked>>,
}

struct Tracked {
    presence: Presence,
    scope: Scope,
    written: Instant,
}

impl PresenceSlot {
    pub(crate) fn new(store: Arc<dyn ServerStore>, levh: Levh, transport: &'static str) -> Self {
        Self {
            store,
            levh,
            transport,
            state: Mutex::new(None),
        }
    }

    /// Notes activity of the session in `scope`: a tool call (`call`) or the client's
    /// `initialized`, naming `project` when the call did. Writes when the session is new,
    /// its project changed, or [`TOUCH_EVERY`] has passed; the write runs off the async
    /// threads and a failure is logged, never the caller's.
    pub(crate) fn touch(self: &Arc<Self>, scope: &Scope, project: Option<String>, call: bool) {
        let now = self.levh.now();
        let (write, started) = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let started = state.is_none();
            let tracked = state.get_or_insert_with(|| Tracked {
                presence: Presence {
                    id: uuid::Uuid::now_v7().to_string(),
                    workspace: scope.workspace.clone(),
                    transport: self.transport.to_owned(),
                    client: scope.actor.client.clone(),
                    principal: scope.actor.principal.clone(),
                    project: None,
                    pid: std::process::id(),
                    host: levh_api::reports::this_host(),
                    started_at: now,
                    last_seen_at: now,
                    ended_at: None,
                    calls: 0,
                },
                scope: scope.clone(),
                written: Instant::now(),
            });
            let p = &mut tracked.presence;
            p.calls += u64::from(call);
            if p.client.is_none() {
                p.client = scope.actor.client.clone();
            }
            let moved = project.is_some() && project != p.project;
            if project.is_some() {
                p.project = project;
            }
            let due = started || moved || tracked.written.elapsed() >= TOUCH_EVERY;
            if due {
                p.last_seen_at = now;
                tracked.written = Instant::now();
            }
            (due.then(|| (p.clone(), tracked.scope.clone())), started)
        };
        let Some((presence, scope)) = write else {
            return;
        };
        let slot = Arc::clone(self);
        let work = move || {
            if let Err(error) = slot.store.touch_presence(&presence) {
                tracing::warn!(%error, "presence not recorded");
            }
            if started {
                let detail = serde_json::json!({
                    "session": presence.id,
                    "transport": presence.transport,
                    "pid": presence.pid,
                });
                if let Err(error) = slot
                    .levh
                    .log_event(&scope, EventKind::SessionStart, &detail)
                {
                    tracing::warn!(%error, "session start not logged");
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(work)),
            Err(_) => work(),
        }
    }
}

impl Drop for PresenceSlot {
    /// The session closed: its row says so and the log has a `session-end`. Written here,
    /// inline, because a runtime that is shutting down may not run a task spawned now.
    fn drop(&mut self) {
        let Some(tracked) = self.state.get_mut().ok().and_then(Option::take) else {
            return;
        };
        let now = self.levh.now();
        let mut presence = tracked.presence;
        presence.last_seen_at = presence.last_seen_at.max(now);
        let end = || {
            // The last calls counted since the last write, then the end.
            if let Err(error) = self
                .store
                .touch_presence(&presence)
                .and_then(|()| self.store.end_presence(&presence.id, now))
            {
                tracing::warn!(%error, "presence end not recorded");
            }
            let detail = serde_json::json!({
                "session": presence.id,
                "transport": presence.transport,
                "calls": presence.calls,
            });
            if let Err(error) = self
                .levh
                .log_event(&tracked.scope, EventKind::SessionEnd, &detail)
            {
                tracing::warn!(%error, "session end not logged");
            }
        };
        // Dropped on a runtime's thread, the writes run on a thread of their own (and are
        // waited for): PostgreSQL's synchronous client blocks on a runtime of its own,
        // which cannot start inside another (`levh mcp stdio` on PostgreSQL panicked at
        // every session's end).
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|threads| {
                threads.spawn(end);
            });
        } else {
            end();
        }
    }
}
