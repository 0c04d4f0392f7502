-- 0006: a held candidate may be an update: new content for an existing memory, waiting for
-- a person like any other candidate. Admitting it changes that memory in place.

ALTER TABLE held_candidates ADD COLUMN updates_memory_id TEXT; -- no foreign key: it may be purged
