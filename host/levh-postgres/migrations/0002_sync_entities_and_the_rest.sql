-- 0002: what SQLite's migrations 0003 and 0007 and later added beside memories: connector
-- sync, the entity index, conflicts, review schedules, consolidation and working memory,
-- attachments, keyed memories and MCP presence — the same tables in PostgreSQL's types
-- (see 0001 for the choices).
-- Never edit a landed migration; add the next number.

CREATE TABLE sync_state (
    workspace  text NOT NULL,
    connector  text NOT NULL,
    cursor     text,
    updated_at bigint NOT NULL,
    PRIMARY KEY (workspace, connector)
);

CREATE TABLE sync_items (
    workspace    text NOT NULL,
    connector    text NOT NULL,
    source_id    text NOT NULL,
    content_hash text NOT NULL,
    memory_id    text,
    held_id      text,
    verdict      text NOT NULL,
    updated_at   bigint NOT NULL,
    listing      text,
    PRIMARY KEY (workspace, connector, source_id)
);
CREATE INDEX sync_items_by_memory ON sync_items (memory_id);
CREATE INDEX sync_items_by_listing ON sync_items (workspace, connector, listing);

CREATE TABLE sync_runs (
    id          text PRIMARY KEY,
    workspace   text NOT NULL,
    connector   text NOT NULL,
    status      text NOT NULL,
    started_at  bigint NOT NULL,
    finished_at bigint,
    report      jsonb NOT NULL           -- counts and error lines, no content
);
CREATE INDEX sync_runs_by_connector ON sync_runs (workspace, connector, started_at);

CREATE TABLE entities (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         text NOT NULL UNIQUE,
    workspace  text NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('person', 'organization', 'project', 'event', 'document', 'task')),
    name       text NOT NULL,
    created_at bigint NOT NULL
);
CREATE INDEX entities_by_workspace_kind ON entities (workspace, kind);

CREATE TABLE entity_keys (
    workspace  text NOT NULL,
    key        text NOT NULL,
    entity_seq bigint NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    PRIMARY KEY (workspace, key)
);
CREATE INDEX entity_keys_by_entity ON entity_keys (entity_seq);

CREATE TABLE memory_entities (
    memory_seq bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    entity_seq bigint NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    role       text NOT NULL,
    PRIMARY KEY (memory_seq, entity_seq, role)
);
CREATE INDEX memory_entities_by_entity ON memory_entities (entity_seq, memory_seq);

CREATE TABLE entity_members (
    organization_seq bigint NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    person_seq       bigint NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    PRIMARY KEY (organization_seq, person_seq)
);
CREATE INDEX entity_members_by_person ON entity_members (person_seq);

CREATE TABLE entity_indexed (
    memory_seq   bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    version      integer NOT NULL,
    content_hash text NOT NULL
);

CREATE TABLE commitments_done (
    workspace  text NOT NULL,
    id         text NOT NULL,
    memory_seq bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    done_at    bigint NOT NULL,
    by_memory  text,
    PRIMARY KEY (workspace, id)
);

CREATE TABLE conflicts (
    workspace   text NOT NULL,
    id          text NOT NULL,
    older_seq   bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    newer_seq   bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    kind        text NOT NULL,
    found_at    bigint NOT NULL,
    resolution  text,
    resolved_at bigint,
    superseded  text,
    PRIMARY KEY (workspace, id),
    UNIQUE (workspace, older_seq, newer_seq)
);
CREATE INDEX conflicts_by_state ON conflicts (workspace, resolution);
CREATE INDEX conflicts_by_newer ON conflicts (newer_seq);

CREATE TABLE review_schedule (
    memory_seq    bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    workspace     text NOT NULL,
    due_at        bigint NOT NULL,
    interval_days bigint NOT NULL,
    reviews       bigint NOT NULL
);
CREATE INDEX review_schedule_by_due ON review_schedule (workspace, due_at);

CREATE TABLE consolidated (
    summary_seq    bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    member_seq     bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    prior_valid_to bigint,
    PRIMARY KEY (summary_seq, member_seq)
);
CREATE INDEX consolidated_by_member ON consolidated (member_seq);

CREATE TABLE working_memories (
    memory_seq bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    session_id text NOT NULL
);
CREATE INDEX working_memories_by_session ON working_memories (session_id);

-- The attached file itself is not here: where a team server keeps files is decided with
-- attachments (a later migration), not guessed now.
CREATE TABLE attachments (
    memory_seq      bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    attached_to_seq bigint NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    sha256          text NOT NULL,
    name            text NOT NULL,
    media_type      text NOT NULL,
    bytes           bigint NOT NULL CHECK (bytes >= 0)
);
CREATE INDEX attachments_by_owner ON attachments (attached_to_seq);
CREATE INDEX attachments_by_file ON attachments (sha256);

CREATE TABLE memory_keys (
    memory_seq bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    workspace  text NOT NULL,
    project    text NOT NULL,          -- '' for no project
    key        text NOT NULL
);
CREATE INDEX memory_keys_by_key ON memory_keys (workspace, project, key);

CREATE TABLE presence (
    id           text PRIMARY KEY,
    workspace    text NOT NULL,
    transport    text NOT NULL,
    client       text,
    principal    text,
    project      text,
    pid          bigint NOT NULL,
    host         text NOT NULL,
    started_at   bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    ended_at     bigint,
    calls        bigint NOT NULL DEFAULT 0
);
CREATE INDEX presence_by_workspace ON presence (workspace, last_seen_at);
