//! A memory's life after it is stored: working memory and its promotion, consolidation
//! and its undo, review schedules, statistics, and the purge that erases it.

use levh_core::review::{ReviewDecision, ReviewSchedule};
use levh_core::{
    Actor, EventKind, MemoryFilter, MemoryId, MemoryState, Session, SessionId, Workspace,
};

use crate::held::candidate;
use crate::{Contracted, at, record};

/// A memory stored as working memory of a session is left out of reads outside that
/// session until promoted (once, with its stability raised to at least a new memory's).
pub fn working_memory_stays_in_its_session_until_promoted(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let session = Session {
        id: SessionId::new("s-working"),
        workspace: workspace.clone(),
        project: None,
        client: None,
        started_at: at(0),
        ended_at: None,
    };
    store.start_session(&session).unwrap();
    let mut working = record("a scratch note of this session", 10, "default", None, None);
    working.working = true;
    working.memory.session_id = Some(session.id.clone());
    working.memory.state.stability_hours = 24.0;
    let lasting = record("a lasting note", 20, "default", None, None);
    for new in [&working, &lasting] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let id = working.memory.id;
    let outside = MemoryFilter {
        working_except: Some(None),
        ..MemoryFilter::workspace(workspace.clone())
    };
    let inside = MemoryFilter {
        working_except: Some(Some(session.id.clone())),
        ..outside.clone()
    };
    assert_eq!(store.matching_ids(&outside).unwrap(), [lasting.memory.id]);
    assert_eq!(store.matching_ids(&inside).unwrap().len(), 2);
    assert_eq!(
        store
            .working_sessions(&workspace, &[lasting.memory.id, id])
            .unwrap(),
        [(id, session.id.clone())]
    );
    let promoted = store
        .promote(
            &workspace,
            &[id, lasting.memory.id],
            168.0,
            "recalled",
            at(30),
            &Actor::cli(),
        )
        .unwrap();
    assert_eq!(promoted, [id]);
    assert!(
        store
            .promote(&workspace, &[id], 168.0, "again", at(31), &Actor::cli())
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.matching_ids(&outside).unwrap().len(), 2);
    assert!(
        store
            .working_sessions(&workspace, &[id])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get(&workspace, id)
            .unwrap()
            .unwrap()
            .state
            .stability_hours,
        168.0
    );
    let history = store.memory_events(&workspace, id, 5).unwrap();
    assert_eq!(
        (history[0].kind.as_str(), &history[0].detail["why"]),
        ("promote", &serde_json::json!("recalled"))
    );
}

/// A summary retires its live, unpinned members as superseded by it; undoing restores
/// each member's validity as it was and forgets the summary.
pub fn a_consolidation_retires_its_members_and_undoes_exactly(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let mut ended = record("standup notes monday", 0, "default", None, None);
    ended.memory.valid_to = Some(at(10 * 86_400));
    let open = record("standup notes tuesday", 60, "default", None, None);
    let mut pinned = record("standup is at nine", 120, "default", None, None);
    pinned.memory.state.pinned = true;
    for new in [&ended, &open, &pinned] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let summary = record(
        "standups in the first week: notes of monday and tuesday",
        3_600,
        "default",
        None,
        None,
    );
    let members = [ended.memory.id, open.memory.id, pinned.memory.id];
    let retired = store
        .consolidate(&summary, &members, &Actor::cli())
        .unwrap();
    assert_eq!(retired, [ended.memory.id, open.memory.id]);
    let read = store.get(&workspace, open.memory.id).unwrap().unwrap();
    assert_eq!(
        (read.valid_to, read.superseded_by),
        (Some(at(3_600)), Some(summary.memory.id))
    );
    assert_eq!(
        store
            .consolidated_members(&workspace, summary.memory.id)
            .unwrap(),
        [ended.memory.id, open.memory.id]
    );
    assert!(
        store
            .consolidated_members(&workspace, open.memory.id)
            .unwrap()
            .is_empty()
    );

    let restored = store
        .undo_consolidation(&workspace, summary.memory.id, at(7_200), &Actor::cli())
        .unwrap();
    assert_eq!(restored, Some(vec![ended.memory.id, open.memory.id]));
    let back = store.get(&workspace, ended.memory.id).unwrap().unwrap();
    assert_eq!(
        (back.valid_to, back.superseded_by),
        (Some(at(10 * 86_400)), None)
    );
    assert_eq!(
        store
            .get(&workspace, open.memory.id)
            .unwrap()
            .unwrap()
            .valid_to,
        None
    );
    assert!(store.get(&workspace, summary.memory.id).unwrap().is_none());
    assert!(
        store
            .get_forgotten(&workspace, summary.memory.id)
            .unwrap()
            .is_some()
    );
    assert_eq!(
        store
            .undo_consolidation(&workspace, summary.memory.id, at(7_300), &Actor::cli())
            .unwrap(),
        None
    );
}

/// A review decision schedules the memory (hidden until due), logged in its history;
/// a memory that is not live cannot be reviewed.
pub fn review_decisions_schedule_and_hide_until_due(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let new = record("a fading memory worth keeping", 0, "default", None, None);
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let id = new.memory.id;
    let schedule = ReviewSchedule {
        due_at: at(7 * 86_400),
        interval_days: 7,
        reviews: 1,
    };
    assert!(
        store
            .record_review(
                &workspace,
                id,
                ReviewDecision::Keep,
                &schedule,
                at(100),
                &Actor::cli()
            )
            .unwrap()
    );
    assert_eq!(
        store
            .review_schedules(&workspace, &[id, MemoryId::new_at(at(1))])
            .unwrap(),
        [(id, schedule)]
    );
    assert_eq!(store.review_hidden(&workspace, at(200)).unwrap(), 1);
    assert_eq!(store.review_hidden(&workspace, at(8 * 86_400)).unwrap(), 0);
    let snoozed = ReviewSchedule {
        due_at: at(9 * 86_400),
        interval_days: 7,
        reviews: 2,
    };
    assert!(
        store
            .record_review(
                &workspace,
                id,
                ReviewDecision::Snooze { days: 2 },
                &snoozed,
                at(300),
                &Actor::cli()
            )
            .unwrap()
    );
    assert_eq!(
        store.review_schedules(&workspace, &[id]).unwrap(),
        [(id, snoozed)]
    );
    let history = store.memory_events(&workspace, id, 1).unwrap();
    assert_eq!(
        (
            history[0].kind.as_str(),
            &history[0].detail["decision"],
            &history[0].detail["days"]
        ),
        (
            "review",
            &serde_json::json!("snooze"),
            &serde_json::json!(2)
        )
    );
    store
        .forget(&workspace, id, at(400), &Actor::cli())
        .unwrap();
    assert!(
        !store
            .record_review(
                &workspace,
                id,
                ReviewDecision::Keep,
                &schedule,
                at(500),
                &Actor::cli()
            )
            .unwrap()
    );
}

/// Statistics count the live memories not yet retired by label group, and hand each
/// one's state to the caller.
pub fn standings_count_live_memories_by_labels(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let mut retired = record("retired last week", 0, "default", Some("atlas"), None);
    retired.memory.valid_to = Some(at(100));
    let mut mail = record("a mail", 10, "default", Some("atlas"), None);
    mail.memory.kind = levh_core::Kind::new("email").unwrap();
    let news: Vec<_> = (0..3)
        .map(|n| record(&format!("note {n}"), 20 + n, "default", Some("atlas"), None))
        .collect();
    let elsewhere = record("note in vega", 30, "default", Some("vega"), None);
    let forgotten = record("forgotten note", 40, "default", Some("atlas"), None);
    for new in [&retired, &mail, &elsewhere, &forgotten]
        .into_iter()
        .chain(&news)
    {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(&workspace, forgotten.memory.id, at(50), &Actor::cli())
        .unwrap();
    let mut seen = Vec::new();
    let mut groups = store
        .standings(
            &workspace,
            Some("atlas"),
            at(200),
            &mut |id, state: &MemoryState| seen.push((id, state.stability_hours)),
        )
        .unwrap();
    groups.sort_by(|a, b| a.kind.as_str().cmp(b.kind.as_str()));
    let counted: Vec<_> = groups
        .iter()
        .map(|g| {
            (
                g.project.as_deref(),
                g.kind.as_str(),
                g.source.as_str(),
                g.count,
            )
        })
        .collect();
    assert_eq!(
        counted,
        [
            (Some("atlas"), "email", "contract", 1),
            (Some("atlas"), "note", "contract", 3)
        ]
    );
    assert_eq!(seen.len(), 4);
    assert!(seen.iter().all(|(_, stability)| *stability == 168.0));
    let all = store
        .standings(&workspace, None, at(200), &mut |_, _| {})
        .unwrap();
    assert_eq!(all.iter().map(|g| g.count).sum::<u64>(), 5);
}

/// A purge erases the memory (live or forgotten), its vector, keys and full-text entry
/// and the held candidates with its content, logs it, and finds no copy left in any
/// table; purging again finds nothing.
pub fn a_purge_leaves_no_copy_in_any_table(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let secret = "the acquisition of the harbour company closes in march";
    let new = record(secret, 0, "default", Some("atlas"), Some(vec![1.0, 0.0]));
    let id = new.memory.id;
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let newer = record(
        "the harbour deal is public now",
        60,
        "default",
        Some("atlas"),
        None,
    );
    store
        .store_keyed(&newer, &[], &|_| None, "harbour", None, &Actor::cli())
        .unwrap();
    let held = candidate(secret, 30, None);
    store.insert_held(&held, &Actor::cli()).unwrap();
    store.forget(&workspace, id, at(90), &Actor::cli()).unwrap();

    let report = store
        .purge(&workspace, id, at(100), &Actor::cli())
        .unwrap()
        .unwrap();
    assert_eq!((report.memory_id, report.held_removed), (id, 1));
    assert_eq!(report.residue, Vec::<String>::new());
    assert!(store.get_forgotten(&workspace, id).unwrap().is_none());
    assert!(!store.id_in_use(id).unwrap());
    assert!(store.get_held(&workspace, held.id).unwrap().is_none());
    let filter = MemoryFilter::workspace(workspace.clone());
    assert!(
        store
            .lexical_candidates(
                &MemoryFilter {
                    forgotten: true,
                    ..filter.clone()
                },
                "acquisition harbour",
                5
            )
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .nearest(
                &MemoryFilter {
                    forgotten: true,
                    ..filter.clone()
                },
                "test-model",
                &[1.0, 0.0],
                5
            )
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .near_duplicates(
                &MemoryFilter {
                    forgotten: true,
                    ..filter
                },
                &levh_core::text::near_duplicate_keys(secret),
                5
            )
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.memory_events(&workspace, id, 1).unwrap()[0].kind,
        EventKind::Purge.as_str()
    );
    assert!(store.get(&workspace, newer.memory.id).unwrap().is_some());
    assert!(
        store
            .purge(&workspace, id, at(110), &Actor::cli())
            .unwrap()
            .is_none()
    );
}

/// A file attached to a live memory is linked through its text memory, listed with its
/// owner and found by its text memory; a memory that is not live takes no attachment;
/// purging the owner takes the link.
pub fn attachments_link_a_file_to_live_memories_until_purged(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let owner = record("the quarterly report", 0, "default", None, None);
    let text = record(
        "text of report.pdf: revenue grew",
        10,
        "default",
        None,
        None,
    );
    let gone = record("a forgotten memory", 20, "default", None, None);
    for new in [&owner, &text, &gone] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(&workspace, gone.memory.id, at(30), &Actor::cli())
        .unwrap();
    let file = b"%PDF-1.7 revenue grew".to_vec();
    let attachment = levh_core::Attachment {
        memory_id: text.memory.id,
        attached_to: owner.memory.id,
        sha256: "5d5b09f6dcb2d53a5fffc60c4ac0d55fabdad556fb0e9d0f3a8b1b8c5e8b8d0a".into(),
        name: "report.pdf".into(),
        media_type: "application/pdf".into(),
        bytes: file.len() as u64,
    };
    assert!(
        store
            .save_attachment(&workspace, &attachment, &file)
            .unwrap()
    );
    let to_gone = levh_core::Attachment {
        attached_to: gone.memory.id,
        ..attachment.clone()
    };
    assert!(!store.save_attachment(&workspace, &to_gone, &file).unwrap());
    assert_eq!(
        store.attachments(&workspace, owner.memory.id).unwrap(),
        std::slice::from_ref(&attachment)
    );
    assert_eq!(
        store.attachment(&workspace, text.memory.id).unwrap(),
        Some(attachment.clone())
    );
    assert_eq!(store.attachment(&workspace, owner.memory.id).unwrap(), None);
    assert!(
        store
            .attachments(&Workspace::new("other").unwrap(), owner.memory.id)
            .unwrap()
            .is_empty()
    );
    let report = store
        .purge(&workspace, owner.memory.id, at(40), &Actor::cli())
        .unwrap()
        .unwrap();
    assert_eq!(report.residue, Vec::<String>::new());
    assert_eq!(store.attachment(&workspace, text.memory.id).unwrap(), None);
}
