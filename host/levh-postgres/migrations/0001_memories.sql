-- 0001: memories with their full-text column and vectors, sessions, near-duplicate keys,
-- the append-only event log, the held queue and API tokens. The same tables as SQLite's
-- store (levh-store/migrations), in PostgreSQL's types, so both behave alike:
-- - times are bigint UTC microseconds since the Unix epoch, as SQLite stores them: the
--   engine's clamp to what it can show, and every comparison, stay exactly the same;
-- - JSON is jsonb (what a report reads inside it, it reads with operators, not text);
-- - SQLite's change logs (vector_changes, memory_standing_changes, memory_text_changes,
--   project_changes) and the split near-duplicate key tables feed caches and work around
--   SQLite's page writes; PostgreSQL indexes answer those reads directly, so they are
--   not here.
-- Never edit a landed migration; add the next number.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE sessions (
    id          text PRIMARY KEY,
    workspace   text NOT NULL,
    project     text,
    client      text,
    started_at  bigint NOT NULL,
    ended_at    bigint,
    metadata    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_by_workspace_started ON sessions (workspace, started_at);

CREATE TABLE memories (
    seq                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                   text NOT NULL UNIQUE,
    workspace            text NOT NULL,
    project              text,
    content              text NOT NULL,
    kind                 text NOT NULL DEFAULT 'note',
    source               text NOT NULL,
    importance           double precision NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned               boolean NOT NULL DEFAULT false,
    stability_hours      double precision NOT NULL CHECK (stability_hours > 0),
    last_recalled_at     bigint,
    recall_count         bigint NOT NULL DEFAULT 0 CHECK (recall_count >= 0),
    created_at           bigint NOT NULL,   -- record time
    valid_from           bigint NOT NULL,   -- world time
    valid_to             bigint,
    superseded_by        text REFERENCES memories (id) ON DELETE SET NULL,
    content_hash         text NOT NULL,
    admission_verdict    text NOT NULL,
    admission_reasons    jsonb NOT NULL DEFAULT '[]',
    admission_decided_by text NOT NULL,
    metadata             jsonb NOT NULL DEFAULT '{}',
    session_id           text REFERENCES sessions (id) ON DELETE SET NULL,
    forgotten_at         bigint,            -- retired from reads; kept for known_at history
    updated_at           bigint NOT NULL,
    -- The held candidate it was admitted from: a retried admission finds it.
    held_id              text,
    -- Full text, kept in step by PostgreSQL itself. English stemming stands in for
    -- SQLite's porter tokenizer ("quarterly" meets "quarter").
    fts                  tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED
);

-- Every list order has an index led by the workspace, with the seq that breaks ties.
CREATE INDEX memories_by_workspace_created ON memories (workspace, created_at, seq);
CREATE INDEX memories_by_workspace_importance ON memories (workspace, importance, seq);
CREATE INDEX memories_by_workspace_recalled ON memories (workspace, (coalesce(last_recalled_at, 0)), seq);
CREATE INDEX memories_by_workspace_project ON memories (workspace, project);
CREATE INDEX memories_by_workspace_hash ON memories (workspace, content_hash);
CREATE INDEX memories_by_session ON memories (session_id) WHERE session_id IS NOT NULL;
CREATE UNIQUE INDEX memories_by_held_id ON memories (held_id) WHERE held_id IS NOT NULL;
CREATE INDEX memories_by_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_fts ON memories USING gin (fts);

-- Vectors beside the memories, of any model and dimension. The nearest-neighbour index
-- is HNSW over `vector::vector(N)` for the rows of dimension N (an HNSW index needs one
-- dimension); the store creates one per dimension when it first writes a vector of it.
CREATE TABLE memory_embeddings (
    memory_seq bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    model      text NOT NULL,
    dimension  integer NOT NULL CHECK (dimension > 0),
    vector     vector NOT NULL CHECK (vector_dims(vector) = dimension)
);
CREATE INDEX memory_embeddings_by_model ON memory_embeddings (model, dimension);

-- MinHash band keys of each memory's word shingles: near-duplicates by key equality.
CREATE TABLE near_duplicate_keys (
    key        bigint NOT NULL,
    memory_seq bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    PRIMARY KEY (key, memory_seq)
);
CREATE INDEX near_duplicate_keys_by_memory ON near_duplicate_keys (memory_seq);

-- Append-only and content-free: one row per mutation, with who did it and which ids.
-- A purge appends its own event and removes none (they hold no content), so no role of
-- levh's ever needs to change or delete a row: the trigger refuses it for everyone.
CREATE TABLE events (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         bigint NOT NULL,
    kind       text NOT NULL,
    workspace  text NOT NULL,
    memory_id  text,
    surface    text NOT NULL,
    client     text,
    role       text NOT NULL,
    detail     jsonb NOT NULL DEFAULT '{}',
    principal  text
);
CREATE INDEX events_by_memory ON events (memory_id);
CREATE INDEX events_by_workspace_at ON events (workspace, at);

CREATE FUNCTION levh_events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the event log is append-only (% refused)', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER events_are_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION levh_events_are_append_only();
CREATE TRIGGER events_are_never_truncated BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION levh_events_are_append_only();

-- Content nobody has judged yet. Not a memory: no embedding, no decay, never recalled.
CREATE TABLE held_candidates (
    id                text PRIMARY KEY,
    workspace         text NOT NULL,
    project           text,
    content           text NOT NULL,            -- already redacted
    kind              text NOT NULL,
    source            text NOT NULL,
    importance        double precision NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned            boolean NOT NULL,
    valid_from        bigint NOT NULL,
    valid_to          bigint,
    metadata          jsonb NOT NULL DEFAULT '{}',
    session_id        text,
    content_hash      text NOT NULL,
    redactions        jsonb NOT NULL DEFAULT '[]',
    reason            text NOT NULL,
    nearest_id        text,                     -- no foreign key: the neighbour may be purged
    similarity        double precision,
    measure           text,
    status            text NOT NULL DEFAULT 'held'
                      CHECK (status IN ('held', 'admitted', 'discarded', 'expired')),
    created_at        bigint NOT NULL,
    expires_at        bigint,
    decided_at        bigint,
    decided_by        text,
    decided_surface   text,
    memory_id         text,
    updates_memory_id text                      -- no foreign key: it may be purged
);
CREATE INDEX held_candidates_by_status ON held_candidates (workspace, status, created_at);
CREATE INDEX held_candidates_by_hash ON held_candidates (workspace, content_hash);

-- API tokens: each binds one workspace and one role; only a SHA-256 of the secret is kept.
CREATE TABLE tokens (
    id          text PRIMARY KEY,
    secret_hash text NOT NULL UNIQUE,
    workspace   text NOT NULL,
    role        text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    label       text,
    created_at  bigint NOT NULL,
    revoked_at  bigint
);
