//! The entity index: entities, the keys they are recognised by, their links to memories
//! and their memberships, commitments marked done, and conflict candidates.
//!
//! Counts and lists join the memories that are not forgotten, so a forgotten memory stops
//! counting at once and a purged one (its links go by cascade) leaves nothing behind.
//! Where SQLite's single writer keeps two indexing runs from both creating the entity of
//! one new key, here the writers of a workspace's index take a transaction-scoped advisory
//! lock on it, so the second finds the first's entity.

use levh_core::entities::{
    CommitmentDone, ConflictRecord, ConflictResolution, EntityEdge, EntityId, EntityKey,
    EntityKind, EntityMemory, EntityQuery, EntityRole, EntitySummary, IndexedMemory, Sighting,
};
use levh_core::{Actor, EventKind, Memory, MemoryId, Timestamp, Workspace};
use postgres::Row;

use crate::connection::{Db, Tx};
use serde_json::json;

use crate::events::log_event;
use crate::query::{Bound, limit};
use crate::rows::{
    MEMORY_COLUMNS, MEMORY_FROM, column, from_micros, micros, optional_time, parse_id, read_memory,
};
use crate::{PostgresStore, PostgresStoreError};

fn corrupt(what: String) -> PostgresStoreError {
    PostgresStoreError::Corrupt(what)
}

fn entity_id(text: &str) -> Result<EntityId, PostgresStoreError> {
    text.parse()
        .map_err(|_| corrupt(format!("entity id {text:?}")))
}

/// Serialises the writers of one workspace's entity index until the transaction ends.
fn lock_index(tx: &mut Tx<'_>, workspace: &Workspace) -> Result<(), PostgresStoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("levh entities\u{1f}{}", workspace.as_str())],
    )?;
    Ok(())
}

/// The entity a sighting names, created when no key is known, and merged into when its
/// keys name several (the first key — the address — wins).
fn resolve(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    sighting: &Sighting,
    now: Timestamp,
) -> Result<i64, PostgresStoreError> {
    let mut found: Vec<i64> = Vec::new();
    for key in &sighting.keys {
        if let Some(row) = tx.query_opt(
            "SELECT entity_seq FROM entity_keys WHERE workspace = $1 AND key = $2",
            &[&workspace.as_str(), &key.as_str()],
        )? {
            found.push(column(&row, 0)?);
        }
    }
    let seq = match found.first() {
        Some(&seq) => seq,
        None => column(
            &tx.query_one(
                "INSERT INTO entities (id, workspace, kind, name, created_at)
                 VALUES ($1, $2, $3, $4, $5) RETURNING seq",
                &[
                    &EntityId::new_at(now).to_string(),
                    &workspace.as_str(),
                    &sighting.kind.as_str(),
                    &sighting.name,
                    &micros(now),
                ],
            )?,
            0,
        )?,
    };
    for &other in &found {
        if other != seq {
            merge(tx, seq, other)?;
        }
    }
    for key in &sighting.keys {
        tx.execute(
            "INSERT INTO entity_keys (workspace, key, entity_seq) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&workspace.as_str(), &key.as_str(), &seq],
        )?;
    }
    // An entity first seen as an address or handle takes a person's name once one is known.
    if !sighting.name.contains('@') && !sighting.name.is_empty() {
        tx.execute(
            "UPDATE entities SET name = $2 WHERE seq = $1 AND name LIKE '%@%'",
            &[&seq, &sighting.name],
        )?;
    }
    Ok(seq)
}

/// Moves everything of entity `from` to `into` and deletes `from`; a link `into` already
/// has goes with `from` (as SQLite's `UPDATE OR IGNORE` leaves it).
fn merge(tx: &mut Tx<'_>, into: i64, from: i64) -> Result<(), PostgresStoreError> {
    tx.execute(
        "UPDATE entity_keys SET entity_seq = $1 WHERE entity_seq = $2",
        &[&into, &from],
    )?;
    tx.execute(
        "UPDATE memory_entities f SET entity_seq = $1 WHERE f.entity_seq = $2
            AND NOT EXISTS (SELECT 1 FROM memory_entities t
                             WHERE t.memory_seq = f.memory_seq AND t.entity_seq = $1 AND t.role = f.role)",
        &[&into, &from],
    )?;
    tx.execute(
        "UPDATE entity_members f SET organization_seq = $1 WHERE f.organization_seq = $2
            AND NOT EXISTS (SELECT 1 FROM entity_members t
                             WHERE t.organization_seq = $1 AND t.person_seq = f.person_seq)",
        &[&into, &from],
    )?;
    tx.execute(
        "UPDATE entity_members f SET person_seq = $1 WHERE f.person_seq = $2
            AND NOT EXISTS (SELECT 1 FROM entity_members t
                             WHERE t.person_seq = $1 AND t.organization_seq = f.organization_seq)",
        &[&into, &from],
    )?;
    tx.execute("DELETE FROM entities WHERE seq = $1", &[&from])?;
    Ok(())
}

fn index_one(
    tx: &mut Tx<'_>,
    workspace: &Workspace,
    memory: &IndexedMemory,
    version: u32,
    now: Timestamp,
) -> Result<(), PostgresStoreError> {
    let Some(row) = tx.query_opt(
        "SELECT seq FROM memories WHERE workspace = $1 AND id = $2",
        &[&workspace.as_str(), &memory.memory_id.to_string()],
    )?
    else {
        return Ok(()); // purged meanwhile
    };
    let memory_seq: i64 = column(&row, 0)?;
    tx.execute(
        "DELETE FROM memory_entities WHERE memory_seq = $1",
        &[&memory_seq],
    )?;
    for sighting in &memory.sightings {
        let entity = resolve(tx, workspace, sighting, now)?;
        tx.execute(
            "INSERT INTO memory_entities (memory_seq, entity_seq, role) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&memory_seq, &entity, &sighting.role.as_str()],
        )?;
        // A person takes part for their organizations too, even where only their name is
        // known (a transcript's speaker): the organization's count is its people's.
        if sighting.kind == EntityKind::Person && sighting.role.is_participation() {
            tx.execute(
                "INSERT INTO memory_entities (memory_seq, entity_seq, role)
                 SELECT $1, organization_seq, 'organization' FROM entity_members WHERE person_seq = $2
                 ON CONFLICT DO NOTHING",
                &[&memory_seq, &entity],
            )?;
        }
        if let Some(domain) = &sighting.organization {
            let organization = resolve(
                tx,
                workspace,
                &Sighting {
                    kind: EntityKind::Organization,
                    name: domain.clone(),
                    keys: vec![EntityKey::domain(domain)],
                    role: EntityRole::Organization,
                    organization: None,
                },
                now,
            )?;
            tx.execute(
                "INSERT INTO entity_members (organization_seq, person_seq) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[&organization, &entity],
            )?;
        }
    }
    tx.execute(
        "INSERT INTO entity_indexed (memory_seq, version, content_hash) VALUES ($1, $2, $3)
         ON CONFLICT (memory_seq) DO UPDATE
             SET version = excluded.version, content_hash = excluded.content_hash",
        &[
            &memory_seq,
            &i32::try_from(version).unwrap_or(i32::MAX),
            &memory.content_hash,
        ],
    )?;
    Ok(())
}

/// Entity summaries over `entities e` counting live memories, `clause` filtering.
fn summaries(
    conn: &mut impl Db,
    clause: &str,
    bound: &mut Bound,
    count: usize,
) -> Result<Vec<EntitySummary>, PostgresStoreError> {
    let sql = format!(
        "SELECT e.seq, e.id, e.kind, e.name, count(DISTINCT m.seq), max(m.valid_from),
                array_agg(DISTINCT m.source),
                (SELECT array_agg(k.key ORDER BY k.key COLLATE \"C\") FROM entity_keys k
                  WHERE k.entity_seq = e.seq)
           FROM entities e
           JOIN memory_entities me ON me.entity_seq = e.seq
           JOIN memories m ON m.seq = me.memory_seq AND m.forgotten_at IS NULL
          WHERE {clause}
          GROUP BY e.seq
          ORDER BY count(DISTINCT m.seq) DESC, max(m.valid_from) DESC, e.name COLLATE \"C\"
          LIMIT {}",
        bound.bind(limit(count))
    );
    let rows = conn.query(&sql, &bound.params())?;
    rows.iter().map(summary).collect()
}

fn summary(row: &Row) -> Result<EntitySummary, PostgresStoreError> {
    let kind: &str = column(row, 2)?;
    let memories: i64 = column(row, 4)?;
    let mut channels: Vec<String> = column::<Option<Vec<String>>>(row, 6)?.unwrap_or_default();
    channels.retain(|s| !s.is_empty());
    channels.sort();
    let keys: Vec<String> = column::<Option<Vec<String>>>(row, 7)?.unwrap_or_default();
    Ok(EntitySummary {
        id: entity_id(column(row, 1)?)?,
        kind: kind
            .parse()
            .map_err(|_| corrupt(format!("entity kind {kind:?}")))?,
        name: column(row, 3)?,
        memories: memories.max(0) as u64,
        last_seen: optional_time(column(row, 5)?),
        channels,
        keys: keys.into_iter().map(EntityKey::from_stored).collect(),
    })
}

fn entity_seq(
    conn: &mut impl Db,
    workspace: &Workspace,
    id: EntityId,
) -> Result<Option<i64>, PostgresStoreError> {
    conn.query_opt(
        "SELECT seq FROM entities WHERE workspace = $1 AND id = $2",
        &[&workspace.as_str(), &id.to_string()],
    )?
    .map(|row| column(&row, 0))
    .transpose()
}

/// Roles as stored, parsed and sorted (unknown ones, written by a newer levh, skipped).
fn roles(stored: Vec<String>) -> Vec<EntityRole> {
    let mut roles: Vec<EntityRole> = stored.iter().filter_map(|r| r.parse().ok()).collect();
    roles.sort();
    roles.dedup();
    roles
}

impl PostgresStore {
    pub(crate) fn people(&self, workspace: &Workspace) -> Result<Vec<String>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT DISTINCT name COLLATE \"C\" FROM entities
              WHERE workspace = $1 AND kind = 'person' AND name NOT LIKE '%@%'
              ORDER BY 1",
            &[&workspace.as_str()],
        )?;
        rows.iter().map(|row| column(row, 0)).collect()
    }

    pub(crate) fn index(
        &self,
        workspace: &Workspace,
        batch: &[IndexedMemory],
        version: u32,
        now: Timestamp,
    ) -> Result<(), PostgresStoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            lock_index(tx, workspace)?;
            for memory in batch {
                index_one(tx, workspace, memory, version, now)?;
            }
            Ok(())
        })
    }

    pub(crate) fn unindexed(
        &self,
        workspace: &Workspace,
        version: u32,
        after: Option<MemoryId>,
        count: usize,
    ) -> Result<Vec<Memory>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!(
                "SELECT {MEMORY_COLUMNS} {MEMORY_FROM}
                   LEFT JOIN entity_indexed x ON x.memory_seq = m.seq
                  WHERE m.workspace = $1
                    AND m.seq > coalesce((SELECT seq FROM memories WHERE id = $4), 0)
                    AND (x.memory_seq IS NULL OR x.version <> $2 OR x.content_hash <> m.content_hash)
                  ORDER BY m.seq LIMIT $3"
            ),
            &[
                &workspace.as_str(),
                &i32::try_from(version).unwrap_or(i32::MAX),
                &limit(count),
                &after.map(|id| id.to_string()),
            ],
        )?;
        rows.iter().map(read_memory).collect()
    }

    pub(crate) fn count_unindexed_of(
        &self,
        workspace: &Workspace,
        version: u32,
    ) -> Result<u64, PostgresStoreError> {
        let count: i64 = self
            .connection()?
            .query_one(
                "SELECT count(*) FROM memories m LEFT JOIN entity_indexed x ON x.memory_seq = m.seq
                  WHERE m.workspace = $1
                    AND (x.memory_seq IS NULL OR x.version <> $2 OR x.content_hash <> m.content_hash)",
                &[&workspace.as_str(), &i32::try_from(version).unwrap_or(i32::MAX)],
            )?
            .get(0);
        Ok(count.max(0) as u64)
    }

    pub(crate) fn unindex_all(&self, workspace: &Workspace) -> Result<u64, PostgresStoreError> {
        Ok(self.connection()?.execute(
            "DELETE FROM entity_indexed
              WHERE memory_seq IN (SELECT seq FROM memories WHERE workspace = $1)",
            &[&workspace.as_str()],
        )?)
    }

    pub(crate) fn find_entities(
        &self,
        workspace: &Workspace,
        query: &EntityQuery,
    ) -> Result<Vec<EntitySummary>, PostgresStoreError> {
        let mut bound = Bound::default();
        let mut clause = format!(
            "e.workspace = {}",
            bound.bind(workspace.as_str().to_owned())
        );
        if let Some(kind) = query.kind {
            clause.push_str(&format!(
                " AND e.kind = {}",
                bound.bind(kind.as_str().to_owned())
            ));
        }
        if let Some(name) = query
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            // Names as written, or any key (addresses, handles, normalised names). SQLite's
            // LIKE ignores ASCII case; ILIKE does too.
            let escaped = name
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let normal = EntityKey::person_name(&escaped);
            let normal = normal
                .as_str()
                .trim_start_matches("person:name:")
                .to_owned();
            clause.push_str(&format!(
                " AND (e.name ILIKE {} ESCAPE '\\' OR EXISTS (SELECT 1 FROM entity_keys k
                   WHERE k.entity_seq = e.seq AND k.key ILIKE {} ESCAPE '\\'))",
                bound.bind(format!("%{escaped}%")),
                bound.bind(format!("%{normal}%")),
            ));
        }
        if let Some(project) = &query.project {
            clause.push_str(&format!(" AND m.project = {}", bound.bind(project.clone())));
        }
        summaries(&mut *self.connection()?, &clause, &mut bound, query.limit)
    }

    pub(crate) fn entities_with_ids(
        &self,
        workspace: &Workspace,
        ids: &[EntityId],
    ) -> Result<Vec<EntitySummary>, PostgresStoreError> {
        let mut bound = Bound::default();
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let count = ids.len();
        let clause = format!(
            "e.workspace = {} AND e.id = ANY({})",
            bound.bind(workspace.as_str().to_owned()),
            bound.bind(ids)
        );
        summaries(&mut *self.connection()?, &clause, &mut bound, count)
    }

    pub(crate) fn entity_of_key(
        &self,
        workspace: &Workspace,
        key: &EntityKey,
    ) -> Result<Option<EntityId>, PostgresStoreError> {
        self.connection()?
            .query_opt(
                "SELECT e.id FROM entity_keys k JOIN entities e ON e.seq = k.entity_seq
                  WHERE k.workspace = $1 AND k.key = $2",
                &[&workspace.as_str(), &key.as_str()],
            )?
            .map(|row| entity_id(column(&row, 0)?))
            .transpose()
    }

    pub(crate) fn entities_of_memory(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Vec<(EntityId, Vec<EntityRole>)>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT e.id, array_agg(me.role)
               FROM memories m JOIN memory_entities me ON me.memory_seq = m.seq
               JOIN entities e ON e.seq = me.entity_seq
              WHERE m.workspace = $1 AND m.id = $2
              GROUP BY e.seq, e.id",
            &[&workspace.as_str(), &memory.to_string()],
        )?;
        rows.iter()
            .map(|row| Ok((entity_id(column(row, 0)?)?, roles(column(row, 1)?))))
            .collect()
    }

    pub(crate) fn memories_of_entity(
        &self,
        workspace: &Workspace,
        id: EntityId,
        count: usize,
    ) -> Result<Vec<EntityMemory>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let Some(seq) = entity_seq(&mut *connection, workspace, id)? else {
            return Ok(Vec::new());
        };
        let rows = connection.query(
            "SELECT m.id, m.valid_from, array_agg(me.role)
               FROM memory_entities me JOIN memories m ON m.seq = me.memory_seq
              WHERE me.entity_seq = $1 AND m.forgotten_at IS NULL
              GROUP BY m.seq, m.id, m.valid_from ORDER BY m.valid_from DESC, m.seq DESC LIMIT $2",
            &[&seq, &limit(count)],
        )?;
        rows.iter()
            .map(|row| {
                Ok(EntityMemory {
                    memory_id: parse_id(column(row, 0)?)?,
                    valid_from: from_micros(column(row, 1)?),
                    roles: {
                        let mut roles: Vec<EntityRole> = column::<Vec<String>>(row, 2)?
                            .iter()
                            .filter_map(|r| r.parse().ok())
                            .collect();
                        roles.sort();
                        roles
                    },
                })
            })
            .collect()
    }

    pub(crate) fn related(
        &self,
        workspace: &Workspace,
        id: EntityId,
        count: usize,
    ) -> Result<Vec<(EntityId, u64)>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let Some(seq) = entity_seq(&mut *connection, workspace, id)? else {
            return Ok(Vec::new());
        };
        let rows = connection.query(
            "SELECT e.id, shared FROM (
                 SELECT other.entity_seq, count(DISTINCT other.memory_seq) AS shared
                   FROM memory_entities mine
                   JOIN memories m ON m.seq = mine.memory_seq AND m.forgotten_at IS NULL
                   JOIN memory_entities other ON other.memory_seq = mine.memory_seq
                  WHERE mine.entity_seq = $1 AND other.entity_seq <> $1
                  GROUP BY other.entity_seq ORDER BY shared DESC, other.entity_seq LIMIT $2
             ) r JOIN entities e ON e.seq = r.entity_seq
             ORDER BY shared DESC, r.entity_seq",
            &[&seq, &limit(count)],
        )?;
        rows.iter()
            .map(|row| {
                let shared: i64 = column(row, 1)?;
                Ok((entity_id(column(row, 0)?)?, shared.max(0) as u64))
            })
            .collect()
    }

    pub(crate) fn members(
        &self,
        workspace: &Workspace,
        id: EntityId,
    ) -> Result<Vec<EntityId>, PostgresStoreError> {
        let mut connection = self.connection()?;
        let Some(seq) = entity_seq(&mut *connection, workspace, id)? else {
            return Ok(Vec::new());
        };
        let rows = connection.query(
            "SELECT e.id FROM entities e WHERE e.seq IN (
                 SELECT person_seq FROM entity_members WHERE organization_seq = $1
                 UNION SELECT organization_seq FROM entity_members WHERE person_seq = $1)
              ORDER BY e.seq",
            &[&seq],
        )?;
        rows.iter().map(|row| entity_id(column(row, 0)?)).collect()
    }

    pub(crate) fn edges(
        &self,
        workspace: &Workspace,
        among: &[EntityId],
        count: usize,
    ) -> Result<Vec<EntityEdge>, PostgresStoreError> {
        if among.is_empty() {
            return Ok(Vec::new());
        }
        // The graph is drawn for a page of entities (a few hundred at most).
        let among: Vec<String> = among[..among.len().min(500)]
            .iter()
            .map(ToString::to_string)
            .collect();
        let rows = self.connection()?.query(
            "WITH chosen AS (SELECT seq, id FROM entities WHERE workspace = $1 AND id = ANY($2))
             SELECT a.id, b.id, count(DISTINCT x.memory_seq) AS weight
               FROM memory_entities x
               JOIN memory_entities y ON y.memory_seq = x.memory_seq AND y.entity_seq > x.entity_seq
               JOIN chosen a ON a.seq = x.entity_seq
               JOIN chosen b ON b.seq = y.entity_seq
               JOIN memories m ON m.seq = x.memory_seq AND m.forgotten_at IS NULL
              GROUP BY x.entity_seq, y.entity_seq, a.id, b.id
              ORDER BY weight DESC LIMIT $3",
            &[&workspace.as_str(), &among, &limit(count)],
        )?;
        rows.iter()
            .map(|row| {
                let weight: i64 = column(row, 2)?;
                Ok(EntityEdge {
                    from: entity_id(column(row, 0)?)?,
                    to: entity_id(column(row, 1)?)?,
                    weight: weight.max(0) as u64,
                })
            })
            .collect()
    }

    pub(crate) fn merge_into(
        &self,
        workspace: &Workspace,
        into: EntityId,
        from: EntityId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| {
            lock_index(tx, workspace)?;
            let (Some(target), Some(source)) = (
                entity_seq(tx, workspace, into)?,
                entity_seq(tx, workspace, from)?,
            ) else {
                return Ok(false);
            };
            merge(tx, target, source)?;
            log_event(
                tx,
                now,
                EventKind::EntityMerge,
                workspace,
                None,
                actor,
                json!({ "into": into.to_string(), "from": from.to_string() }),
            )?;
            Ok(true)
        })
    }

    pub(crate) fn done_commitments(
        &self,
        workspace: &Workspace,
    ) -> Result<Vec<CommitmentDone>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT id, done_at, by_memory FROM commitments_done WHERE workspace = $1",
            &[&workspace.as_str()],
        )?;
        rows.iter()
            .map(|row| {
                Ok(CommitmentDone {
                    id: column(row, 0)?,
                    at: from_micros(column(row, 1)?),
                    by_memory: column::<Option<&str>>(row, 2)?.map(parse_id).transpose()?,
                })
            })
            .collect()
    }

    pub(crate) fn commitment_done(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
        done: &CommitmentDone,
        actor: &Actor,
    ) -> Result<(), PostgresStoreError> {
        self.write(|tx| {
            let inserted = tx.execute(
                "INSERT INTO commitments_done (workspace, id, memory_seq, done_at, by_memory)
                     SELECT $1, $2, seq, $4, $5 FROM memories WHERE workspace = $1 AND id = $3
                 ON CONFLICT DO NOTHING",
                &[
                    &workspace.as_str(),
                    &done.id,
                    &memory.to_string(),
                    &micros(done.at),
                    &done.by_memory.map(|m| m.to_string()),
                ],
            )?;
            if inserted > 0 && done.by_memory.is_none() {
                log_event(
                    tx,
                    done.at,
                    EventKind::CommitmentDone,
                    workspace,
                    Some(memory),
                    actor,
                    json!({ "commitment": done.id }),
                )?;
            }
            Ok(())
        })
    }

    pub(crate) fn record_conflict_pairs(
        &self,
        workspace: &Workspace,
        found: &[(MemoryId, MemoryId, String)],
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<ConflictRecord>, PostgresStoreError> {
        self.write(|tx| {
            lock_index(tx, workspace)?;
            let mut recorded = Vec::new();
            for (older, newer, kind) in found {
                // A pair is one pair whichever of the two was found first.
                let known: bool = tx
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM conflicts c
                                          JOIN memories a ON a.seq = c.older_seq
                                          JOIN memories b ON b.seq = c.newer_seq
                                         WHERE c.workspace = $1
                                           AND ((a.id = $2 AND b.id = $3) OR (a.id = $3 AND b.id = $2)))",
                        &[&workspace.as_str(), &older.to_string(), &newer.to_string()],
                    )?
                    .get(0);
                if known {
                    continue;
                }
                let id = MemoryId::new_at(now).to_string();
                let inserted = tx.execute(
                    "INSERT INTO conflicts (workspace, id, older_seq, newer_seq, kind, found_at)
                         SELECT $1, $2, o.seq, n.seq, $5, $6
                           FROM memories o, memories n
                          WHERE o.workspace = $1 AND o.id = $3 AND n.workspace = $1 AND n.id = $4
                     ON CONFLICT DO NOTHING",
                    &[
                        &workspace.as_str(),
                        &id,
                        &older.to_string(),
                        &newer.to_string(),
                        kind,
                        &micros(now),
                    ],
                )?;
                if inserted == 0 {
                    continue;
                }
                log_event(
                    tx,
                    now,
                    EventKind::Conflict,
                    workspace,
                    Some(*newer),
                    actor,
                    json!({ "conflict": id, "with": older, "kind": kind }),
                )?;
                recorded.push(ConflictRecord {
                    id,
                    older: *older,
                    newer: *newer,
                    kind: kind.clone(),
                    found_at: now,
                    resolution: None,
                    resolved_at: None,
                    superseded: None,
                });
            }
            Ok(recorded)
        })
    }

    pub(crate) fn conflict_records(
        &self,
        workspace: &Workspace,
        open: bool,
    ) -> Result<Vec<ConflictRecord>, PostgresStoreError> {
        let rows = self.connection()?.query(
            "SELECT c.id, o.id, n.id, c.kind, c.found_at, c.resolution, c.resolved_at, c.superseded
               FROM conflicts c
               JOIN memories o ON o.seq = c.older_seq
               JOIN memories n ON n.seq = c.newer_seq
              WHERE c.workspace = $1 AND (NOT $2 OR c.resolution IS NULL)
              ORDER BY c.found_at DESC, c.id COLLATE \"C\" DESC",
            &[&workspace.as_str(), &open],
        )?;
        rows.iter()
            .map(|row| {
                Ok(ConflictRecord {
                    id: column(row, 0)?,
                    older: parse_id(column(row, 1)?)?,
                    newer: parse_id(column(row, 2)?)?,
                    kind: column(row, 3)?,
                    found_at: from_micros(column(row, 4)?),
                    resolution: column(row, 5)?,
                    resolved_at: optional_time(column(row, 6)?),
                    superseded: column::<Option<&str>>(row, 7)?.map(parse_id).transpose()?,
                })
            })
            .collect()
    }

    pub(crate) fn resolve_conflict_once(
        &self,
        workspace: &Workspace,
        id: &str,
        resolution: ConflictResolution,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, PostgresStoreError> {
        self.write(|tx| {
            // Locked: of two people resolving at once, the second finds it resolved.
            let Some(pair) = tx.query_opt(
                "SELECT o.id, n.id FROM conflicts c
                   JOIN memories o ON o.seq = c.older_seq
                   JOIN memories n ON n.seq = c.newer_seq
                  WHERE c.workspace = $1 AND c.id = $2 AND c.resolution IS NULL
                  FOR UPDATE OF c",
                &[&workspace.as_str(), &id],
            )?
            else {
                return Ok(false);
            };
            let (older, newer): (String, String) = (column(&pair, 0)?, column(&pair, 1)?);
            let loser = match resolution {
                ConflictResolution::Supersede { winner } => {
                    let winner = winner.to_string();
                    let loser = if winner == older {
                        newer.clone()
                    } else if winner == newer {
                        older.clone()
                    } else {
                        return Ok(false);
                    };
                    crate::writes::supersede(
                        tx,
                        workspace,
                        parse_id(&loser)?,
                        parse_id(&winner)?,
                        now,
                        actor,
                        json!({ "by": winner, "conflict": id }),
                    )?;
                    Some(loser)
                }
                _ => None,
            };
            tx.execute(
                "UPDATE conflicts SET resolution = $3, resolved_at = $4, superseded = $5
                  WHERE workspace = $1 AND id = $2 AND resolution IS NULL",
                &[
                    &workspace.as_str(),
                    &id,
                    &resolution.as_str(),
                    &micros(now),
                    &loser,
                ],
            )?;
            log_event(
                tx,
                now,
                EventKind::ConflictResolved,
                workspace,
                Some(parse_id(&newer)?),
                actor,
                json!({ "conflict": id, "resolution": resolution.as_str(), "with": older }),
            )?;
            Ok(true)
        })
    }
}
