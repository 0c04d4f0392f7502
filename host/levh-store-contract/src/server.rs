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

fn agent(client: &str, token: &str) -> Actor {
    Actor {
        surface: Surface::Mcp,
        client: Some(client.into()),
        role: Role::Editor,
        principal: Some(token.into()),
    }
}

/// Who did what, events of some kinds with their token, and usage per day, token,
/// client and kind (with the bytes and tokens events carry) — of the workspace only, and
/// saying when the bound on events read cut the time asked for short.
pub fn reports_count_the_workspace_events_and_say_when_the_bound_cut_them(store: &dyn Contracted) {
    let space = Workspace::default();
    let (cursor, claude) = (agent("cursor", "tok-a"), agent("claude", "tok-b"));
    for (n, (actor, text)) in [(&cursor, "twelve bytes"), (&cursor, "four"), (&claude, "x")]
        .into_iter()
        .enumerate()
    {
        let new = record(text, n as i64, "default", None, None);
        store.insert(&new, &[], &|_| None, actor).unwrap();
    }
    let elsewhere = record("elsewhere", 5, "other", None, None);
    store.insert(&elsewhere, &[], &|_| None, &cursor).unwrap();
    let recall = |returned: usize, tokens: u64, bytes: u64| serde_json::json!({ "returned": vec!["id"; returned], "tokens": tokens, "bytes": bytes });
    store
        .log_event(
            &space,
            EventKind::Recall,
            &cursor,
            at(10),
            &recall(2, 30, 120),
        )
        .unwrap();
    store
        .log_event(&space, EventKind::Recall, &cursor, at(11), &recall(0, 0, 0))
        .unwrap();
    let tomorrow = at(10 + 86_400);
    store
        .log_event(
            &space,
            EventKind::Recall,
            &claude,
            tomorrow,
            &recall(1, 7, 40),
        )
        .unwrap();

    let usage = store.usage(&space, at(-1), 1_000).unwrap();
    assert!(!usage.cut_short);
    let rows: Vec<_> = usage
        .rows
        .iter()
        .map(|r| {
            (
                r.day.clone(),
                r.principal.clone().unwrap_or_default(),
                r.client.clone().unwrap_or_default(),
                r.kind.clone(),
                (r.count, r.bytes, r.tokens, r.returned),
            )
        })
        .collect();
    let today = at(0).strftime("%Y-%m-%d").to_string();
    let next = tomorrow.strftime("%Y-%m-%d").to_string();
    let row = |day: &str, token: &str, client: &str, kind: &str, numbers| {
        (
            day.to_owned(),
            token.to_owned(),
            client.to_owned(),
            kind.to_owned(),
            numbers,
        )
    };
    assert_eq!(
        rows,
        [
            row(&today, "tok-a", "cursor", "recall", (2, 120, 30, 2)),
            row(&today, "tok-a", "cursor", "store", (2, 16, 0, 0)),
            row(&today, "tok-b", "claude", "store", (1, 1, 0, 0)),
            row(&next, "tok-b", "claude", "recall", (1, 40, 7, 1)),
        ]
    );
    let bounded = store.usage(&space, at(-1), 2).unwrap();
    assert!(bounded.cut_short);
    assert_eq!(bounded.rows.iter().map(|r| r.count).sum::<u64>(), 2);

    let read = store
        .events_of_kinds(&space, at(-1), &[EventKind::Recall], 1_000)
        .unwrap();
    assert!(!read.cut_short);
    assert_eq!(read.events.len(), 3);
    assert!(read.events.iter().all(|(e, _)| e.kind == "recall"));
    assert_eq!(read.events[2].1.as_deref(), Some("tok-b"));
    assert!(read.events.windows(2).all(|w| w[0].0.seq < w[1].0.seq));

    let activity = store.activity(&space, at(-1), 1_000).unwrap();
    let mut rows: Vec<_> = activity
        .rows
        .iter()
        .map(|r| {
            (
                r.client.clone().unwrap_or_default(),
                r.kind.clone(),
                r.count,
                r.first,
                r.last,
            )
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        rows,
        [
            (
                "claude".to_owned(),
                "recall".to_owned(),
                1,
                tomorrow,
                tomorrow
            ),
            ("claude".to_owned(), "store".to_owned(), 1, at(2), at(2)),
            ("cursor".to_owned(), "recall".to_owned(), 2, at(10), at(11)),
            ("cursor".to_owned(), "store".to_owned(), 2, at(0), at(1)),
        ]
    );
    assert!(!activity.cut_short);
    assert!(store.activity(&space, at(-1), 3).unwrap().cut_short);
    assert!(!store.activity(&space, at(12), 3).unwrap().cut_short);
}

/// A session's row is written once and moved by later touches (its start and project
/// kept), ended, listed while not ended or ended after the time asked, and dropped once
/// unheard for a week.
pub fn presence_is_upserted_ended_listed_and_dropped_when_unheard_for_a_week(
    store: &dyn Contracted,
) {
    let space = Workspace::default();
    let presence = |id: &str, started, seen, calls| levh_core::Presence {
        id: id.into(),
        workspace: space.clone(),
        transport: "stdio".into(),
        client: Some("cursor".into()),
        principal: None,
        project: None,
        pid: 42,
        host: "here".into(),
        started_at: started,
        last_seen_at: seen,
        ended_at: None,
        calls,
    };
    store
        .touch_presence(&presence("a", at(0), at(0), 0))
        .unwrap();
    let mut later = presence("a", at(0), at(30), 5);
    later.project = Some("atlas".into());
    store.touch_presence(&later).unwrap();
    store
        .touch_presence(&presence("a", at(0), at(40), 6))
        .unwrap();
    let listed = store.presences(&space, at(-1)).unwrap();
    assert_eq!(listed.len(), 1);
    let row = &listed[0];
    assert_eq!(
        (row.started_at, row.last_seen_at, row.calls),
        (at(0), at(40), 6)
    );
    assert_eq!(row.project.as_deref(), Some("atlas"));
    store.end_presence("a", at(50)).unwrap();
    assert_eq!(
        store.presences(&space, at(-1)).unwrap()[0].ended_at,
        Some(at(50))
    );
    assert!(store.presences(&space, at(60)).unwrap().is_empty());
    assert!(
        store
            .presences(&Workspace::new("other").unwrap(), at(-1))
            .unwrap()
            .is_empty()
    );
    store
        .touch_presence(&presence("b", at(1), at(1), 0))
        .unwrap();
    let week = at(100 + 8 * 86_400);
    store.touch_presence(&presence("c", week, week, 0)).unwrap();
    let ids: Vec<String> = store
        .presences(&space, at(-1))
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["c"]);
}
