//! What is moved, table by table, in order: how each SQLite table is read (a keyset page
//! at a time) and how its rows are written into PostgreSQL.
//!
//! PostgreSQL numbers memories and entities itself (`GENERATED ALWAYS AS IDENTITY`), so
//! a row that names a memory by its SQLite `seq` is read with the memory's id and content
//! hash, and written joined to the target's memory of that id *and* hash: a team memory
//! that happens to share an id with a different text never receives another memory's
//! vector, key or link. Every write is `ON CONFLICT DO NOTHING` (or, for links, an
//! `UPDATE` of links still empty), so running a step again changes nothing.
//!
//! Each step's `write` runs after the batch's rows are bound as arrays in a CTE named
//! `batch` (one column per [`Column`], in order) and returns one number: the rows it
//! copied. `refusals`, run only when fewer rows were copied than read, returns
//! `(label, reason)` for each row of the batch that is neither copied nor already there.

/// How a column travels: read from SQLite, bound to PostgreSQL as an array of this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `text` (JSON too: cast to `jsonb` in the step's SQL).
    Text,
    /// `bigint`.
    Int,
    /// `double precision`.
    Float,
    /// SQLite's 0/1 as `boolean`.
    Bool,
    /// A little-endian `f32` blob as pgvector's `vector`.
    Vector,
    /// A blob as `bytea`.
    Bytes,
}

/// One column of a step's batch: its name in `batch`, the SQLite expression it is read
/// from, and its type.
pub(crate) type Column = (&'static str, &'static str, Kind);

/// One table's move.
#[derive(Debug)]
pub(crate) struct Step {
    /// The SQLite table (what the report names).
    pub name: &'static str,
    /// The SQLite `FROM` clause; the table itself is `t`.
    pub from: &'static str,
    /// A condition on the rows moved, or "".
    pub filter: &'static str,
    /// The keyset the table is read in (its primary key or rowid), qualified.
    pub key: &'static [&'static str],
    /// The batch's columns; the first names a row in the report.
    pub columns: &'static [Column],
    /// The write (after `WITH batch AS (…)`), returning the count copied.
    pub write: &'static str,
    /// `(label, reason)` of the rows refused (after `WITH batch AS (…)`), or "".
    pub refusals: &'static str,
}

use Kind::{Bool, Bytes, Float, Int, Text, Vector};

/// The SQLite tables that are not moved, each with why. The test
/// `every_sqlite_table_is_moved_or_named_here` fails when a migration adds a table that
/// is in neither list.
pub(crate) const NOT_MOVED: &[(&str, &str)] = &[
    (
        "memories_fts",
        "SQLite's full-text index; PostgreSQL computes its own (a generated tsvector column)",
    ),
    ("memories_fts_data", "part of SQLite's full-text index"),
    ("memories_fts_idx", "part of SQLite's full-text index"),
    ("memories_fts_docsize", "part of SQLite's full-text index"),
    ("memories_fts_config", "part of SQLite's full-text index"),
    (
        "vector_changes",
        "SQLite-only change log feeding levh's own vector index; pgvector's HNSW index replaces it",
    ),
    (
        "memory_standing_changes",
        "SQLite-only change log feeding an in-process cache; PostgreSQL's indexes answer those reads",
    ),
    (
        "memory_text_changes",
        "SQLite-only change log feeding the in-process text ranking; PostgreSQL ranks with its index",
    ),
    (
        "project_changes",
        "SQLite-only counter for an in-process cache of each project's memories",
    ),
    (
        "near_duplicate_keys",
        "the same keys as near_duplicate_key_lists (moved from there), split for SQLite's page writes",
    ),
    (
        "near_duplicate_keys_recent",
        "the same keys as near_duplicate_key_lists (moved from there), split for SQLite's page writes",
    ),
    (
        "near_duplicate_keys_merge_cursor",
        "where SQLite's key merge stands; PostgreSQL keeps the keys in one table",
    ),
    (
        "presence",
        "the MCP sessions connected to the personal store right now; the team server's clients record their own",
    ),
    ("sqlite_sequence", "SQLite's own AUTOINCREMENT bookkeeping"),
    ("sqlite_stat1", "SQLite's own query planner statistics"),
    ("sqlite_stat4", "SQLite's own query planner statistics"),
];

/// The refusal of rows whose memory is not in the target (it was refused itself: a
/// different memory there has its id).
macro_rules! memory_not_moved {
    ($id:literal, $hash:literal) => {
        concat!(
            "SELECT x.",
            $id,
            ", 'its memory was not moved' FROM batch x
              WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.",
            $id,
            " AND m.content_hash = x.",
            $hash,
            ")"
        )
    };
}

/// Every step, in the order the rows must arrive: sessions before the memories that name
/// them, memories before their vectors, keys and links, entities before their links,
/// and the event log last.
pub(crate) const STEPS: &[Step] = &[
    Step {
        name: "sessions",
        from: "sessions t",
        filter: "",
        key: &["t.rowid"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("project", "t.project", Text),
            ("client", "t.client", Text),
            ("started_at", "t.started_at", Int),
            ("ended_at", "t.ended_at", Int),
            ("metadata", "t.metadata", Text),
        ],
        write: "ins AS (
            INSERT INTO sessions (id, workspace, project, client, started_at, ended_at, metadata)
            SELECT id, workspace, project, client, started_at, ended_at, metadata::jsonb FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the database already has a different session with this id'
            FROM batch x JOIN sessions s ON s.id = x.id
            WHERE s.workspace <> x.workspace OR s.started_at <> x.started_at",
    },
    Step {
        name: "memories",
        from: "memories t",
        filter: "",
        key: &["t.seq"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("project", "t.project", Text),
            ("content", "t.content", Text),
            ("kind", "t.kind", Text),
            ("source", "t.source", Text),
            ("importance", "t.importance", Float),
            ("pinned", "t.pinned", Bool),
            ("stability_hours", "t.stability_hours", Float),
            ("last_recalled_at", "t.last_recalled_at", Int),
            ("recall_count", "t.recall_count", Int),
            ("created_at", "t.created_at", Int),
            ("valid_from", "t.valid_from", Int),
            ("valid_to", "t.valid_to", Int),
            ("content_hash", "t.content_hash", Text),
            ("admission_verdict", "t.admission_verdict", Text),
            ("admission_reasons", "t.admission_reasons", Text),
            ("admission_decided_by", "t.admission_decided_by", Text),
            ("metadata", "t.metadata", Text),
            ("session_id", "t.session_id", Text),
            ("forgotten_at", "t.forgotten_at", Int),
            ("updated_at", "t.updated_at", Int),
            ("held_id", "t.held_id", Text),
        ],
        // `superseded_by` comes later (the step "memories.superseded_by"): it names another
        // memory, which may come in a later batch. A session refused for a colliding id
        // is not named (it would be the team's session).
        write: "ins AS (
            INSERT INTO memories (id, workspace, project, content, kind, source, importance,
                pinned, stability_hours, last_recalled_at, recall_count, created_at, valid_from,
                valid_to, content_hash, admission_verdict, admission_reasons,
                admission_decided_by, metadata, session_id, forgotten_at, updated_at, held_id)
            SELECT x.id, x.workspace, x.project, x.content, x.kind, x.source, x.importance,
                x.pinned, x.stability_hours, x.last_recalled_at, x.recall_count, x.created_at,
                x.valid_from, x.valid_to, x.content_hash, x.admission_verdict,
                x.admission_reasons::jsonb, x.admission_decided_by, x.metadata::jsonb,
                (SELECT s.id FROM sessions s WHERE s.id = x.session_id AND s.workspace = x.workspace),
                x.forgotten_at, x.updated_at, x.held_id
            FROM batch x
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the database already has a different memory with this id (not overwritten)'
            FROM batch x JOIN memories m ON m.id = x.id
            WHERE m.content_hash <> x.content_hash OR m.workspace <> x.workspace",
    },
    Step {
        name: "memory_embeddings",
        from: "memory_embeddings t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("model", "t.model", Text),
            ("dimension", "t.dimension", Int),
            ("vector", "t.vector", Vector),
        ],
        write: "ins AS (
            INSERT INTO memory_embeddings (memory_seq, model, dimension, vector)
            SELECT m.seq, x.model, x.dimension, x.vector
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "content_hash"),
    },
    Step {
        name: "near_duplicate_key_lists",
        from: "near_duplicate_key_lists t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("keys", "t.keys", Bytes),
        ],
        // Each list holds 8-byte big-endian two's-complement keys (SQLite migration 0010);
        // PostgreSQL keeps one row per key. A list counts as copied when any of its keys was.
        write: "ins AS (
            INSERT INTO near_duplicate_keys (key, memory_seq)
            SELECT DISTINCT ('x' || encode(substring(x.keys FROM i * 8 + 1 FOR 8), 'hex'))::bit(64)::bigint, m.seq
            FROM batch x
            JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            CROSS JOIN generate_series(0, length(x.keys) / 8 - 1) AS i
            ON CONFLICT DO NOTHING RETURNING memory_seq)
            SELECT count(DISTINCT memory_seq) FROM ins",
        refusals: memory_not_moved!("memory_id", "content_hash"),
    },
    Step {
        name: "memories.superseded_by",
        from: "memories t JOIN memories s ON s.id = t.superseded_by",
        filter: "t.superseded_by IS NOT NULL",
        key: &["t.seq"],
        columns: &[
            ("id", "t.id", Text),
            ("content_hash", "t.content_hash", Text),
            ("superseded_by", "t.superseded_by", Text),
            ("superseded_by_hash", "s.content_hash", Text),
        ],
        write: "ins AS (
            UPDATE memories m SET superseded_by = x.superseded_by
            FROM batch x
            WHERE m.id = x.id AND m.content_hash = x.content_hash AND m.superseded_by IS NULL
              AND EXISTS (SELECT 1 FROM memories s
                           WHERE s.id = x.superseded_by AND s.content_hash = x.superseded_by_hash)
            RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the memory or the one that superseded it was not moved, or the database links it elsewhere'
            FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.id
                AND m.content_hash = x.content_hash AND m.superseded_by = x.superseded_by)",
    },
    Step {
        name: "held_candidates",
        from: "held_candidates t",
        filter: "",
        key: &["t.rowid"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("project", "t.project", Text),
            ("content", "t.content", Text),
            ("kind", "t.kind", Text),
            ("source", "t.source", Text),
            ("importance", "t.importance", Float),
            ("pinned", "t.pinned", Bool),
            ("valid_from", "t.valid_from", Int),
            ("valid_to", "t.valid_to", Int),
            ("metadata", "t.metadata", Text),
            ("session_id", "t.session_id", Text),
            ("content_hash", "t.content_hash", Text),
            ("redactions", "t.redactions", Text),
            ("reason", "t.reason", Text),
            ("nearest_id", "t.nearest_id", Text),
            ("similarity", "t.similarity", Float),
            ("measure", "t.measure", Text),
            ("status", "t.status", Text),
            ("created_at", "t.created_at", Int),
            ("expires_at", "t.expires_at", Int),
            ("decided_at", "t.decided_at", Int),
            ("decided_by", "t.decided_by", Text),
            ("decided_surface", "t.decided_surface", Text),
            ("memory_id", "t.memory_id", Text),
            ("updates_memory_id", "t.updates_memory_id", Text),
        ],
        write: "ins AS (
            INSERT INTO held_candidates (id, workspace, project, content, kind, source,
                importance, pinned, valid_from, valid_to, metadata, session_id, content_hash,
                redactions, reason, nearest_id, similarity, measure, status, created_at,
                expires_at, decided_at, decided_by, decided_surface, memory_id, updates_memory_id)
            SELECT id, workspace, project, content, kind, source, importance, pinned, valid_from,
                valid_to, metadata::jsonb, session_id, content_hash, redactions::jsonb, reason,
                nearest_id, similarity, measure, status, created_at, expires_at, decided_at,
                decided_by, decided_surface, memory_id, updates_memory_id
            FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the database already has a different held candidate with this id'
            FROM batch x JOIN held_candidates h ON h.id = x.id
            WHERE h.content_hash <> x.content_hash OR h.workspace <> x.workspace",
    },
    Step {
        name: "tokens",
        from: "tokens t",
        filter: "",
        key: &["t.rowid"],
        columns: &[
            ("id", "t.id", Text),
            ("secret_hash", "t.secret_hash", Text),
            ("workspace", "t.workspace", Text),
            ("role", "t.role", Text),
            ("label", "t.label", Text),
            ("created_at", "t.created_at", Int),
            ("revoked_at", "t.revoked_at", Int),
        ],
        write: "ins AS (
            INSERT INTO tokens (id, secret_hash, workspace, role, label, created_at, revoked_at)
            SELECT id, secret_hash, workspace, role, label, created_at, revoked_at FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the database already has a different token with this id or secret'
            FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM tokens k WHERE k.id = x.id
                AND k.secret_hash = x.secret_hash AND k.workspace = x.workspace)",
    },
    Step {
        name: "memory_keys",
        from: "memory_keys t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("workspace", "t.workspace", Text),
            ("project", "t.project", Text),
            ("key", "t.key", Text),
        ],
        write: "ins AS (
            INSERT INTO memory_keys (memory_seq, workspace, project, key)
            SELECT m.seq, x.workspace, x.project, x.key
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "content_hash"),
    },
    Step {
        name: "working_memories",
        from: "working_memories t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("session_id", "t.session_id", Text),
        ],
        write: "ins AS (
            INSERT INTO working_memories (memory_seq, session_id)
            SELECT m.seq, x.session_id
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "content_hash"),
    },
    Step {
        name: "review_schedule",
        from: "review_schedule t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("workspace", "t.workspace", Text),
            ("due_at", "t.due_at", Int),
            ("interval_days", "t.interval_days", Int),
            ("reviews", "t.reviews", Int),
        ],
        write: "ins AS (
            INSERT INTO review_schedule (memory_seq, workspace, due_at, interval_days, reviews)
            SELECT m.seq, x.workspace, x.due_at, x.interval_days, x.reviews
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "content_hash"),
    },
    Step {
        name: "consolidated",
        from: "consolidated t JOIN memories a ON a.seq = t.summary_seq JOIN memories b ON b.seq = t.member_seq",
        filter: "",
        key: &["t.summary_seq", "t.member_seq"],
        columns: &[
            ("summary_id", "a.id", Text),
            ("summary_hash", "a.content_hash", Text),
            ("member_id", "b.id", Text),
            ("member_hash", "b.content_hash", Text),
            ("prior_valid_to", "t.prior_valid_to", Int),
        ],
        write: "ins AS (
            INSERT INTO consolidated (summary_seq, member_seq, prior_valid_to)
            SELECT a.seq, b.seq, x.prior_valid_to
            FROM batch x
            JOIN memories a ON a.id = x.summary_id AND a.content_hash = x.summary_hash
            JOIN memories b ON b.id = x.member_id AND b.content_hash = x.member_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.summary_id, 'the summary or its member was not moved' FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM memories a WHERE a.id = x.summary_id AND a.content_hash = x.summary_hash)
               OR NOT EXISTS (SELECT 1 FROM memories b WHERE b.id = x.member_id AND b.content_hash = x.member_hash)",
    },
    Step {
        name: "attachments",
        from: "attachments t JOIN memories a ON a.seq = t.memory_seq JOIN memories b ON b.seq = t.attached_to_seq",
        filter: "",
        key: &["t.memory_seq"],
        // `sha256` must stay the fifth column: the move reads each file by it (see
        // `files_of` in lib.rs) before this write.
        columns: &[
            ("memory_id", "a.id", Text),
            ("content_hash", "a.content_hash", Text),
            ("attached_to_id", "b.id", Text),
            ("attached_to_hash", "b.content_hash", Text),
            ("sha256", "t.sha256", Text),
            ("name", "t.name", Text),
            ("media_type", "t.media_type", Text),
            ("bytes", "t.bytes", Int),
        ],
        write: "ins AS (
            INSERT INTO attachments (memory_seq, attached_to_seq, sha256, name, media_type, bytes)
            SELECT a.seq, b.seq, x.sha256, x.name, x.media_type, x.bytes
            FROM batch x
            JOIN memories a ON a.id = x.memory_id AND a.content_hash = x.content_hash
            JOIN memories b ON b.id = x.attached_to_id AND b.content_hash = x.attached_to_hash
            WHERE EXISTS (SELECT 1 FROM attachment_files f WHERE f.sha256 = x.sha256)
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.memory_id, CASE
                WHEN NOT EXISTS (SELECT 1 FROM attachment_files f WHERE f.sha256 = x.sha256)
                    THEN 'its file is missing from the personal store''s attachments folder, or does not match its digest'
                ELSE 'its memory or the memory it is attached to was not moved' END
            FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM attachment_files f WHERE f.sha256 = x.sha256)
               OR NOT EXISTS (SELECT 1 FROM memories a WHERE a.id = x.memory_id AND a.content_hash = x.content_hash)
               OR NOT EXISTS (SELECT 1 FROM memories b WHERE b.id = x.attached_to_id AND b.content_hash = x.attached_to_hash)",
    },
    Step {
        name: "entities",
        from: "entities t",
        filter: "",
        key: &["t.seq"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("kind", "t.kind", Text),
            ("name", "t.name", Text),
            ("created_at", "t.created_at", Int),
        ],
        write: "ins AS (
            INSERT INTO entities (id, workspace, kind, name, created_at)
            SELECT id, workspace, kind, name, created_at FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'the database already has a different entity with this id'
            FROM batch x JOIN entities e ON e.id = x.id
            WHERE e.workspace <> x.workspace OR e.kind <> x.kind",
    },
    Step {
        name: "entity_keys",
        from: "entity_keys t JOIN entities e ON e.seq = t.entity_seq",
        filter: "",
        key: &["t.workspace", "t.key"],
        columns: &[
            ("key", "t.key", Text),
            ("workspace", "t.workspace", Text),
            ("entity_id", "e.id", Text),
        ],
        write: "ins AS (
            INSERT INTO entity_keys (workspace, key, entity_seq)
            SELECT x.workspace, x.key, e.seq FROM batch x JOIN entities e ON e.id = x.entity_id
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        // A team's database may already know the same person under an entity of its own:
        // the key stays with that one (`levh entities merge` joins the two).
        refusals: "SELECT x.key, CASE WHEN e.seq IS NULL THEN 'its entity was not moved'
                ELSE 'the database already names another entity by this key' END
            FROM batch x
            LEFT JOIN entities e ON e.id = x.entity_id
            LEFT JOIN entity_keys k ON k.workspace = x.workspace AND k.key = x.key
            WHERE e.seq IS NULL OR k.entity_seq IS DISTINCT FROM e.seq",
    },
    Step {
        name: "memory_entities",
        from: "memory_entities t JOIN memories mm ON mm.seq = t.memory_seq JOIN entities e ON e.seq = t.entity_seq",
        filter: "",
        key: &["t.memory_seq", "t.entity_seq", "t.role"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("content_hash", "mm.content_hash", Text),
            ("entity_id", "e.id", Text),
            ("role", "t.role", Text),
        ],
        write: "ins AS (
            INSERT INTO memory_entities (memory_seq, entity_seq, role)
            SELECT m.seq, e.seq, x.role
            FROM batch x
            JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.content_hash
            JOIN entities e ON e.id = x.entity_id
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.memory_id, 'its memory or its entity was not moved' FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.memory_id AND m.content_hash = x.content_hash)
               OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = x.entity_id)",
    },
    Step {
        name: "entity_members",
        from: "entity_members t JOIN entities o ON o.seq = t.organization_seq JOIN entities p ON p.seq = t.person_seq",
        filter: "",
        key: &["t.organization_seq", "t.person_seq"],
        columns: &[
            ("organization_id", "o.id", Text),
            ("person_id", "p.id", Text),
        ],
        write: "ins AS (
            INSERT INTO entity_members (organization_seq, person_seq)
            SELECT o.seq, p.seq FROM batch x
            JOIN entities o ON o.id = x.organization_id
            JOIN entities p ON p.id = x.person_id
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.organization_id, 'the organization or the person was not moved' FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM entities o WHERE o.id = x.organization_id)
               OR NOT EXISTS (SELECT 1 FROM entities p WHERE p.id = x.person_id)",
    },
    Step {
        name: "entity_indexed",
        from: "entity_indexed t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.memory_seq"],
        columns: &[
            ("memory_id", "mm.id", Text),
            ("memory_hash", "mm.content_hash", Text),
            ("version", "t.version", Int),
            ("content_hash", "t.content_hash", Text),
        ],
        write: "ins AS (
            INSERT INTO entity_indexed (memory_seq, version, content_hash)
            SELECT m.seq, x.version, x.content_hash
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.memory_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "memory_hash"),
    },
    Step {
        name: "commitments_done",
        from: "commitments_done t JOIN memories mm ON mm.seq = t.memory_seq",
        filter: "",
        key: &["t.workspace", "t.id"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("memory_id", "mm.id", Text),
            ("memory_hash", "mm.content_hash", Text),
            ("done_at", "t.done_at", Int),
            ("by_memory", "t.by_memory", Text),
        ],
        write: "ins AS (
            INSERT INTO commitments_done (workspace, id, memory_seq, done_at, by_memory)
            SELECT x.workspace, x.id, m.seq, x.done_at, x.by_memory
            FROM batch x JOIN memories m ON m.id = x.memory_id AND m.content_hash = x.memory_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: memory_not_moved!("memory_id", "memory_hash"),
    },
    Step {
        name: "conflicts",
        from: "conflicts t JOIN memories a ON a.seq = t.older_seq JOIN memories b ON b.seq = t.newer_seq",
        filter: "",
        key: &["t.workspace", "t.id"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("older_id", "a.id", Text),
            ("older_hash", "a.content_hash", Text),
            ("newer_id", "b.id", Text),
            ("newer_hash", "b.content_hash", Text),
            ("kind", "t.kind", Text),
            ("found_at", "t.found_at", Int),
            ("resolution", "t.resolution", Text),
            ("resolved_at", "t.resolved_at", Int),
            ("superseded", "t.superseded", Text),
        ],
        write: "ins AS (
            INSERT INTO conflicts (workspace, id, older_seq, newer_seq, kind, found_at,
                resolution, resolved_at, superseded)
            SELECT x.workspace, x.id, a.seq, b.seq, x.kind, x.found_at, x.resolution,
                x.resolved_at, x.superseded
            FROM batch x
            JOIN memories a ON a.id = x.older_id AND a.content_hash = x.older_hash
            JOIN memories b ON b.id = x.newer_id AND b.content_hash = x.newer_hash
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.id, 'one of its two memories was not moved' FROM batch x
            WHERE NOT EXISTS (SELECT 1 FROM memories a WHERE a.id = x.older_id AND a.content_hash = x.older_hash)
               OR NOT EXISTS (SELECT 1 FROM memories b WHERE b.id = x.newer_id AND b.content_hash = x.newer_hash)",
    },
    Step {
        name: "sync_state",
        from: "sync_state t",
        filter: "",
        key: &["t.workspace", "t.connector"],
        columns: &[
            ("connector", "t.connector", Text),
            ("workspace", "t.workspace", Text),
            ("cursor", "t.cursor", Text),
            ("updated_at", "t.updated_at", Int),
        ],
        write: "ins AS (
            INSERT INTO sync_state (workspace, connector, cursor, updated_at)
            SELECT workspace, connector, cursor, updated_at FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        // The team's own cursor for the connector is kept: the next sync of either goes on
        // from the team's.
        refusals: "SELECT x.connector, 'the database already has its own cursor for this connector'
            FROM batch x JOIN sync_state s ON s.workspace = x.workspace AND s.connector = x.connector
            WHERE s.cursor IS DISTINCT FROM x.cursor",
    },
    Step {
        name: "sync_items",
        from: "sync_items t",
        filter: "",
        key: &["t.workspace", "t.connector", "t.source_id"],
        columns: &[
            ("source_id", "t.source_id", Text),
            ("workspace", "t.workspace", Text),
            ("connector", "t.connector", Text),
            ("content_hash", "t.content_hash", Text),
            ("memory_id", "t.memory_id", Text),
            ("held_id", "t.held_id", Text),
            ("verdict", "t.verdict", Text),
            ("updated_at", "t.updated_at", Int),
            ("listing", "t.listing", Text),
        ],
        write: "ins AS (
            INSERT INTO sync_items (workspace, connector, source_id, content_hash, memory_id,
                held_id, verdict, updated_at, listing)
            SELECT workspace, connector, source_id, content_hash, memory_id, held_id, verdict,
                updated_at, listing
            FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "SELECT x.source_id, 'the database already tracks this item of the connector, as another memory'
            FROM batch x JOIN sync_items s ON s.workspace = x.workspace
                AND s.connector = x.connector AND s.source_id = x.source_id
            WHERE s.content_hash <> x.content_hash OR s.memory_id IS DISTINCT FROM x.memory_id",
    },
    Step {
        name: "sync_runs",
        from: "sync_runs t",
        filter: "",
        key: &["t.rowid"],
        columns: &[
            ("id", "t.id", Text),
            ("workspace", "t.workspace", Text),
            ("connector", "t.connector", Text),
            ("status", "t.status", Text),
            ("started_at", "t.started_at", Int),
            ("finished_at", "t.finished_at", Int),
            ("report", "t.report", Text),
        ],
        write: "ins AS (
            INSERT INTO sync_runs (id, workspace, connector, status, started_at, finished_at, report)
            SELECT id, workspace, connector, status, started_at, finished_at, report::jsonb FROM batch
            ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "",
    },
    // The event log has no key of its own to conflict on (PostgreSQL numbers each row):
    // how far it was copied is the step's cursor, which — unlike the other steps' — is
    // kept from one move to the next, so each event arrives exactly once however often
    // the move runs. Rows are appended in the personal log's order.
    Step {
        name: EVENTS,
        from: "events t",
        filter: "",
        key: &["t.seq"],
        columns: &[
            ("seq", "CAST(t.seq AS TEXT)", Text),
            ("at", "t.at", Int),
            ("kind", "t.kind", Text),
            ("workspace", "t.workspace", Text),
            ("memory_id", "t.memory_id", Text),
            ("surface", "t.surface", Text),
            ("client", "t.client", Text),
            ("role", "t.role", Text),
            ("detail", "t.detail", Text),
            ("principal", "t.principal", Text),
        ],
        write: "ins AS (
            INSERT INTO events (at, kind, workspace, memory_id, surface, client, role, detail, principal)
            SELECT at, kind, workspace, memory_id, surface, client, role, detail::jsonb, principal
            FROM batch ORDER BY seq::bigint
            RETURNING 1)
            SELECT count(*) FROM ins",
        refusals: "",
    },
];

/// The event log's step: its cursor outlives a finished move (see [`STEPS`]).
pub(crate) const EVENTS: &str = "events";

/// The SQLite table a step reads (the report's name may add a column).
pub(crate) fn source_table(step: &Step) -> &'static str {
    step.name.split('.').next().unwrap_or(step.name)
}
