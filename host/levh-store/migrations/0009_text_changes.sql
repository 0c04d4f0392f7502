-- 0009: a change number for every memory whose text changed — inserted, its content
-- replaced, or deleted: what the full-text index holds of it. The in-memory ranking of
-- full-text matches (`lexicon.rs`), built up to change N, then re-reads only the
-- memories changed since, whoever wrote them.
--
-- One row per memory, holding its latest change, like 0008 (and for the same reasons:
-- AUTOINCREMENT so the number never goes back; delete then insert, never `OR REPLACE`).
-- Recalls and other changes of state leave this log alone: the text did not change.
-- Never edit a landed migration; add the next number.

CREATE TABLE memory_text_changes (
    change     INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL UNIQUE
) STRICT;

CREATE TRIGGER memories_text_insert AFTER INSERT ON memories BEGIN
    DELETE FROM memory_text_changes WHERE memory_seq = new.seq;
    INSERT INTO memory_text_changes (memory_seq) VALUES (new.seq);
END;

CREATE TRIGGER memories_text_update AFTER UPDATE OF content ON memories BEGIN
    DELETE FROM memory_text_changes WHERE memory_seq = new.seq;
    INSERT INTO memory_text_changes (memory_seq) VALUES (new.seq);
END;

CREATE TRIGGER memories_text_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_text_changes WHERE memory_seq = old.seq;
    INSERT INTO memory_text_changes (memory_seq) VALUES (old.seq);
END;

-- Memories already stored count as changed now, in memory order.
INSERT INTO memory_text_changes (memory_seq) SELECT seq FROM memories ORDER BY seq;
