-- 0003: connector sync: cursors, the fate of every item, run records, installed plugins.

CREATE TABLE sync_state (
    workspace  TEXT NOT NULL,
    connector  TEXT NOT NULL,
    cursor     TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (workspace, connector)
) STRICT;

-- What became of each item a connector produced, by its stable source id: a re-sync
-- skips what is unchanged and updates a changed item's memory in place.
CREATE TABLE sync_items (
    workspace    TEXT NOT NULL,
    connector    TEXT NOT NULL,
    source_id    TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    memory_id    TEXT,
    held_id      TEXT,
    verdict      TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace, connector, source_id)
) STRICT;

CREATE INDEX sync_items_by_memory ON sync_items (memory_id);

CREATE TABLE sync_runs (
    id          TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL,
    connector   TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    report      TEXT NOT NULL CHECK (json_valid(report))   -- counts and error lines, no content
) STRICT;

CREATE INDEX sync_runs_by_connector ON sync_runs (workspace, connector, started_at);
