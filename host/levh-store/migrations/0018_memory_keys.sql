-- 0018: keyed memories — a stable fact an agent rewrites under a key ("build command",
-- "current owner of billing"). Every memory written under a key is listed here; the
-- current one is the one still live and not retired (the ones it replaced were retired,
-- `valid_to` and `superseded_by`, and stay for `--as-of`). A purge takes its row along.
-- Never edit a landed migration; add the next number.
CREATE TABLE memory_keys (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    workspace  TEXT NOT NULL,
    project    TEXT NOT NULL,          -- '' for no project
    key        TEXT NOT NULL
) STRICT;
CREATE INDEX memory_keys_by_key ON memory_keys (workspace, project, key);
