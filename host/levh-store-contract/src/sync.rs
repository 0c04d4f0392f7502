//! Connector sync state: what became of each item, listings, run records, and the
//! retirement of items gone from their source.

use levh_core::sync::{ItemOutcome, SourceRemoval, SyncReport, SyncStatus, SyncedItem};
use levh_core::{Actor, HeldStatus, Workspace};

use crate::held::candidate;
use crate::{Contracted, at, record};

/// A complete listing marks the items it named; items gone from the source are retired:
/// an unpinned memory forgotten (saying by which run), a pinned one kept, a waiting
/// candidate discarded, an item never synced passed over, and each record dropped.
pub fn items_gone_from_their_source_are_retired_and_pinned_ones_kept(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let plain = record("notes.md says hello", 0, "default", None, None);
    let mut pinned = record("pinned.md says keep me", 10, "default", None, None);
    pinned.memory.state.pinned = true;
    for new in [&plain, &pinned] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let held = candidate("draft.md is undecided", 20, None);
    store.insert_held(&held, &Actor::cli()).unwrap();
    let item = |memory_id, held_id, verdict| SyncedItem {
        content_hash: "h".into(),
        memory_id,
        held_id,
        verdict,
    };
    for (source_id, synced) in [
        (
            "notes.md",
            item(Some(plain.memory.id), None, ItemOutcome::Admit),
        ),
        (
            "pinned.md",
            item(Some(pinned.memory.id), None, ItemOutcome::Admit),
        ),
        ("draft.md", item(None, Some(held.id), ItemOutcome::Review)),
        ("other.md", item(None, None, ItemOutcome::Reject)),
    ] {
        store
            .record_synced_item(&workspace, "files", source_id, &synced, at(30))
            .unwrap();
    }
    let named: Vec<String> = ["notes.md", "pinned.md", "draft.md"]
        .map(String::from)
        .into();
    store
        .mark_listed(&workspace, "files", "dir=/notes", &named)
        .unwrap();
    let mut listed = store
        .listed_items(&workspace, "files", "dir=/notes")
        .unwrap();
    listed.sort();
    assert_eq!(listed, ["draft.md", "notes.md", "pinned.md"]);
    assert!(
        store
            .listed_items(&workspace, "files", "dir=/other")
            .unwrap()
            .is_empty()
    );

    let removals: Vec<SourceRemoval> = ["notes.md", "pinned.md", "draft.md", "never.md"]
        .map(|id| SourceRemoval {
            source_id: id.into(),
            reason: "deleted".into(),
        })
        .into();
    let retired = store
        .retire_synced_items(
            &workspace,
            "files",
            &removals,
            "run-1",
            at(40),
            &Actor::cli(),
        )
        .unwrap();
    let outcome: Vec<_> = retired
        .iter()
        .map(|r| (r.source_id.as_str(), r.memory_id, r.kept_pinned, r.held_id))
        .collect();
    assert_eq!(
        outcome,
        [
            ("notes.md", Some(plain.memory.id), None, None),
            ("pinned.md", None, Some(pinned.memory.id), None),
            ("draft.md", None, None, Some(held.id)),
        ]
    );
    assert!(store.get(&workspace, plain.memory.id).unwrap().is_none());
    assert!(store.get(&workspace, pinned.memory.id).unwrap().is_some());
    assert_eq!(
        store.get_held(&workspace, held.id).unwrap().unwrap().status,
        HeldStatus::Discarded
    );
    assert!(
        store
            .synced_item(&workspace, "files", "notes.md")
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .synced_item(&workspace, "files", "other.md")
            .unwrap()
            .is_some()
    );
    let history = store.memory_events(&workspace, plain.memory.id, 1).unwrap();
    assert_eq!(history[0].detail["retired_by_sync"], "run-1");
}

/// A run is recorded while running and again when finished (logged then), read back
/// whole, listed newest first, optionally of one connector.
pub fn sync_runs_are_recorded_read_back_and_listed_newest_first(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let start = store.last_event_seq().unwrap();
    let mut first = SyncReport {
        run_id: "run-a".into(),
        connector: "files".into(),
        status: SyncStatus::Running,
        started_at: Some(at(0)),
        ..SyncReport::default()
    };
    store
        .save_sync_run(&workspace, &first, &Actor::cli())
        .unwrap();
    assert!(store.events_after(start, 10).unwrap().is_empty());
    first.status = SyncStatus::Ok;
    first.finished_at = Some(at(60));
    first.fetched = 12;
    first.admitted = 10;
    store
        .save_sync_run(&workspace, &first, &Actor::cli())
        .unwrap();
    let second = SyncReport {
        run_id: "run-b".into(),
        connector: "email".into(),
        started_at: Some(at(100)),
        ..SyncReport::default()
    };
    store
        .save_sync_run(&workspace, &second, &Actor::cli())
        .unwrap();
    assert_eq!(
        store.sync_run(&workspace, "run-a").unwrap().as_ref(),
        Some(&first)
    );
    assert!(
        store
            .sync_run(&Workspace::new("other").unwrap(), "run-a")
            .unwrap()
            .is_none()
    );
    let all: Vec<_> = store
        .sync_runs(&workspace, None, 10)
        .unwrap()
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(all, ["run-b", "run-a"]);
    assert_eq!(
        store.sync_runs(&workspace, Some("files"), 10).unwrap(),
        [first]
    );
    let logged = store.events_after(start, 10).unwrap();
    assert_eq!(logged.len(), 1);
    assert_eq!(
        (logged[0].kind.as_str(), &logged[0].detail["fetched"]),
        ("sync-run", &serde_json::json!(12))
    );
}
