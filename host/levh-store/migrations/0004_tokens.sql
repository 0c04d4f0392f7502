-- 0004: API tokens. Each binds one workspace and one role. Only a SHA-256 of the secret
-- is kept (the secret is 160 random bits, so a fast hash is enough: nothing to brute-force).

CREATE TABLE tokens (
    id          TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    workspace   TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    label       TEXT,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
) STRICT;
