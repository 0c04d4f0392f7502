-- 0011: which full listing of a source (a connector's configuration, by its cursor key)
-- last named each synced item, so that a complete listing retires what its source no
-- longer holds — and never the items of another configuration of the same connector.
-- Items synced before this migration have none until a listing names them again, and a
-- listing retires only items it named before.

ALTER TABLE sync_items ADD COLUMN listing TEXT;

CREATE INDEX sync_items_by_listing ON sync_items (workspace, connector, listing);
