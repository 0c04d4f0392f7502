//! Presence: the MCP sessions connected to the store, from every process on every machine.

use crate::connection::Db;
use levh_core::{Presence, Timestamp, Workspace};

use crate::rows::{column, from_micros, micros, optional_time};
use crate::{PostgresStore, PostgresStoreError};

/// A session not heard from for this long is dropped, ended or not, when a new session
/// begins: a killed process never says it ended.
const UNHEARD_MICROS: i64 = 7 * 24 * 3_600 * 1_000_000;

impl PostgresStore {
    /// Records a session's beginning or latest activity (an upsert by id).
    pub(crate) fn touch(&self, p: &Presence) -> Result<(), PostgresStoreError> {
        self.write(|tx| {
            let fresh: bool = tx
                .query_one(
                    "INSERT INTO presence (id, workspace, transport, client, principal, project, pid,
                                           host, started_at, last_seen_at, calls)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                     ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at,
                         project = coalesce(excluded.project, presence.project),
                         calls = excluded.calls,
                         client = coalesce(excluded.client, presence.client)
                     RETURNING last_seen_at = started_at",
                    &[
                        &p.id,
                        &p.workspace.as_str(),
                        &p.transport,
                        &p.client,
                        &p.principal,
                        &p.project,
                        &i64::from(p.pid),
                        &p.host,
                        &micros(p.started_at),
                        &micros(p.last_seen_at),
                        &i64::try_from(p.calls).unwrap_or(i64::MAX),
                    ],
                )?
                .get(0);
            if fresh {
                tx.execute(
                    "DELETE FROM presence WHERE last_seen_at < $1",
                    &[&(micros(p.started_at) - UNHEARD_MICROS)],
                )?;
            }
            Ok(())
        })
    }

    pub(crate) fn end(&self, id: &str, at: Timestamp) -> Result<(), PostgresStoreError> {
        self.connection()?.execute(
            "UPDATE presence SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL",
            &[&id, &micros(at)],
        )?;
        Ok(())
    }

    pub(crate) fn present(
        &self,
        workspace: &Workspace,
        ended_after: Timestamp,
    ) -> Result<Vec<Presence>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT id, workspace, transport, client, principal, project, pid, host, started_at,
                    last_seen_at, ended_at, calls
               FROM presence
              WHERE workspace = $1 AND (ended_at IS NULL OR ended_at > $2)
              ORDER BY last_seen_at DESC LIMIT 500",
            &[&workspace.as_str(), &micros(ended_after)],
        )?;
        rows.iter()
            .map(|row| {
                let id: String = column(row, 0)?;
                let space: &str = column(row, 1)?;
                let pid: i64 = column(row, 6)?;
                let calls: i64 = column(row, 11)?;
                Ok(Presence {
                    workspace: Workspace::new(space).map_err(|_| {
                        PostgresStoreError::Corrupt(format!("presence {id}: workspace"))
                    })?,
                    id,
                    transport: column(row, 2)?,
                    client: column(row, 3)?,
                    principal: column(row, 4)?,
                    project: column(row, 5)?,
                    pid: u32::try_from(pid).unwrap_or(0),
                    host: column(row, 7)?,
                    started_at: from_micros(column(row, 8)?),
                    last_seen_at: from_micros(column(row, 9)?),
                    ended_at: optional_time(column(row, 10)?),
                    calls: u64::try_from(calls).unwrap_or(0),
                })
            })
            .collect()
    }
}
