-- 0007: the entity index — people, organizations, projects, events, documents and tasks
-- seen in memories, how each is recognised, and which memories they appear in (with
-- their part: sender, attendee, speaker, mentioned, ...). Derived from the memories:
-- `levh entities reindex` rebuilds it. Commitments marked done are the one fact here
-- a person adds.

CREATE TABLE entities (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    workspace  TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('person', 'organization', 'project', 'event', 'document', 'task')),
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX entities_by_workspace_kind ON entities (workspace, kind);

-- How an entity is recognised: 'person:email:ada@example.org', 'person:name:ada lovelace',
-- 'organization:domain:example.org', ... One key names one entity in a workspace.
CREATE TABLE entity_keys (
    workspace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    entity_seq INTEGER NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    PRIMARY KEY (workspace, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX entity_keys_by_entity ON entity_keys (entity_seq);

CREATE TABLE memory_entities (
    memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    entity_seq INTEGER NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    role       TEXT NOT NULL,
    PRIMARY KEY (memory_seq, entity_seq, role)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_entities_by_entity ON memory_entities (entity_seq, memory_seq);

-- A person's organizations (from their work addresses).
CREATE TABLE entity_members (
    organization_seq INTEGER NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    person_seq       INTEGER NOT NULL REFERENCES entities (seq) ON DELETE CASCADE,
    PRIMARY KEY (organization_seq, person_seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX entity_members_by_person ON entity_members (person_seq);

-- Which memories are indexed, by which rules and at which content: a memory missing here,
-- or with another version or hash, is what a reindex does next.
CREATE TABLE entity_indexed (
    memory_seq   INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    content_hash TEXT NOT NULL
) STRICT;

CREATE TABLE commitments_done (
    workspace  TEXT NOT NULL,
    id         TEXT NOT NULL,
    memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    done_at    INTEGER NOT NULL,
    by_memory  TEXT,              -- the later memory that said it was done; NULL: a person
    PRIMARY KEY (workspace, id)
) STRICT;
