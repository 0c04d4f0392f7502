-- 0010: near-duplicate keys in two tables, recent keys apart from the large index, and
-- each memory's own list of keys.
--
-- Each memory has 21 MinHash keys at random places of one index, so past ~100k memories
-- a transaction of a few thousand memories re-wrote most of that index's pages (bulk
-- ingest from 100k to 1M ran at ~2,600 memories/s; the index ~400 MB at 1M, and its
-- second index by memory as large again). Now:
-- - new keys go to near_duplicate_keys_recent, small enough that re-writing it is cheap,
--   and move into near_duplicate_keys a slice of the key range at a time: each
--   transaction that stores keys moves the recent ones after the cursor
--   (near_duplicate_keys_merge_cursor), the slice in proportion to what it stored, so
--   that the whole range goes by once every 65,536 memories (`writes::insert_keys`).
--   Each page of the large index is then written about once per 65,536 memories instead
--   of once per transaction. Every (key, memory) pair is in exactly one of the two
--   tables; lookups read both;
-- - neither has a foreign key or an index by memory (those made moving keys ten times
--   slower): a memory's keys are removed through its list in near_duplicate_key_lists
--   (8 bytes per key, big-endian two's complement), which goes with the memory by cascade
--   and is read first by whatever removes or replaces its keys (`writes::delete_keys`).
-- Never edit a landed migration; add the next number.

CREATE TABLE near_duplicate_key_lists (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    keys       BLOB NOT NULL
) STRICT;

CREATE TABLE near_duplicate_keys (
    key        INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL,
    PRIMARY KEY (key, memory_seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE near_duplicate_keys_recent (
    key        INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL,
    PRIMARY KEY (key, memory_seq)
) STRICT, WITHOUT ROWID;

-- Where the next slice of recent keys to move starts (one row).
CREATE TABLE near_duplicate_keys_merge_cursor (
    next_key INTEGER NOT NULL
) STRICT;

INSERT INTO near_duplicate_keys_merge_cursor (next_key) VALUES (-9223372036854775808);

INSERT INTO near_duplicate_keys (key, memory_seq)
    SELECT key, memory_seq FROM memory_near_duplicate_keys ORDER BY key, memory_seq;

INSERT INTO near_duplicate_key_lists (memory_seq, keys)
    SELECT memory_seq, unhex(group_concat(printf('%016x', key), ''))
    FROM memory_near_duplicate_keys GROUP BY memory_seq;

DROP TABLE memory_near_duplicate_keys;
