-- 0005: a change number for every vector written, so an approximate index built up to
-- change N can find every vector it has not seen: new memories, and also vectors written
-- for old memories (a re-embed backfill, an edited memory) whose `memory_seq` is below
-- anything the index holds. Only ids and model names: no content, nothing for a purge to
-- erase.
-- Never edit a landed migration; add the next number.

CREATE TABLE vector_changes (
    change     INTEGER PRIMARY KEY,
    memory_seq INTEGER NOT NULL,
    model      TEXT NOT NULL,
    dimension  INTEGER NOT NULL
) STRICT;

CREATE INDEX vector_changes_by_model ON vector_changes (model, dimension, change);

-- `INSERT OR REPLACE` (how vectors are written) fires the insert trigger.
CREATE TRIGGER memory_embeddings_change_insert AFTER INSERT ON memory_embeddings BEGIN
    INSERT INTO vector_changes (memory_seq, model, dimension)
    VALUES (new.memory_seq, new.model, new.dimension);
END;
CREATE TRIGGER memory_embeddings_change_update AFTER UPDATE ON memory_embeddings BEGIN
    INSERT INTO vector_changes (memory_seq, model, dimension)
    VALUES (new.memory_seq, new.model, new.dimension);
END;

-- Vectors already stored count as written now, in memory order.
INSERT INTO vector_changes (memory_seq, model, dimension)
SELECT memory_seq, model, dimension FROM memory_embeddings ORDER BY memory_seq;
