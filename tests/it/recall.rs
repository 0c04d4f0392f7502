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
    // By default recall shows what has not ended: a window that opens tomorrow is
    // knowledge now (#16: future-dated memories were invisible until they started).
    assert_eq!(
        h.levh
            .recall(&h.scope, &RecallRequest::new("on call storage"))
            .unwrap()
            .hits
            .iter()
            .map(|hit| hit.memory.id)
            .collect::<Vec<_>>(),
        vec![id]
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

/// What a recall of `query` returns, by content, without reinforcing.
fn found(h: &Harness, query: &str) -> Vec<String> {
    let request = RecallRequest {
        reinforce: false,
        ..RecallRequest::new(query)
    };
    h.levh
        .recall(&h.scope, &request)
        .unwrap_or_else(|e| panic!("{query:?}: {e}"))
        .hits
        .into_iter()
        .map(|hit| hit.memory.content)
        .collect()
}

#[test]
fn fts_syntax_in_a_query_is_literal_text() {
    let h = Harness::new();
    h.capture("Deploy NEAR the end of the sprint, AND never on Fridays");
    h.capture("The column title: budget for 2026");
    h.capture("A note about quotes \" and stars * in text");
    for query in [
        "AND",
        "OR NOT",
        "NEAR(deploy sprint)",
        "title: budget",
        "\"unbalanced quote",
        "deploy*",
        "-sprint",
        "^deploy",
        "{title budget}",
        "a AND b OR c NOT d",
        "\" * \"",
        "sprint)",
    ] {
        let request = RecallRequest {
            reinforce: false,
            ..RecallRequest::new(query)
        };
        h.levh
            .recall(&h.scope, &request)
            .unwrap_or_else(|e| panic!("{query:?} must be read as text, not FTS syntax: {e}"));
    }
    // The words are matched as words: "near" and "and" are plain terms here.
    assert!(found(&h, "NEAR(deploy sprint)")[0].starts_with("Deploy NEAR"));
    assert!(found(&h, "title: budget")[0].starts_with("The column title"));
}

#[test]
fn question_words_need_not_match_and_word_forms_meet() {
    let h = Harness::new();
    let offsite = "The quarterly offsite will be held in Lisbon in May";
    h.capture(offsite);
    h.capture("Bakers start at five in the morning");
    h.capture("What did we do about the flaky test? We quarantined it.");
    // "quarter" meets "quarterly" (a prefix after stemming); "what", "did", "the" are
    // not required to match and do not pull in the memory full of them.
    assert_eq!(
        found(&h, "what did we decide about the quarter offsite")[0],
        offsite
    );
    assert_eq!(found(&h, "quarter")[0], offsite);
    // Stemming both ways: "baker" and "bakery"-like forms.
    assert!(
        found(&h, "when does the baker start")
            .iter()
            .any(|c| c.starts_with("Bakers"))
    );
}

#[test]
fn turkish_german_spanish_and_french_text_match_themselves() {
    let h = Harness::new();
    let texts = [
        "Toplantı perşembe günü İstanbul ofisinde yapılacak",
        "Die Besprechung findet im Büro in München statt",
        "La reunión será en la oficina de Sevilla el miércoles",
        "La réunion aura lieu au bureau de Genève vendredi",
    ];
    for t in texts {
        h.capture(t);
    }
    for (query, expected) in [
        ("perşembe toplantı", texts[0]),
        ("Besprechung München", texts[1]),
        ("muenchen besprechung", texts[1]),
        ("reunión miércoles", texts[2]),
        ("reunion miercoles", texts[2]),
        ("réunion Genève", texts[3]),
        ("geneve", texts[3]),
    ] {
        assert_eq!(
            found(&h, query).first().map(String::as_str),
            Some(expected),
            "{query:?}"
        );
    }
}

#[test]
fn each_hit_explains_its_relevance_from_bm25_and_cosine() {
    let h = Harness::new();
    h.capture("Kafka consumer lag alerts page the on-call engineer");
    h.capture("The kafka cluster runs three brokers");
    h.capture("Lunch is at noon");
    let request = RecallRequest {
        reinforce: false,
        ..RecallRequest::new("kafka consumer lag")
    };
    let out = h.levh.recall(&h.scope, &request).unwrap();
    assert!(out.hits.len() >= 2, "{:?}", out.hits);
    let best = out
        .hits
        .iter()
        .filter_map(|h| h.relevance.bm25)
        .fold(0.0, f64::max);
    let fusion = Config::default().recall.fusion;
    for hit in &out.hits {
        let r = hit.relevance;
        assert!(r.lexical_rank.is_some() == r.bm25.is_some());
        let lexical = r.bm25.map_or(0.0, |b| b / best);
        assert!((r.lexical - lexical).abs() < 1e-9, "{r:?}");
        // The hash embedder: the lexical side carries most of the weight.
        let expected = (1.0 - fusion.hash_weight) * r.lexical + fusion.hash_weight * r.semantic;
        assert!((r.value - expected).abs() < 1e-9, "{r:?}");
        assert_eq!(hit.score.relevance, r.value);
        assert!((hit.score.terms.relevance - 0.4 * (1.0 - r.value)).abs() < 1e-12);
    }
    assert_eq!(
        out.hits[0].memory.content,
        "Kafka consumer lag alerts page the on-call engineer"
    );
    assert_eq!(out.hits[0].relevance.lexical, 1.0);
}

#[test]
fn a_month_named_in_the_query_favours_memories_of_that_month() {
    let h = Harness::new();
    let at = |text: &str| Some(text.parse().unwrap());
    let march = h.capture_with(NewMemory {
        content: "Tom cooked a big pot of lentil soup".into(),
        valid_from: at("2025-03-12T18:00:00Z"),
        ..NewMemory::default()
    });
    let june = h.capture_with(NewMemory {
        content: "Tom cooked lentil soup with lemon again".into(),
        valid_from: at("2025-06-02T18:00:00Z"),
        ..NewMemory::default()
    });
    let ids = |query: &str| -> Vec<_> {
        let request = RecallRequest {
            reinforce: false,
            ..RecallRequest::new(query)
        };
        h.levh
            .recall(&h.scope, &request)
            .unwrap()
            .hits
            .iter()
            .map(|h| (h.memory.id, h.relevance.temporal))
            .collect()
    };
    let in_march = ids("what soup did Tom cook in March");
    assert_eq!(in_march[0].0, march, "{in_march:?}");
    assert!(in_march[0].1 > 0.0 && in_march[1].1 == 0.0);
    let in_june = ids("what soup did Tom cook in June");
    assert_eq!(in_june[0].0, june, "{in_june:?}");
}

#[test]
fn the_vector_floor_drops_unrelated_memories_and_min_similarity_raises_it() {
    let h = Harness::new();
    // Shares word pieces with the query but no word, nor a word's start: only the
    // vector side (the hash embedder's character trigrams) can find it.
    h.capture("prekubernetes and postkubernetes tooling");
    let request = |min_similarity| RecallRequest {
        reinforce: false,
        min_similarity,
        ..RecallRequest::new("kubernetes")
    };
    let zero = h.levh.recall(&h.scope, &request(Some(0.0))).unwrap();
    assert_eq!(
        zero.hits.len(),
        1,
        "a floor of 0 keeps every vector candidate"
    );
    assert!(!zero.hits[0].lexical_match);
    let cosine = zero.hits[0].relevance.semantic;
    assert!(cosine > 0.0 && cosine < 0.99, "{cosine}");
    let strict = h.levh.recall(&h.scope, &request(Some(0.99))).unwrap();
    assert!(strict.hits.is_empty(), "{:?}", strict.hits);
    // The default is the hash embedder's floor.
    let default = h.levh.recall(&h.scope, &request(None)).unwrap();
    assert_eq!(
        default.hits.len(),
        usize::from(cosine >= levh_core::config::HASH_FLOOR)
    );
    let bad = h.levh.recall(&h.scope, &request(Some(1.5))).unwrap_err();
    assert!(bad.to_string().contains("min_similarity"), "{bad}");
}
