//! Hybrid recall: filters before ranking, validity and record time, reinforcement of
//! exactly what is returned, budgets and workspaces.

use levh_core::{
    Config, MemoryFilter, NewMemory, Page, RecallConfig, RecallRequest, Scope, Workspace,
};

use crate::support::{Harness, distinct_sentence, hours_after, start};

#[test]
fn the_relevant_memory_comes_first() {
    let h = Harness::new();
    h.capture("Deploys happen on Tuesdays after the standup");
    let db = h.capture("We use PostgreSQL 16 as the main database for the API");
    h.capture("Alice prefers tabs over spaces in Go code");
    let out = h
        .levh
        .recall(&h.scope, &RecallRequest::new("which database do we use?"))
        .unwrap();
    assert_eq!(out.hits.first().map(|hit| hit.memory.id), Some(db));
    assert!(
        out.hits
            .iter()
            .all(|hit| hit.memory.id == db || hit.score.score > out.hits[0].score.score)
    );
}

#[test]
fn a_project_filter_still_returns_a_full_page() {
    // A small candidate pool: if the filter ran after truncation, the decoys below (which
    // match the query better) would crowd out the target project entirely.
    let config = Config {
        recall: RecallConfig {
            candidates: 10,
            ..RecallConfig::default()
        },
        ..Config::default()
    };
    let h = Harness::with_config(config);
    for i in 0..40 {
        h.capture_with(NewMemory {
            content: format!("kafka consumer lag alert: {}", distinct_sentence(i)),
            project: Some("decoy".into()),
            ..NewMemory::default()
        });
    }
    for i in 0..12 {
        h.capture_with(NewMemory {
            content: format!("kafka in payments, {}", distinct_sentence(100 + i)),
            project: Some("payments".into()),
            ..NewMemory::default()
        });
    }
    let request = RecallRequest {
        limit: 10,
        project: Some("payments".into()),
        ..RecallRequest::new("kafka consumer lag")
    };
    let out = h.levh.recall(&h.scope, &request).unwrap();
    assert_eq!(out.hits.len(), 10);
    assert!(
        out.hits
            .iter()
            .all(|hit| hit.memory.project.as_deref() == Some("payments"))
    );
}

#[test]
fn kind_and_source_filters_apply() {
    let h = Harness::new();
    h.capture_with(NewMemory {
        content: "Decided to move the queue to NATS".into(),
        kind: Some(levh_core::Kind::new("decision").unwrap()),
        source: Some("claude-code".into()),
        ..NewMemory::default()
    });
    h.capture("The queue is RabbitMQ today");
    let kind = RecallRequest {
        kind: Some(levh_core::Kind::new("decision").unwrap()),
        ..RecallRequest::new("queue")
    };
    assert_eq!(h.levh.recall(&h.scope, &kind).unwrap().hits.len(), 1);
    let source = RecallRequest {
        source: Some("cli".into()),
        ..RecallRequest::new("queue")
    };
    let hits = h.levh.recall(&h.scope, &source).unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].memory.content, "The queue is RabbitMQ today");
}

#[test]
fn only_returned_candidates_are_reinforced() {
    let h = Harness::new();
    let ids: Vec<_> = (0..12)
        .map(|i| {
            h.capture(&format!(
                "grafana dashboard ingest: {}",
                distinct_sentence(i)
            ))
        })
        .collect();
    let request = RecallRequest {
        limit: 3,
        ..RecallRequest::new("grafana dashboard ingest")
    };
    let out = h.levh.recall(&h.scope, &request).unwrap();
    assert!(
        out.candidates > 3,
        "more candidates than results were scored"
    );
    let returned: Vec<_> = out.hits.iter().map(|hit| hit.memory.id).collect();
    assert_eq!(returned.len(), 3);
    for id in &ids {
        let memory = h.levh.get(&h.scope, *id).unwrap();
        let expected = u32::from(returned.contains(id));
        assert_eq!(memory.state.recall_count, expected, "{id}");
    }
    let mut logged = h.events("recall-reinforce");
    logged.sort();
    let mut expected: Vec<String> = returned.iter().map(ToString::to_string).collect();
    expected.sort();
    assert_eq!(logged, expected);
}

#[test]
fn no_reinforce_and_time_travel_leave_memories_untouched() {
    let h = Harness::new();
    let id = h.capture("The VPN endpoint is vpn.example.internal");
    let look = RecallRequest {
        reinforce: false,
        ..RecallRequest::new("vpn endpoint")
    };
    assert_eq!(h.levh.recall(&h.scope, &look).unwrap().hits.len(), 1);
    let past = RecallRequest {
        as_of: Some(h.levh.now()),
        ..RecallRequest::new("vpn endpoint")
    };
    assert!(
        h.levh
            .recall(&h.scope, &past)
            .unwrap()
            .reinforced
            .is_empty()
    );
    assert_eq!(h.levh.get(&h.scope, id).unwrap().state.recall_count, 0);
}

#[test]
fn as_of_returns_a_memory_only_inside_its_validity_window() {
    let h = Harness::new();
    let from = hours_after(start(), 24.0);
    let to = hours_after(start(), 48.0);
    let id = h.capture_with(NewMemory {
        content: "Bob is on call for the storage cluster".into(),
        valid_from: Some(from),
        valid_to: Some(to),
        ..NewMemory::default()
    });
    let ask = |at| {
        let request = RecallRequest {
            as_of: Some(at),
            ..RecallRequest::new("who is on call for storage")
        };
        h.levh
            .recall(&h.scope, &request)
            .unwrap()
            .hits
            .iter()
            .map(|hit| hit.memory.id)
            .collect::<Vec<_>>()
    };
    assert!(
        ask(hours_after(start(), 12.0)).is_empty(),
        "before the window"
    );
    assert_eq!(ask(from), vec![id], "at its start");
    assert_eq!(ask(hours_after(start(), 36.0)), vec![id], "inside");
    assert!(ask(to).is_empty(), "valid_to is exclusive");
    assert!(ask(hours_after(start(), 72.0)).is_empty(), "after");
    // by default recall asks about now, which is before the window opens
    assert!(
        h.levh
            .recall(&h.scope, &RecallRequest::new("on call storage"))
            .unwrap()
            .hits
            .is_empty()
    );
}

#[test]
fn known_at_returns_what_levh_knew_then() {
    let h = Harness::new();
    let t0 = start();
    let first = h.capture("The office wifi password rotates monthly");
    h.clock.advance_hours(10.0);
    let second = h.capture("The office wifi network is called levh-guest");
    h.clock.advance_hours(10.0);
    h.levh.forget(&h.scope, first).unwrap();

    let knew = |at| {
        let request = RecallRequest {
            known_at: Some(at),
            ..RecallRequest::new("office wifi")
        };
        let mut ids: Vec<_> = h
            .levh
            .recall(&h.scope, &request)
            .unwrap()
            .hits
            .iter()
            .map(|hit| hit.memory.id)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(knew(hours_after(t0, 1.0)), vec![first]);
    assert_eq!(knew(hours_after(t0, 15.0)), vec![first, second]);
    assert_eq!(
        knew(hours_after(t0, 25.0)),
        vec![second],
        "forgotten by then"
    );
    let now: Vec<_> = h
        .levh
        .recall(&h.scope, &RecallRequest::new("office wifi"))
        .unwrap()
        .hits
        .iter()
        .map(|x| x.memory.id)
        .collect();
    assert_eq!(now, vec![second]);
}

#[test]
fn max_tokens_packs_best_first_and_compact_counts_previews() {
    let h = Harness::new();
    let long = "terraform ".repeat(200);
    h.capture(&format!(
        "terraform state lives in the shared bucket. {long}"
    ));
    let short = h.capture("terraform state is locked with dynamodb");
    let request = RecallRequest {
        max_tokens: Some(40),
        ..RecallRequest::new("terraform state")
    };
    let out = h.levh.recall(&h.scope, &request).unwrap();
    assert!(out.tokens <= 40);
    assert_eq!(
        out.hits.iter().map(|x| x.memory.id).collect::<Vec<_>>(),
        vec![short]
    );
    assert_eq!(out.omitted_by_budget, 1);
    let compact = RecallRequest {
        max_tokens: Some(80),
        compact: true,
        ..request
    };
    assert_eq!(h.levh.recall(&h.scope, &compact).unwrap().hits.len(), 2);
}

#[test]
fn explain_terms_add_up_to_the_score() {
    let h = Harness::new();
    h.capture_with(NewMemory {
        content: "Redis runs on port 6380 here".into(),
        importance: Some(0.9),
        ..NewMemory::default()
    });
    let hit = h
        .levh
        .recall(&h.scope, &RecallRequest::new("redis port"))
        .unwrap()
        .hits
        .remove(0);
    let t = hit.score.terms;
    assert!(
        (t.relevance + t.retention + t.importance + t.frequency - hit.score.score).abs() < 1e-12
    );
    assert!((t.importance - 0.3 * 0.1).abs() < 1e-12);
    assert!((t.relevance - 0.4 * (1.0 - hit.score.relevance)).abs() < 1e-12);
}

#[test]
fn workspaces_never_see_each_other() {
    let h = Harness::new();
    let mine = h.capture("The secret project codename is Bluebird");
    let other = Scope::cli(Workspace::new("team-b").unwrap());
    assert!(
        h.levh
            .recall(&other, &RecallRequest::new("project codename"))
            .unwrap()
            .hits
            .is_empty()
    );
    assert!(h.levh.get(&other, mine).is_err());
    assert!(h.levh.forget(&other, mine).is_err());
    assert!(
        h.levh
            .list(
                &other,
                MemoryFilter::default(),
                Page {
                    limit: 10,
                    offset: 0
                }
            )
            .unwrap()
            .is_empty()
    );
    assert_eq!(h.levh.stats(&other, None).unwrap().total, 0);
    assert_eq!(h.levh.get(&h.scope, mine).unwrap().state.recall_count, 0);
}

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    let h = Harness::new();
    let id = h.capture("Kubernetes version is 1.31");
    for request in [
        RecallRequest::new("   "),
        RecallRequest {
            limit: 0,
            ..RecallRequest::new("kubernetes")
        },
        RecallRequest {
            max_tokens: Some(0),
            ..RecallRequest::new("kubernetes")
        },
    ] {
        let err = h.levh.recall(&h.scope, &request).unwrap_err();
        assert!(matches!(err, levh_core::Error::Invalid { .. }), "{err}");
    }
    let err = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: "x".into(),
                importance: Some(1.5),
                ..NewMemory::default()
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("importance"), "{err}");
    let empty = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: " \n ".into(),
                ..NewMemory::default()
            },
        )
        .unwrap();
    assert_eq!(empty.verdict.name(), "reject");
    assert_eq!(empty.reason().as_deref(), Some("empty"));
    assert_eq!(h.levh.stats(&h.scope, None).unwrap().total, 1);
    assert_eq!(h.levh.get(&h.scope, id).unwrap().state.recall_count, 0);
}
