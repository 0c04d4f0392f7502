//! Reading the event log back, for the live feed: every process on the store appends
//! to `events`, and a `levh serve` process tails it by sequence number.

use levh_core::{LoggedEvent, Principal, ServerStore, StoreError, Timestamp, Workspace};
use rusqlite::params;

use crate::{SqliteStore, SqliteStoreError};

impl SqliteStore {
    /// The newest sequence number in the log (0 when empty).
    pub fn last_event_seq(&self) -> Result<i64, SqliteStoreError> {
        Ok(self
            .read()
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |row| {
                row.get(0)
            })?)
    }

    /// Schema version and journal mode: a liveness check that reads no table (the full
    /// [`Store::health`](levh_core::Store::health) walks the FTS index and counts rows).
    pub fn liveness(&self) -> Result<(i64, String), SqliteStoreError> {
        let connection = self.read();
        let version = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
        let mode = connection.pragma_query_value(None, "journal_mode", |row| row.get(0))?;
        Ok((version, mode))
    }

    /// Events after `seq`, oldest first, at most `limit`.
    pub fn events_after(
        &self,
        seq: i64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, SqliteStoreError> {
        let connection = self.read();
        let mut statement = connection.prepare_cached(
            "SELECT seq, at, kind, workspace, memory_id, surface, client, role
             FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = statement.query_map(params![seq, limit as i64], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, Option<String>>(4)?,
                row.get::<_, String>(5)?,
                row.get::<_, Option<String>>(6)?,
                row.get::<_, String>(7)?,
            ))
        })?;
        let mut events = Vec::new();
        for row in rows {
            let (seq, at, kind, workspace, memory_id, surface, client, role) = row?;
            let corrupt = |what: &str| SqliteStoreError::Corrupt(format!("event {seq}: {what}"));
            events.push(LoggedEvent {
                seq,
                at: Timestamp::from_microsecond(at).map_err(|_| corrupt("time"))?,
                kind,
                workspace: Workspace::new(&workspace).map_err(|_| corrupt("workspace"))?,
                memory_id: memory_id
                    .map(|id| id.parse().map_err(|_| corrupt("memory id")))
                    .transpose()?,
                surface,
                client,
                role,
            });
        }
        Ok(events)
    }
}

impl ServerStore for SqliteStore {
    fn principal_for_token(&self, secret: &str) -> Result<Option<Principal>, StoreError> {
        Ok(self.verify_token(secret)?.map(|token| Principal {
            workspace: token.workspace,
            role: token.role,
            name: Some(token.id),
        }))
    }

    fn liveness(&self) -> Result<(i64, String), StoreError> {
        Ok(SqliteStore::liveness(self)?)
    }

    fn last_event_seq(&self) -> Result<i64, StoreError> {
        Ok(SqliteStore::last_event_seq(self)?)
    }

    fn events_after(&self, seq: i64, limit: usize) -> Result<Vec<LoggedEvent>, StoreError> {
        Ok(SqliteStore::events_after(self, seq, limit)?)
    }
}
