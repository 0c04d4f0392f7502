-- 0019: presence — the MCP sessions connected to this store, from every process
-- (`levh mcp stdio` under each agent, `levh serve` for HTTP). A session writes its row at
-- `initialize`, moves `last_seen_at` as it calls tools (at most every few seconds) and
-- sets `ended_at` when it closes; one whose process is gone ended without saying so, which
-- the reader judges by `pid` on the same `host`. Rows are a few hundred bytes; those not
-- heard from for a week are dropped when a new session begins.
-- Never edit a landed migration; add the next number.
CREATE TABLE presence (
    id           TEXT PRIMARY KEY,
    workspace    TEXT NOT NULL,
    transport    TEXT NOT NULL,
    client       TEXT,
    principal    TEXT,
    project      TEXT,
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    ended_at     INTEGER,
    calls        INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX presence_by_workspace ON presence (workspace, last_seen_at);
