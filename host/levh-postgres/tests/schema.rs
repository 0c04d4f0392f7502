//! The schema on a real PostgreSQL: migrations recorded once and taken by one process at
//! a time, a newer schema refused, the event log append-only, a vector index per
//! dimension.

use levh_core::{
    Actor, Kind, Memory, MemoryId, MemoryState, NewMemoryRecord, ServerStore, Store, Timestamp,
    Workspace,
};
use levh_postgres::{PostgresStore, PostgresStoreError, latest_schema_version, testing};
use postgres::{Client, NoTls};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap()
}

fn record(content: &str, vector: Option<Vec<f32>>) -> NewMemoryRecord {
    let now = at(0);
    NewMemoryRecord {
        memory: Memory {
            id: MemoryId::new_at(now),
            workspace: Workspace::default(),
            project: Some("atlas".into()),
            content_hash: levh_core::text::content_hash(content),
            content: content.into(),
            kind: Kind::default(),
            source: "test".into(),
            state: MemoryState {
                importance: 0.5,
                pinned: false,
                stability_hours: 168.0,
                last_recalled_at: None,
                recall_count: 0,
                created_at: now,
            },
            valid_from: now,
            valid_to: None,
            superseded_by: None,
            admission: levh_core::AdmissionRecord {
                verdict: levh_core::AdmissionVerdict::Admit,
                reasons: vec![],
                decided_by: "test".into(),
            },
            metadata: serde_json::json!({}),
            session_id: None,
            embedding_model: vector.as_ref().map(|_| "test-model".to_owned()),
            embedding_dimension: vector.as_ref().map(|v| v.len() as u32),
        },
        embedding: vector.map(|vector| levh_core::Embedding {
            model: "test-model".into(),
            vector,
        }),
        near_duplicate_keys: vec![],
        working: false,
        forgotten_at: None,
    }
}

fn client(url: &str) -> Client {
    Client::connect(url, NoTls).unwrap()
}

#[test]
fn migrations_are_recorded_once_and_opening_again_changes_nothing() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    let first = PostgresStore::open(url).unwrap();
    drop(first);
    PostgresStore::open(url).unwrap();
    let versions: Vec<i64> = client(url)
        .query(
            "SELECT version FROM levh_schema_migrations ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, (1..=latest_schema_version()).collect::<Vec<_>>());
    // The full-text index keeps no pending list that every search would read (0004).
    let options: Option<Vec<String>> = client(url)
        .query_one(
            "SELECT reloptions FROM pg_class WHERE relname = 'memories_fts'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(options, Some(vec!["fastupdate=off".to_owned()]));
}

/// Several processes starting at once on a new database: the advisory lock lets one
/// migrate, the others find the work done.
#[test]
fn stores_opened_at_once_on_a_new_database_migrate_it_once() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    let opened: Vec<_> = std::thread::scope(|threads| {
        let handles: Vec<_> = (0..4)
            .map(|_| threads.spawn(|| PostgresStore::open(url).map(|_| ())))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(opened.iter().all(Result::is_ok), "{opened:?}");
    let count: i64 = client(url)
        .query_one("SELECT count(*) FROM levh_schema_migrations", &[])
        .unwrap()
        .get(0);
    assert_eq!(count, latest_schema_version());
}

#[test]
fn a_schema_newer_than_this_build_is_refused() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    PostgresStore::open(url).unwrap();
    let newer = latest_schema_version() + 1;
    client(url)
        .execute(
            "INSERT INTO levh_schema_migrations (version) VALUES ($1)",
            &[&newer],
        )
        .unwrap();
    let error = PostgresStore::open(url).unwrap_err();
    assert!(
        matches!(error, PostgresStoreError::TooNew { found, known } if found == newer && known == newer - 1),
        "{error}"
    );
    assert!(error.to_string().contains("upgrade levh"), "{error}");
}

#[test]
fn the_event_log_refuses_changes_and_deletions_to_everyone() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    let store = PostgresStore::open(url).unwrap();
    store
        .insert(
            &record("the event log keeps every change", None),
            &[],
            &|_| None,
            &Actor::cli(),
        )
        .unwrap();
    let mut client = client(url);
    for statement in [
        "UPDATE events SET kind = 'forged'",
        "DELETE FROM events",
        "TRUNCATE events",
    ] {
        let error = client.batch_execute(statement).unwrap_err();
        let message = error.as_db_error().unwrap().message().to_owned();
        assert!(message.contains("append-only"), "{statement}: {message}");
    }
    let kinds: Vec<String> = client
        .query("SELECT kind FROM events", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(kinds, ["store"]);
}

/// The first vector of a dimension brings its HNSW index, which the nearest-neighbour
/// query can use (shown with scans and sorts off, as a large table would choose).
#[test]
fn each_dimension_gets_an_hnsw_index_the_search_uses() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    let store = PostgresStore::open(url).unwrap();
    store
        .insert(
            &record("a vector of three", Some(vec![0.6, 0.8, 0.0])),
            &[],
            &|_| None,
            &Actor::cli(),
        )
        .unwrap();
    let mut client = client(url);
    let indexes: Vec<String> = client
        .query(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'memory_embeddings_hnsw_%'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(indexes, ["memory_embeddings_hnsw_3"]);
    client
        .batch_execute("SET enable_seqscan = off; SET enable_sort = off")
        .unwrap();
    let plan: Vec<String> = client
        .query(
            "EXPLAIN SELECT memory_seq FROM memory_embeddings e
              WHERE e.dimension = 3 AND e.model = 'test-model'
              ORDER BY e.vector::vector(3) <=> '[1,0,0]'::vector LIMIT 5",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        plan.iter()
            .any(|line| line.contains("memory_embeddings_hnsw_3")),
        "{plan:#?}"
    );
}

/// An attached file is kept in the database with the rows that name it, once per digest,
/// and goes with the purge of the last memory naming it.
#[test]
fn attached_files_live_in_the_database_and_go_with_their_last_memory() {
    let Some(store) = testing::store() else {
        return;
    };
    let workspace = Workspace::default();
    let owner = record("a memory with a file", None);
    let text = record("the file's text", None);
    for new in [&owner, &text] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let attachment = levh_core::Attachment {
        memory_id: text.memory.id,
        attached_to: owner.memory.id,
        sha256: "ab".repeat(32),
        name: "notes.txt".into(),
        media_type: "text/plain".into(),
        bytes: 5,
    };
    assert!(
        store
            .save_attachment(&workspace, &attachment, b"hello")
            .unwrap()
    );
    assert_eq!(
        store.attachment_file(&attachment.sha256).unwrap(),
        Some(b"hello".to_vec())
    );
    store
        .purge(&workspace, text.memory.id, at(10), &Actor::cli())
        .unwrap()
        .unwrap();
    assert_eq!(store.attachment_file(&attachment.sha256).unwrap(), None);
}

/// The live feed tails the log by sequence number: a reader that has seen an event must
/// already be able to see every event numbered before it, however many processes write
/// at once (a number drawn by a transaction that commits later would be skipped for good).
#[test]
fn a_reader_tailing_the_log_while_many_write_misses_no_event() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let url = database.url();
    let options = levh_postgres::PoolOptions {
        max_connections: 10,
        ..levh_postgres::PoolOptions::default()
    };
    let store = PostgresStore::open_with(url, options).unwrap();
    let writers = 8;
    let each = 60;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let seen: Vec<i64> = std::thread::scope(|threads| {
        for writer in 0..writers {
            let (store, done) = (&store, &done);
            threads.spawn(move || {
                for n in 0..each {
                    let new = record(&format!("writer {writer} wrote note {n}"), None);
                    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let tail = threads.spawn(|| {
            let mut seen = Vec::new();
            let mut last = 0;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst) == writers;
                for event in store.events_after(last, 1_000).unwrap() {
                    last = event.seq;
                    seen.push(event.seq);
                }
                if finished {
                    return seen;
                }
            }
        });
        tail.join().unwrap()
    });
    let all: Vec<i64> = store
        .events_after(0, 100_000)
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(all.len(), writers * each);
    let missed: Vec<_> = all.iter().filter(|seq| !seen.contains(seq)).collect();
    assert!(missed.is_empty(), "the tailing reader never saw {missed:?}");
}

/// A feed listening on one store hears of the events another store (another `levh
/// serve` on the database) appends, when that store commits; nothing to hear is a
/// timeout, not a notice; and a transaction that rolled back tells no one.
#[test]
fn a_listener_hears_of_events_another_store_appends_and_only_those() {
    let Some(database) = testing::database_url() else {
        return;
    };
    let (here, there) = (
        PostgresStore::open(database.url()).unwrap(),
        PostgresStore::open(database.url()).unwrap(),
    );
    let mut signal = here.event_signal().unwrap().expect("PostgreSQL can tell");
    let quiet = std::time::Duration::from_millis(300);
    assert!(!signal.wait(quiet).unwrap(), "told of nothing");
    there
        .insert(
            &record("a note from the other server", None),
            &[],
            &|_| None,
            &Actor::cli(),
        )
        .unwrap();
    assert!(
        signal.wait(std::time::Duration::from_secs(10)).unwrap(),
        "not told of the other server's write"
    );
    // Told once for what was already there.
    assert!(!signal.wait(quiet).unwrap(), "told twice of one write");
    // A write that fails (an id already taken) rolls back and tells no one.
    let taken = record("a note written twice under one id", None);
    there.insert(&taken, &[], &|_| None, &Actor::cli()).unwrap();
    assert!(signal.wait(std::time::Duration::from_secs(10)).unwrap());
    assert!(there.insert(&taken, &[], &|_| None, &Actor::cli()).is_err());
    assert!(
        !signal.wait(quiet).unwrap(),
        "told of a write that rolled back"
    );
}

/// A server calls the server side of the store from anywhere, an async task's thread
/// included (a session's end is recorded in a `Drop`): there the synchronous driver
/// would panic, so those calls move to a thread of their own.
#[test]
fn the_server_side_answers_on_an_async_runtime_thread() {
    let Some(store) = testing::store() else {
        return;
    };
    store
        .insert(
            &record("logged before the runtime", None),
            &[],
            &|_| None,
            &Actor::cli(),
        )
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (last, events) = runtime.block_on(async {
        let last = store.last_event_seq().unwrap();
        (last, store.events_after(0, 10).unwrap())
    });
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].seq, last);
}
