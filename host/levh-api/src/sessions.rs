//! Sessions: an agent's working session, whose id it passes when storing. A session can
//! be summarised into one memory (on request, or when it ends with `LEVH_AUTO_SUMMARIZE=1`):
//! what it stored, decided and promised ([`crate::summaries::session`]).

use levh_core::{Levh, Scope, SessionId};

use crate::Result;
use crate::requests::SessionListArgs;
use crate::requests::StoreArgs;
use crate::views::{ListedSessionView, SessionList, SessionSummaryView, SessionView};

/// [`Operation::CreateSession`](crate::Operation::CreateSession).
pub fn create(levh: &Levh, scope: &Scope, project: Option<String>) -> Result<SessionView> {
    Ok(SessionView::from(&levh.create_session(scope, project)?))
}

/// [`Operation::ListSessions`](crate::Operation::ListSessions): newest first, each with
/// its live memories counted; `before` pages on from the last session's `started_at`.
pub fn list(levh: &Levh, scope: &Scope, args: SessionListArgs) -> Result<SessionList> {
    let before = crate::requests::time("before", args.before.as_deref())?;
    let sessions = levh.sessions(scope, before, args.limit.unwrap_or(50))?;
    Ok(SessionList {
        sessions: sessions
            .iter()
            .map(|listed| ListedSessionView {
                session: SessionView::from(&listed.session),
                memories: listed.memories,
            })
            .collect(),
    })
}

/// Whether ending a session summarises it: `LEVH_AUTO_SUMMARIZE` (the environment or
/// `auto_summarize` in config.toml, as the engine was configured) is 1, true or yes.
fn auto_summarize(levh: &Levh) -> Result<bool> {
    let setting = levh
        .person()
        .auto_summarize
        .clone()
        .or_else(|| std::env::var("LEVH_AUTO_SUMMARIZE").ok());
    match setting
        .as_deref()
        .map(|v| v.trim().to_lowercase())
        .as_deref()
    {
        None | Some("" | "0" | "false" | "no") => Ok(false),
        Some("1" | "true" | "yes") => Ok(true),
        Some(other) => Err(crate::Error::invalid(format!(
            "invalid LEVH_AUTO_SUMMARIZE: '{}' is not 1/true/yes or 0/false/no",
            other.escape_debug()
        ))),
    }
}

/// [`Operation::EndSession`](crate::Operation::EndSession): ending twice keeps the first
/// end. With `LEVH_AUTO_SUMMARIZE=1` the session is summarised into a memory too.
pub fn end(levh: &Levh, scope: &Scope, id: String) -> Result<SessionView> {
    let summarise = auto_summarize(levh)?;
    let mut view = SessionView::from(&levh.end_session(scope, &SessionId::new(id.clone()))?);
    if summarise {
        view.summary = Some(summarize(levh, scope, id)?);
    }
    Ok(view)
}

/// [`Operation::SummarizeSession`](crate::Operation::SummarizeSession): one summary memory
/// of what the session stored (kind `summary`, in the session's project), through the gate
/// — summarising again with nothing new is rejected as a duplicate of the first.
pub fn summarize(levh: &Levh, scope: &Scope, id: String) -> Result<SessionSummaryView> {
    let (session, memories) = levh.session_memories(
        scope,
        &SessionId::new(id.clone()),
        crate::summaries::SESSION_MEMORIES,
    )?;
    let zone = crate::knowledge::user_time_zone(levh)?;
    let today = levh.now().to_zoned(zone).date();
    let Some(text) = crate::summaries::session(&session, &memories, today) else {
        return Ok(SessionSummaryView {
            session_id: id,
            memories: 0,
            text: None,
            stored: None,
        });
    };
    let ids: Vec<String> = memories.iter().map(|m| m.id.to_string()).collect();
    let stored = crate::memories::store(
        levh,
        scope,
        StoreArgs {
            content: text.clone(),
            project: session.project.clone(),
            kind: Some("summary".into()),
            importance: None,
            pin: None,
            valid_from: None,
            valid_to: None,
            session_id: None,
            metadata: Some(serde_json::json!({"session": {"id": id, "memories": ids}})),
            prior: None,
        },
        "session-summary".into(),
    )?;
    Ok(SessionSummaryView {
        session_id: id,
        memories: memories.len(),
        text: Some(text),
        stored: Some(stored),
    })
}
