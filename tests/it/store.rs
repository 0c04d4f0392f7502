//! The SQLite file itself: pragmas, the FTS index, the event log.

use levh_core::{Clock, NewMemory, RecallRequest, Store, Timestamp};

use crate::support::{Harness, hours_after};

#[test]
fn the_file_is_in_wal_mode_with_secure_delete_and_foreign_keys() {
    let h = Harness::new();
    let (journal, secure_delete, foreign_keys): (String, i64, i64) = h.store.with_connection(|c| {
        (
            c.pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap(),
            c.pragma_query_value(None, "secure_delete", |r| r.get(0))
                .unwrap(),
            c.pragma_query_value(None, "foreign_keys", |r| r.get(0))
                .unwrap(),
        )
    });
    assert_eq!(journal, "wal");
    assert_eq!(secure_delete, 1);
    assert_eq!(foreign_keys, 1);
    let health = h.store.health().unwrap();
    assert_eq!(health.schema_version, health.latest_schema_version);
}

#[test]
fn the_event_log_is_append_only_and_holds_no_content() {
    let h = Harness::new();
    let secret_ish = "Quarterly revenue target is 4.2 million";
    let id = h.capture(secret_ish);
    h.levh
        .recall(&h.scope, &RecallRequest::new("quarterly revenue"))
        .unwrap();
    h.levh.set_pinned(&h.scope, id, true).unwrap();
    h.levh.forget(&h.scope, id).unwrap();
    let kinds: Vec<String> = h.store.with_connection(|c| {
        let mut s = c.prepare("SELECT kind FROM events ORDER BY seq").unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(kinds, ["store", "recall-reinforce", "pin", "forget"]);
    let dump: String = h.store.with_connection(|c| {
        c.query_row(
            "SELECT group_concat(detail || coalesce(client, '') || surface, '|') FROM events",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    assert!(!dump.contains("revenue"), "{dump}");
    let update = h
        .store
        .with_connection(|c| c.execute("UPDATE events SET kind = 'x'", []));
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = h
        .store
        .with_connection(|c| c.execute("DELETE FROM events", []));
    assert!(delete.unwrap_err().to_string().contains("append-only"));
}

#[test]
fn the_full_text_index_follows_the_content_table() {
    let h = Harness::new();
    let id = h.capture("Elasticsearch was replaced by OpenSearch");
    h.store.with_connection(|c| {
        c.execute(
            "UPDATE memories SET content = 'Meilisearch is the search engine' WHERE id = ?1",
            [id.to_string()],
        )
        .unwrap();
    });
    let filter = levh_core::MemoryFilter::default();
    let hits = |q: &str| h.store.lexical_candidates(&filter, q, 10).unwrap().len();
    assert_eq!(hits("opensearch"), 0);
    assert_eq!(hits("meilisearch"), 1);
    assert!(h.store.health().unwrap().fts_in_step);
}

#[test]
fn forgotten_memories_leave_every_read() {
    let h = Harness::new();
    let id = h.capture_with(NewMemory {
        content: "Old API base URL is /v1".into(),
        ..NewMemory::default()
    });
    h.levh.forget(&h.scope, id).unwrap();
    assert!(h.levh.get(&h.scope, id).is_err());
    assert!(
        h.levh.forget(&h.scope, id).is_err(),
        "forgetting twice is an unknown id"
    );
    assert!(
        h.levh
            .recall(&h.scope, &RecallRequest::new("API base URL"))
            .unwrap()
            .hits
            .is_empty()
    );
    assert_eq!(h.levh.stats(&h.scope, None).unwrap().total, 0);
    let health = h.store.health().unwrap();
    assert_eq!((health.memories, health.forgotten), (0, 1));
}

#[test]
fn a_store_reopens_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("levh.db");
    {
        let store = levh_store::SqliteStore::open(&path).unwrap();
        store.with_connection(|c| {
            c.execute(
                "INSERT INTO sessions (id, workspace, started_at) VALUES ('s1', 'default', 0)",
                [],
            )
            .unwrap()
        });
    }
    let store = levh_store::SqliteStore::open(&path).unwrap();
    let sessions: i64 = store.with_connection(|c| {
        c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap()
    });
    assert_eq!(sessions, 1);
}

/// Total, pinned, fading, recalls and the retention histogram.
type Counted = (u64, u64, u64, u64, [u64; 10]);

/// Statistics as the old full scan computed them, straight from the rows (with how many
/// memories each project/source/kind group holds): the oracle the cached standings are
/// checked against.
fn stats_from_rows(h: &Harness) -> (Counted, Vec<(String, u64)>) {
    let now = h.clock.now();
    let config = levh_core::ModelConfig::default();
    h.store.with_connection(|c| {
        let mut s = c
            .prepare(
                "SELECT coalesce(project, '-') || '/' || source || '/' || kind, pinned,
                        stability_hours, last_recalled_at, recall_count, created_at
                 FROM memories
                 WHERE workspace = 'default' AND forgotten_at IS NULL
                   AND (valid_to IS NULL OR valid_to > ?1)",
            )
            .unwrap();
        let (mut total, mut pinned, mut fading, mut recalls) = (0, 0, 0, 0);
        let mut histogram = [0u64; 10];
        let mut groups = std::collections::BTreeMap::<String, u64>::new();
        let rows = s
            .query_map([now.as_microsecond()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    levh_core::MemoryState {
                        importance: 0.5,
                        pinned: r.get(1)?,
                        stability_hours: r.get(2)?,
                        last_recalled_at: r
                            .get::<_, Option<i64>>(3)?
                            .map(|t| Timestamp::from_microsecond(t).unwrap()),
                        recall_count: r.get(4)?,
                        created_at: Timestamp::from_microsecond(r.get(5)?).unwrap(),
                    },
                ))
            })
            .unwrap();
        for row in rows {
            let (group, state) = row.unwrap();
            let retention = levh_core::model::retention(&state, now);
            total += 1;
            pinned += u64::from(state.pinned);
            fading += u64::from(retention < config.fading_threshold);
            recalls += u64::from(state.recall_count);
            histogram[((retention * 10.0) as usize).min(9)] += 1;
            *groups.entry(group).or_default() += 1;
        }
        (
            (total, pinned, fading, recalls, histogram),
            groups.into_iter().collect(),
        )
    })
}

/// What `stats` said, in the oracle's shape (its groups from the per-label counts).
fn stats_as_counted(stats: &levh_core::Stats) -> Counted {
    (
        stats.total,
        stats.pinned,
        stats.fading,
        stats.recalls,
        stats.retention_histogram,
    )
}

#[test]
fn statistics_and_the_fading_list_follow_every_change_including_another_process_writes() {
    let h = Harness::new();
    let other = h.second_engine();
    let check = |when: &str| {
        let stats = h.levh.stats(&h.scope, None).unwrap();
        let (counted, groups) = stats_from_rows(&h);
        assert_eq!(stats_as_counted(&stats), counted, "{when}");
        let (total, _, fading, _, _) = counted;
        let projects: u64 = stats.by_project.values().sum();
        assert_eq!(projects + stats.without_project, total, "{when}");
        assert_eq!(stats.by_source.values().sum::<u64>(), total, "{when}");
        assert_eq!(stats.by_kind.values().sum::<u64>(), total, "{when}");
        assert_eq!(groups.iter().map(|(_, n)| n).sum::<u64>(), total, "{when}");
        // The same store opened afresh (its cache read whole) agrees with the one kept
        // up to date change by change.
        let fresh = h.second_engine();
        assert_eq!(fresh.stats(&h.scope, None).unwrap(), stats, "{when}");
        let fading_list = h.levh.fading(&h.scope, None, 5).unwrap();
        let fresh_list = fresh.fading(&h.scope, None, 5).unwrap();
        let ids = |list: &[levh_core::FadingMemory]| -> Vec<_> {
            list.iter().map(|f| (f.memory.id, f.retention)).collect()
        };
        assert_eq!(ids(&fading_list), ids(&fresh_list), "{when}");
        assert_eq!(fading_list.len() as u64, fading.min(5), "{when}");
        assert!(
            fading_list
                .windows(2)
                .all(|w| w[0].retention <= w[1].retention),
            "{when}: weakest first"
        );
        stats
    };

    let mut ids = Vec::new();
    for n in 0..30u64 {
        if n % 10 == 0 {
            // Three waves four days apart: they fade at different times.
            h.clock.advance_hours(24.0 * 4.0);
        }
        ids.push(h.capture_with(NewMemory {
            content: crate::support::distinct_sentence(n),
            project: (n % 3 != 0).then(|| format!("p{}", n % 3)),
            source: Some(if n % 2 == 0 { "cli" } else { "mail" }.into()),
            kind: (n % 5 == 0).then(|| levh_core::Kind::new("decision").unwrap()),
            importance: Some((n % 10) as f64 / 10.0),
            ..NewMemory::default()
        }));
    }
    assert_eq!(check("after capture").total, 30);

    // Time passes: the oldest wave fades.
    h.clock.advance_hours(24.0 * 5.0);
    let faded = check("five days later");
    assert!(faded.fading > 0 && faded.fading < 30, "{faded:?}");

    // Another process changes state, labels and presence; this engine's cache must see
    // each change through the file.
    other.reinforce(&h.scope, ids[0]).unwrap();
    other.feedback(&h.scope, ids[1], false).unwrap();
    other.set_pinned(&h.scope, ids[2], true).unwrap();
    other.set_importance(&h.scope, ids[3], 0.9).unwrap();
    other.forget(&h.scope, ids[4]).unwrap();
    other.purge(&h.scope, ids[5]).unwrap();
    other
        .recall(
            &h.scope,
            &RecallRequest::new(crate::support::distinct_sentence(7)),
        )
        .unwrap();
    let after = check("after another process's changes");
    assert_eq!(after.total, 28);
    assert_eq!(after.pinned, 1);
    // A process that first reads now sees the changes in change order, not memory
    // order, and must still follow the changes after.
    let late = h.second_engine();
    assert_eq!(late.stats(&h.scope, None).unwrap(), after);
    // The first memories' changes came last: in the late reader's first read they
    // arrived after every other memory's.
    other.forget(&h.scope, ids[0]).unwrap();
    other.reinforce(&h.scope, ids[1]).unwrap();
    let later = check("after a late reader's first read");
    assert_eq!(late.stats(&h.scope, None).unwrap(), later);
    assert_eq!(later.total, 27);

    // The newest memory purged, then a capture: SQLite may give the new one the same
    // seq, which the cache must take as a new memory, not as the purged one.
    let newest = *ids.last().unwrap();
    other.purge(&h.scope, newest).unwrap();
    let until = hours_after(h.clock.now(), 5.0);
    other
        .capture(
            &h.scope,
            NewMemory {
                content: "Deploy freeze lasts until the release is tagged".into(),
                project: Some("p9".into()),
                valid_to: Some(until),
                ..NewMemory::default()
            },
        )
        .unwrap();
    let with_temporary = check("after a purge of the newest and a new capture");
    assert_eq!(late.stats(&h.scope, None).unwrap(), with_temporary);
    assert_eq!(with_temporary.total, 27);
    assert_eq!(with_temporary.by_project.get("p9"), Some(&1));
    assert_eq!(
        h.levh.stats(&h.scope, Some("p9".into())).unwrap().total,
        1,
        "one project's statistics"
    );

    // Its validity ends with time alone, no write.
    h.clock.advance_hours(6.0);
    let ended = check("after the temporary memory's validity ended");
    assert_eq!(late.stats(&h.scope, None).unwrap(), ended);
    assert_eq!(ended.total, 26);
    assert_eq!(ended.by_project.get("p9"), None);
}

#[test]
fn a_list_continued_after_its_last_memory_reads_every_memory_once_in_order_even_at_one_instant() {
    use levh_core::{Memory, MemoryFilter, Page};
    let h = Harness::new();
    let batch = |numbers: std::ops::Range<u64>| -> Vec<NewMemory> {
        numbers
            .map(|n| NewMemory {
                content: crate::support::distinct_sentence(n),
                ..NewMemory::default()
            })
            .collect()
    };
    // 1,600 memories at one instant (the clock does not move: only the order they were
    // stored in tells them apart), then 500 an hour later.
    for numbers in [0..800, 800..1600] {
        h.levh.capture_batch(&h.scope, batch(numbers)).unwrap();
    }
    h.clock.advance_hours(1.0);
    h.levh.capture_batch(&h.scope, batch(1600..2100)).unwrap();
    let filter = MemoryFilter {
        workspace: h.scope.workspace.clone(),
        ..MemoryFilter::default()
    };
    let list = |after: Option<&Memory>, limit: usize| {
        h.levh.list(
            &h.scope,
            MemoryFilter {
                listed_after: after.map(|m| m.id),
                ..filter.clone()
            },
            Page { limit, offset: 0 },
        )
    };
    let whole = list(None, 10_000).unwrap();
    assert_eq!(whole.len(), 2100);
    let mut paged: Vec<Memory> = Vec::new();
    loop {
        let page = list(paged.last(), 300).unwrap();
        let done = page.len() < 300;
        paged.extend(page);
        if done {
            break;
        }
    }
    let ids = |memories: &[Memory]| memories.iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(paged.len(), whole.len());
    assert!(
        ids(&paged) == ids(&whole),
        "the pages differ from the whole list"
    );

    // A cursor purged while listing is an error, not a list that quietly ends there.
    let cursor = paged[299].clone();
    h.levh.purge(&h.scope, cursor.id).unwrap();
    let error = list(Some(&cursor), 300).unwrap_err().to_string();
    assert!(error.contains("no longer stored"), "{error}");
    // A forgotten one still orders the rest.
    let forgotten = paged[599].clone();
    h.levh.forget(&h.scope, forgotten.id).unwrap();
    assert!(ids(&list(Some(&forgotten), 300).unwrap()) == ids(&whole[600..900]));
}
