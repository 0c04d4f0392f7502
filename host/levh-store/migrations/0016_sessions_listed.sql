-- Sessions listed newest first per workspace, and each one's memories counted without
-- reading the whole memories table (the dashboard's Sessions page, `levh session list`).
CREATE INDEX sessions_by_workspace_started ON sessions (workspace, started_at);
CREATE INDEX memories_by_session ON memories (session_id) WHERE session_id IS NOT NULL;
