//! Reading memories back: by ids, in lists with their orders, pages and cursors, and
//! through every filter.

use levh_core::{Actor, ListOrder, MemoryFilter, MemoryId, MemoryState, Page, Workspace};

use crate::{Contracted, at, record};

fn page(limit: usize, offset: usize) -> Page {
    Page { limit, offset }
}

/// Stores `contents` one minute apart in the default workspace, project `atlas`.
fn stored(store: &dyn Contracted, contents: &[&str]) -> Vec<MemoryId> {
    contents
        .iter()
        .enumerate()
        .map(|(n, content)| {
            let new = record(content, n as i64 * 60, "default", Some("atlas"), None);
            store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
            new.memory.id
        })
        .collect()
}

fn sorted(mut ids: Vec<MemoryId>) -> Vec<MemoryId> {
    ids.sort();
    ids
}

/// Reads by lists of ids return what exists in the workspace, forgotten memories too,
/// and agree with each other field for field.
pub fn memories_by_id_skip_missing_ones_and_include_forgotten_ones(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let ids = stored(store, &["alpha note", "beta note", "gamma note"]);
    let elsewhere = record("delta note", 0, "other", None, None);
    store
        .insert(&elsewhere, &[], &|_| None, &Actor::cli())
        .unwrap();
    store
        .forget(&workspace, ids[1], at(500), &Actor::cli())
        .unwrap();
    let missing = MemoryId::new_at(at(9));
    let asked = [ids.clone(), vec![missing, elsewhere.memory.id]].concat();

    let many = store.get_many(&workspace, &asked).unwrap();
    assert_eq!(
        sorted(many.iter().map(|m| m.id).collect()),
        sorted(ids.clone())
    );
    let rows = store.ranking_rows(&workspace, &asked).unwrap();
    for row in &rows {
        let whole = many.iter().find(|m| m.id == row.id).unwrap();
        assert_eq!(
            (&row.state, row.valid_from),
            (&whole.state, whole.valid_from)
        );
    }
    assert_eq!(rows.len(), 3);
    let texts = store.compared_texts(&workspace, &asked).unwrap();
    assert_eq!(texts.len(), 3);
    let beta = texts.iter().find(|t| t.id == ids[1]).unwrap();
    assert_eq!(
        (beta.content.as_str(), beta.pinned, beta.kind.as_str()),
        ("beta note", false, "note")
    );
    assert!(store.get_many(&workspace, &[]).unwrap().is_empty());
}

/// Lists come newest first (or by importance, or by last recall), a page at a time, and
/// a cursor continues exactly where the previous page ended; a cursor naming a memory
/// never stored is reported, not read as the end.
pub fn lists_are_ordered_paged_and_continue_after_a_cursor(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let ids = stored(store, &["one", "two", "three", "four", "five"]);
    let filter = MemoryFilter::workspace(workspace.clone());
    let listed = |filter: &MemoryFilter, page: Page| -> Vec<MemoryId> {
        store
            .list(filter, page)
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect()
    };
    let newest_first: Vec<MemoryId> = ids.iter().rev().copied().collect();
    assert_eq!(listed(&filter, page(10, 0)), newest_first);
    assert_eq!(listed(&filter, page(2, 1)), newest_first[1..3]);
    let after = MemoryFilter {
        listed_after: Some(newest_first[1]),
        ..filter.clone()
    };
    assert_eq!(listed(&after, page(2, 0)), newest_first[2..4]);
    assert_eq!(store.count(&filter).unwrap(), 5);

    // Importance: raise two; ties (the rest) newest stored first.
    store
        .update_states(
            &workspace,
            &[ids[0], ids[2]],
            levh_core::EventKind::Importance,
            &Actor::cli(),
            at(900),
            &mut |m| {
                Some(MemoryState {
                    importance: if m.id == ids[0] { 0.9 } else { 0.8 },
                    ..m.state
                })
            },
        )
        .unwrap();
    let by_importance = MemoryFilter {
        order: ListOrder::Importance,
        ..filter.clone()
    };
    assert_eq!(
        listed(&by_importance, page(10, 0)),
        [ids[0], ids[2], ids[4], ids[3], ids[1]]
    );
    let continued = MemoryFilter {
        listed_after: Some(ids[2]),
        ..by_importance.clone()
    };
    assert_eq!(listed(&continued, page(2, 0)), [ids[4], ids[3]]);

    // Last recalled: recalled ones first, most recent first; never recalled last.
    store
        .update_states(
            &workspace,
            &[ids[1], ids[3]],
            levh_core::EventKind::RecallReinforce,
            &Actor::cli(),
            at(950),
            &mut |m| {
                let when = if m.id == ids[1] { at(1000) } else { at(2000) };
                Some(MemoryState {
                    last_recalled_at: Some(when),
                    recall_count: 1,
                    ..m.state
                })
            },
        )
        .unwrap();
    let by_recall = MemoryFilter {
        order: ListOrder::Recalled,
        ..filter.clone()
    };
    assert_eq!(listed(&by_recall, page(3, 0)), [ids[3], ids[1], ids[4]]);

    let gone = MemoryFilter {
        listed_after: Some(MemoryId::new_at(at(5))),
        ..filter
    };
    let error = store.list(&gone, page(10, 0)).unwrap_err();
    assert!(error.is_cursor_gone(), "{error}");
    let matching = store
        .matching_ids(&MemoryFilter::workspace(workspace))
        .unwrap();
    assert_eq!(sorted(matching), sorted(ids));
}

/// Every filter selects before the limit: project, kind, source, pinned, record time,
/// validity (at a time, or not yet retired), what levh knew at a time, forgotten ones.
pub fn filters_select_by_labels_validity_and_record_time(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let mut past = record("valid last year only", 0, "default", Some("atlas"), None);
    past.memory.valid_from = at(-400 * 86_400);
    past.memory.valid_to = Some(at(-30 * 86_400));
    let mut future = record(
        "the offsite is next month",
        60,
        "default",
        Some("vega"),
        None,
    );
    future.memory.valid_from = at(30 * 86_400);
    future.memory.kind = levh_core::Kind::new("event").unwrap();
    let mut pinned = record("always use tabs", 120, "default", None, None);
    pinned.memory.state.pinned = true;
    pinned.memory.source = "cli".into();
    let forgotten = record("a retracted claim", 180, "default", Some("atlas"), None);
    for new in [&past, &future, &pinned, &forgotten] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(&workspace, forgotten.memory.id, at(240), &Actor::cli())
        .unwrap();
    let base = MemoryFilter::workspace(workspace.clone());
    let ids =
        |filter: MemoryFilter| -> Vec<MemoryId> { sorted(store.matching_ids(&filter).unwrap()) };
    let one = |id: MemoryId| vec![id];

    assert_eq!(
        ids(MemoryFilter {
            project: Some("vega".into()),
            ..base.clone()
        }),
        one(future.memory.id)
    );
    assert_eq!(
        ids(MemoryFilter {
            kind: Some(levh_core::Kind::new("event").unwrap()),
            ..base.clone()
        }),
        one(future.memory.id)
    );
    assert_eq!(
        ids(MemoryFilter {
            source: Some("cli".into()),
            ..base.clone()
        }),
        one(pinned.memory.id)
    );
    assert_eq!(
        ids(MemoryFilter {
            pinned: Some(true),
            ..base.clone()
        }),
        one(pinned.memory.id)
    );
    assert_eq!(
        ids(MemoryFilter {
            created_after: Some(at(60)),
            created_before: Some(at(120)),
            ..base.clone()
        }),
        one(future.memory.id)
    );
    // Read now: what has not ended, the future-dated included; as of last year: the past.
    assert_eq!(
        ids(base.clone().read_at(None, at(300))),
        sorted(vec![future.memory.id, pinned.memory.id])
    );
    assert_eq!(
        ids(base.clone().read_at(Some(at(-100 * 86_400)), at(300))),
        one(past.memory.id)
    );
    // What levh knew at 200 s: the forgotten one too (forgotten at 240 s), not later ones.
    assert_eq!(
        ids(MemoryFilter {
            known_at: Some(at(200)),
            ..base.clone()
        }),
        sorted(vec![
            past.memory.id,
            future.memory.id,
            pinned.memory.id,
            forgotten.memory.id
        ])
    );
    assert_eq!(
        ids(MemoryFilter {
            known_at: Some(at(90)),
            ..base.clone()
        }),
        sorted(vec![past.memory.id, future.memory.id])
    );
    assert_eq!(
        ids(MemoryFilter {
            forgotten: true,
            ..base.clone()
        }),
        one(forgotten.memory.id)
    );
    assert_eq!(
        store
            .count(&MemoryFilter {
                project: Some("atlas".into()),
                ..base.clone()
            })
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .count(&MemoryFilter::workspace(Workspace::new("other").unwrap()))
            .unwrap(),
        0
    );
    assert!(
        store
            .list(
                &MemoryFilter {
                    project: Some("none".into()),
                    ..base
                },
                page(5, 0)
            )
            .unwrap()
            .is_empty()
    );
}
