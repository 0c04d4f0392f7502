//! Finding memories: full text, nearest vectors and near-duplicate keys, each within the
//! filter before its limit.

use levh_core::{Actor, MemoryFilter, Workspace};

use crate::fixtures::unit;
use crate::{Contracted, record};

/// The query's words are ORed; a long word also matches as a prefix after stemming;
/// a memory with more of the words ranks first; the filter applies before the limit.
pub fn full_text_finds_words_and_prefixes_best_first_within_the_filter(store: &dyn Contracted) {
    let both = record(
        "the quarterly numbers for the northern region",
        0,
        "default",
        Some("atlas"),
        None,
    );
    let one = record(
        "northern lights were visible last night",
        60,
        "default",
        Some("atlas"),
        None,
    );
    let other_project = record(
        "quarterly planning for the northern office",
        120,
        "default",
        Some("vega"),
        None,
    );
    let unrelated = record(
        "kafka consumer lag alerts",
        180,
        "default",
        Some("atlas"),
        None,
    );
    for new in [&both, &one, &other_project, &unrelated] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let workspace = MemoryFilter::workspace(Workspace::default());
    let atlas = MemoryFilter {
        project: Some("atlas".into()),
        ..workspace.clone()
    };
    let found = store
        .lexical_candidates(&atlas, "Quarter numbers northern?", 10)
        .unwrap();
    let ids: Vec<_> = found.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [both.memory.id, one.memory.id]);
    assert!(found[0].1 > found[1].1 && found[1].1 > 0.0, "{found:?}");
    // The filter is applied before the limit: one asked for, the best in the project.
    assert_eq!(
        store
            .lexical_candidates(&atlas, "northern", 1)
            .unwrap()
            .len(),
        1
    );
    let everywhere = store
        .lexical_candidates(&workspace, "quarterly", 10)
        .unwrap();
    assert_eq!(everywhere.len(), 2);
    assert!(
        store
            .lexical_candidates(&workspace, "  ?! ", 10)
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .lexical_candidates(
                &MemoryFilter::workspace(Workspace::new("other").unwrap()),
                "northern",
                10
            )
            .unwrap()
            .is_empty()
    );
}

/// Nearest vectors by cosine, best first, only of the model asked and within the filter
/// (project, forgotten), with the cosine as the score.
pub fn nearest_vectors_come_best_first_within_the_filter_and_model(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let near = record(
        "near",
        0,
        "default",
        Some("atlas"),
        Some(unit(&[1.0, 0.1, 0.0])),
    );
    let middle = record(
        "middle",
        60,
        "default",
        Some("atlas"),
        Some(unit(&[1.0, 1.0, 0.0])),
    );
    let far = record(
        "far",
        120,
        "default",
        Some("atlas"),
        Some(unit(&[0.0, 0.0, 1.0])),
    );
    let elsewhere = record(
        "elsewhere",
        180,
        "default",
        Some("vega"),
        Some(unit(&[1.0, 0.0, 0.0])),
    );
    let forgotten = record(
        "forgotten",
        240,
        "default",
        Some("atlas"),
        Some(unit(&[1.0, 0.0, 0.0])),
    );
    let mut other_model = record(
        "other model",
        300,
        "default",
        Some("atlas"),
        Some(unit(&[1.0, 0.0, 0.0])),
    );
    other_model.embedding.as_mut().unwrap().model = "another-model".into();
    other_model.memory.embedding_model = Some("another-model".into());
    let wider = record(
        "wider",
        360,
        "default",
        Some("atlas"),
        Some(unit(&[1.0, 0.0, 0.0, 0.0])),
    );
    for new in [
        &near,
        &middle,
        &far,
        &elsewhere,
        &forgotten,
        &other_model,
        &wider,
    ] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    store
        .forget(
            &workspace,
            forgotten.memory.id,
            levh_core::Timestamp::from_second(1_700_001_000).unwrap(),
            &Actor::cli(),
        )
        .unwrap();
    let atlas = MemoryFilter {
        project: Some("atlas".into()),
        ..MemoryFilter::workspace(workspace.clone())
    };
    let query = [1.0, 0.0, 0.0];
    let found = store.nearest(&atlas, "test-model", &query, 10).unwrap();
    let ids: Vec<_> = found.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [near.memory.id, middle.memory.id, far.memory.id]);
    let expected = [unit(&[1.0, 0.1, 0.0])[0], unit(&[1.0, 1.0, 0.0])[0], 0.0];
    for ((_, score), want) in found.iter().zip(expected) {
        assert!((score - want).abs() < 1e-5, "{found:?}");
    }
    assert_eq!(
        store
            .nearest(&atlas, "test-model", &query, 1)
            .unwrap()
            .len(),
        1
    );
    let everywhere = MemoryFilter::workspace(workspace);
    let top = store.nearest(&everywhere, "test-model", &query, 1).unwrap();
    assert_eq!(top[0].0, elsewhere.memory.id);
    assert_eq!(
        store
            .nearest(&everywhere, "another-model", &query, 5)
            .unwrap()
            .len(),
        1
    );
}

/// Memories sharing near-duplicate keys with a text, those sharing most first, within
/// the filter.
pub fn near_duplicates_are_found_by_shared_keys_most_shared_first(store: &dyn Contracted) {
    let text = "the deploy branch for atlas is main and releases are tagged weekly";
    let same = record(text, 0, "default", Some("atlas"), None);
    let close = record(
        "the deploy branch for atlas is main and releases are tagged monthly",
        60,
        "default",
        Some("atlas"),
        None,
    );
    let other_project = record(text, 120, "default", Some("vega"), None);
    let unrelated = record(
        "kafka consumer lag alerts fire after five minutes",
        180,
        "default",
        Some("atlas"),
        None,
    );
    for new in [&same, &close, &other_project, &unrelated] {
        store.insert(new, &[], &|_| None, &Actor::cli()).unwrap();
    }
    let atlas = MemoryFilter {
        project: Some("atlas".into()),
        ..MemoryFilter::workspace(Workspace::default())
    };
    let keys = levh_core::text::near_duplicate_keys(text);
    let found = store.near_duplicates(&atlas, &keys, 5).unwrap();
    assert_eq!(found.first(), Some(&same.memory.id));
    assert!(!found.contains(&unrelated.memory.id) && !found.contains(&other_project.memory.id));
    assert!(store.near_duplicates(&atlas, &[], 5).unwrap().is_empty());
    assert_eq!(
        store.near_duplicates(&atlas, &keys, 1).unwrap(),
        [same.memory.id]
    );
}
