//! Sessions: an agent conversation (or any run) that groups the memories captured in it.

use crate::connection::Db;
use levh_core::{Memory, Session, SessionId, SessionListing, Timestamp, Workspace};

use crate::query::limit;
use crate::rows::{
    MEMORY_COLUMNS, MEMORY_FROM, column, from_micros, micros, optional_time, read_memory,
};
use crate::{PostgresStore, PostgresStoreError};

/// Session `id` as recorded; `None` when there is no such session.
fn get(
    conn: &mut impl Db,
    workspace: &Workspace,
    id: &SessionId,
) -> Result<Option<Session>, PostgresStoreError> {
    conn.query_opt(
        "SELECT project, client, started_at, ended_at FROM sessions WHERE workspace = $1 AND id = $2",
        &[&workspace.as_str(), &id.as_str()],
    )?
    .map(|row| {
        Ok(Session {
            id: id.clone(),
            workspace: workspace.clone(),
            project: column(&row, 0)?,
            client: column(&row, 1)?,
            started_at: from_micros(column(&row, 2)?),
            ended_at: optional_time(column(&row, 3)?),
        })
    })
    .transpose()
}

impl PostgresStore {
    pub(crate) fn start_session_row(&self, session: &Session) -> Result<(), PostgresStoreError> {
        self.connection()?.execute(
            "INSERT INTO sessions (id, workspace, project, client, started_at) VALUES ($1, $2, $3, $4, $5)",
            &[
                &session.id.as_str(),
                &session.workspace.as_str(),
                &session.project,
                &session.client,
                &micros(session.started_at),
            ],
        )?;
        Ok(())
    }

    pub(crate) fn session_row(
        &self,
        workspace: &Workspace,
        id: &SessionId,
    ) -> Result<Option<Session>, PostgresStoreError> {
        get(&mut *self.connection()?, workspace, id)
    }

    /// Ends session `id` at `now` unless it has ended already (the first end stands), and
    /// reads it back.
    pub(crate) fn end_session_row(
        &self,
        workspace: &Workspace,
        id: &SessionId,
        now: Timestamp,
    ) -> Result<Option<Session>, PostgresStoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE sessions SET ended_at = $3 WHERE workspace = $1 AND id = $2 AND ended_at IS NULL",
                &[&workspace.as_str(), &id.as_str(), &micros(now)],
            )?;
            get(tx, workspace, id)
        })
    }

    /// The live memories stored in the session (recorded since it started), oldest first.
    pub(crate) fn memories_of_session(
        &self,
        workspace: &Workspace,
        session: &Session,
        count: usize,
    ) -> Result<Vec<Memory>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!(
                "SELECT {MEMORY_COLUMNS} {MEMORY_FROM}
                  WHERE m.workspace = $1 AND m.created_at >= $2 AND m.session_id = $3
                    AND m.forgotten_at IS NULL
                  ORDER BY m.created_at, m.seq LIMIT $4"
            ),
            &[
                &workspace.as_str(),
                &micros(session.started_at),
                &session.id.as_str(),
                &limit(count),
            ],
        )?;
        rows.iter().map(read_memory).collect()
    }

    /// The workspace's sessions newest first, each with how many live memories it stored.
    pub(crate) fn session_listings(
        &self,
        workspace: &Workspace,
        before: Option<Timestamp>,
        count: usize,
    ) -> Result<Vec<SessionListing>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT s.id, s.project, s.client, s.started_at, s.ended_at,
                    (SELECT count(*) FROM memories m
                      WHERE m.session_id = s.id AND m.workspace = s.workspace
                        AND m.forgotten_at IS NULL)
               FROM sessions s
              WHERE s.workspace = $1 AND s.started_at < $2
              ORDER BY s.started_at DESC, s.id COLLATE \"C\" DESC LIMIT $3",
            &[
                &workspace.as_str(),
                &before.map_or(i64::MAX, micros),
                &limit(count),
            ],
        )?;
        rows.iter()
            .map(|row| {
                let memories: i64 = column(row, 5)?;
                Ok(SessionListing {
                    session: Session {
                        id: SessionId::new(column::<String>(row, 0)?),
                        workspace: workspace.clone(),
                        project: column(row, 1)?,
                        client: column(row, 2)?,
                        started_at: from_micros(column(row, 3)?),
                        ended_at: optional_time(column(row, 4)?),
                    },
                    memories: memories.max(0) as u64,
                })
            })
            .collect()
    }
}
