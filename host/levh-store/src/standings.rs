//! Statistics and the fading list without reading every memory on every call.
//!
//! A cache holds each live memory's standing — its labels, model state and validity, no
//! content — sorted by `seq`, and the change number it covers. Before each use it reads
//! only the memories whose standing changed since (`memory_standing_changes`, migration
//! 0008, kept by triggers): whoever wrote them, this process or another one on the same
//! file. The first use reads every memory once; after that a call costs one indexed
//! query for what changed and one pass over compact rows in memory, instead of
//! materialising every row from SQLite (150 ms at 100k memories, linear beyond).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use levh_core::{Kind, MemoryId, MemoryState, StandingGroup, Timestamp, Workspace};
use rusqlite::{Connection, Row as SqlRow};

use crate::SqliteStoreError;
use crate::rows::{self, micros};

/// Rows marked dead are dropped once they are this share of the table (and at least
/// [`MIN_COMPACTION`]): a purge of many memories does not leave the pass walking them.
const DEAD_SHARE: usize = 4;
const MIN_COMPACTION: usize = 1024;

/// The cache; one per store.
#[derive(Debug, Default)]
pub(crate) struct Standings {
    table: Mutex<Table>,
}

/// The labels a memory is counted under. Interned: a million memories share a few
/// hundred groups, and the pass counts by group index, not by string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Group {
    workspace: String,
    project: Option<String>,
    kind: Kind,
    source: String,
}

#[derive(Debug, Clone, Copy)]
struct Row {
    seq: i64,
    id: MemoryId,
    group: u32,
    /// Microseconds; `i64::MAX` while the memory's validity is open.
    valid_to: i64,
    state: MemoryState,
    /// False once forgotten or deleted (dropped at the next compaction).
    live: bool,
}

#[derive(Debug, Default)]
struct Table {
    /// The change number the rows reflect.
    covered: i64,
    /// Sorted by `seq`.
    rows: Vec<Row>,
    dead: usize,
    groups: Vec<Group>,
    group_of: HashMap<Group, u32>,
}

impl Standings {
    /// Brings the cache up to date through `conn`, then counts the live memories of
    /// `workspace` (of `project` when given) whose validity has not ended by `now`, by
    /// group, handing each one's id and state to `visit`.
    pub(crate) fn visit(
        &self,
        conn: &Connection,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, SqliteStoreError> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.refresh(conn)?;
        let selected: Vec<bool> = table
            .groups
            .iter()
            .map(|g| {
                g.workspace == workspace.as_str()
                    && project.is_none_or(|p| g.project.as_deref() == Some(p))
            })
            .collect();
        let now = micros(now);
        let mut counts = vec![0u64; table.groups.len()];
        for row in &table.rows {
            let group = row.group as usize;
            if row.live && selected[group] && row.valid_to > now {
                counts[group] += 1;
                visit(row.id, &row.state);
            }
        }
        Ok(table
            .groups
            .iter()
            .zip(counts)
            .filter(|(_, count)| *count > 0)
            .map(|(group, count)| StandingGroup {
                project: group.project.clone(),
                kind: group.kind.clone(),
                source: group.source.clone(),
                count,
            })
            .collect())
    }
}

impl Table {
    /// Reads every memory changed after `covered`, in one statement (one snapshot of the
    /// file), and applies it. Each memory appears once (the log keeps its latest change),
    /// in change order, which after recalls is far from `seq` order: memories not yet in
    /// the table are gathered and merged in once, so a first read of a million memories
    /// is a sort, not a million inserts into the middle of a vector. Applying is
    /// idempotent, so an error part-way leaves rows the next refresh applies again.
    fn refresh(&mut self, conn: &Connection) -> Result<(), SqliteStoreError> {
        let mut statement = conn.prepare_cached(
            "SELECT c.change, c.memory_seq, m.id, m.project, m.kind, m.source,
                        m.importance, m.pinned, m.stability_hours, m.last_recalled_at,
                        m.recall_count, m.created_at, m.workspace, m.valid_to, m.forgotten_at
                 FROM memory_standing_changes c LEFT JOIN memories m ON m.seq = c.memory_seq
                 WHERE c.change > ?1 ORDER BY c.change",
        )?;
        let mut changed = statement.query([self.covered])?;
        let mut new_rows = Vec::new();
        let mut covered = self.covered;
        while let Some(row) = changed.next()? {
            covered = row.get(0)?;
            let seq: i64 = row.get(1)?;
            let gone = row.get_ref(2)?.data_type() == rusqlite::types::Type::Null
                || row.get::<_, Option<i64>>(14)?.is_some();
            let at = self.rows.binary_search_by_key(&seq, |r| r.seq);
            if gone {
                if let Ok(at) = at
                    && self.rows[at].live
                {
                    self.rows[at].live = false;
                    self.dead += 1;
                }
                continue;
            }
            let (group, standing) = read(row)?;
            let standing = Row {
                group: self.intern(group),
                ..standing
            };
            match at {
                Ok(at) => {
                    if !self.rows[at].live {
                        self.dead -= 1;
                    }
                    self.rows[at] = standing;
                }
                Err(_) => new_rows.push(standing),
            }
        }
        if !new_rows.is_empty() {
            // New memories take the next seq, so usually they only append; a seq below
            // the newest (a first read, or SQLite reusing the largest rowid after its row
            // was deleted) needs a sort. Seqs are distinct: each memory appears once.
            new_rows.sort_unstable_by_key(|r| r.seq);
            let appends = self
                .rows
                .last()
                .is_none_or(|last| last.seq < new_rows[0].seq);
            self.rows.extend(new_rows);
            if !appends {
                self.rows.sort_unstable_by_key(|r| r.seq);
            }
        }
        if self.dead >= MIN_COMPACTION && self.dead * DEAD_SHARE >= self.rows.len() {
            self.rows.retain(|r| r.live);
            self.dead = 0;
        }
        self.covered = covered;
        Ok(())
    }

    fn intern(&mut self, group: Group) -> u32 {
        if let Some(index) = self.group_of.get(&group) {
            return *index;
        }
        let index = self.groups.len() as u32;
        self.groups.push(group.clone());
        self.group_of.insert(group, index);
        index
    }
}

/// A changed memory's row (columns 1..=13 of the refresh query), its group not yet
/// interned.
fn read(row: &SqlRow<'_>) -> rusqlite::Result<(Group, Row)> {
    let summary = rows::read_summary_at(row, 2)?;
    let group = Group {
        workspace: row.get(12)?,
        project: summary.project,
        kind: summary.kind,
        source: summary.source,
    };
    let standing = Row {
        seq: row.get(1)?,
        id: summary.id,
        group: 0,
        valid_to: row.get::<_, Option<i64>>(13)?.unwrap_or(i64::MAX),
        state: summary.state,
        live: true,
    };
    Ok((group, standing))
}
