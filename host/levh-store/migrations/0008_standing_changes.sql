-- 0008: a change number for every memory whose standing changed — what statistics and
-- the fading list read of it: its labels, its model state, its validity, whether it is
-- forgotten or gone. A cache built up to change N then reads only the memories changed
-- since (see `standings.rs`) instead of every memory on every call.
--
-- One row per memory, holding its latest change: a memory recalled a thousand times is
-- one row, so the log is as large as the store, never larger. The number is
-- AUTOINCREMENT so that it never goes back, even when the newest row is replaced.
-- Triggers delete, then insert, rather than `INSERT OR REPLACE`: a trigger's conflict
-- clause gives way to the outer statement's, and an outer `OR IGNORE` would silently keep
-- the old number.
-- Never edit a landed migration; add the next number.

CREATE TABLE memory_standing_changes (
    change     INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL UNIQUE
) STRICT;

CREATE TRIGGER memories_standing_insert AFTER INSERT ON memories BEGIN
    DELETE FROM memory_standing_changes WHERE memory_seq = new.seq;
    INSERT INTO memory_standing_changes (memory_seq) VALUES (new.seq);
END;

CREATE TRIGGER memories_standing_update AFTER UPDATE OF
    workspace, project, kind, source, importance, pinned, stability_hours,
    last_recalled_at, recall_count, created_at, valid_to, forgotten_at
ON memories BEGIN
    DELETE FROM memory_standing_changes WHERE memory_seq = new.seq;
    INSERT INTO memory_standing_changes (memory_seq) VALUES (new.seq);
END;

CREATE TRIGGER memories_standing_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_standing_changes WHERE memory_seq = old.seq;
    INSERT INTO memory_standing_changes (memory_seq) VALUES (old.seq);
END;

-- Memories already stored count as changed now, in memory order.
INSERT INTO memory_standing_changes (memory_seq) SELECT seq FROM memories ORDER BY seq;
