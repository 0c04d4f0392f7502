//! The entity index in SQLite (migration 0007): entities, the keys they are recognised
//! by, their links to memories and their memberships, and commitments marked done.
//!
//! Counts and lists join the memories that are not forgotten, so a forgotten memory stops
//! counting at once and a purged one (its links go by cascade) leaves nothing behind.

use levh_core::entities::{
    CommitmentDone, ConflictRecord, ConflictResolution, EntityEdge, EntityId, EntityKey,
    EntityKind, EntityMemory, EntityQuery, EntityRole, EntityStore, EntitySummary, IndexedMemory,
    Sighting,
};
use levh_core::{Actor, EventKind, Memory, MemoryId, StoreError, Timestamp, Workspace};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use serde_json::json;

use crate::events::log_event;
use crate::rows::{MEMORY_COLUMNS, MEMORY_FROM, micros, parse_id, read_memory};
use crate::{SqliteStore, SqliteStoreError};

fn corrupt(what: String) -> SqliteStoreError {
    SqliteStoreError::Corrupt(what)
}

fn time(micros: i64) -> Result<Timestamp, SqliteStoreError> {
    Ok(crate::rows::from_micros(micros))
}

/// The entity a sighting names, created when no key is known, and merged into when its
/// keys name several (the first key — the address — wins).
fn resolve(
    tx: &Connection,
    workspace: &Workspace,
    sighting: &Sighting,
    now: Timestamp,
) -> rusqlite::Result<i64> {
    let mut found: Vec<(usize, i64)> = Vec::new();
    for (position, key) in sighting.keys.iter().enumerate() {
        let seq: Option<i64> = tx
            .prepare_cached("SELECT entity_seq FROM entity_keys WHERE workspace = ?1 AND key = ?2")?
            .query_row(params![workspace.as_str(), key.as_str()], |row| row.get(0))
            .optional()?;
        if let Some(seq) = seq {
            found.push((position, seq));
        }
    }
    let seq = match found.first() {
        Some(&(_, seq)) => seq,
        None => tx
            .prepare_cached(
                "INSERT INTO entities (id, workspace, kind, name, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING seq",
            )?
            .query_row(
                params![
                    EntityId::new_at(now).to_string(),
                    workspace.as_str(),
                    sighting.kind.as_str(),
                    sighting.name,
                    micros(now)
                ],
                |row| row.get(0),
            )?,
    };
    for &(_, other) in &found {
        if other != seq {
            merge(tx, seq, other)?;
        }
    }
    for key in &sighting.keys {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO entity_keys (workspace, key, entity_seq) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![workspace.as_str(), key.as_str(), seq])?;
    }
    // An entity first seen as an address or handle takes a person's name once one is known.
    if !sighting.name.contains('@') && !sighting.name.is_empty() {
        tx.prepare_cached("UPDATE entities SET name = ?2 WHERE seq = ?1 AND name LIKE '%@%'")?
            .execute(params![seq, sighting.name])?;
    }
    Ok(seq)
}

/// Moves everything of entity `from` to `into` and deletes `from`.
fn merge(tx: &Connection, into: i64, from: i64) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE entity_keys SET entity_seq = ?1 WHERE entity_seq = ?2",
        params![into, from],
    )?;
    tx.execute(
        "UPDATE OR IGNORE memory_entities SET entity_seq = ?1 WHERE entity_seq = ?2",
        params![into, from],
    )?;
    tx.execute(
        "UPDATE OR IGNORE entity_members SET organization_seq = ?1 WHERE organization_seq = ?2",
        params![into, from],
    )?;
    tx.execute(
        "UPDATE OR IGNORE entity_members SET person_seq = ?1 WHERE person_seq = ?2",
        params![into, from],
    )?;
    // What could not move (the same link already on `into`) goes with `from`, by cascade.
    tx.execute("DELETE FROM entities WHERE seq = ?1", [from])?;
    Ok(())
}

fn index_one(
    tx: &Connection,
    workspace: &Workspace,
    memory: &IndexedMemory,
    version: u32,
    now: Timestamp,
) -> rusqlite::Result<()> {
    let seq: Option<i64> = tx
        .prepare_cached("SELECT seq FROM memories WHERE workspace = ?1 AND id = ?2")?
        .query_row(
            params![workspace.as_str(), memory.memory_id.to_string()],
            |row| row.get(0),
        )
        .optional()?;
    let Some(memory_seq) = seq else {
        return Ok(()); // purged meanwhile
    };
    tx.prepare_cached("DELETE FROM memory_entities WHERE memory_seq = ?1")?
        .execute([memory_seq])?;
    for sighting in &memory.sightings {
        let entity = resolve(tx, workspace, sighting, now)?;
        tx.prepare_cached(
            "INSERT OR IGNORE INTO memory_entities (memory_seq, entity_seq, role) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![memory_seq, entity, sighting.role.as_str()])?;
        // A person takes part for their organizations too, even where only their name
        // is known (a transcript's speaker): the organization's count is its people's.
        if sighting.kind == EntityKind::Person && sighting.role.is_participation() {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO memory_entities (memory_seq, entity_seq, role)
                 SELECT ?1, organization_seq, 'organization' FROM entity_members WHERE person_seq = ?2",
            )?
            .execute(params![memory_seq, entity])?;
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
            tx.prepare_cached(
                "INSERT OR IGNORE INTO entity_members (organization_seq, person_seq) VALUES (?1, ?2)",
            )?
            .execute(params![organization, entity])?;
        }
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO entity_indexed (memory_seq, version, content_hash) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![memory_seq, version, memory.content_hash])?;
    Ok(())
}

/// seq, id, kind, name, memories, latest world time, sources (comma-separated).
type SummaryRow = (
    i64,
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
);

/// The summary columns over `entities e`, counting live memories; `{where}` filters.
fn summaries(
    conn: &Connection,
    clause: &str,
    mut values: Vec<Value>,
    limit: usize,
) -> Result<Vec<EntitySummary>, SqliteStoreError> {
    values.push(Value::Integer(limit.min(i64::MAX as usize) as i64));
    let sql = format!(
        "SELECT e.seq, e.id, e.kind, e.name, COUNT(DISTINCT m.seq), MAX(m.valid_from),
                group_concat(DISTINCT m.source)
         FROM entities e
         JOIN memory_entities me ON me.entity_seq = e.seq
         JOIN memories m ON m.seq = me.memory_seq AND m.forgotten_at IS NULL
         WHERE {clause}
         GROUP BY e.seq
         ORDER BY COUNT(DISTINCT m.seq) DESC, MAX(m.valid_from) DESC, e.name
         LIMIT ?"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows: Vec<SummaryRow> = statement
        .query_map(params_from_iter(values), |row: &Row<'_>| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut keys_of =
        conn.prepare_cached("SELECT key FROM entity_keys WHERE entity_seq = ?1 ORDER BY key")?;
    let mut found = Vec::with_capacity(rows.len());
    for (seq, id, kind, name, count, last, sources) in rows {
        let keys = keys_of
            .query_map([seq], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut channels: Vec<String> = sources
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        channels.sort();
        found.push(EntitySummary {
            id: id
                .parse()
                .map_err(|_| corrupt(format!("entity id {id:?}")))?,
            kind: kind
                .parse()
                .map_err(|_| corrupt(format!("entity kind {kind:?}")))?,
            name,
            memories: count as u64,
            last_seen: last.map(time).transpose()?,
            channels,
            keys: keys.into_iter().map(EntityKey::from_stored).collect(),
        });
    }
    Ok(found)
}

fn entity_seq(
    conn: &Connection,
    workspace: &Workspace,
    id: EntityId,
) -> Result<Option<i64>, SqliteStoreError> {
    Ok(conn
        .prepare_cached("SELECT seq FROM entities WHERE workspace = ?1 AND id = ?2")?
        .query_row(params![workspace.as_str(), id.to_string()], |row| {
            row.get(0)
        })
        .optional()?)
}

fn ids_of(conn: &Connection, seqs: &[i64]) -> Result<Vec<EntityId>, SqliteStoreError> {
    let mut statement = conn.prepare_cached("SELECT id FROM entities WHERE seq = ?1")?;
    let mut ids = Vec::with_capacity(seqs.len());
    for seq in seqs {
        let id: String = statement.query_row([seq], |row| row.get(0))?;
        ids.push(
            id.parse()
                .map_err(|_| corrupt(format!("entity id {id:?}")))?,
        );
    }
    Ok(ids)
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn known_people(
    store: &SqliteStore,
    workspace: &Workspace,
) -> Result<Vec<String>, SqliteStoreError> {
    let conn = store.read();
    let mut statement = conn.prepare_cached(
        "SELECT DISTINCT name FROM entities
             WHERE workspace = ?1 AND kind = 'person' AND name NOT LIKE '%@%'
             ORDER BY name",
    )?;
    Ok(statement
        .query_map([workspace.as_str()], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?)
}

fn index_entities(
    store: &SqliteStore,
    workspace: &Workspace,
    batch: &[IndexedMemory],
    version: u32,
    now: Timestamp,
) -> Result<(), SqliteStoreError> {
    if batch.is_empty() {
        return Ok(());
    }
    store.write(|tx| {
        for memory in batch {
            index_one(tx, workspace, memory, version, now)?;
        }
        Ok(())
    })
}

fn unindexed_memories(
    store: &SqliteStore,
    workspace: &Workspace,
    version: u32,
    after: Option<MemoryId>,
    limit: usize,
) -> Result<Vec<Memory>, SqliteStoreError> {
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} {MEMORY_FROM}
         LEFT JOIN entity_indexed x ON x.memory_seq = m.seq
         WHERE m.workspace = ?1
           AND m.seq > COALESCE((SELECT seq FROM memories WHERE id = ?4), 0)
           AND (x.memory_seq IS NULL OR x.version != ?2 OR x.content_hash != m.content_hash)
         ORDER BY m.seq LIMIT ?3"
    );
    let conn = store.read();
    let mut statement = conn.prepare_cached(&sql)?;
    Ok(statement
        .query_map(
            params![
                workspace.as_str(),
                version,
                limit as i64,
                after.map(|id| id.to_string())
            ],
            read_memory,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?)
}

fn count_unindexed(
    store: &SqliteStore,
    workspace: &Workspace,
    version: u32,
) -> Result<u64, SqliteStoreError> {
    Ok(store
        .read()
        .prepare_cached(
            "SELECT COUNT(*) FROM memories m LEFT JOIN entity_indexed x ON x.memory_seq = m.seq
             WHERE m.workspace = ?1
               AND (x.memory_seq IS NULL OR x.version != ?2 OR x.content_hash != m.content_hash)",
        )?
        .query_row(params![workspace.as_str(), version], |row| {
            row.get::<_, i64>(0)
        })
        .map(|n| n as u64)?)
}

fn mark_all_unindexed(store: &SqliteStore, workspace: &Workspace) -> Result<u64, SqliteStoreError> {
    store.write(|tx| {
        Ok(tx.execute(
            "DELETE FROM entity_indexed WHERE memory_seq IN (SELECT seq FROM memories WHERE workspace = ?1)",
            [workspace.as_str()],
        )
        .map(|n| n as u64)?)
    })
}

fn entities(
    store: &SqliteStore,
    workspace: &Workspace,
    query: &EntityQuery,
) -> Result<Vec<EntitySummary>, SqliteStoreError> {
    let mut clause = String::from("e.workspace = ?");
    let mut values = vec![Value::Text(workspace.as_str().to_owned())];
    if let Some(kind) = query.kind {
        clause.push_str(" AND e.kind = ?");
        values.push(Value::Text(kind.as_str().to_owned()));
    }
    if let Some(name) = query
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        // Names as written, or any key (addresses, handles, normalised names).
        clause.push_str(
            " AND (e.name LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM entity_keys k
               WHERE k.entity_seq = e.seq AND k.key LIKE ? ESCAPE '\\'))",
        );
        let escaped = name
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        values.push(Value::Text(format!("%{escaped}%")));
        let normal = EntityKey::person_name(&escaped);
        let normal = normal.as_str().trim_start_matches("person:name:");
        values.push(Value::Text(format!("%{normal}%")));
    }
    if let Some(project) = &query.project {
        clause.push_str(" AND m.project = ?");
        values.push(Value::Text(project.clone()));
    }
    summaries(&store.read(), &clause, values, query.limit)
}

fn entities_by_id(
    store: &SqliteStore,
    workspace: &Workspace,
    ids: &[EntityId],
) -> Result<Vec<EntitySummary>, SqliteStoreError> {
    let mut found = Vec::new();
    let conn = store.read();
    for chunk in ids.chunks(400) {
        let clause = format!(
            // `+`: the unique ids drive the lookup, not the workspace (see `get_many`).
            "+e.workspace = ? AND e.id IN ({})",
            placeholders(chunk.len())
        );
        let values = std::iter::once(Value::Text(workspace.as_str().to_owned()))
            .chain(chunk.iter().map(|id| Value::Text(id.to_string())))
            .collect();
        found.extend(summaries(&conn, &clause, values, chunk.len())?);
    }
    Ok(found)
}

fn entity_by_key(
    store: &SqliteStore,
    workspace: &Workspace,
    key: &EntityKey,
) -> Result<Option<EntityId>, SqliteStoreError> {
    let id: Option<String> = store
        .read()
        .prepare_cached(
            "SELECT e.id FROM entity_keys k JOIN entities e ON e.seq = k.entity_seq
             WHERE k.workspace = ?1 AND k.key = ?2",
        )?
        .query_row(params![workspace.as_str(), key.as_str()], |row| row.get(0))
        .optional()?;
    id.map(|id| id.parse().map_err(|_| corrupt(format!("entity id {id:?}"))))
        .transpose()
}

fn memory_entities(
    store: &SqliteStore,
    workspace: &Workspace,
    memory: MemoryId,
) -> Result<Vec<(EntityId, Vec<EntityRole>)>, SqliteStoreError> {
    let conn = store.read();
    // From the memory's row to its links (the links' primary key leads with the memory).
    let mut statement = conn.prepare_cached(
        "SELECT e.id, group_concat(me.role)
             FROM memories m JOIN memory_entities me ON me.memory_seq = m.seq
             JOIN entities e ON e.seq = me.entity_seq
             WHERE m.workspace = ?1 AND m.id = ?2
             GROUP BY e.seq",
    )?;
    let rows: Vec<(String, String)> = statement
        .query_map(params![workspace.as_str(), memory.to_string()], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(id, roles)| {
            let mut roles: Vec<EntityRole> =
                roles.split(',').filter_map(|r| r.parse().ok()).collect();
            roles.sort();
            roles.dedup();
            let id = id
                .parse()
                .map_err(|_| corrupt(format!("entity id {id:?}")))?;
            Ok((id, roles))
        })
        .collect()
}

fn entity_memories(
    store: &SqliteStore,
    workspace: &Workspace,
    id: EntityId,
    limit: usize,
) -> Result<Vec<EntityMemory>, SqliteStoreError> {
    let conn = store.read();
    let Some(seq) = entity_seq(&conn, workspace, id)? else {
        return Ok(Vec::new());
    };
    let mut statement = conn.prepare_cached(
        "SELECT m.id, m.valid_from, group_concat(me.role)
             FROM memory_entities me JOIN memories m ON m.seq = me.memory_seq
             WHERE me.entity_seq = ?1 AND m.forgotten_at IS NULL
             GROUP BY m.seq ORDER BY m.valid_from DESC, m.seq DESC LIMIT ?2",
    )?;
    let rows: Vec<(String, i64, String)> = statement
        .query_map(params![seq, limit.min(i64::MAX as usize) as i64], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(memory, at, roles)| {
            let mut roles: Vec<EntityRole> =
                roles.split(',').filter_map(|r| r.parse().ok()).collect();
            roles.sort();
            Ok(EntityMemory {
                memory_id: parse_id(&memory)?,
                valid_from: time(at)?,
                roles,
            })
        })
        .collect()
}

fn related_entities(
    store: &SqliteStore,
    workspace: &Workspace,
    id: EntityId,
    limit: usize,
) -> Result<Vec<(EntityId, u64)>, SqliteStoreError> {
    let conn = store.read();
    let Some(seq) = entity_seq(&conn, workspace, id)? else {
        return Ok(Vec::new());
    };
    let mut statement = conn.prepare_cached(
        "SELECT other.entity_seq, COUNT(DISTINCT other.memory_seq) AS shared
             FROM memory_entities mine
             JOIN memories m ON m.seq = mine.memory_seq AND m.forgotten_at IS NULL
             JOIN memory_entities other ON other.memory_seq = mine.memory_seq
             WHERE mine.entity_seq = ?1 AND other.entity_seq != ?1
             GROUP BY other.entity_seq ORDER BY shared DESC, other.entity_seq LIMIT ?2",
    )?;
    let rows: Vec<(i64, i64)> = statement
        .query_map(params![seq, limit.min(i64::MAX as usize) as i64], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let seqs: Vec<i64> = rows.iter().map(|(s, _)| *s).collect();
    let ids = ids_of(&conn, &seqs)?;
    Ok(ids
        .into_iter()
        .zip(rows)
        .map(|(id, (_, n))| (id, n as u64))
        .collect())
}

fn memberships(
    store: &SqliteStore,
    workspace: &Workspace,
    id: EntityId,
) -> Result<Vec<EntityId>, SqliteStoreError> {
    let conn = store.read();
    let Some(seq) = entity_seq(&conn, workspace, id)? else {
        return Ok(Vec::new());
    };
    let seqs = conn
        .prepare_cached(
            "SELECT person_seq FROM entity_members WHERE organization_seq = ?1
             UNION SELECT organization_seq FROM entity_members WHERE person_seq = ?1",
        )?
        .query_map([seq], |row| row.get::<_, i64>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    ids_of(&conn, &seqs)
}

fn entity_edges(
    store: &SqliteStore,
    workspace: &Workspace,
    among: &[EntityId],
    limit: usize,
) -> Result<Vec<EntityEdge>, SqliteStoreError> {
    if among.is_empty() {
        return Ok(Vec::new());
    }
    let conn = store.read();
    // The graph is drawn for a page of entities (a few hundred at most).
    let among = &among[..among.len().min(500)];
    let marks = placeholders(among.len());
    let sql = format!(
        "WITH chosen AS (SELECT seq, id FROM entities WHERE +workspace = ? AND id IN ({marks}))
         SELECT a.id, b.id, COUNT(DISTINCT x.memory_seq) AS weight
         FROM memory_entities x
         JOIN memory_entities y ON y.memory_seq = x.memory_seq AND y.entity_seq > x.entity_seq
         JOIN chosen a ON a.seq = x.entity_seq
         JOIN chosen b ON b.seq = y.entity_seq
         JOIN memories m ON m.seq = x.memory_seq AND m.forgotten_at IS NULL
         GROUP BY x.entity_seq, y.entity_seq
         ORDER BY weight DESC LIMIT ?"
    );
    let values = std::iter::once(Value::Text(workspace.as_str().to_owned()))
        .chain(among.iter().map(|id| Value::Text(id.to_string())))
        .chain(std::iter::once(Value::Integer(
            limit.min(i64::MAX as usize) as i64,
        )));
    let mut statement = conn.prepare_cached(&sql)?;
    let rows: Vec<(String, String, i64)> = statement
        .query_map(params_from_iter(values), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(a, b, weight)| {
            let parse = |id: &str| {
                id.parse::<EntityId>()
                    .map_err(|_| corrupt(format!("entity id {id:?}")))
            };
            Ok(EntityEdge {
                from: parse(&a)?,
                to: parse(&b)?,
                weight: weight as u64,
            })
        })
        .collect()
}

fn merge_entities(
    store: &SqliteStore,
    workspace: &Workspace,
    into: EntityId,
    from: EntityId,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    store.write(|tx| {
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

fn commitments_done(
    store: &SqliteStore,
    workspace: &Workspace,
) -> Result<Vec<CommitmentDone>, SqliteStoreError> {
    let conn = store.read();
    let mut statement = conn.prepare_cached(
        "SELECT id, done_at, by_memory FROM commitments_done WHERE workspace = ?1",
    )?;
    let rows: Vec<(String, i64, Option<String>)> = statement
        .query_map([workspace.as_str()], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(id, at, by)| {
            Ok(CommitmentDone {
                id,
                at: time(at)?,
                by_memory: by.map(|m| parse_id(&m)).transpose()?,
            })
        })
        .collect()
}

fn mark_commitment_done(
    store: &SqliteStore,
    workspace: &Workspace,
    memory: MemoryId,
    done: &CommitmentDone,
    actor: &Actor,
) -> Result<(), SqliteStoreError> {
    store.write(|tx| {
        let inserted = tx.execute(
            "INSERT OR IGNORE INTO commitments_done (workspace, id, memory_seq, done_at, by_memory)
                 SELECT ?1, ?2, seq, ?4, ?5 FROM memories WHERE workspace = ?1 AND id = ?3",
            params![
                workspace.as_str(),
                done.id,
                memory.to_string(),
                micros(done.at),
                done.by_memory.map(|m| m.to_string())
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

/// Each method is the function of the same name above; its error becomes a
/// [`StoreError`] here, once.
fn record_conflicts(
    store: &SqliteStore,
    workspace: &Workspace,
    found: &[(MemoryId, MemoryId, String)],
    now: Timestamp,
    actor: &Actor,
) -> Result<Vec<ConflictRecord>, SqliteStoreError> {
    store.write(|tx| {
        let mut recorded = Vec::new();
        for (older, newer, kind) in found {
            // A pair is one pair whichever of the two was found first.
            let known: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM conflicts c
                                  JOIN memories a ON a.seq = c.older_seq
                                  JOIN memories b ON b.seq = c.newer_seq
                                 WHERE c.workspace = ?1
                                   AND ((a.id = ?2 AND b.id = ?3) OR (a.id = ?3 AND b.id = ?2)))",
                params![workspace.as_str(), older.to_string(), newer.to_string()],
                |row| row.get(0),
            )?;
            if known {
                continue;
            }
            let id = MemoryId::new_at(now).to_string();
            let inserted = tx.execute(
                "INSERT OR IGNORE INTO conflicts (workspace, id, older_seq, newer_seq, kind, found_at)
                     SELECT ?1, ?2, o.seq, n.seq, ?5, ?6
                       FROM memories o, memories n
                      WHERE o.workspace = ?1 AND o.id = ?3 AND n.workspace = ?1 AND n.id = ?4",
                params![
                    workspace.as_str(),
                    id,
                    older.to_string(),
                    newer.to_string(),
                    kind,
                    micros(now)
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

fn conflicts(
    store: &SqliteStore,
    workspace: &Workspace,
    open: bool,
) -> Result<Vec<ConflictRecord>, SqliteStoreError> {
    let conn = store.read();
    let mut statement = conn.prepare_cached(
        "SELECT c.id, o.id, n.id, c.kind, c.found_at, c.resolution, c.resolved_at, c.superseded
           FROM conflicts c
           JOIN memories o ON o.seq = c.older_seq
           JOIN memories n ON n.seq = c.newer_seq
          WHERE c.workspace = ?1 AND (?2 = 0 OR c.resolution IS NULL)
          ORDER BY c.found_at DESC, c.id DESC",
    )?;
    type Row = (
        String,
        String,
        String,
        String,
        i64,
        Option<String>,
        Option<i64>,
        Option<String>,
    );
    let rows: Vec<Row> = statement
        .query_map(params![workspace.as_str(), i64::from(open)], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(
            |(id, older, newer, kind, found, resolution, resolved, superseded)| {
                Ok(ConflictRecord {
                    id,
                    older: parse_id(&older)?,
                    newer: parse_id(&newer)?,
                    kind,
                    found_at: time(found)?,
                    resolution,
                    resolved_at: resolved.map(time).transpose()?,
                    superseded: superseded.map(|m| parse_id(&m)).transpose()?,
                })
            },
        )
        .collect()
}

fn resolve_conflict(
    store: &SqliteStore,
    workspace: &Workspace,
    id: &str,
    resolution: ConflictResolution,
    now: Timestamp,
    actor: &Actor,
) -> Result<bool, SqliteStoreError> {
    store.write(|tx| {
        let pair: Option<(String, String)> = tx
            .query_row(
                "SELECT o.id, n.id FROM conflicts c
                   JOIN memories o ON o.seq = c.older_seq
                   JOIN memories n ON n.seq = c.newer_seq
                  WHERE c.workspace = ?1 AND c.id = ?2 AND c.resolution IS NULL",
                params![workspace.as_str(), id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let Some((older, newer)) = pair else {
            return Ok(false);
        };
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
            "UPDATE conflicts SET resolution = ?3, resolved_at = ?4, superseded = ?5
                 WHERE workspace = ?1 AND id = ?2 AND resolution IS NULL",
            params![
                workspace.as_str(),
                id,
                resolution.as_str(),
                micros(now),
                loser
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

impl EntityStore for SqliteStore {
    fn known_people(&self, workspace: &Workspace) -> Result<Vec<String>, StoreError> {
        Ok(known_people(self, workspace)?)
    }

    fn index_entities(
        &self,
        workspace: &Workspace,
        batch: &[IndexedMemory],
        version: u32,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        Ok(index_entities(self, workspace, batch, version, now)?)
    }

    fn unindexed_memories(
        &self,
        workspace: &Workspace,
        version: u32,
        after: Option<MemoryId>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        Ok(unindexed_memories(self, workspace, version, after, limit)?)
    }

    fn count_unindexed(&self, workspace: &Workspace, version: u32) -> Result<u64, StoreError> {
        Ok(count_unindexed(self, workspace, version)?)
    }

    fn mark_all_unindexed(&self, workspace: &Workspace) -> Result<u64, StoreError> {
        Ok(mark_all_unindexed(self, workspace)?)
    }

    fn entities(
        &self,
        workspace: &Workspace,
        query: &EntityQuery,
    ) -> Result<Vec<EntitySummary>, StoreError> {
        Ok(entities(self, workspace, query)?)
    }

    fn entities_by_id(
        &self,
        workspace: &Workspace,
        ids: &[EntityId],
    ) -> Result<Vec<EntitySummary>, StoreError> {
        Ok(entities_by_id(self, workspace, ids)?)
    }

    fn entity_by_key(
        &self,
        workspace: &Workspace,
        key: &EntityKey,
    ) -> Result<Option<EntityId>, StoreError> {
        Ok(entity_by_key(self, workspace, key)?)
    }

    fn entity_memories(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<EntityMemory>, StoreError> {
        Ok(entity_memories(self, workspace, id, limit)?)
    }

    fn memory_entities(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Vec<(EntityId, Vec<EntityRole>)>, StoreError> {
        Ok(memory_entities(self, workspace, memory)?)
    }

    fn related_entities(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<(EntityId, u64)>, StoreError> {
        Ok(related_entities(self, workspace, id, limit)?)
    }

    fn memberships(
        &self,
        workspace: &Workspace,
        id: EntityId,
    ) -> Result<Vec<EntityId>, StoreError> {
        Ok(memberships(self, workspace, id)?)
    }

    fn entity_edges(
        &self,
        workspace: &Workspace,
        among: &[EntityId],
        limit: usize,
    ) -> Result<Vec<EntityEdge>, StoreError> {
        Ok(entity_edges(self, workspace, among, limit)?)
    }

    fn merge_entities(
        &self,
        workspace: &Workspace,
        into: EntityId,
        from: EntityId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(merge_entities(self, workspace, into, from, now, actor)?)
    }

    fn commitments_done(&self, workspace: &Workspace) -> Result<Vec<CommitmentDone>, StoreError> {
        Ok(commitments_done(self, workspace)?)
    }

    fn mark_commitment_done(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
        done: &CommitmentDone,
        actor: &Actor,
    ) -> Result<(), StoreError> {
        Ok(mark_commitment_done(self, workspace, memory, done, actor)?)
    }

    fn record_conflicts(
        &self,
        workspace: &Workspace,
        found: &[(MemoryId, MemoryId, String)],
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<ConflictRecord>, StoreError> {
        Ok(record_conflicts(self, workspace, found, now, actor)?)
    }

    fn conflicts(
        &self,
        workspace: &Workspace,
        open: bool,
    ) -> Result<Vec<ConflictRecord>, StoreError> {
        Ok(conflicts(self, workspace, open)?)
    }

    fn resolve_conflict(
        &self,
        workspace: &Workspace,
        id: &str,
        resolution: ConflictResolution,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError> {
        Ok(resolve_conflict(
            self, workspace, id, resolution, now, actor,
        )?)
    }
}
