//! Consolidation (a summary retiring the members it replaces, undoable), working memory
//! (what an agent stored in a session until something promotes it) and review schedules.

use crate::connection::Db;
use levh_core::review::{ReviewDecision, ReviewSchedule};
use levh_core::{Actor, EventKind, MemoryId, NewMemoryRecord, SessionId, Timestamp, Workspace};
use serde_json::json;

use crate::events::log_event;
use crate::query::id_texts;
use crate::rows::{column, from_micros, micros, parse_id};
use crate::{PostgresStore, PostgresStoreError, writes};

impl PostgresStore {
    pub(crate) fn consolidate_into(
        &self,
        summary: &NewMemoryRecord,
        members: &[MemoryId],
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        self.ensure_vector_indexes(summary.embedding.iter().map(|e| e.vector.len()))?;
        let workspace = &summary.memory.workspace;
        let now = summary.memory.state.created_at;
        self.write(|tx| {
            let summary_seq = writes::insert_memory(tx, summary, None, actor)?;
            let mut retired = Vec::with_capacity(members.len());
            for &member in members {
                let Some(row) = tx.query_opt(
                    "SELECT seq, valid_to FROM memories
                      WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL AND NOT pinned
                        AND superseded_by IS NULL AND (valid_to IS NULL OR valid_to > $3)
                      FOR UPDATE",
                    &[&workspace.as_str(), &member.to_string(), &micros(now)],
                )?
                else {
                    continue;
                };
                let (member_seq, prior): (i64, Option<i64>) = (column(&row, 0)?, column(&row, 1)?);
                tx.execute(
                    "INSERT INTO consolidated (summary_seq, member_seq, prior_valid_to) VALUES ($1, $2, $3)",
                    &[&summary_seq, &member_seq, &prior],
                )?;
                let detail = json!({ "consolidated_into": summary.memory.id });
                if writes::supersede(tx, workspace, member, summary.memory.id, now, actor, detail)? {
                    retired.push(member);
                }
            }
            Ok(retired)
        })
    }

    pub(crate) fn undo_consolidation_of(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Option<Vec<MemoryId>>, PostgresStoreError> {
        self.write(|tx| {
            let Some(row) = tx.query_opt(
                "SELECT seq FROM memories WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL
                 FOR UPDATE",
                &[&workspace.as_str(), &summary.to_string()],
            )?
            else {
                return Ok(None);
            };
            let summary_seq: i64 = column(&row, 0)?;
            let members = tx.query(
                "SELECT c.member_seq, m.id, c.prior_valid_to
                   FROM consolidated c JOIN memories m ON m.seq = c.member_seq
                  WHERE c.summary_seq = $1 ORDER BY m.created_at, m.seq",
                &[&summary_seq],
            )?;
            if members.is_empty() {
                return Ok(None);
            }
            let mut restored = Vec::with_capacity(members.len());
            for row in &members {
                let member_seq: i64 = column(row, 0)?;
                let id = parse_id(column(row, 1)?)?;
                let prior: Option<i64> = column(row, 2)?;
                let changed = tx.execute(
                    "UPDATE memories SET valid_to = $2, superseded_by = NULL, updated_at = $3
                      WHERE seq = $1 AND superseded_by = $4",
                    &[&member_seq, &prior, &micros(now), &summary.to_string()],
                )?;
                if changed == 1 {
                    log_event(
                        tx,
                        now,
                        EventKind::Restore,
                        workspace,
                        Some(id),
                        actor,
                        json!({ "consolidation_undone": summary }),
                    )?;
                    restored.push(id);
                }
            }
            tx.execute(
                "DELETE FROM consolidated WHERE summary_seq = $1",
                &[&summary_seq],
            )?;
            writes::forget(
                tx,
                workspace,
                summary,
                now,
                actor,
                json!({ "consolidation_undone": true }),
            )?;
            Ok(Some(restored))
        })
    }

    pub(crate) fn members_of(
        &self,
        workspace: &Workspace,
        summary: MemoryId,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id FROM memories s
               JOIN consolidated c ON c.summary_seq = s.seq
               JOIN memories m ON m.seq = c.member_seq
              WHERE s.workspace = $1 AND s.id = $2
              ORDER BY m.created_at, m.seq",
            &[&workspace.as_str(), &summary.to_string()],
        )?;
        rows.iter().map(|row| parse_id(column(row, 0)?)).collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn promote_working(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
        stability_hours: f64,
        why: &str,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<MemoryId>, PostgresStoreError> {
        self.write(|tx| {
            let mut promoted = Vec::new();
            for &id in ids {
                // Deleting the row is the compare-and-set: of two promotions at once, one
                // deletes it and logs, the other finds nothing.
                let Some(row) = tx.query_opt(
                    "DELETE FROM working_memories w USING memories m
                      WHERE m.seq = w.memory_seq AND m.workspace = $1 AND m.id = $2
                      RETURNING w.memory_seq",
                    &[&workspace.as_str(), &id.to_string()],
                )?
                else {
                    continue;
                };
                let seq: i64 = column(&row, 0)?;
                tx.execute(
                    "UPDATE memories SET stability_hours = greatest(stability_hours, $2), updated_at = $3
                      WHERE seq = $1",
                    &[&seq, &stability_hours, &micros(now)],
                )?;
                log_event(
                    tx,
                    now,
                    EventKind::Promote,
                    workspace,
                    Some(id),
                    actor,
                    json!({ "why": why }),
                )?;
                promoted.push(id);
            }
            Ok(promoted)
        })
    }

    pub(crate) fn working_of(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, SessionId)>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id, w.session_id FROM working_memories w JOIN memories m ON m.seq = w.memory_seq
              WHERE m.workspace = $1 AND m.id = ANY($2)",
            &[&workspace.as_str(), &id_texts(ids)],
        )?;
        let mut found: Vec<(MemoryId, SessionId)> = rows
            .iter()
            .map(|row| {
                Ok((
                    parse_id(column(row, 0)?)?,
                    SessionId::new(column::<String>(row, 1)?),
                ))
            })
            .collect::<Result<_, PostgresStoreError>>()?;
        // In the order asked, as SQLite's store answers.
        found.sort_by_key(|(id, _)| ids.iter().position(|asked| asked == id));
        Ok(found)
    }

    pub(crate) fn schedules_of(
        &self,
        workspace: &Workspace,
        ids: &[MemoryId],
    ) -> Result<Vec<(MemoryId, ReviewSchedule)>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT m.id, r.due_at, r.interval_days, r.reviews
               FROM review_schedule r JOIN memories m ON m.seq = r.memory_seq
              WHERE r.workspace = $1 AND m.id = ANY($2)",
            &[&workspace.as_str(), &id_texts(ids)],
        )?;
        rows.iter()
            .map(|row| {
                let (interval, reviews): (i64, i64) = (column(row, 2)?, column(row, 3)?);
                Ok((
                    parse_id(column(row, 0)?)?,
                    ReviewSchedule {
                        due_at: from_micros(column(row, 1)?),
                        interval_days: u32::try_from(interval).unwrap_or(0),
                        reviews: u32::try_from(reviews).unwrap_or(0),
                    },
                ))
            })
            .collect()
    }

    pub(crate) fn hidden_from_review(
        &self,
        workspace: &Workspace,
        now: Timestamp,
    ) -> Result<usize, PostgresStoreError> {
        let count: i64 = self
            .connection()?
            .query_one(
                "SELECT count(*) FROM review_schedule WHERE workspace = $1 AND due_at > $2",
                &[&workspace.as_str(), &micros(now)],
            )?
            .get(0);
        Ok(usize::try_from(count).unwrap_or(0))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn review(
        &self,
        workspace: &Workspace,
        id: MemoryId,
        decision: ReviewDecision,
        schedule: &ReviewSchedule,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| {
            let changed = tx.execute(
                "INSERT INTO review_schedule (memory_seq, workspace, due_at, interval_days, reviews)
                     SELECT seq, workspace, $3, $4, $5 FROM memories
                      WHERE workspace = $1 AND id = $2 AND forgotten_at IS NULL
                 ON CONFLICT (memory_seq) DO UPDATE SET
                     due_at = excluded.due_at,
                     interval_days = excluded.interval_days,
                     reviews = excluded.reviews",
                &[
                    &workspace.as_str(),
                    &id.to_string(),
                    &micros(schedule.due_at),
                    &i64::from(schedule.interval_days),
                    &i64::from(schedule.reviews),
                ],
            )?;
            if changed == 0 {
                return Ok(false);
            }
            let mut detail = json!({
                "decision": decision.as_str(),
                "next_review": schedule.due_at.to_string(),
            });
            if let ReviewDecision::Snooze { days } = decision {
                detail["days"] = json!(days);
            }
            log_event(
                tx,
                now,
                EventKind::Review,
                workspace,
                Some(id),
                actor,
                detail,
            )?;
            Ok(true)
        })
    }
}
