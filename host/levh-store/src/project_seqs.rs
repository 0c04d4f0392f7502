//! The seqs of each project's memories, kept between queries. A search scoped to one
//! project (how agents recall) needs them twice — the vector side compares only the
//! project's points, the full-text side drops other projects' matches before it probes
//! rows — and reading them from the (workspace, project) index cost about 1 ms each at
//! 10k memories a project. Kept here, a query reads two numbers instead: the largest seq
//! (a new memory has a larger one, and only those are read and added) and the count of
//! project changes (migration 0020: a memory moved, a row deleted), which, when it
//! moved, makes the project's seqs be read again.
//!
//! The set may hold more than the project has now (a memory forgotten, or a query whose
//! read transaction started before the set was last extended): every user checks the
//! candidates it takes from it against the whole filter, so a larger set costs nothing
//! but a lookup; a missing seq would lose a memory, which the two numbers prevent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;
use rustc_hash::FxHashSet;

use crate::SqliteStoreError;

/// Projects kept at most; past that the cache starts over (a store with more projects
/// than this reads the others' seqs as before).
const PROJECTS: usize = 256;

/// The cache; one per store.
#[derive(Debug, Default)]
pub(crate) struct ProjectSeqs {
    kept: Mutex<HashMap<(String, String), Kept>>,
}

#[derive(Debug, Clone)]
struct Kept {
    /// The project-change count the set was read at.
    changes: i64,
    /// The largest seq of the store when it was read: every memory up to it is known.
    through: i64,
    seqs: Arc<FxHashSet<i64>>,
}

impl ProjectSeqs {
    /// The seqs of the memories of `project` in `workspace` (a superset: see the module
    /// docs), as `conn`'s read transaction sees the store.
    pub(crate) fn get(
        &self,
        conn: &Connection,
        workspace: &levh_core::Workspace,
        project: &str,
    ) -> Result<Arc<FxHashSet<i64>>, SqliteStoreError> {
        let (changes, newest): (i64, i64) = conn
            .prepare_cached(
                "SELECT (SELECT n FROM project_changes),
                        COALESCE((SELECT max(seq) FROM memories), 0)",
            )?
            .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        let key = (workspace.as_str().to_owned(), project.to_owned());
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        let seqs = match kept {
            Some(kept) if kept.changes == changes && kept.through >= newest => {
                return Ok(kept.seqs);
            }
            Some(kept) if kept.changes == changes => {
                let mut seqs = (*kept.seqs).clone();
                seqs.extend(read(conn, workspace, project, kept.through)?);
                seqs
            }
            _ => read(conn, workspace, project, 0)?,
        };
        let seqs = Arc::new(seqs);
        let mut all = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if all.len() >= PROJECTS && !all.contains_key(&key) {
            all.clear();
        }
        all.insert(
            key,
            Kept {
                changes,
                through: newest,
                seqs: Arc::clone(&seqs),
            },
        );
        Ok(seqs)
    }
}

impl ProjectSeqs {
    /// Forgets every project's seqs (a benchmark's baseline: each query reads them).
    pub(crate) fn clear(&self) {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// The project's seqs after `after`, from the (workspace, project) index (its entries are
/// ordered by seq within a project, so this reads only the new ones).
fn read(
    conn: &Connection,
    workspace: &levh_core::Workspace,
    project: &str,
    after: i64,
) -> Result<FxHashSet<i64>, SqliteStoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT seq FROM memories INDEXED BY memories_by_workspace_project
          WHERE workspace = ?1 AND project = ?2 AND seq > ?3",
    )?;
    let seqs = statement
        .query_map(
            rusqlite::params![workspace.as_str(), project, after],
            |row| row.get::<_, i64>(0),
        )?
        .collect::<Result<_, _>>()?;
    Ok(seqs)
}

#[cfg(test)]
mod tests {
    use levh_core::{Actor, Store, Timestamp, Workspace};

    use crate::SqliteStore;

    /// The kept seqs of a project follow every change that adds a memory to it: a new
    /// memory, one moved into it, a seq used again after the newest row was deleted.
    #[test]
    fn kept_project_seqs_follow_new_moved_and_reused_memories() {
        let store = SqliteStore::open_in_memory().unwrap();
        let space = Workspace::default();
        let add = |n: i64, project: &str| -> i64 {
            let at = Timestamp::from_second(1_780_000_000 + n).unwrap();
            let record =
                crate::test_records::record(format!("note {n}"), at, "default", project, None);
            store
                .insert(&record, &[], &|_| None, &Actor::cli())
                .unwrap();
            store.with_connection(|c| {
                c.query_row(
                    "SELECT seq FROM memories WHERE id = ?1",
                    [record.memory.id.to_string()],
                    |row| row.get(0),
                )
                .unwrap()
            })
        };
        let seqs = |project: &str| -> Vec<i64> {
            let conn = store.read();
            let mut seqs: Vec<i64> = store
                .project_seqs
                .get(&conn, &space, project)
                .unwrap()
                .iter()
                .copied()
                .collect();
            seqs.sort_unstable();
            seqs
        };
        let (a1, b1) = (add(1, "a"), add(2, "b"));
        assert_eq!(seqs("a"), [a1]);
        assert_eq!(seqs("b"), [b1]);
        // Kept: the same set, read from memory.
        let first = store.project_seqs.get(&store.read(), &space, "a").unwrap();
        let again = store.project_seqs.get(&store.read(), &space, "a").unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &again));
        // A new memory: added.
        let a2 = add(3, "a");
        assert_eq!(seqs("a"), [a1, a2]);
        // Moved into the project.
        store.with_connection(|c| {
            c.execute("UPDATE memories SET project = 'a' WHERE seq = ?1", [b1])
                .unwrap()
        });
        assert_eq!(seqs("a"), [a1, b1, a2]);
        // The newest row deleted, its seq used again by a memory of another project.
        store.with_connection(|c| {
            c.execute("DELETE FROM memories WHERE seq = ?1", [a2])
                .unwrap()
        });
        let reused = add(4, "c");
        assert_eq!(reused, a2, "SQLite reuses the largest rowid after a delete");
        assert_eq!(seqs("c"), [reused]);
        assert_eq!(seqs("a"), [a1, b1]);
    }
}
