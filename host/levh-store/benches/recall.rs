//! Recall latency and capture throughput at 10k and 100k memories (hash embedder, real
//! WAL file), each beside a baseline measured in the same run: fetching one memory by id.
//!
//! `cargo bench -p levh-store --bench recall`

#[path = "common/record.rs"]
mod common;
#[path = "common/text.rs"]
mod text_gen;

use text_gen::{sentence, vocabulary};

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use levh_core::{
    Actor, Embedder, FixedClock, Levh, NewMemory, NewMemoryRecord, Parts, RecallRequest, Scope,
    Store, Timestamp, Workspace, text,
};
use levh_embed::HashEmbedder;
use levh_store::SqliteStore;

fn record(embedder: &HashEmbedder, content: String, at: Timestamp, n: u64) -> NewMemoryRecord {
    let vector = embedder
        .embed(&[&content])
        .expect("hash embedding")
        .remove(0);
    let keys = text::near_duplicate_keys(&content);
    common::record(content, at, n, embedder.model_id(), vector, keys)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open store"));
    let embedder = HashEmbedder::default();
    let now: Timestamp = "2026-06-01T00:00:00Z".parse().expect("time");
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder: Arc::new(embedder.clone()),
        clock: Arc::new(FixedClock(now)),
        config: Default::default(),
    });
    let scope = Scope::cli(Workspace::default());
    let words = vocabulary();
    let actor = Actor::cli();
    let mut filled = 0u64;
    let mut some_id = None;

    for size in [10_000u64, 100_000] {
        // Bulk fill straight through the store (the engine's gate and interference are
        // measured by the capture benchmark below, not paid 100k times here).
        while filled < size {
            let at = Timestamp::from_second(1_700_000_000 + filled as i64).expect("time");
            let r = record(&embedder, sentence(&words, filled), at, filled);
            some_id.get_or_insert(r.memory.id);
            store.insert(&r, &[], &|_| None, &actor).expect("insert");
            filled += 1;
        }
        let label = format!("{}k", size / 1000);
        let id = some_id.expect("an id");

        let mut group = c.benchmark_group("recall");
        group.sample_size(20);
        group.bench_function(BenchmarkId::new("baseline-get-by-id", &label), |b| {
            b.iter(|| levh.get(&scope, id).expect("get"))
        });
        let mut seed = 0u64;
        group.bench_function(BenchmarkId::new("recall-limit-10", &label), |b| {
            b.iter(|| {
                seed += 1;
                let query: String = sentence(&words, 1_000_000 + seed)
                    .split(' ')
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ");
                levh.recall(&scope, &RecallRequest::new(query))
                    .expect("recall")
            })
        });
        group.bench_function(BenchmarkId::new("recall-project-filter", &label), |b| {
            b.iter(|| {
                seed += 1;
                let query: String = sentence(&words, 2_000_000 + seed)
                    .split(' ')
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ");
                let request = RecallRequest {
                    project: Some("project-3".into()),
                    ..RecallRequest::new(query)
                };
                levh.recall(&scope, &request).expect("recall")
            })
        });
        group.finish();

        let mut group = c.benchmark_group("capture");
        group.sample_size(20);
        group.throughput(Throughput::Elements(1));
        group.bench_function(BenchmarkId::new("capture-through-engine", &label), |b| {
            b.iter(|| {
                seed += 1;
                let new = NewMemory {
                    content: sentence(&words, 3_000_000 + seed),
                    ..NewMemory::default()
                };
                levh.capture(&scope, new).expect("capture")
            })
        });
        group.finish();
        filled = store
            .count(&levh_core::MemoryFilter::default())
            .expect("count");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
