//! The held queue: candidates waiting for a person, and decisions taken once.

use levh_core::{
    Actor, HeldCandidate, HeldClose, HeldId, HeldStatus, Kind, MemoryFilter, Role, Surface,
    Workspace, text,
};

use crate::{Contracted, at, record};

/// A candidate held at `at(second)` in the default workspace.
pub(crate) fn candidate(content: &str, second: i64, expires: Option<i64>) -> HeldCandidate {
    HeldCandidate {
        id: HeldId::new_at(at(second)),
        workspace: Workspace::default(),
        project: Some("atlas".into()),
        content: content.into(),
        kind: Kind::default(),
        source: "contract".into(),
        importance: 0.5,
        pinned: false,
        valid_from: at(second),
        valid_to: None,
        metadata: serde_json::json!({ "from": "contract" }),
        session_id: None,
        content_hash: text::content_hash(content),
        redactions: vec![],
        reason: "close to an existing memory".into(),
        nearest: None,
        status: HeldStatus::Held,
        created_at: at(second),
        expires_at: expires.map(at),
        decision: None,
        memory_id: None,
        updates: None,
    }
}

fn person(name: &str) -> Actor {
    Actor {
        surface: Surface::Dashboard,
        client: None,
        role: Role::Admin,
        principal: Some(name.into()),
    }
}

/// A held candidate reads back as held, is found by its content's hash in its project,
/// listed oldest first by status, and expires (a status, not a delete) once past due.
pub fn held_candidates_are_listed_found_by_hash_and_expire_as_a_status(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let waiting = candidate("the deploy branch is prod", 0, None);
    let expiring = candidate("the deploy branch is staging", 10, Some(100));
    for held in [&waiting, &expiring] {
        store.insert_held(held, &Actor::cli()).unwrap();
    }
    assert_eq!(
        store.get_held(&workspace, waiting.id).unwrap().as_ref(),
        Some(&waiting)
    );
    assert!(
        store
            .get_held(&Workspace::new("other").unwrap(), waiting.id)
            .unwrap()
            .is_none()
    );
    let found = store
        .waiting_held(&workspace, Some("atlas"), &waiting.content_hash)
        .unwrap();
    assert_eq!(found.map(|h| h.id), Some(waiting.id));
    assert!(
        store
            .waiting_held(&workspace, None, &waiting.content_hash)
            .unwrap()
            .is_none()
    );

    let listed = store
        .list_held(&workspace, Some(HeldStatus::Held), at(50), &Actor::cli())
        .unwrap();
    assert_eq!(
        listed.iter().map(|h| h.id).collect::<Vec<_>>(),
        [waiting.id, expiring.id]
    );
    store
        .expire_held(&workspace, at(100), &Actor::cli())
        .unwrap();
    let expired = store.get_held(&workspace, expiring.id).unwrap().unwrap();
    assert_eq!(expired.status, HeldStatus::Expired);
    assert_eq!(
        expired.decision.map(|d| (d.at, d.by)),
        Some((at(100), "expiry".to_owned()))
    );
    let held_now = store
        .list_held(&workspace, Some(HeldStatus::Held), at(200), &Actor::cli())
        .unwrap();
    assert_eq!(
        held_now.iter().map(|h| h.id).collect::<Vec<_>>(),
        [waiting.id]
    );
    assert_eq!(
        store
            .list_held(&workspace, None, at(200), &Actor::cli())
            .unwrap()
            .len(),
        2
    );
    assert!(
        store
            .waiting_held(&workspace, Some("atlas"), &expiring.content_hash)
            .unwrap()
            .is_none()
    );
}

/// The first decision stands: a second decider is told what the first decided, an
/// unknown candidate is missing, and admitting stores the memory once.
pub fn a_held_decision_is_taken_once(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let discarded = candidate("a claim to discard", 0, None);
    let admitted = candidate("a claim to admit", 10, None);
    for held in [&discarded, &admitted] {
        store.insert_held(held, &Actor::cli()).unwrap();
    }
    let close = |id, status, who: &str| {
        store
            .close_held(&workspace, id, status, None, at(60), &person(who))
            .unwrap()
    };
    assert_eq!(
        close(discarded.id, HeldStatus::Discarded, "ada"),
        HeldClose::Closed
    );
    assert_eq!(
        close(discarded.id, HeldStatus::Admitted, "grace"),
        HeldClose::AlreadyDecided(HeldStatus::Discarded)
    );
    let decision = store
        .get_held(&workspace, discarded.id)
        .unwrap()
        .unwrap()
        .decision
        .unwrap();
    assert_eq!(
        (decision.at, decision.surface.as_str()),
        (at(60), "dashboard")
    );
    assert_eq!(
        close(HeldId::new_at(at(1)), HeldStatus::Discarded, "ada"),
        HeldClose::Missing
    );

    let memory = record(&admitted.content, 70, "default", Some("atlas"), None);
    let admit = |who: &str| {
        store
            .store_held_memory(
                &workspace,
                admitted.id,
                &memory,
                &[],
                &|_| None,
                None,
                at(70),
                &person(who),
            )
            .unwrap()
    };
    assert_eq!(admit("ada"), HeldClose::Closed);
    assert_eq!(
        admit("grace"),
        HeldClose::AlreadyDecided(HeldStatus::Admitted)
    );
    let closed = store.get_held(&workspace, admitted.id).unwrap().unwrap();
    assert_eq!(
        (closed.status, closed.memory_id),
        (HeldStatus::Admitted, Some(memory.memory.id))
    );
    assert_eq!(
        store
            .get(&workspace, memory.memory.id)
            .unwrap()
            .unwrap()
            .content,
        admitted.content
    );
    assert_eq!(
        close(admitted.id, HeldStatus::Discarded, "linus"),
        HeldClose::AlreadyDecided(HeldStatus::Admitted)
    );
}

/// Two people admit one candidate at the same moment (two processes, two surfaces): one
/// admission stores the memory, the other is told it was decided; one memory exists.
pub fn of_two_people_admitting_at_once_one_stores_the_memory(store: &dyn Contracted) {
    let workspace = Workspace::default();
    for round in 0..5 {
        let held = candidate(&format!("a contested claim number {round}"), round, None);
        store.insert_held(&held, &Actor::cli()).unwrap();
        let records: Vec<_> = (0..2)
            .map(|n| record(&held.content, 100 + n, "default", Some("atlas"), None))
            .collect();
        let start = std::sync::Barrier::new(records.len());
        let outcomes: Vec<HeldClose> = std::thread::scope(|threads| {
            let handles: Vec<_> = records
                .iter()
                .enumerate()
                .map(|(n, memory)| {
                    let (workspace, held, start) = (&workspace, &held, &start);
                    threads.spawn(move || {
                        start.wait();
                        store
                            .store_held_memory(
                                workspace,
                                held.id,
                                memory,
                                &[],
                                &|_| None,
                                None,
                                at(100),
                                &person(&format!("p{n}")),
                            )
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let closed = outcomes.iter().filter(|o| **o == HeldClose::Closed).count();
        assert_eq!(closed, 1, "{outcomes:?}");
        assert!(
            outcomes.contains(&HeldClose::AlreadyDecided(HeldStatus::Admitted)),
            "{outcomes:?}"
        );
        let filter = MemoryFilter::workspace(workspace.clone());
        let stored = store
            .lexical_candidates(&filter, &format!("contested claim number {round}"), 10)
            .unwrap();
        let copies = records
            .iter()
            .filter(|r| stored.iter().any(|(id, _)| *id == r.memory.id))
            .count();
        assert_eq!(copies, 1);
    }
}

/// A held update replaces its target's content when admitted, once; a target gone makes
/// the candidate missing.
pub fn a_held_update_replaces_its_target_once(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let target = record(
        "the api rate limit is 100 per minute",
        0,
        "default",
        Some("atlas"),
        None,
    );
    store
        .insert(&target, &[], &|_| None, &Actor::cli())
        .unwrap();
    let mut update = candidate("the api rate limit is 500 per minute", 10, None);
    update.updates = Some(target.memory.id);
    store.insert_held(&update, &Actor::cli()).unwrap();
    assert_eq!(
        store
            .get_held(&workspace, update.id)
            .unwrap()
            .unwrap()
            .updates,
        Some(target.memory.id)
    );
    let keys = text::near_duplicate_keys(&update.content);
    let admit = || {
        store
            .admit_held_update(
                &workspace,
                update.id,
                target.memory.id,
                &update.content,
                None,
                &keys,
                serde_json::json!({ "held_id": update.id }),
                at(20),
                &person("ada"),
            )
            .unwrap()
    };
    assert_eq!(admit(), HeldClose::Closed);
    assert_eq!(
        store
            .get(&workspace, target.memory.id)
            .unwrap()
            .unwrap()
            .content,
        update.content
    );
    assert_eq!(admit(), HeldClose::AlreadyDecided(HeldStatus::Admitted));

    let orphan = candidate("an update of a memory that is gone", 30, None);
    store.insert_held(&orphan, &Actor::cli()).unwrap();
    let gone = levh_core::MemoryId::new_at(at(31));
    let outcome = store
        .admit_held_update(
            &workspace,
            orphan.id,
            gone,
            &orphan.content,
            None,
            &[],
            serde_json::json!({}),
            at(40),
            &person("ada"),
        )
        .unwrap();
    assert_eq!(outcome, HeldClose::Missing);
    assert_eq!(
        store
            .get_held(&workspace, orphan.id)
            .unwrap()
            .unwrap()
            .status,
        HeldStatus::Held
    );
}
