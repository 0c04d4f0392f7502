-- 0001: memories with their full-text index and vectors, sessions, and the event log.
-- Never edit a landed migration; add the next number.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL,
    project     TEXT,
    client      TEXT,
    started_at  INTEGER NOT NULL,          -- unix microseconds, UTC
    ended_at    INTEGER,
    metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
) STRICT;

CREATE TABLE memories (
    seq                  INTEGER PRIMARY KEY, -- rowid alias: the FTS5 content rowid
    id                   TEXT NOT NULL UNIQUE,
    workspace            TEXT NOT NULL,
    project              TEXT,
    content              TEXT NOT NULL,
    kind                 TEXT NOT NULL DEFAULT 'note',
    source               TEXT NOT NULL,
    importance           REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned               INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    stability_hours      REAL NOT NULL CHECK (stability_hours > 0),
    last_recalled_at     INTEGER,
    recall_count         INTEGER NOT NULL DEFAULT 0 CHECK (recall_count >= 0),
    created_at           INTEGER NOT NULL,   -- record time
    valid_from           INTEGER NOT NULL,   -- world time
    valid_to             INTEGER,
    superseded_by        TEXT REFERENCES memories (id) ON DELETE SET NULL,
    content_hash         TEXT NOT NULL,
    admission_verdict    TEXT NOT NULL,
    admission_reasons    TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(admission_reasons)),
    admission_decided_by TEXT NOT NULL,
    metadata             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    session_id           TEXT REFERENCES sessions (id) ON DELETE SET NULL,
    forgotten_at         INTEGER,            -- retired from reads; kept for known_at history
    updated_at           INTEGER NOT NULL
) STRICT;

CREATE INDEX memories_by_workspace_created ON memories (workspace, created_at);
CREATE INDEX memories_by_workspace_project ON memories (workspace, project);
CREATE INDEX memories_by_workspace_hash ON memories (workspace, content_hash);

-- Vectors live beside the memories rather than in them, so scans of memory rows (lists,
-- stats, filters) do not drag kilobytes of floats through the page cache.
CREATE TABLE memory_embeddings (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    dimension  INTEGER NOT NULL CHECK (dimension > 0),
    vector     BLOB NOT NULL CHECK (length(vector) = 4 * dimension)  -- little-endian f32
) STRICT;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- Append-only and content-free: one row per mutation, with who did it and which ids.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    memory_id  TEXT,
    surface    TEXT NOT NULL,
    client     TEXT,
    role       TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
) STRICT;

CREATE INDEX events_by_memory ON events (memory_id);

CREATE TRIGGER events_are_append_only_update BEFORE UPDATE ON events BEGIN
    SELECT RAISE (ABORT, 'the event log is append-only');
END;
CREATE TRIGGER events_are_append_only_delete BEFORE DELETE ON events BEGIN
    SELECT RAISE (ABORT, 'the event log is append-only');
END;
