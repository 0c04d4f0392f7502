//! Batched writes: a batch judges every item exactly as if it had been sent alone after
//! the batch's earlier items, on a real WAL file, with the lexical measure (hash embedder)
//! and with cosine (the same vectors, declared semantic, so the engine takes its vector
//! path).

use std::collections::HashMap;
use std::sync::Arc;

use levh_core::{
    CaptureOutcome, Config, Embedder, HeldStatus, Levh, MemoryFilter, MemoryId, NewMemory, Page,
    Parts, Result, Scope, Store, Workspace,
};
use levh_embed::HashEmbedder;
use levh_store::SqliteStore;

use crate::support::{distinct_sentence, start};

/// The hash embedder's vectors, declared semantic: the gate and interference then use
/// cosine and the vector index, as with a real model.
#[derive(Debug, Default)]
struct CosineHash(HashEmbedder);

impl Embedder for CosineHash {
    fn model_id(&self) -> &str {
        "cosine-hash-test"
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    fn is_semantic(&self) -> bool {
        true
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, levh_core::EmbedError> {
        self.0.embed(texts)
    }
}

struct Engine {
    levh: Levh,
    store: Arc<SqliteStore>,
    scope: Scope,
    _dir: tempfile::TempDir,
}

fn engine(semantic: bool) -> Engine {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).unwrap());
    let embedder: Arc<dyn Embedder> = if semantic {
        Arc::new(CosineHash::default())
    } else {
        Arc::new(HashEmbedder::default())
    };
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder,
        clock: Arc::new(levh_core::FixedClock(start())),
        config: Config::default(),
    });
    Engine {
        levh,
        store,
        scope: Scope::cli(Workspace::default()),
        _dir: dir,
    }
}

fn note(content: &str) -> NewMemory {
    NewMemory {
        content: content.into(),
        ..NewMemory::default()
    }
}

/// Every kind of verdict, including those that depend on earlier items of the batch.
fn items() -> Vec<NewMemory> {
    const MAIN: &str = "The deploy branch for atlas is main, and releases are cut on Thursdays.";
    const PROD: &str = "The deploy branch for atlas is prod, and releases are cut on Thursdays.";
    let mut items = vec![
        note(MAIN),
        note(MAIN), // a copy of item 0
        note(PROD), // a revision of item 0
        note(PROD), // a repeat of a held item
        note("ok"), // too short
        note("The staging token is ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI."),
        NewMemory {
            importance: Some(2.0), // invalid: its own error, the rest go on
            ..note("An item with an importance outside 0..1 is refused alone.")
        },
        NewMemory {
            project: Some("orion".into()), // another project: no neighbour there
            ..note(MAIN)
        },
        NewMemory {
            pinned: true,
            ..note("Always run the migrations before the deploy of the billing service.")
        },
        note("Always run the migrations before the deploy of the billing service!"),
        note("Ada: the quarterly review moves to the fourth of March at ten."),
        note("Bob: the quarterly review moves to the fourth of March at ten."),
    ];
    // Unrelated memories around them, and a near-copy of one of those later on.
    for n in 0..20 {
        items.push(note(&distinct_sentence(n)));
    }
    items.push(note(&format!("{} Indeed.", distinct_sentence(3))));
    // A revision in one project after more look-alikes in other projects than the gate
    // compares: the store looks in the candidate's project only, and so must the batch.
    const BACKUP: &str = "The backup window for the vega cluster opens at two in the morning.";
    let in_project = |content: &str, project: &str| NewMemory {
        project: Some(project.into()),
        ..note(content)
    };
    items.push(in_project(BACKUP, "vega"));
    for n in 0..25 {
        items.push(in_project(BACKUP, &format!("elsewhere-{n}")));
    }
    items.push(in_project(
        "The backup window for the vega cluster opens at three in the morning.",
        "vega",
    ));
    items
}

/// The position of the revision above, among [`items`].
const REVISION_IN_PROJECT: usize = 59;

/// An outcome with every id replaced by the number of the item that produced it, so two
/// stores' outcomes compare.
fn normalised(
    outcome: &Result<CaptureOutcome>,
    names: &HashMap<String, String>,
) -> serde_json::Value {
    let text = match outcome {
        Ok(outcome) => serde_json::to_string(outcome).unwrap(),
        Err(error) => format!("error: {error}"),
    };
    let mut text = text;
    for (id, name) in names {
        text = text.replace(id, name);
    }
    let mut value = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
    rounded(&mut value);
    value
}

/// Similarities to six places: the vector index sums in f32 lanes, a batch's own items are
/// compared in f64, and the two differ in the seventh place.
fn rounded(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(n) if n.is_f64() => {
            let x = (n.as_f64().unwrap() * 1e6).round() / 1e6;
            *value = serde_json::json!(x);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(rounded),
        serde_json::Value::Object(map) => map.values_mut().for_each(rounded),
        _ => {}
    }
}

fn names(outcomes: &[Result<CaptureOutcome>]) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for (index, outcome) in outcomes.iter().enumerate() {
        if let Ok(outcome) = outcome {
            if let Some(id) = outcome.memory_id {
                names.insert(id.to_string(), format!("memory-of-item-{index}"));
            }
            if let Some(id) = outcome.held_id {
                names.insert(id.to_string(), format!("held-of-item-{index}"));
            }
        }
    }
    names
}

/// Per item that became a memory: its stability now (interference lowers it).
fn stabilities(engine: &Engine, outcomes: &[Result<CaptureOutcome>]) -> Vec<Option<f64>> {
    outcomes
        .iter()
        .map(|outcome| {
            let id: MemoryId = outcome.as_ref().ok()?.memory_id?;
            Some(
                engine
                    .store
                    .get(&engine.scope.workspace, id)
                    .unwrap()
                    .unwrap()
                    .state
                    .stability_hours,
            )
        })
        .collect()
}

/// The held queue's texts, sorted (candidates held at the same instant have no order).
fn held_contents(engine: &Engine) -> Vec<String> {
    let mut held: Vec<String> = engine
        .store
        .list_held(
            &engine.scope.workspace,
            Some(HeldStatus::Held),
            start(),
            &levh_core::Actor::cli(),
        )
        .unwrap()
        .into_iter()
        .map(|held| held.content)
        .collect();
    held.sort();
    held
}

/// Two engines judged the same items alike: every outcome from `from` on (ids replaced
/// by item numbers), every stability after interference, and the held queue.
fn assert_judged_alike(
    (expected_engine, expected): (&Engine, &[Result<CaptureOutcome>]),
    (engine, outcomes): (&Engine, &[Result<CaptureOutcome>]),
    from: usize,
) {
    assert_eq!(outcomes.len(), expected.len());
    let (expected_names, actual_names) = (names(expected), names(outcomes));
    for index in from..expected.len() {
        assert_eq!(
            normalised(&expected[index], &expected_names),
            normalised(&outcomes[index], &actual_names),
            "item {index}: sent alone vs batched"
        );
    }
    assert_eq!(
        stabilities(expected_engine, expected),
        stabilities(engine, outcomes),
        "interference, item by item"
    );
    assert_eq!(held_contents(expected_engine), held_contents(engine));
}

/// An item's verdict by name, or `error`.
fn verdict(outcome: &Result<CaptureOutcome>) -> String {
    match outcome {
        Ok(outcome) => outcome.verdict.name().to_owned(),
        Err(_) => "error".to_owned(),
    }
}

fn same_as_one_by_one(semantic: bool) {
    let alone = engine(semantic);
    let one_by_one: Vec<Result<CaptureOutcome>> = items()
        .into_iter()
        .map(|new| alone.levh.capture(&alone.scope, new))
        .collect();
    let batched = engine(semantic);
    let together = batched.levh.capture_batch(&batched.scope, items()).unwrap();
    assert_eq!(together.len(), one_by_one.len());

    assert_judged_alike((&alone, &one_by_one), (&batched, &together), 0);
    let count = |e: &Engine| {
        e.store
            .count(&MemoryFilter::workspace(Workspace::default()))
            .unwrap()
    };
    assert_eq!(count(&alone), count(&batched));

    // The batch had something to prove: every verdict kind, and decisions that only an
    // earlier item of the same batch could cause.
    let verdict = |i: usize| verdict(&together[i]);
    assert_eq!(verdict(0), "admit");
    assert_eq!(
        verdict(1),
        "reject",
        "a copy of an earlier item of the batch"
    );
    let copy = together[1].as_ref().unwrap();
    assert_eq!(
        copy.nearest().map(|n| n.id),
        together[0].as_ref().unwrap().memory_id,
        "named as the duplicate of the earlier item's memory"
    );
    assert_eq!(verdict(4), "reject");
    assert_eq!(verdict(5), "redact");
    assert_eq!(verdict(6), "error");
    assert_eq!(verdict(7), "admit", "another project");
    if !semantic {
        assert_eq!(
            verdict(2),
            "review",
            "a revision of an earlier item is held"
        );
        assert_eq!(
            verdict(3),
            "reject",
            "a repeat of an item held in the batch"
        );
        assert!(
            format!("{:?}", together[3]).contains("waits for a person"),
            "{:?}",
            together[3]
        );
    }
    if !semantic {
        assert_eq!(
            verdict(REVISION_IN_PROJECT),
            "review",
            "a revision in its project, behind look-alikes elsewhere"
        );
    }
    // What was stored is readable like any capture.
    let listed = batched
        .levh
        .list(
            &batched.scope,
            MemoryFilter::workspace(Workspace::default()),
            Page {
                limit: 100,
                offset: 0,
            },
        )
        .unwrap();
    assert!(listed.iter().any(|m| m.content.contains("[REDACTED:")));
}

#[test]
fn a_batch_judges_each_item_as_if_sent_alone_after_the_earlier_ones_lexical() {
    same_as_one_by_one(false);
}

#[test]
fn a_batch_judges_each_item_as_if_sent_alone_after_the_earlier_ones_cosine() {
    same_as_one_by_one(true);
}

#[test]
fn a_batch_over_the_limit_is_refused_whole_naming_the_limit() {
    let e = engine(false);
    let too_many: Vec<NewMemory> = (0..(levh_core::MAX_BATCH as u64 + 1))
        .map(|n| note(&distinct_sentence(n)))
        .collect();
    let error = e.levh.capture_batch(&e.scope, too_many).unwrap_err();
    assert!(error.to_string().contains("at most 1000"), "{error}");
    assert_eq!(
        e.store
            .count(&MemoryFilter::workspace(Workspace::default()))
            .unwrap(),
        0
    );
}

/// `capture_batches` writes up to 5,000 items per transaction and judges the next group
/// while one is written. An item is judged as if sent alone after everything before it,
/// also when what it depends on is in the group still being written: 4,999 unrelated
/// items, then the verdict-making items one per batch, so the first of them closes the
/// first group and its copy, revision and neighbours are judged while it is written.
#[test]
fn consecutive_batches_judge_each_item_as_if_sent_alone_across_the_group_being_written() {
    let filler = |n: u64| note(&distinct_sentence(100_000 + n));
    let filler_batches = || -> Vec<Vec<NewMemory>> {
        [1000u64, 1000, 1000, 1000, 999]
            .iter()
            .scan(0u64, |at, &size| {
                let batch = (*at..*at + size).map(filler).collect();
                *at += size;
                Some(batch)
            })
            .collect()
    };

    let alone = engine(false);
    let mut reference: Vec<Result<CaptureOutcome>> = Vec::new();
    for batch in filler_batches() {
        reference.extend(alone.levh.capture_batch(&alone.scope, batch).unwrap());
    }
    assert_eq!(reference.len(), 4999);
    for new in items() {
        reference.push(alone.levh.capture(&alone.scope, new));
    }

    let pipelined = engine(false);
    let batches = filler_batches()
        .into_iter()
        .chain(items().into_iter().map(|item| vec![item]));
    let mut together: Vec<Result<CaptureOutcome>> = Vec::new();
    let mut reports = 0;
    pipelined
        .levh
        .capture_batches(&pipelined.scope, batches, |outcomes| {
            reports += 1;
            together.extend(outcomes);
            Ok::<(), levh_core::Error>(())
        })
        .unwrap();
    assert_eq!(reports, 5 + items().len(), "one report per batch");
    assert_eq!(together.len(), reference.len());

    assert_judged_alike((&alone, &reference), (&pipelined, &together), 4999);
    // The items after the first were judged against it while it was being written.
    let verdict = |i: usize| verdict(&together[4999 + i]);
    assert_eq!(verdict(0), "admit");
    assert_eq!(verdict(1), "reject", "a copy of the item being written");
    assert_eq!(
        together[4999 + 1].as_ref().unwrap().nearest().map(|n| n.id),
        together[4999].as_ref().unwrap().memory_id,
        "named as the duplicate of the memory being written"
    );
    assert_eq!(verdict(2), "review", "a revision of the item being written");
    assert_eq!(verdict(3), "reject", "a repeat of a held item");
}

/// A `levh import` killed while it writes leaves whole transactions only (every stored
/// memory with its vector and its event), and running it again stores the rest, each
/// item once.
#[test]
fn an_import_killed_midway_leaves_whole_groups_and_a_rerun_completes_it() {
    use crate::support::{json, levh};
    const ITEMS: u64 = 11_000;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("memories.jsonl");
    let lines: Vec<String> = (0..ITEMS)
        .map(|n| serde_json::json!({ "content": distinct_sentence(200_000 + n) }).to_string())
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let database = home.path().join("levh.db");
    let counts = || -> (i64, i64, i64, i64) {
        let db = rusqlite::Connection::open(&database).unwrap();
        let count = |sql: &str| db.query_row(sql, [], |row| row.get::<_, i64>(0)).unwrap();
        (
            count("SELECT count(*) FROM memories"),
            count("SELECT count(*) FROM memory_embeddings"),
            count("SELECT count(*) FROM events WHERE kind = 'store'"),
            count("SELECT count(*) FROM held_candidates"),
        )
    };

    let mut child = levh(home.path())
        .arg("import")
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it without warning once the first group is stored.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        if database.exists()
            && rusqlite::Connection::open(&database)
                .and_then(|db| db.query_row("SELECT count(*) FROM memories", [], |r| r.get(0)))
                .is_ok_and(|n: i64| n > 0)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();

    let (memories, vectors, stores, held) = counts();
    assert!(memories > 0, "the first group was stored before the kill");
    assert_eq!(memories, vectors, "every stored memory has its vector");
    assert_eq!(memories, stores, "every stored memory has its event");
    assert_eq!(
        (memories + held) % 5000,
        0,
        "whole transactions of 5,000 items only: {memories} memories, {held} held"
    );

    let report = json(levh(home.path()).arg("import").arg(&file).arg("--json"));
    assert_eq!(report["read"], ITEMS, "{report}");
    let (memories_after, vectors_after, stores_after, held_after) = counts();
    assert_eq!(
        memories_after + held_after,
        ITEMS as i64,
        "every item stored or held once"
    );
    assert_eq!(memories_after, vectors_after);
    assert_eq!(memories_after, stores_after);
    assert_eq!(
        report["rejected"].as_i64().unwrap(),
        memories + held,
        "what the killed run stored is rejected as duplicates, nothing else: {report}"
    );
}
