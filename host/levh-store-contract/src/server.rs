//! What a server reads: the event log, tokens, sessions, and the store's health.

use levh_core::{Actor, EventKind, Role, Session, SessionId, Surface, Workspace};

use crate::{Contracted, at, record};

/// Every change appends an event, in order, content-free; a memory's history is its
/// events newest first; an event that changes nothing (a recall) is logged too.
pub fn the_event_log_grows_in_order_and_tells_each_memory_history(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let start = store.last_event_seq().unwrap();
    let secret = "the vault password rotates on fridays";
    let new = record(secret, 0, "default", None, None);
    let agent = Actor {
        surface: Surface::Mcp,
        client: Some("cursor".into()),
        role: Role::Editor,
        principal: Some("tok_a".into()),
    };
    store.insert(&new, &[], &|_| None, &agent).unwrap();
    store
        .log_event(
            &workspace,
            EventKind::Recall,
            &agent,
            at(10),
            &serde_json::json!({ "returned": [new.memory.id] }),
        )
        .unwrap();
    store
        .forget(&workspace, new.memory.id, at(20), &Actor::cli())
        .unwrap();

    let events = store.events_after(start, 100).unwrap();
    assert_eq!(
        events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["store", "recall", "forget"]
    );
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(store.last_event_seq().unwrap(), events[2].seq);
    assert_eq!(
        (
            events[0].surface.as_str(),
            events[0].client.as_deref(),
            events[0].role.as_str(),
            events[0].at
        ),
        ("mcp", Some("cursor"), "editor", at(0))
    );
    assert_eq!(
        events[1].detail["returned"][0],
        serde_json::json!(new.memory.id)
    );
    assert!(
        events
            .iter()
            .all(|e| !e.detail.to_string().contains(secret))
    );
    assert_eq!(
        store.events_after(events[0].seq, 1).unwrap()[0].seq,
        events[1].seq
    );

    let history = store.memory_events(&workspace, new.memory.id, 10).unwrap();
    assert_eq!(
        history.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["forget", "store"]
    );
    assert!(
        store
            .memory_events(&Workspace::new("other").unwrap(), new.memory.id, 10)
            .unwrap()
            .is_empty()
    );
    let (schema, mode) = store.liveness().unwrap();
    assert!(schema > 0);
    assert_eq!(mode, "wal");
}

/// A token stands for its workspace and role until revoked; only a hash is kept, a
/// workspace sees and revokes only its own tokens.
pub fn tokens_verify_until_revoked_within_their_workspace(store: &dyn Contracted) {
    let team = Workspace::new("team").unwrap();
    let other = Workspace::new("other").unwrap();
    let issued = store
        .issue_token(&team, Role::Editor, Some("ci"), at(0))
        .unwrap();
    assert!(issued.secret.starts_with("levh_") && issued.secret.len() == 45);
    let second = store
        .issue_token(&other, Role::Viewer, None, at(10))
        .unwrap();
    let principal = store.principal_for_token(&issued.secret).unwrap().unwrap();
    assert_eq!(
        (principal.workspace, principal.role, principal.name),
        (team.clone(), Role::Editor, Some(issued.info.id.clone()))
    );
    assert!(store.principal_for_token("levh_0000").unwrap().is_none());
    assert_eq!(
        store.workspace_tokens(&team).unwrap(),
        std::slice::from_ref(&issued.info)
    );
    let all: Vec<_> = store
        .all_tokens()
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(all, [second.info.id.clone(), issued.info.id.clone()]);
    assert!(
        !store
            .revoke_workspace_token(&other, &issued.info.id, at(20))
            .unwrap()
    );
    assert!(
        store
            .revoke_workspace_token(&team, &issued.info.id, at(20))
            .unwrap()
    );
    assert!(
        !store
            .revoke_workspace_token(&team, &issued.info.id, at(21))
            .unwrap()
    );
    assert!(store.principal_for_token(&issued.secret).unwrap().is_none());
    assert_eq!(
        store.workspace_tokens(&team).unwrap()[0].revoked_at,
        Some(at(20))
    );
    assert!(store.revoke_any_token(&second.info.id, at(30)).unwrap());
    assert!(!store.revoke_any_token(&second.info.id, at(31)).unwrap());
}

/// A session starts, ends once (the first end stands), lists newest first with its live
/// memories counted, and gives back its memories oldest first.
pub fn sessions_start_end_once_and_count_their_memories(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let session = |id: &str, second: i64| Session {
        id: SessionId::new(id),
        workspace: workspace.clone(),
        project: Some("atlas".into()),
        client: Some("claude-code".into()),
        started_at: at(second),
        ended_at: None,
    };
    let (older, newer) = (session("s-older", 0), session("s-newer", 100));
    store.start_session(&older).unwrap();
    store.start_session(&newer).unwrap();
    let ids: Vec<_> = (0..3)
        .map(|n| {
            let mut new = record(
                &format!("said in the session, part {n}"),
                10 + n,
                "default",
                None,
                None,
            );
            new.memory.session_id = Some(older.id.clone());
            store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
            new.memory.id
        })
        .collect();
    store
        .forget(&workspace, ids[1], at(50), &Actor::cli())
        .unwrap();
    assert!(store.session_exists(&workspace, &older.id).unwrap());
    assert!(
        !store
            .session_exists(&Workspace::new("other").unwrap(), &older.id)
            .unwrap()
    );
    let ended = store
        .end_session(&workspace, &older.id, at(60))
        .unwrap()
        .unwrap();
    assert_eq!(ended.ended_at, Some(at(60)));
    let again = store
        .end_session(&workspace, &older.id, at(70))
        .unwrap()
        .unwrap();
    assert_eq!(again.ended_at, Some(at(60)));
    assert!(
        store
            .end_session(&workspace, &SessionId::new("none"), at(70))
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store.session(&workspace, &older.id).unwrap(),
        Some(ended.clone())
    );
    let memories: Vec<_> = store
        .session_memories(&workspace, &ended, 10)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(memories, [ids[0], ids[2]]);
    let listed = store.sessions(&workspace, None, 10).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|l| (l.session.id.as_str(), l.memories))
            .collect::<Vec<_>>(),
        [("s-newer", 0), ("s-older", 2)]
    );
    let next = store.sessions(&workspace, Some(at(100)), 10).unwrap();
    assert_eq!(next.len(), 1);
}

/// Health counts live and forgotten memories, events and vectors per model.
pub fn health_counts_what_is_stored(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let kept = record(
        "kept with a vector",
        0,
        "default",
        None,
        Some(vec![1.0, 0.0]),
    );
    let dropped = record("forgotten later", 10, "default", None, None);
    for new in [&kept, &dropped] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(&workspace, dropped.memory.id, at(20), &Actor::cli())
        .unwrap();
    let health = store.health().unwrap();
    assert_eq!((health.memories, health.forgotten), (1, 1));
    assert_eq!(health.events, 3);
    assert_eq!(health.embeddings, [("test-model".to_owned(), 1)]);
    assert_eq!(health.schema_version, health.latest_schema_version);
    assert!(health.fts5 && health.fts_in_step);
    assert_eq!(health.times_out_of_range, 0);
}
