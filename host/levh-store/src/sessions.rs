//! Sessions: an agent conversation (or any run) that groups the memories captured in it.

use levh_core::{Session, SessionId, Timestamp, Workspace};
use rusqlite::{Connection, OptionalExtension, params};

use crate::SqliteStoreError;
use crate::rows::{self, MEMORY_COLUMNS, MEMORY_FROM, micros, read_memory};

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

/// Session `id` as recorded; `None` when there is no such session.
pub(crate) fn get(
    conn: &Connection,
    workspace: &Workspace,
    id: &SessionId,
) -> Result<Option<Session>, SqliteStoreError> {
    Ok(conn
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
                    started_at: rows::from_micros(row.get(2)?),
                    ended_at: at(row.get(3)?),
                })
            },
        )
        .optional()?)
}

/// The live memories stored in session `id` (recorded since it started), oldest first, at
/// most `limit`: read through the workspace's record-time index from the session's start.
pub(crate) fn memories(
    conn: &Connection,
    workspace: &Workspace,
    session: &Session,
    limit: usize,
) -> Result<Vec<levh_core::Memory>, SqliteStoreError> {
    let mut statement = conn.prepare(&format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM}
          WHERE m.workspace = ?1 AND m.created_at >= ?2 AND m.session_id = ?3
            AND m.forgotten_at IS NULL
          ORDER BY m.created_at, m.seq LIMIT ?4"
    ))?;
    let rows = statement
        .query_map(
            params![
                workspace.as_str(),
                micros(session.started_at),
                session.id.as_str(),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            read_memory,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
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
    get(tx, workspace, id)
}

/// The workspace's sessions newest first, each with how many live memories it stored:
/// at most `limit`, those started before `before` when given (the next page).
pub(crate) fn list(
    conn: &Connection,
    workspace: &Workspace,
    before: Option<Timestamp>,
    limit: usize,
) -> Result<Vec<levh_core::SessionListing>, SqliteStoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT s.id, s.project, s.client, s.started_at, s.ended_at,
                (SELECT count(*) FROM memories m
                  WHERE m.session_id = s.id AND m.workspace = s.workspace
                    AND m.forgotten_at IS NULL)
           FROM sessions s
          WHERE s.workspace = ?1 AND s.started_at < ?2
          ORDER BY s.started_at DESC, s.id DESC LIMIT ?3",
    )?;
    let rows = statement
        .query_map(
            params![
                workspace.as_str(),
                before.map_or(i64::MAX, micros),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |row| {
                let id: String = row.get(0)?;
                let at = |value: Option<i64>| value.map(rows::from_micros);
                Ok((
                    id,
                    row.get::<_, Option<String>>(1)?,
                    row.get::<_, Option<String>>(2)?,
                    rows::from_micros(row.get(3)?),
                    at(row.get(4)?),
                    row.get::<_, i64>(5)?,
                ))
            },
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .map(
            |(id, project, client, started_at, ended_at, memories)| levh_core::SessionListing {
                session: Session {
                    id: SessionId::new(id),
                    workspace: workspace.clone(),
                    project,
                    client,
                    started_at,
                    ended_at,
                },
                memories: memories.max(0) as u64,
            },
        )
        .collect())
}
