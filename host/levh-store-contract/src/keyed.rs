//! Keyed memories: one current memory per (project, key), replaced by compare-and-set.

use levh_core::{Actor, MemoryFilter, Workspace};

use crate::{Contracted, at, record};

fn atlas() -> MemoryFilter {
    MemoryFilter {
        project: Some("atlas".into()),
        ..MemoryFilter::workspace(Workspace::default())
    }
}

/// The first write of a key needs no current memory; a write naming the current one
/// replaces it (retired as superseded by the new one); a write naming a stale one (or
/// none, when there is one) loses and writes nothing.
pub fn a_key_has_one_current_memory_and_a_stale_replacement_loses(store: &dyn Contracted) {
    let key = "build command";
    let first = record("build with make", 0, "default", Some("atlas"), None);
    assert!(
        store
            .store_keyed(&first, &[], &|_| None, key, None, &Actor::cli())
            .unwrap()
    );
    let loser = record("build with ninja", 30, "default", Some("atlas"), None);
    assert!(
        !store
            .store_keyed(&loser, &[], &|_| None, key, None, &Actor::cli())
            .unwrap()
    );
    assert!(
        store
            .get(&Workspace::default(), loser.memory.id)
            .unwrap()
            .is_none()
    );
    let second = record("build with cargo", 60, "default", Some("atlas"), None);
    assert!(
        store
            .store_keyed(
                &second,
                &[],
                &|_| None,
                key,
                Some(first.memory.id),
                &Actor::cli()
            )
            .unwrap()
    );
    let stale = record("build with bazel", 90, "default", Some("atlas"), None);
    assert!(
        !store
            .store_keyed(
                &stale,
                &[],
                &|_| None,
                key,
                Some(first.memory.id),
                &Actor::cli()
            )
            .unwrap()
    );

    let retired = store
        .get(&Workspace::default(), first.memory.id)
        .unwrap()
        .unwrap();
    assert_eq!(
        (retired.valid_to, retired.superseded_by),
        (Some(at(60)), Some(second.memory.id))
    );
    let all: Vec<_> = store
        .keyed(&atlas(), key)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(all, [second.memory.id, first.memory.id]);
    let now: Vec<_> = store
        .keyed(&atlas().read_at(None, at(120)), key)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(now, [second.memory.id]);
    assert!(store.keyed(&atlas(), "another key").unwrap().is_empty());
    let no_project = MemoryFilter::workspace(Workspace::default());
    assert!(store.keyed(&no_project, key).unwrap().is_empty());
}

/// Eight writers start a new key at once, each believing it has no current memory:
/// exactly one stores its memory, the others write nothing.
pub fn of_writers_racing_for_a_new_key_exactly_one_wins(store: &dyn Contracted) {
    let key = "current owner of billing";
    let records: Vec<_> = (0..8)
        .map(|n| {
            record(
                &format!("billing is owned by team {n}"),
                n,
                "default",
                Some("atlas"),
                None,
            )
        })
        .collect();
    let start = std::sync::Barrier::new(records.len());
    let won: Vec<bool> = std::thread::scope(|threads| {
        let handles: Vec<_> = records
            .iter()
            .map(|new| {
                let start = &start;
                threads.spawn(move || {
                    start.wait();
                    store
                        .store_keyed(new, &[], &|_| None, key, None, &Actor::cli())
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    assert_eq!(store.keyed(&atlas(), key).unwrap().len(), 1);
    let stored = records
        .iter()
        .filter(|new| {
            store
                .get(&Workspace::default(), new.memory.id)
                .unwrap()
                .is_some()
        })
        .count();
    assert_eq!(stored, 1);
}

/// A stored memory (a keyed candidate a person admitted) becomes the key's current one,
/// retiring the one before; a memory that is not live cannot.
pub fn a_person_can_adopt_a_stored_memory_as_a_key_current_one(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let key = "on call";
    let first = record("ada is on call", 0, "default", Some("atlas"), None);
    assert!(
        store
            .store_keyed(&first, &[], &|_| None, key, None, &Actor::cli())
            .unwrap()
    );
    let admitted = record("grace is on call", 60, "default", Some("atlas"), None);
    store
        .insert(&admitted, &[], &|_| None, &Actor::cli())
        .unwrap();
    assert!(
        store
            .adopt_key(
                &workspace,
                Some("atlas"),
                key,
                admitted.memory.id,
                at(90),
                &Actor::cli()
            )
            .unwrap()
    );
    let retired = store.get(&workspace, first.memory.id).unwrap().unwrap();
    assert_eq!(retired.superseded_by, Some(admitted.memory.id));
    let current: Vec<_> = store
        .keyed(&atlas().read_at(None, at(100)), key)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(current, [admitted.memory.id]);
    let forgotten = record("linus is on call", 120, "default", Some("atlas"), None);
    store
        .insert(&forgotten, &[], &|_| None, &Actor::cli())
        .unwrap();
    store
        .forget(&workspace, forgotten.memory.id, at(130), &Actor::cli())
        .unwrap();
    assert!(
        !store
            .adopt_key(
                &workspace,
                Some("atlas"),
                key,
                forgotten.memory.id,
                at(140),
                &Actor::cli()
            )
            .unwrap()
    );
}
