-- 0017: the memory list in each of its orders (the dashboard's Memories page, `levh list
-- --sort`, `GET /api/memories?sort=`): an index per order, led by the workspace, that a
-- page walks backwards from its cursor instead of sorting the workspace for every page.
-- (Newest first uses memories_by_workspace_created.) The rowid (seq) that breaks ties is
-- the trailing column of every index.
-- Never edit a landed migration; add the next number.
CREATE INDEX memories_by_workspace_importance ON memories (workspace, importance);
CREATE INDEX memories_by_workspace_recalled ON memories (workspace, coalesce(last_recalled_at, 0));
