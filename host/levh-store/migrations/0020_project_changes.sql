-- 0020: a counter of changes to which project a memory is in, for the cache of each
-- project's seqs (`project_seqs.rs`). A new memory is seen by its seq (past the largest
-- cached); what the seq cannot show — a memory moved to another project or workspace,
-- a row deleted (a purge; a deleted largest seq can be used again) — moves this counter.
-- Never edit a landed migration; add the next number.
CREATE TABLE project_changes (n INTEGER NOT NULL) STRICT;
INSERT INTO project_changes (n) VALUES (0);
CREATE TRIGGER memories_project_changed AFTER UPDATE OF workspace, project ON memories
    WHEN OLD.project IS NOT NEW.project OR OLD.workspace IS NOT NEW.workspace
BEGIN
    UPDATE project_changes SET n = n + 1;
END;
CREATE TRIGGER memories_deleted AFTER DELETE ON memories
BEGIN
    UPDATE project_changes SET n = n + 1;
END;
