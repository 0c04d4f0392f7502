-- 0012: conflict candidates — pairs of valid memories that may disagree (a value, a
-- negation, an antonym, a swapped name), found at admission or by `levh conflicts detect`,
-- listed for a person to resolve. Resolving never deletes: it keeps both, marks the pair
-- not a conflict, or supersedes one (retired with `superseded_by`, kept for `--as-of`).
-- A purge of either memory removes the pair with it.

CREATE TABLE conflicts (
    workspace   TEXT NOT NULL,
    id          TEXT NOT NULL,     -- UUID v7
    older_seq   INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    newer_seq   INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    kind        TEXT NOT NULL,     -- value | negation | antonym | swap
    found_at    INTEGER NOT NULL,
    resolution  TEXT,              -- NULL while open; keep_both | not_a_conflict | superseded
    resolved_at INTEGER,
    superseded  TEXT,              -- the memory a `superseded` resolution retired
    PRIMARY KEY (workspace, id),
    UNIQUE (workspace, older_seq, newer_seq)
) STRICT;

CREATE INDEX conflicts_by_state ON conflicts (workspace, resolution);
CREATE INDEX conflicts_by_newer ON conflicts (newer_seq);
