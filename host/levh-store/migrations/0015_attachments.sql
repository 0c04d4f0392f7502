-- 0015: files attached to memories. The file itself lives content-addressed beside the
-- database ($LEVH_HOME/attachments/ab/<sha256>); its derived text is an `attachment` memory
-- of its own (through the gate like any capture, found by recall), and this row links that
-- memory to the file and to the memory it is attached to. A purge of either memory takes
-- the row; the file goes when no row names it any more.
CREATE TABLE attachments (
    memory_seq      INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    attached_to_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    sha256          TEXT NOT NULL,
    name            TEXT NOT NULL,
    media_type      TEXT NOT NULL,
    bytes           INTEGER NOT NULL CHECK (bytes >= 0)
) STRICT;

CREATE INDEX attachments_by_owner ON attachments (attached_to_seq);
CREATE INDEX attachments_by_file ON attachments (sha256);
