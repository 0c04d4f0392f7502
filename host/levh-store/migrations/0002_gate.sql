-- 0002: the admission gate: near-duplicate keys, the held queue, decisions by principal.

-- MinHash band keys of each memory's word shingles: near-duplicate candidates are found
-- by key equality, without scanning the store.
CREATE TABLE memory_near_duplicate_keys (
    key        INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    PRIMARY KEY (key, memory_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX memory_near_duplicate_keys_by_memory ON memory_near_duplicate_keys (memory_seq);

-- Content nobody has judged yet. Not a memory: no embedding, no decay, never recalled.
CREATE TABLE held_candidates (
    id              TEXT PRIMARY KEY,
    workspace       TEXT NOT NULL,
    project         TEXT,
    content         TEXT NOT NULL,            -- already redacted
    kind            TEXT NOT NULL,
    source          TEXT NOT NULL,
    importance      REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    pinned          INTEGER NOT NULL CHECK (pinned IN (0, 1)),
    valid_from      INTEGER NOT NULL,
    valid_to        INTEGER,
    metadata        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    session_id      TEXT,
    content_hash    TEXT NOT NULL,
    redactions      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(redactions)),
    reason          TEXT NOT NULL,
    nearest_id      TEXT,                     -- no foreign key: the neighbour may be purged
    similarity      REAL,
    measure         TEXT,
    status          TEXT NOT NULL DEFAULT 'held'
                    CHECK (status IN ('held', 'admitted', 'discarded', 'expired')),
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER,
    decided_at      INTEGER,
    decided_by      TEXT,
    decided_surface TEXT,
    memory_id       TEXT
) STRICT;

CREATE INDEX held_candidates_by_status ON held_candidates (workspace, status, created_at);

-- A memory admitted from the held queue names its candidate, at most once: a retried
-- admission finds the memory it already stored instead of storing a second one.
ALTER TABLE memories ADD COLUMN held_id TEXT;
CREATE UNIQUE INDEX memories_by_held_id ON memories (held_id) WHERE held_id IS NOT NULL;

ALTER TABLE events ADD COLUMN principal TEXT;
