//! Writing memories: what is stored reads back whole, states change under one
//! transaction with their events, interference, replaced content, batches and vectors.

use levh_core::sync::{ItemOutcome, SyncedItem};
use levh_core::{
    Actor, BatchWrite, Embedding, EventKind, HeldId, MemoryFilter, MemoryState, Session, SessionId,
    StaleEmbedding, SyncedPage, Workspace,
};

use crate::held::candidate;
use crate::{Contracted, at, record};

/// Every field of a memory — labels, metadata, state, validity, admission, session, its
/// vector's model and dimension — reads back exactly as stored.
pub fn a_memory_reads_back_as_it_was_stored(store: &dyn Contracted) {
    let session = Session {
        id: SessionId::new("s-contract"),
        workspace: Workspace::default(),
        project: Some("atlas".into()),
        client: Some("claude-code".into()),
        started_at: at(0),
        ended_at: None,
    };
    store.start_session(&session).unwrap();
    let mut new = record(
        "the deploy branch for atlas is main",
        10,
        "default",
        Some("atlas"),
        Some(vec![0.6, 0.8, 0.0]),
    );
    let m = &mut new.memory;
    m.kind = levh_core::Kind::new("decision").unwrap();
    m.source = "connector:email".into();
    m.metadata =
        serde_json::json!({ "source_id": "<a@b>", "n": 3, "nested": { "list": [1, 2.5, "x"] } });
    m.state.importance = 0.75;
    m.state.pinned = true;
    m.state.last_recalled_at = Some(at(5));
    m.state.recall_count = 2;
    m.valid_from = at(-3600);
    m.valid_to = Some(at(86_400));
    m.admission.reasons = vec!["looks new".into()];
    m.session_id = Some(session.id.clone());
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let read = store.get(&Workspace::default(), new.memory.id).unwrap();
    assert_eq!(read.as_ref(), Some(&new.memory));
    assert!(store.id_in_use(new.memory.id).unwrap());
}

/// A memory is read only in its workspace, and once forgotten only as forgotten (with
/// when); forgetting twice changes nothing the second time.
pub fn reads_see_only_their_workspace_and_live_memories(store: &dyn Contracted) {
    let new = record("kept in the team workspace", 0, "team", None, None);
    let id = new.memory.id;
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let team = Workspace::new("team").unwrap();
    assert!(store.get(&Workspace::default(), id).unwrap().is_none());
    assert!(store.get(&team, id).unwrap().is_some());
    assert!(store.get_forgotten(&team, id).unwrap().is_none());

    assert!(store.forget(&team, id, at(60), &Actor::cli()).unwrap());
    assert!(!store.forget(&team, id, at(61), &Actor::cli()).unwrap());
    assert!(store.get(&team, id).unwrap().is_none());
    let (forgotten, when) = store.get_forgotten(&team, id).unwrap().unwrap();
    assert_eq!((forgotten.id, when), (id, at(60)));
    assert!(store.id_in_use(id).unwrap());
    assert!(
        !store
            .forget(&Workspace::default(), id, at(62), &Actor::cli())
            .unwrap()
    );
    // A secret audit reads every stored text of the workspace, forgotten rows included.
    let texts = store.contents(&team).unwrap();
    assert_eq!(texts.len(), 1);
    assert_eq!(
        (
            texts[0].id,
            texts[0].content.as_str(),
            texts[0].source.as_str()
        ),
        (id, "kept in the team workspace", "contract")
    );
    assert!(
        store
            .contents(&Workspace::new("other").unwrap())
            .unwrap()
            .is_empty()
    );
}

/// A reinforcement reads each memory's current state, writes the one `update` computes
/// and logs it; `None` and an unchanged state leave a memory (and the log) alone.
pub fn new_states_are_written_logged_and_returned(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let ids: Vec<_> = (0..3)
        .map(|n| {
            let new = record(&format!("memory number {n}"), n, "default", None, None);
            store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
            new.memory.id
        })
        .collect();
    let before = store.last_event_seq().unwrap();
    let updated = store
        .update_states(
            &workspace,
            &ids,
            EventKind::RecallReinforce,
            &Actor::cli(),
            at(100),
            &mut |m| match m.content.as_str() {
                "memory number 0" => Some(MemoryState {
                    stability_hours: 300.0,
                    last_recalled_at: Some(at(100)),
                    recall_count: m.state.recall_count + 1,
                    ..m.state
                }),
                "memory number 1" => Some(m.state),
                _ => None,
            },
        )
        .unwrap();
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0].id, ids[0]);
    assert_eq!(updated[0].state.recall_count, 1);
    let read = store.get(&workspace, ids[0]).unwrap().unwrap();
    assert_eq!(read.state, updated[0].state);
    assert_eq!(
        store
            .get(&workspace, ids[1])
            .unwrap()
            .unwrap()
            .state
            .recall_count,
        0
    );
    let events = store.events_after(before, 10).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].kind.as_str(), events[0].memory_id),
        ("recall-reinforce", Some(ids[0]))
    );
    assert_eq!(events[0].detail["recall_count"], 1);
}

/// A new memory weakens its live neighbours through `interfere`, reading their current
/// state; a forgotten or unknown neighbour is passed over.
pub fn interference_weakens_live_neighbours_only(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let old = record("the deploy branch is main", 0, "default", None, None);
    let gone = record("the deploy branch was trunk", 1, "default", None, None);
    for new in [&old, &gone] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(&workspace, gone.memory.id, at(2), &Actor::cli())
        .unwrap();
    let newer = record("the deploy branch is prod", 10, "default", None, None);
    let unknown = levh_core::MemoryId::new_at(at(3));
    let applied = store
        .insert(
            &newer,
            &[
                (old.memory.id, 0.93),
                (gone.memory.id, 0.95),
                (unknown, 0.9),
            ],
            &|state| {
                Some(MemoryState {
                    stability_hours: state.stability_hours * 0.6,
                    ..*state
                })
            },
            &Actor::cli(),
        )
        .unwrap();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0].memory_id, old.memory.id);
    assert!((applied[0].stability_hours - 168.0 * 0.6).abs() < 1e-9);
    assert!((applied[0].similarity - 0.93).abs() < 1e-12);
    let read = store.get(&workspace, old.memory.id).unwrap().unwrap();
    assert!((read.state.stability_hours - 168.0 * 0.6).abs() < 1e-9);
    let history = store.memory_events(&workspace, old.memory.id, 10).unwrap();
    assert_eq!(
        history.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["interfere", "store"]
    );
}

/// Content (with its hash, vector and keys), labels and the start of validity are
/// replaced in place, each logged; a missing memory is reported as such.
pub fn content_fields_and_validity_are_replaced_in_place(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let new = record(
        "the cache lives in redis",
        0,
        "default",
        Some("atlas"),
        Some(vec![1.0, 0.0]),
    );
    let id = new.memory.id;
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let text = "the cache lives in memcached now";
    let embedding = Embedding {
        model: "test-model".into(),
        vector: vec![0.0, 1.0],
    };
    let keys = levh_core::text::near_duplicate_keys(text);
    let detail = serde_json::json!({ "why": "moved" });
    assert!(
        store
            .replace_content(
                &workspace,
                id,
                text,
                Some(&embedding),
                &keys,
                EventKind::Update,
                detail.clone(),
                at(10),
                &Actor::cli()
            )
            .unwrap()
    );
    let read = store.get(&workspace, id).unwrap().unwrap();
    assert_eq!(
        (read.content.as_str(), read.content_hash.clone()),
        (text, levh_core::text::content_hash(text))
    );
    assert_eq!(
        store.embeddings(&workspace, &[id], "test-model").unwrap(),
        [(id, vec![0.0, 1.0])]
    );
    let filter = MemoryFilter::workspace(workspace.clone());
    assert_eq!(store.near_duplicates(&filter, &keys, 5).unwrap(), [id]);
    assert_eq!(
        store
            .lexical_candidates(&filter, "memcached", 5)
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .lexical_candidates(&filter, "redis", 5)
            .unwrap()
            .is_empty()
    );

    let metadata = serde_json::json!({ "moved": true });
    assert!(
        store
            .replace_fields(
                &workspace,
                id,
                Some("vega"),
                "cli",
                &metadata,
                EventKind::Update,
                serde_json::json!({}),
                at(11),
                &Actor::cli()
            )
            .unwrap()
    );
    let read = store.get(&workspace, id).unwrap().unwrap();
    assert_eq!(
        (
            read.project.as_deref(),
            read.source.as_str(),
            &read.metadata
        ),
        (Some("vega"), "cli", &metadata)
    );

    assert!(
        store
            .set_valid_from(
                &workspace,
                id,
                at(-100),
                EventKind::Update,
                serde_json::json!({}),
                at(12),
                &Actor::cli()
            )
            .unwrap()
    );
    assert_eq!(
        store.get(&workspace, id).unwrap().unwrap().valid_from,
        at(-100)
    );
    let missing = levh_core::MemoryId::new_at(at(13));
    assert!(
        !store
            .replace_content(
                &workspace,
                missing,
                text,
                None,
                &[],
                EventKind::Update,
                serde_json::json!({}),
                at(13),
                &Actor::cli()
            )
            .unwrap()
    );
    let history = store.memory_events(&workspace, id, 10).unwrap();
    assert_eq!(history.len(), 4);
    assert_eq!(
        history[3].detail,
        serde_json::json!({ "bytes": "the cache lives in redis".len() })
    );
    assert_eq!(history[2].detail, detail);
}

/// A batch stores its memories and held candidates and records its sync page's items
/// and cursor, all in one transaction.
pub fn a_batch_writes_memories_held_candidates_and_its_sync_page_together(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let first = record("first item of the page", 0, "default", None, None);
    let second = record("second item of the page", 1, "default", None, None);
    let held = candidate("a third item nobody judged", 2, None);
    let item = |memory_id, held_id: Option<HeldId>, verdict| SyncedItem {
        content_hash: "h".into(),
        memory_id,
        held_id,
        verdict,
    };
    let page = SyncedPage {
        workspace: workspace.clone(),
        connector: "files".into(),
        items: vec![
            (
                "a.md".into(),
                item(Some(first.memory.id), None, ItemOutcome::Admit),
            ),
            (
                "c.md".into(),
                item(None, Some(held.id), ItemOutcome::Review),
            ),
        ],
        cursor: Some(("files".into(), Some("after-c".into()))),
        now: at(3),
    };
    let writes = [
        BatchWrite::Memory {
            record: first.clone(),
            neighbours: vec![],
            identical_seen: vec![],
        },
        BatchWrite::Held {
            candidate: held.clone(),
            identical_seen: vec![],
        },
        BatchWrite::Memory {
            record: second.clone(),
            neighbours: vec![(first.memory.id, 0.95)],
            identical_seen: vec![],
        },
    ];
    let applied = store
        .write_batch(
            &writes,
            Some(&page),
            &|s| {
                Some(MemoryState {
                    stability_hours: 10.0,
                    ..*s
                })
            },
            &Actor::cli(),
        )
        .unwrap();
    assert_eq!(applied.iter().map(Vec::len).collect::<Vec<_>>(), [0, 0, 1]);
    assert_eq!(
        store
            .get(&workspace, first.memory.id)
            .unwrap()
            .unwrap()
            .state
            .stability_hours,
        10.0
    );
    assert!(store.get(&workspace, second.memory.id).unwrap().is_some());
    assert_eq!(
        store
            .get_held(&workspace, held.id)
            .unwrap()
            .unwrap()
            .content,
        held.content
    );
    assert_eq!(
        store.sync_cursor(&workspace, "files").unwrap().as_deref(),
        Some("after-c")
    );
    store
        .save_sync_cursor(&workspace, "files", None, at(4))
        .unwrap();
    assert_eq!(store.sync_cursor(&workspace, "files").unwrap(), None);
    store
        .save_sync_cursor(&workspace, "mail", Some("uid-9"), at(5))
        .unwrap();
    assert_eq!(
        store.sync_cursor(&workspace, "mail").unwrap().as_deref(),
        Some("uid-9")
    );
    assert_eq!(
        store.synced_item(&workspace, "files", "a.md").unwrap(),
        Some(item(Some(first.memory.id), None, ItemOutcome::Admit))
    );
    assert_eq!(
        store
            .synced_item(&workspace, "files", "c.md")
            .unwrap()
            .unwrap()
            .held_id,
        Some(held.id)
    );
    assert_eq!(
        store.synced_item(&workspace, "files", "b.md").unwrap(),
        None
    );
}

/// Of writers storing the same text at once, each judged by the gate before any of them
/// wrote (so each saw no copy), exactly one writes; the others' whole batches are
/// refused as raced, with nothing of them written. A copy the gate saw (a retired one), a
/// forgotten copy and a copy in another project do not count; a copy waiting in the held
/// queue does.
pub fn of_writers_storing_one_text_at_once_exactly_one_writes(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let text = "the deploy freeze starts on friday at noon";
    let writers: Vec<Vec<BatchWrite>> = (0..8)
        .map(|n| {
            vec![
                BatchWrite::Memory {
                    record: record(
                        &format!("writer {n} also stores this unrelated note"),
                        2 * n,
                        "default",
                        Some("atlas"),
                        None,
                    ),
                    neighbours: vec![],
                    identical_seen: vec![],
                },
                BatchWrite::Memory {
                    record: record(text, 2 * n + 1, "default", Some("atlas"), None),
                    neighbours: vec![],
                    identical_seen: vec![],
                },
            ]
        })
        .collect();
    let start = std::sync::Barrier::new(writers.len());
    let written: Vec<bool> = std::thread::scope(|threads| {
        let handles: Vec<_> = writers
            .iter()
            .map(|batch| {
                let start = &start;
                threads.spawn(move || {
                    start.wait();
                    match store.write_batch(batch, None, &|_| None, &Actor::cli()) {
                        Ok(_) => true,
                        Err(error) => {
                            assert!(error.is_raced(), "{error}");
                            false
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(written.iter().filter(|w| **w).count(), 1, "{written:?}");
    let hash = levh_core::text::content_hash(text);
    let in_project = |project: &str| MemoryFilter {
        project: Some(project.into()),
        ..MemoryFilter::workspace(workspace.clone())
    };
    let copies = store
        .identical_memories(&in_project("atlas"), &hash)
        .unwrap();
    assert_eq!(copies.len(), 1, "{copies:?}");
    for (batch, written) in writers.iter().zip(&written) {
        let BatchWrite::Memory { record: other, .. } = &batch[0] else {
            unreachable!()
        };
        assert_eq!(
            store.get(&workspace, other.memory.id).unwrap().is_some(),
            *written,
            "a raced batch writes none of its items"
        );
    }

    let again = |second: i64, project: Option<&str>, seen: Vec<levh_core::MemoryId>| {
        store.write_batch(
            &[BatchWrite::Memory {
                record: record(text, second, "default", project, None),
                neighbours: vec![],
                identical_seen: seen,
            }],
            None,
            &|_| None,
            &Actor::cli(),
        )
    };
    // Not seen by the gate: another writer's copy.
    assert!(again(40, Some("atlas"), vec![]).unwrap_err().is_raced());
    // Seen by the gate (it let the text in beside a retired copy): written.
    again(41, Some("atlas"), copies.clone()).unwrap();
    // Another project's copy is not this project's text; a write without a project is
    // compared with every project's memories, so their copies count.
    again(42, Some("gamma"), vec![]).unwrap();
    assert!(again(46, None, vec![]).unwrap_err().is_raced());
    // A forgotten copy does not count.
    let in_beta = again(43, Some("beta"), vec![]);
    in_beta.unwrap();
    let beta = store
        .identical_memories(&in_project("beta"), &hash)
        .unwrap();
    assert!(
        store
            .forget(&workspace, beta[0], at(44), &Actor::cli())
            .unwrap()
    );
    assert!(
        store
            .identical_memories(&in_project("beta"), &hash)
            .unwrap()
            .is_empty()
    );
    again(45, Some("beta"), vec![]).unwrap();

    // A copy waiting for a person's decision counts, for a memory and a held candidate.
    let waiting = candidate("a text waiting in the held queue", 50, None);
    store
        .write_batch(
            &[BatchWrite::Held {
                candidate: waiting.clone(),
                identical_seen: vec![],
            }],
            None,
            &|_| None,
            &Actor::cli(),
        )
        .unwrap();
    let mut second = candidate("a text waiting in the held queue", 51, None);
    second.id = HeldId::new_at(at(51));
    let raced = store
        .write_batch(
            &[BatchWrite::Held {
                candidate: second,
                identical_seen: vec![],
            }],
            None,
            &|_| None,
            &Actor::cli(),
        )
        .unwrap_err();
    assert!(raced.is_raced(), "{raced}");
    assert!(
        raced.to_string().contains(&waiting.id.to_string()),
        "{raced}"
    );
    let as_memory = store
        .write_batch(
            &[BatchWrite::Memory {
                record: record(
                    "a text waiting in the held queue",
                    52,
                    "default",
                    Some("atlas"),
                    None,
                ),
                neighbours: vec![],
                identical_seen: vec![],
            }],
            None,
            &|_| None,
            &Actor::cli(),
        )
        .unwrap_err();
    assert!(as_memory.is_raced(), "{as_memory}");
}

/// Memories whose vector is missing or of another model are listed oldest first, and a
/// new vector is written only while the memory still has the content it was made from.
pub fn stale_vectors_are_listed_and_replaced_only_over_their_content(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let without = record("a memory with no vector", 0, "default", None, None);
    let mut other = record(
        "a memory of another model",
        1,
        "default",
        None,
        Some(vec![1.0, 0.0]),
    );
    other.embedding.as_mut().unwrap().model = "old-model".into();
    other.memory.embedding_model = Some("old-model".into());
    let current = record(
        "a memory of this model",
        2,
        "default",
        None,
        Some(vec![0.0, 1.0]),
    );
    for new in [&without, &other, &current] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let stale = store.stale_embeddings("test-model", 10).unwrap();
    assert_eq!(
        stale.iter().map(|s| s.id).collect::<Vec<_>>(),
        [without.memory.id, other.memory.id]
    );
    assert_eq!(store.count_stale_embeddings("test-model").unwrap(), 2);
    let edited = StaleEmbedding {
        content_hash: "an older hash".into(),
        ..stale[1].clone()
    };
    let vector = |v: Vec<f32>| Embedding {
        model: "test-model".into(),
        vector: v,
    };
    let written = store
        .set_embeddings(&[
            (stale[0].clone(), vector(vec![0.6, 0.8])),
            (edited, vector(vec![0.8, 0.6])),
        ])
        .unwrap();
    assert_eq!(written, 1);
    assert_eq!(store.count_stale_embeddings("test-model").unwrap(), 1);
    assert_eq!(
        store
            .embeddings(&workspace, &[without.memory.id], "test-model")
            .unwrap(),
        [(without.memory.id, vec![0.6, 0.8])]
    );
}
