//! Reports read from the event log — who did what, events of some kinds, usage per day —
//! each over at most the newest `scan_at_most` events, so its cost is bounded whatever the
//! log's size, saying when that bound cut the time asked for short.

use crate::connection::Db;
use levh_core::{
    Activity, ActivityRow, EventKind, KindsRead, Timestamp, Usage, UsageRow, Workspace,
};

use crate::query::limit;
use crate::rows::{column, from_micros, micros};
use crate::{PostgresStore, PostgresStoreError};

/// The sequence number after which the newest `scan_at_most` events lie (0: the whole
/// log), and whether the first event left out still falls at or after `since`. Counted
/// by rows, not by numbers: an identity column's numbers have gaps (a rolled-back
/// transaction used some).
fn scan_window(
    conn: &mut impl Db,
    since: Timestamp,
    scan_at_most: usize,
) -> Result<(i64, bool), PostgresStoreError> {
    let row = conn.query_opt(
        "SELECT seq, at FROM events ORDER BY seq DESC OFFSET $1 LIMIT 1",
        &[&limit(scan_at_most)],
    )?;
    Ok(match row {
        Some(row) => {
            let at: i64 = column(&row, 1)?;
            (column(&row, 0)?, at >= micros(since))
        }
        None => (0, false),
    })
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl PostgresStore {
    pub(crate) fn activity_since(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Activity, PostgresStoreError> {
        let mut connection = self.connection()?;
        let (from, cut_short) = scan_window(&mut *connection, since, scan_at_most)?;
        let rows = connection.query(
            "SELECT surface, client, kind, count(*), min(at), max(at) FROM events
              WHERE seq > $1 AND workspace = $2 AND at >= $3
              GROUP BY surface, client, kind",
            &[&from, &workspace.as_str(), &micros(since)],
        )?;
        let rows = rows
            .iter()
            .map(|row| {
                Ok(ActivityRow {
                    surface: column(row, 0)?,
                    client: column(row, 1)?,
                    kind: column(row, 2)?,
                    count: count(column(row, 3)?),
                    first: from_micros(column(row, 4)?),
                    last: from_micros(column(row, 5)?),
                })
            })
            .collect::<Result<_, PostgresStoreError>>()?;
        Ok(Activity { rows, cut_short })
    }

    pub(crate) fn kinds_since(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        kinds: &[EventKind],
        scan_at_most: usize,
    ) -> Result<KindsRead, PostgresStoreError> {
        let mut connection = self.connection()?;
        let (from, cut_short) = scan_window(&mut *connection, since, scan_at_most)?;
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let rows = connection.query(
            &format!(
                "{} WHERE seq > $1 AND workspace = $2 AND at >= $3 AND kind = ANY($4) ORDER BY seq",
                crate::events::SELECT_WITH_PRINCIPAL
            ),
            &[&from, &workspace.as_str(), &micros(since), &kinds],
        )?;
        let events = rows
            .iter()
            .map(|row| Ok((crate::events::read(row)?, column(row, 9)?)))
            .collect::<Result<_, PostgresStoreError>>()?;
        Ok(KindsRead { events, cut_short })
    }

    pub(crate) fn usage_since(
        &self,
        workspace: &Workspace,
        since: Timestamp,
        scan_at_most: usize,
    ) -> Result<Usage, PostgresStoreError> {
        let mut connection = self.connection()?;
        let (from, cut_short) = scan_window(&mut *connection, since, scan_at_most)?;
        // As SQLite's store reads them: a number in `tokens` or `bytes` is summed, anything
        // else counts 0; `returned` counts its items when it is an array. Text is ordered
        // bytewise and NULL first, as SQLite orders it, whatever the database's collation.
        let number = |key: &str| {
            format!(
                "coalesce(sum(CASE WHEN jsonb_typeof(detail -> '{key}') = 'number'
                                   THEN (detail ->> '{key}')::numeric END), 0)::bigint"
            )
        };
        let sql = format!(
            "SELECT * FROM (
             SELECT to_char(to_timestamp(at / 1000000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                    principal, surface, client, kind, count(*), {}, {},
                    coalesce(sum(CASE WHEN jsonb_typeof(detail -> 'returned') = 'array'
                                      THEN jsonb_array_length(detail -> 'returned') END), 0)::bigint
               FROM events
              WHERE seq > $1 AND workspace = $2 AND at >= $3 AND kind IN ('store', 'update', 'recall')
              GROUP BY 1, 2, 3, 4, 5
             ) usage
             ORDER BY day COLLATE \"C\", principal COLLATE \"C\" NULLS FIRST,
                      surface COLLATE \"C\", client COLLATE \"C\" NULLS FIRST, kind COLLATE \"C\"",
            number("tokens"),
            number("bytes"),
        );
        let rows = connection.query(&sql, &[&from, &workspace.as_str(), &micros(since)])?;
        let rows = rows
            .iter()
            .map(|row| {
                Ok(UsageRow {
                    day: column(row, 0)?,
                    principal: column(row, 1)?,
                    surface: column(row, 2)?,
                    client: column(row, 3)?,
                    kind: column(row, 4)?,
                    count: count(column(row, 5)?),
                    tokens: count(column(row, 6)?),
                    bytes: count(column(row, 7)?),
                    returned: count(column(row, 8)?),
                })
            })
            .collect::<Result<_, PostgresStoreError>>()?;
        Ok(Usage { rows, cut_short })
    }
}
