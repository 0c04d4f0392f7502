//! Sessions: an agent conversation (or any run) that groups the memories captured in it.

use levh_core::{Session, SessionId, Timestamp, Workspace};
use rusqlite::{Connection, OptionalExtension, params};

use crate::SqliteStoreError;
use crate::rows::{self, micros};

pub(crate) fn start(tx: &Connection, session: &Session) -> Result<(), SqliteStoreError> {
    tx.execute(
        "INSERT INTO sessions (id, workspace, project, client, started_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            session.id.as_str(),
            session.workspace.as_str(),
            session.project,
            session.client,
            micros(session.started_at),
        ],
    )?;
    Ok(())
}

pub(crate) fn exists(
    conn: &Connection,
    workspace: &Workspace,
    id: &SessionId,
) -> Result<bool, SqliteStoreError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sessions WHERE workspace = ?1 AND id = ?2",
            params![workspace.as_str(), id.as_str()],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Ends session `id` at `now` unless it has ended already (the first end stands), and
/// reads it back; `None` when there is no such session.
pub(crate) fn end(
    tx: &Connection,
    workspace: &Workspace,
    id: &SessionId,
    now: Timestamp,
) -> Result<Option<Session>, SqliteStoreError> {
    tx.execute(
        "UPDATE sessions SET ended_at = ?3
         WHERE workspace = ?1 AND id = ?2 AND ended_at IS NULL",
        params![workspace.as_str(), id.as_str(), micros(now)],
    )?;
    Ok(tx
        .query_row(
            "SELECT project, client, started_at, ended_at FROM sessions
             WHERE workspace = ?1 AND id = ?2",
            params![workspace.as_str(), id.as_str()],
            |row| {
                let at = |value: Option<i64>| value.map(rows::from_micros);
                Ok(Session {
                    id: id.clone(),
                    workspace: workspace.clone(),
                    project: row.get(0)?,
                    client: row.get(1)?,
                    started_at: at(row.get(2)?).unwrap_or(now),
                    ended_at: at(row.get(3)?),
                })
            },
        )
        .optional()?)
}
