-- 0014: consolidation and the short-term layer.
--
-- A consolidation retires a cluster of aged, related memories in favour of one summary
-- memory (`superseded_by` = the summary, `valid_to` = when). Each member's row here keeps
-- what its `valid_to` was before, so `levh consolidate undo` restores it exactly; the
-- summary's page lists its members from here.
CREATE TABLE consolidated (
    summary_seq    INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    member_seq     INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    prior_valid_to INTEGER,
    PRIMARY KEY (summary_seq, member_seq)
) STRICT;

CREATE INDEX consolidated_by_member ON consolidated (member_seq);

-- Working memory: what an agent stored in a session and nothing has yet promoted (used,
-- marked important, pinned, reinforced). Default recall outside that session leaves these
-- out; promotion deletes the row. Only unpromoted memories have a row, so the table stays
-- small and the recall filter's lookup is one primary-key probe.
CREATE TABLE working_memories (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    session_id TEXT NOT NULL
) STRICT;

CREATE INDEX working_memories_by_session ON working_memories (session_id);
