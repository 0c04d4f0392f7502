//! The event log: every change appends to `events` ([`log_event`]) in its own
//! transaction, and a `levh serve` process tails it by sequence number for the live feed.

use levh_core::{
    Activity, ActivityRow, Actor, EventKind, IssuedToken, KindsRead, LoggedEvent, MemoryId,
    Presence, Principal, Role, ServerStore, StoreError, Timestamp, TokenInfo, Usage, UsageRow,
    Workspace,
};
use rusqlite::{Connection, params};

use crate::rows::micros;

use crate::{SqliteStore, SqliteStoreError};

impl SqliteStore {
    /// The newest sequence number in the log (0 when empty).
    pub fn last_event_seq(&self) -> Result<i64, SqliteStoreError> {
        self.flush_events()?;
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

    /// Who did what since `since`, from the newest `scan_at_most` events of the log.
    pub fn activity(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Activity, SqliteStoreError> {
        self.flush_events()?;
        let connection = self.read();
        let (from, cut_short) = Self::scan_window(&connection, since, scan_at_most)?;
        let mut statement = connection.prepare_cached(
            "SELECT surface, client, kind, count(*), min(at), max(at) FROM events
              WHERE seq > ?1 AND workspace = ?2 AND at >= ?3
              GROUP BY surface, client, kind",
        )?;
        let rows = statement
            .query_map(params![from, workspace.as_str(), micros(since)], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, Option<String>>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, i64>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let rows = rows
            .into_iter()
            .map(|(surface, client, kind, count, first, last)| ActivityRow {
                surface,
                client,
                kind,
                count: count.max(0) as u64,
                first: crate::rows::from_micros(first),
                last: crate::rows::from_micros(last),
            })
            .collect();
        Ok(Activity { rows, cut_short })
    }

    /// The first sequence number of the newest `scan_at_most` events (a range of the
    /// primary key: the newest rows, however long the log), and whether events older than
    /// it still fall at or after `since` (the bound cut the read short).
    fn scan_window(
        connection: &Connection,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<(i64, bool), SqliteStoreError> {
        let newest: i64 =
            connection.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |row| {
                row.get(0)
            })?;
        let from = newest.saturating_sub(i64::try_from(scan_at_most).unwrap_or(i64::MAX));
        let cut_short = from > 0
            && connection.query_row(
                "SELECT EXISTS (SELECT 1 FROM events WHERE seq = ?1 AND at >= ?2)",
                params![from, micros(since)],
                |row| row.get::<_, bool>(0),
            )?;
        Ok((from, cut_short))
    }

    /// The workspace's events of `kinds` since `since` with their principal, oldest first,
    /// among the newest `scan_at_most` of the log.
    pub fn events_of_kinds(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        kinds: &[EventKind],
        scan_at_most: usize,
    ) -> Result<KindsRead, SqliteStoreError> {
        self.flush_events()?;
        let connection = self.read();
        let (from, cut_short) = Self::scan_window(&connection, since, scan_at_most)?;
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let mut statement = connection.prepare_cached(
            "SELECT seq, at, kind, workspace, memory_id, surface, client, role, detail, principal
               FROM events
              WHERE seq > ?1 AND workspace = ?2 AND at >= ?3
                AND kind IN (SELECT value FROM json_each(?4))
              ORDER BY seq",
        )?;
        let rows = statement.query_map(
            params![
                from,
                workspace.as_str(),
                micros(since),
                serde_json::to_string(&kinds)
                    .map_err(|e| SqliteStoreError::Corrupt(e.to_string()))?
            ],
            |row| Ok((read_row(row)?, row.get::<_, Option<String>>(9)?)),
        )?;
        let events = rows
            .map(|row| {
                let (row, principal) = row?;
                Ok((logged_event(row)?, principal))
            })
            .collect::<Result<Vec<_>, SqliteStoreError>>()?;
        Ok(KindsRead { events, cut_short })
    }

    /// Stored and recalled per day (UTC), token, surface, client and kind since `since`,
    /// among the newest `scan_at_most` events of the log.
    pub fn usage(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Usage, SqliteStoreError> {
        self.flush_events()?;
        let connection = self.read();
        let (from, cut_short) = Self::scan_window(&connection, since, scan_at_most)?;
        let mut statement = connection.prepare_cached(
            "SELECT date(at / 1000000, 'unixepoch'), principal, surface, client, kind, count(*),
                    sum(coalesce(json_extract(detail, '$.tokens'), 0)),
                    sum(coalesce(json_extract(detail, '$.bytes'), 0)),
                    sum(coalesce(json_array_length(detail, '$.returned'), 0))
               FROM events
              WHERE seq > ?1 AND workspace = ?2 AND at >= ?3
                AND kind IN ('store', 'update', 'recall')
              GROUP BY 1, 2, 3, 4, 5
              ORDER BY 1, 2, 3, 4, 5",
        )?;
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        let rows = statement
            .query_map(params![from, workspace.as_str(), micros(since)], |row| {
                Ok(UsageRow {
                    day: row.get(0)?,
                    principal: row.get(1)?,
                    surface: row.get(2)?,
                    client: row.get(3)?,
                    kind: row.get(4)?,
                    count: count(row.get(5)?),
                    tokens: count(row.get(6)?),
                    bytes: count(row.get(7)?),
                    returned: count(row.get(8)?),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Usage { rows, cut_short })
    }

    /// Records a session's beginning or latest activity (an upsert by id).
    pub fn touch_presence(&self, p: &Presence) -> Result<(), SqliteStoreError> {
        self.write(|tx| {
            let fresh = tx.prepare_cached(
                "INSERT INTO presence (id, workspace, transport, client, principal, project, pid,
                                       host, started_at, last_seen_at, calls)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at,
                     project = coalesce(excluded.project, project), calls = excluded.calls,
                     client = coalesce(excluded.client, client)
                 RETURNING last_seen_at = started_at",
            )?
            .query_row(
                params![
                    p.id,
                    p.workspace.as_str(),
                    p.transport,
                    p.client,
                    p.principal,
                    p.project,
                    p.pid,
                    p.host,
                    micros(p.started_at),
                    micros(p.last_seen_at),
                    i64::try_from(p.calls).unwrap_or(i64::MAX),
                ],
                |row| row.get::<_, bool>(0),
            )?;
            if fresh {
                // A session not heard from for a week is dropped, ended or not: a process
                // killed never says it ended, and its row would stay forever. One still
                // alive writes its row again at its next call.
                let week_ago = micros(p.started_at) - 7 * 24 * 3_600 * 1_000_000;
                tx.prepare_cached("DELETE FROM presence WHERE last_seen_at < ?1")?
                    .execute(params![week_ago])?;
            }
            Ok(())
        })
    }

    /// Marks a session ended.
    pub fn end_presence(&self, id: &str, at: Timestamp) -> Result<(), SqliteStoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "UPDATE presence SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
            )?
            .execute(params![id, micros(at)])?;
            Ok(())
        })
    }

    /// The workspace's sessions not ended or ended after `ended_after`, latest first.
    pub fn presences(
        &self,
        workspace: &Workspace,
        ended_after: Timestamp,
    ) -> Result<Vec<Presence>, SqliteStoreError> {
        let connection = self.read();
        let mut statement = connection.prepare_cached(
            "SELECT id, workspace, transport, client, principal, project, pid, host, started_at,
                    last_seen_at, ended_at, calls
               FROM presence
              WHERE workspace = ?1 AND (ended_at IS NULL OR ended_at > ?2)
              ORDER BY last_seen_at DESC LIMIT 500",
        )?;
        let rows = statement
            .query_map(params![workspace.as_str(), micros(ended_after)], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, Option<String>>(5)?,
                    row.get::<_, i64>(6)?,
                    row.get::<_, String>(7)?,
                    row.get::<_, i64>(8)?,
                    row.get::<_, i64>(9)?,
                    row.get::<_, Option<i64>>(10)?,
                    row.get::<_, i64>(11)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(
                |(
                    id,
                    space,
                    transport,
                    client,
                    principal,
                    project,
                    pid,
                    host,
                    started,
                    seen,
                    ended,
                    calls,
                )| {
                    Ok(Presence {
                        workspace: Workspace::new(&space).map_err(|_| {
                            SqliteStoreError::Corrupt(format!("presence {id}: workspace"))
                        })?,
                        id,
                        transport,
                        client,
                        principal,
                        project,
                        pid: u32::try_from(pid).unwrap_or(0),
                        host,
                        started_at: crate::rows::from_micros(started),
                        last_seen_at: crate::rows::from_micros(seen),
                        ended_at: ended.map(crate::rows::from_micros),
                        calls: u64::try_from(calls).unwrap_or(0),
                    })
                },
            )
            .collect()
    }

    /// Events after `seq`, oldest first, at most `limit`.
    pub fn events_after(
        &self,
        seq: i64,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, SqliteStoreError> {
        self.flush_events()?;
        let connection = self.read();
        let mut statement =
            connection.prepare_cached(&format!("{SELECT} WHERE seq > ?1 ORDER BY seq LIMIT ?2"))?;
        let rows = statement.query_map(params![seq, limit as i64], read_row)?;
        rows.map(|row| logged_event(row?)).collect()
    }

    /// The newest `limit` events of one memory of the workspace, newest first (by the
    /// `events_by_memory` index).
    pub fn memory_events(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, SqliteStoreError> {
        self.flush_events()?;
        let connection = self.read();
        let mut statement = connection.prepare_cached(&format!(
            "{SELECT} WHERE memory_id = ?1 AND workspace = ?2 ORDER BY seq DESC LIMIT ?3"
        ))?;
        let rows = statement.query_map(
            params![id.to_string(), workspace.as_str(), limit as i64],
            read_row,
        )?;
        rows.map(|row| logged_event(row?)).collect()
    }
}

const SELECT: &str =
    "SELECT seq, at, kind, workspace, memory_id, surface, client, role, detail FROM events";

type Row = (
    i64,
    i64,
    String,
    String,
    Option<String>,
    String,
    Option<String>,
    String,
    String,
);

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ))
}

fn logged_event(
    (seq, at, kind, workspace, memory_id, surface, client, role, detail): Row,
) -> Result<LoggedEvent, SqliteStoreError> {
    let corrupt = |what: &str| SqliteStoreError::Corrupt(format!("event {seq}: {what}"));
    Ok(LoggedEvent {
        seq,
        at: crate::rows::from_micros(at),
        kind,
        workspace: Workspace::new(&workspace).map_err(|_| corrupt("workspace"))?,
        memory_id: memory_id
            .map(|id| id.parse().map_err(|_| corrupt("memory id")))
            .transpose()?,
        surface,
        client,
        role,
        detail: serde_json::from_str(&detail).map_err(|_| corrupt("detail"))?,
    })
}

impl ServerStore for SqliteStore {
    fn backend(&self) -> levh_core::Backend {
        levh_core::Backend::Sqlite
    }

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

    fn activity(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Activity, StoreError> {
        Ok(SqliteStore::activity(self, workspace, since, scan_at_most)?)
    }

    fn memory_events(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        limit: usize,
    ) -> Result<Vec<LoggedEvent>, StoreError> {
        Ok(SqliteStore::memory_events(self, workspace, id, limit)?)
    }

    fn events_of_kinds(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        kinds: &[EventKind],
        scan_at_most: usize,
    ) -> Result<KindsRead, StoreError> {
        Ok(SqliteStore::events_of_kinds(
            self,
            workspace,
            since,
            kinds,
            scan_at_most,
        )?)
    }

    fn usage(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Usage, StoreError> {
        Ok(SqliteStore::usage(self, workspace, since, scan_at_most)?)
    }

    fn touch_presence(&self, presence: &Presence) -> Result<(), StoreError> {
        Ok(SqliteStore::touch_presence(self, presence)?)
    }

    fn end_presence(&self, id: &str, at: Timestamp) -> Result<(), StoreError> {
        Ok(SqliteStore::end_presence(self, id, at)?)
    }

    fn presences(
        &self,
        workspace: &Workspace,
        ended_after: Timestamp,
    ) -> Result<Vec<Presence>, StoreError> {
        Ok(SqliteStore::presences(self, workspace, ended_after)?)
    }

    fn issue_token(
        &self,
        workspace: &Workspace,
        role: Role,
        label: Option<&str>,
        now: Timestamp,
    ) -> Result<IssuedToken, StoreError> {
        Ok(self.create_token(workspace, role, label, now)?)
    }

    fn workspace_tokens(&self, workspace: &Workspace) -> Result<Vec<TokenInfo>, StoreError> {
        Ok(self.list_workspace_tokens(workspace)?)
    }

    fn revoke_workspace_token(
        &self,
        workspace: &Workspace,
        id: &str,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        Ok(SqliteStore::revoke_workspace_token(
            self, workspace, id, now,
        )?)
    }

    fn all_tokens(&self) -> Result<Vec<levh_core::TokenInfo>, StoreError> {
        Ok(self.list_tokens()?)
    }

    fn revoke_any_token(&self, id: &str, now: Timestamp) -> Result<bool, StoreError> {
        Ok(self.revoke_token(id, now)?)
    }
}

pub(crate) fn log_event(
    tx: &Connection,
    at: Timestamp,
    kind: EventKind,
    workspace: &Workspace,
    memory_id: Option<MemoryId>,
    actor: &Actor,
    detail: serde_json::Value,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO events (at, kind, workspace, memory_id, surface, client, role, detail, principal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
            micros(at),
            kind.as_str(),
            workspace.as_str(),
            memory_id.map(|id| id.to_string()),
            actor.surface.as_str(),
            actor.client,
            actor.role.as_str(),
        detail.to_string(),
        actor.principal,
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use levh_core::{Role, Store, Surface};

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_780_000_000 + second).unwrap()
    }

    fn agent(client: &str, token: &str) -> Actor {
        Actor {
            surface: Surface::Mcp,
            client: Some(client.into()),
            role: Role::Editor,
            principal: Some(token.into()),
        }
    }

    /// A usage row as compared: day, token, client, kind, count, bytes, tokens, returned.
    type Row = (
        String,
        Option<String>,
        Option<String>,
        String,
        u64,
        u64,
        u64,
        u64,
    );

    /// Usage counts per day, token, client and kind, with the bytes and tokens the events
    /// carry; another workspace's events and other kinds are not counted; a bound on the
    /// events read says when it cut the time short.
    #[test]
    fn usage_counts_each_day_token_and_client_and_says_when_the_bound_cut_it() {
        let store = SqliteStore::open_in_memory().unwrap();
        let space = Workspace::default();
        let (cursor, claude) = (agent("cursor", "tok-a"), agent("claude", "tok-b"));
        for (n, (actor, text)) in [(&cursor, "twelve bytes"), (&cursor, "four"), (&claude, "x")]
            .into_iter()
            .enumerate()
        {
            let record =
                crate::test_records::record(text.into(), at(n as i64), "default", "p", None);
            store.insert(&record, &[], &|_| None, actor).unwrap();
        }
        let other = crate::test_records::record("elsewhere".into(), at(5), "other", "p", None);
        store.insert(&other, &[], &|_| None, &cursor).unwrap();
        let recall = |returned: usize, tokens: u64, bytes: u64| serde_json::json!({ "returned": vec!["id"; returned], "tokens": tokens, "bytes": bytes });
        store
            .log_event(
                &space,
                EventKind::Recall,
                &cursor,
                at(10),
                &recall(2, 30, 120),
            )
            .unwrap();
        store
            .log_event(&space, EventKind::Recall, &cursor, at(11), &recall(0, 0, 0))
            .unwrap();
        // The next day (UTC), by the other token.
        let tomorrow = at(10 + 86_400);
        store
            .log_event(
                &space,
                EventKind::Recall,
                &claude,
                tomorrow,
                &recall(1, 7, 40),
            )
            .unwrap();

        let usage = store.usage(&space, at(-1), 1_000).unwrap();
        assert!(!usage.cut_short);
        let rows: Vec<Row> = usage
            .rows
            .iter()
            .map(|r| {
                (
                    r.day.clone(),
                    r.principal.clone(),
                    r.client.clone(),
                    r.kind.clone(),
                    r.count,
                    r.bytes,
                    r.tokens,
                    r.returned,
                )
            })
            .collect();
        let today = at(0).strftime("%Y-%m-%d").to_string();
        let next = tomorrow.strftime("%Y-%m-%d").to_string();
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            rows,
            [
                (
                    today.clone(),
                    some("tok-a"),
                    some("cursor"),
                    "recall".into(),
                    2,
                    120,
                    30,
                    2
                ),
                (
                    today.clone(),
                    some("tok-a"),
                    some("cursor"),
                    "store".into(),
                    2,
                    16,
                    0,
                    0
                ),
                (
                    today,
                    some("tok-b"),
                    some("claude"),
                    "store".into(),
                    1,
                    1,
                    0,
                    0
                ),
                (
                    next,
                    some("tok-b"),
                    some("claude"),
                    "recall".into(),
                    1,
                    40,
                    7,
                    1
                ),
            ]
        );
        // Reading only the newest two events of the log leaves older ones of the time out.
        let bounded = store.usage(&space, at(-1), 2).unwrap();
        assert!(bounded.cut_short);
        assert_eq!(bounded.rows.iter().map(|r| r.count).sum::<u64>(), 2);
        // The kinds asked for, oldest first, each with its token.
        let KindsRead { events, cut_short } = store
            .events_of_kinds(&space, at(-1), &[EventKind::Recall], 1_000)
            .unwrap();
        assert!(!cut_short);
        assert_eq!(events.len(), 3);
        assert!(events.iter().all(|(e, _)| e.kind == "recall"));
        assert_eq!(events[2].1.as_deref(), Some("tok-b"));
        assert!(events.windows(2).all(|w| w[0].0.seq < w[1].0.seq));
    }

    /// A session's row: written once, moved by later touches (its start kept), ended;
    /// listed while not ended or ended after the time asked; dropped a week unheard.
    #[test]
    fn presence_is_upserted_ended_listed_and_dropped_when_unheard_for_a_week() {
        let store = SqliteStore::open_in_memory().unwrap();
        let space = Workspace::default();
        let presence = |id: &str, started: Timestamp, seen: Timestamp, calls: u64| Presence {
            id: id.into(),
            workspace: space.clone(),
            transport: "stdio".into(),
            client: Some("cursor".into()),
            principal: None,
            project: None,
            pid: 42,
            host: "here".into(),
            started_at: started,
            last_seen_at: seen,
            ended_at: None,
            calls,
        };
        store
            .touch_presence(&presence("a", at(0), at(0), 0))
            .unwrap();
        let mut later = presence("a", at(0), at(30), 5);
        later.project = Some("atlas".into());
        store.touch_presence(&later).unwrap();
        // A touch without a project keeps the one it had.
        store
            .touch_presence(&presence("a", at(0), at(40), 6))
            .unwrap();
        let listed = store.presences(&space, at(-1)).unwrap();
        assert_eq!(listed.len(), 1);
        let row = &listed[0];
        assert_eq!(
            (row.started_at, row.last_seen_at, row.calls),
            (at(0), at(40), 6)
        );
        assert_eq!(row.project.as_deref(), Some("atlas"));
        assert_eq!(row.ended_at, None);
        store.end_presence("a", at(50)).unwrap();
        assert_eq!(
            store.presences(&space, at(-1)).unwrap()[0].ended_at,
            Some(at(50))
        );
        assert!(
            store.presences(&space, at(60)).unwrap().is_empty(),
            "ended before the time asked"
        );
        assert!(
            store
                .presences(&Workspace::new("other").unwrap(), at(-1))
                .unwrap()
                .is_empty()
        );
        // A new session eight days on drops the old one (ended or not).
        store
            .touch_presence(&presence("b", at(1), at(1), 0))
            .unwrap();
        let week = at(100 + 8 * 86_400);
        store.touch_presence(&presence("c", week, week, 0)).unwrap();
        let ids: Vec<String> = store
            .presences(&space, at(-1))
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(ids, ["c"]);
    }
}
