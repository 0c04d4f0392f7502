-- 0013: spaced-repetition review of fading memories. A person's decision on a fading
-- memory (keep, reinforce, weaken, snooze, ...) schedules when the review queue shows it
-- again; each keep doubles the interval. The decision itself is in the event log (`review`),
-- so it is part of the memory's history.

CREATE TABLE review_schedule (
    memory_seq    INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    workspace     TEXT NOT NULL,
    due_at        INTEGER NOT NULL,   -- not shown in the review queue before this
    interval_days INTEGER NOT NULL,   -- the last interval a keep gave it
    reviews       INTEGER NOT NULL    -- decisions taken on it
) STRICT;

CREATE INDEX review_schedule_by_due ON review_schedule (workspace, due_at);
