//! The SQLite file itself: pragmas, the FTS index, the event log.

use levh_core::{NewMemory, RecallRequest, Store};

use crate::support::Harness;

#[test]
fn the_file_is_in_wal_mode_with_secure_delete_and_foreign_keys() {
    let h = Harness::new();
    let (journal, secure_delete, foreign_keys): (String, i64, i64) = h.store.with_connection(|c| {
        (
            c.pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap(),
            c.pragma_query_value(None, "secure_delete", |r| r.get(0))
                .unwrap(),
            c.pragma_query_value(None, "foreign_keys", |r| r.get(0))
                .unwrap(),
        )
    });
    assert_eq!(journal, "wal");
    assert_eq!(secure_delete, 1);
    assert_eq!(foreign_keys, 1);
    let health = h.store.health().unwrap();
    assert_eq!(health.schema_version, health.latest_schema_version);
}

#[test]
fn the_event_log_is_append_only_and_holds_no_content() {
    let h = Harness::new();
    let secret_ish = "Quarterly revenue target is 4.2 million";
    let id = h.capture(secret_ish);
    h.levh
        .recall(&h.scope, &RecallRequest::new("quarterly revenue"))
        .unwrap();
    h.levh.set_pinned(&h.scope, id, true).unwrap();
    h.levh.forget(&h.scope, id).unwrap();
    let kinds: Vec<String> = h.store.with_connection(|c| {
        let mut s = c.prepare("SELECT kind FROM events ORDER BY seq").unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(kinds, ["store", "recall-reinforce", "pin", "forget"]);
    let dump: String = h.store.with_connection(|c| {
        c.query_row(
            "SELECT group_concat(detail || coalesce(client, '') || surface, '|') FROM events",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    assert!(!dump.contains("revenue"), "{dump}");
    let update = h
        .store
        .with_connection(|c| c.execute("UPDATE events SET kind = 'x'", []));
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = h
        .store
        .with_connection(|c| c.execute("DELETE FROM events", []));
    assert!(delete.unwrap_err().to_string().contains("append-only"));
}

#[test]
fn the_full_text_index_follows_the_content_table() {
    let h = Harness::new();
    let id = h.capture("Elasticsearch was replaced by OpenSearch");
    h.store.with_connection(|c| {
        c.execute(
            "UPDATE memories SET content = 'Meilisearch is the search engine' WHERE id = ?1",
            [id.to_string()],
        )
        .unwrap();
    });
    let filter = levh_core::MemoryFilter::default();
    let hits = |q: &str| h.store.lexical_candidates(&filter, q, 10).unwrap().len();
    assert_eq!(hits("opensearch"), 0);
    assert_eq!(hits("meilisearch"), 1);
    assert!(h.store.health().unwrap().fts_in_step);
}

#[test]
fn forgotten_memories_leave_every_read() {
    let h = Harness::new();
    let id = h.capture_with(NewMemory {
        content: "Old API base URL is /v1".into(),
        ..NewMemory::default()
    });
    h.levh.forget(&h.scope, id).unwrap();
    assert!(h.levh.get(&h.scope, id).is_err());
    assert!(
        h.levh.forget(&h.scope, id).is_err(),
        "forgetting twice is an unknown id"
    );
    assert!(
        h.levh
            .recall(&h.scope, &RecallRequest::new("API base URL"))
            .unwrap()
            .hits
            .is_empty()
    );
    assert_eq!(h.levh.stats(&h.scope, None).unwrap().total, 0);
    let health = h.store.health().unwrap();
    assert_eq!((health.memories, health.forgotten), (0, 1));
}

#[test]
fn a_store_reopens_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("levh.db");
    {
        let store = levh_store::SqliteStore::open(&path).unwrap();
        store.with_connection(|c| {
            c.execute(
                "INSERT INTO sessions (id, workspace, started_at) VALUES ('s1', 'default', 0)",
                [],
            )
            .unwrap()
        });
    }
    let store = levh_store::SqliteStore::open(&path).unwrap();
    let sessions: i64 = store.with_connection(|c| {
        c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap()
    });
    assert_eq!(sessions, 1);
}
