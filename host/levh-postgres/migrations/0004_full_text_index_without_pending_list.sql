-- 0004: the full-text index takes each new memory's words at once instead of in a
-- pending list. With the list (GIN's default, `fastupdate`), every search also reads the
-- up-to-4 MB of entries not merged yet, sequentially: measured at 55k memories during a
-- bulk import, a 12-word search's index scan took 15 ms with the list and 7 ms once it
-- was merged. levh searches on every capture (the gate's neighbours, the conflict
-- check) and recall, so searches are what must stay fast; a write pays a little more.
ALTER INDEX memories_fts SET (fastupdate = off);
-- What is already pending is merged now (turning the option off does not).
SELECT gin_clean_pending_list('memories_fts'::regclass);
