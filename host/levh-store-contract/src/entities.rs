//! The entity index: people and organizations resolved by their keys, their memories,
//! co-occurrence, merges, commitments done and conflict candidates.

use levh_core::entities::{
    CommitmentDone, ConflictResolution, EntityKey, EntityKind, EntityQuery, EntityRole,
    IndexedMemory, Sighting,
};
use levh_core::{Actor, Memory, MemoryId, Workspace};

use crate::{Contracted, at, record};

fn person(name: &str, email: &str, role: EntityRole) -> Sighting {
    Sighting {
        kind: EntityKind::Person,
        name: name.into(),
        keys: vec![EntityKey::email(email), EntityKey::person_name(name)],
        role,
        organization: email.split('@').nth(1).map(str::to_owned),
    }
}

fn indexed(memory: &Memory, sightings: Vec<Sighting>) -> IndexedMemory {
    IndexedMemory {
        memory_id: memory.id,
        content_hash: memory.content_hash.clone(),
        sightings,
    }
}

fn stored(store: &dyn Contracted, content: &str, second: i64) -> Memory {
    let mut new = record(content, second, "default", Some("atlas"), None);
    new.memory.source = if second % 2 == 0 {
        "connector:email".into()
    } else {
        "connector:calendar".into()
    };
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    new.memory
}

/// A person seen by address and name is one entity with their organization (by e-mail
/// domain); lists count live memories, most first; a memory's entities, an entity's
/// memories and its co-occurring entities are read back; what is indexed at a version is
/// not listed as unindexed again until its content changes or all are marked unindexed.
pub fn people_and_organizations_are_resolved_counted_and_related(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let mail = stored(store, "ada wrote to grace about the launch", 0);
    let meeting = stored(store, "launch review with ada and grace", 1);
    let note = stored(store, "ada's notes on the budget", 2);
    assert_eq!(store.count_unindexed(&workspace, 1).unwrap(), 3);
    let batch = vec![
        indexed(
            &mail,
            vec![
                person("Ada Lovelace", "ada@example.org", EntityRole::Sender),
                person("Grace Hopper", "grace@example.org", EntityRole::Recipient),
            ],
        ),
        indexed(
            &meeting,
            vec![
                person("Ada Lovelace", "ada@example.org", EntityRole::Attendee),
                person("Grace Hopper", "grace@example.org", EntityRole::Organizer),
            ],
        ),
        indexed(
            &note,
            vec![Sighting {
                kind: EntityKind::Person,
                name: "Ada Lovelace".into(),
                keys: vec![EntityKey::person_name("Ada Lovelace")],
                role: EntityRole::Mentioned,
                organization: None,
            }],
        ),
    ];
    store.index_entities(&workspace, &batch, 1, at(10)).unwrap();
    assert_eq!(store.count_unindexed(&workspace, 1).unwrap(), 0);
    assert!(
        store
            .unindexed_memories(&workspace, 1, None, 10)
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.count_unindexed(&workspace, 2).unwrap(), 3);
    let after_first: Vec<_> = store
        .unindexed_memories(&workspace, 2, Some(mail.id), 10)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(after_first, [meeting.id, note.id]);

    let query = |kind, name: Option<&str>| EntityQuery {
        kind,
        name: name.map(str::to_owned),
        project: None,
        limit: 10,
    };
    let people = store
        .entities(&workspace, &query(Some(EntityKind::Person), None))
        .unwrap();
    assert_eq!(
        people
            .iter()
            .map(|p| (p.name.as_str(), p.memories))
            .collect::<Vec<_>>(),
        [("Ada Lovelace", 3), ("Grace Hopper", 2)]
    );
    assert_eq!(
        people[0].channels,
        ["connector:calendar", "connector:email"]
    );
    assert_eq!(people[0].last_seen, Some(at(2)));
    assert!(
        people[0]
            .keys
            .contains(&EntityKey::email("ada@example.org"))
    );
    let organizations = store
        .entities(&workspace, &query(Some(EntityKind::Organization), None))
        .unwrap();
    // The organization counts the memories its people took part in once they were known
    // as its people: the mail that first showed their addresses is not one of them
    // (both stores index this way; the engine's own sightings name the organization).
    assert_eq!(
        organizations
            .iter()
            .map(|o| (o.name.as_str(), o.memories))
            .collect::<Vec<_>>(),
        [("example.org", 1)]
    );
    assert_eq!(
        store
            .entities(&workspace, &query(None, Some("grace")))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store.known_people(&workspace).unwrap(),
        ["Ada Lovelace", "Grace Hopper"]
    );

    let ada = store
        .entity_by_key(&workspace, &EntityKey::email("ada@example.org"))
        .unwrap()
        .unwrap();
    let grace = people[1].id;
    assert_eq!(
        store.entities_by_id(&workspace, &[grace]).unwrap()[0].name,
        "Grace Hopper"
    );
    let memories: Vec<_> = store
        .entity_memories(&workspace, ada, 10)
        .unwrap()
        .iter()
        .map(|m| (m.memory_id, m.roles.clone()))
        .collect();
    assert_eq!(
        memories,
        [
            (note.id, vec![EntityRole::Mentioned]),
            (meeting.id, vec![EntityRole::Attendee]),
            (mail.id, vec![EntityRole::Sender])
        ]
    );
    let mut of_mail = store.memory_entities(&workspace, mail.id).unwrap();
    of_mail.sort_by_key(|(_, roles)| roles.clone());
    assert_eq!(of_mail.len(), 2);
    assert!(of_mail.contains(&(ada, vec![EntityRole::Sender])));
    let related = store.related_entities(&workspace, ada, 10).unwrap();
    assert_eq!(related[0].1, 2);
    assert_eq!(related.len(), 2);
    let organization = organizations[0].id;
    let mut members = store.memberships(&workspace, organization).unwrap();
    members.sort();
    let mut both = vec![ada, grace];
    both.sort();
    assert_eq!(members, both);
    assert_eq!(store.memberships(&workspace, ada).unwrap(), [organization]);
    let edges = store.entity_edges(&workspace, &[ada, grace], 10).unwrap();
    assert_eq!(edges.len(), 1);
    assert_eq!(edges[0].weight, 2);

    // A forgotten memory stops counting at once.
    store
        .forget(&workspace, note.id, at(20), &Actor::cli())
        .unwrap();
    let ada_now = store.entities_by_id(&workspace, &[ada]).unwrap();
    assert_eq!(ada_now[0].memories, 2);
    assert_eq!(store.mark_all_unindexed(&workspace).unwrap(), 3);
    assert_eq!(store.count_unindexed(&workspace, 1).unwrap(), 3);
}

/// Two entities found to be one person merge: keys, memories and memberships move to
/// the one kept; merging an unknown entity does nothing.
pub fn merged_entities_keep_every_key_and_memory(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let first = stored(store, "a mail from a.l.", 0);
    let second = stored(store, "a talk by the countess", 1);
    let named = |name: &str, key: EntityKey| Sighting {
        kind: EntityKind::Person,
        name: name.into(),
        keys: vec![key],
        role: EntityRole::Author,
        organization: None,
    };
    store
        .index_entities(
            &workspace,
            &[
                indexed(
                    &first,
                    vec![named(
                        "ada@example.org",
                        EntityKey::email("ada@example.org"),
                    )],
                ),
                indexed(
                    &second,
                    vec![named(
                        "The Countess",
                        EntityKey::person_name("The Countess"),
                    )],
                ),
            ],
            1,
            at(5),
        )
        .unwrap();
    let by_mail = store
        .entity_by_key(&workspace, &EntityKey::email("ada@example.org"))
        .unwrap()
        .unwrap();
    let by_name = store
        .entity_by_key(&workspace, &EntityKey::person_name("The Countess"))
        .unwrap()
        .unwrap();
    assert_ne!(by_mail, by_name);
    assert!(
        store
            .merge_entities(&workspace, by_mail, by_name, at(10), &Actor::cli())
            .unwrap()
    );
    assert_eq!(
        store
            .entity_by_key(&workspace, &EntityKey::person_name("The Countess"))
            .unwrap(),
        Some(by_mail)
    );
    assert_eq!(
        store
            .entity_memories(&workspace, by_mail, 10)
            .unwrap()
            .len(),
        2
    );
    assert!(
        store
            .entities_by_id(&workspace, &[by_name])
            .unwrap()
            .is_empty()
    );
    assert!(
        !store
            .merge_entities(&workspace, by_mail, by_name, at(11), &Actor::cli())
            .unwrap()
    );
    let start = store.last_event_seq().unwrap();
    assert!(store.events_after(start, 5).unwrap().is_empty());
}

/// A commitment marked done stays done (the first mark kept); conflict candidates are
/// recorded once per pair whichever way round, listed newest first, and resolved once —
/// a supersession retiring the other memory.
pub fn commitments_and_conflicts_are_recorded_once_and_resolved_once(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let promise = stored(store, "i will send the report on friday", 0);
    let done = CommitmentDone {
        id: "c0123456789".into(),
        at: at(100),
        by_memory: None,
    };
    store
        .mark_commitment_done(&workspace, promise.id, &done, &Actor::cli())
        .unwrap();
    let again = CommitmentDone {
        at: at(200),
        ..done.clone()
    };
    store
        .mark_commitment_done(&workspace, promise.id, &again, &Actor::cli())
        .unwrap();
    assert_eq!(store.commitments_done(&workspace).unwrap(), [done]);

    let older = stored(store, "the limit is 100", 10);
    let newer = stored(store, "the limit is 500", 20);
    let other = stored(store, "the owner is ada", 30);
    let recorded = store
        .record_conflicts(
            &workspace,
            &[
                (older.id, newer.id, "value".into()),
                (newer.id, older.id, "value".into()),
            ],
            at(40),
            &Actor::cli(),
        )
        .unwrap();
    assert_eq!(recorded.len(), 1);
    let later = store
        .record_conflicts(
            &workspace,
            &[(older.id, other.id, "swap".into())],
            at(50),
            &Actor::cli(),
        )
        .unwrap();
    assert!(
        store
            .record_conflicts(
                &workspace,
                &[(other.id, older.id, "swap".into())],
                at(60),
                &Actor::cli()
            )
            .unwrap()
            .is_empty()
    );
    let listed: Vec<_> = store
        .conflicts(&workspace, true)
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed, [later[0].id.clone(), recorded[0].id.clone()]);

    let pair = &recorded[0].id;
    let supersede = ConflictResolution::Supersede { winner: newer.id };
    assert!(
        store
            .resolve_conflict(&workspace, pair, supersede, at(70), &Actor::cli())
            .unwrap()
    );
    assert!(
        !store
            .resolve_conflict(
                &workspace,
                pair,
                ConflictResolution::KeepBoth,
                at(71),
                &Actor::cli()
            )
            .unwrap()
    );
    let retired = store.get(&workspace, older.id).unwrap().unwrap();
    assert_eq!(
        (retired.valid_to, retired.superseded_by),
        (Some(at(70)), Some(newer.id))
    );
    let wrong = ConflictResolution::Supersede {
        winner: MemoryId::new_at(at(1)),
    };
    assert!(
        !store
            .resolve_conflict(&workspace, &later[0].id, wrong, at(72), &Actor::cli())
            .unwrap()
    );
    assert!(
        store
            .resolve_conflict(
                &workspace,
                &later[0].id,
                ConflictResolution::NotAConflict,
                at(73),
                &Actor::cli()
            )
            .unwrap()
    );
    assert!(store.conflicts(&workspace, true).unwrap().is_empty());
    let all = store.conflicts(&workspace, false).unwrap();
    let resolved = all.iter().find(|c| &c.id == pair).unwrap();
    assert_eq!(
        (
            resolved.resolution.as_deref(),
            resolved.resolved_at,
            resolved.superseded
        ),
        (Some("superseded"), Some(at(70)), Some(older.id))
    );
}
