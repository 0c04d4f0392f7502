-- 0003: attached files kept in the database. SQLite's store keeps them beside its file;
-- the processes of a team server may run on several machines with nothing on disk in
-- common, and the database's replicas and backups should hold the files with the rows
-- that name them. Content-addressed: one row per distinct file, deleted by the purge that
-- removes the last attachment naming it.
-- Never edit a landed migration; add the next number.

CREATE TABLE attachment_files (
    sha256 text PRIMARY KEY,
    bytes  bytea NOT NULL
);
