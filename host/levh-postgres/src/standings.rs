//! What statistics and the fading list read: each live memory's labels and model state,
//! counted by label group. (SQLite keeps a cache refreshed from a change log; here one
//! indexed query reads the rows each time — a cache may follow when a benchmark asks.)

use crate::connection::Db;
use std::collections::HashMap;

use levh_core::{Kind, MemoryId, MemoryState, StandingGroup, Timestamp, Workspace};

use crate::rows::{column, from_micros, micros, optional_time, parse_id};
use crate::{PostgresStore, PostgresStoreError};

impl PostgresStore {
    pub(crate) fn standing_groups(
        &self,
        workspace: &Workspace,
        project: Option<&str>,
        now: Timestamp,
        visit: &mut dyn FnMut(MemoryId, &MemoryState),
    ) -> Result<Vec<StandingGroup>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT id, project, kind, source, importance, pinned, stability_hours,
                    last_recalled_at, recall_count, created_at
               FROM memories
              WHERE workspace = $1 AND ($2::text IS NULL OR project = $2)
                AND forgotten_at IS NULL AND (valid_to IS NULL OR valid_to > $3)
              ORDER BY seq",
            &[&workspace.as_str(), &project, &micros(now)],
        )?;
        let mut groups: Vec<StandingGroup> = Vec::new();
        let mut index: HashMap<(Option<String>, String, String), usize> = HashMap::new();
        for row in &rows {
            let project: Option<String> = column(row, 1)?;
            let kind: String = column(row, 2)?;
            let source: String = column(row, 3)?;
            let recall_count: i64 = column(row, 8)?;
            let state = MemoryState {
                importance: column(row, 4)?,
                pinned: column(row, 5)?,
                stability_hours: column(row, 6)?,
                last_recalled_at: optional_time(column(row, 7)?),
                recall_count: u32::try_from(recall_count.max(0)).unwrap_or(u32::MAX),
                created_at: from_micros(column(row, 9)?),
            };
            visit(parse_id(column(row, 0)?)?, &state);
            let key = (project, kind, source);
            match index.get(&key) {
                Some(&at) => groups[at].count += 1,
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push(StandingGroup {
                        project: key.0,
                        kind: Kind::stored(&key.1).map_err(|e| {
                            PostgresStoreError::Corrupt(format!("kind {:?}: {e}", key.1))
                        })?,
                        source: key.2,
                        count: 1,
                    });
                }
            }
        }
        Ok(groups)
    }
}
