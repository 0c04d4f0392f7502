//! The approximate vector index against the exact scan, at 10k and 100k real-like
//! 384-d vectors in a real WAL file: query latency p50/p99, recall@10 (and @100, the
//! candidate pool recall asks for) against the exact answer, build and load time, and
//! peak RSS. One run, one table, ratios against the exact scan.
//!
//! `cargo bench -p levh-store --bench ann` (`ANN_SIZES=10000` for a quick run)
//!
//! "Real-like": sentence embeddings are not uniform on the sphere (HNSW recall collapses
//! on uniform random vectors, which no embedder produces). They cluster by topic, with
//! sub-topics inside; the generator draws topic centres, sub-topic centres around them
//! and points around those, normalised, so nearest neighbours sit at cosines of 0.6–0.9
//! and unrelated texts near 0, as with MiniLM.

use std::sync::Arc;
use std::time::{Duration, Instant};

use levh_core::{
    Actor, AdmissionRecord, Embedding, Kind, Memory, MemoryFilter, MemoryId, MemoryState,
    NewMemoryRecord, Store, Timestamp, VectorIndex, Workspace, text,
};
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

const DIMENSION: usize = 384;
const MODEL: &str = "bench-minilm-like";
const QUERIES: usize = 200;

/// xorshift64* with Box–Muller: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn gaussian(&mut self) -> f32 {
        let u = self.next_f64().max(1e-12);
        let v = self.next_f64();
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_f64() * n as f64) as usize % n
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Topics (unit vectors) with sub-topics; points are drawn around sub-topics.
struct Corpus {
    rng: Rng,
    subtopics: Vec<Vec<f32>>,
}

impl Corpus {
    fn new(seed: u64, topics: usize, per_topic: usize) -> Self {
        let mut rng = Rng(seed | 1);
        let mut subtopics = Vec::new();
        for _ in 0..topics {
            let topic: Vec<f32> = (0..DIMENSION).map(|_| rng.gaussian()).collect();
            let topic = normalised(topic);
            for _ in 0..per_topic {
                let sub = topic.iter().map(|t| t + 0.045 * rng.gaussian()).collect();
                subtopics.push(normalised(sub));
            }
        }
        Self { rng, subtopics }
    }

    /// A stored text's vector, or (with less noise) a query close to one sub-topic.
    fn draw(&mut self, noise: f32) -> Vec<f32> {
        let sub = &self.subtopics[self.rng.below(self.subtopics.len())];
        let point = sub
            .iter()
            .map(|s| s + noise * self.rng.gaussian())
            .collect::<Vec<_>>();
        normalised(point)
    }
}

fn record(vector: Vec<f32>, n: u64) -> NewMemoryRecord {
    let at = Timestamp::from_second(1_700_000_000 + n as i64).expect("time");
    let content = format!("memory number {n}");
    NewMemoryRecord {
        memory: Memory {
            id: MemoryId::new_at(at),
            workspace: Workspace::default(),
            project: Some(format!("project-{}", n % 10)),
            content_hash: text::content_hash(&content),
            content,
            kind: Kind::default(),
            source: "bench".into(),
            state: MemoryState {
                importance: 0.5,
                pinned: false,
                stability_hours: 168.0,
                last_recalled_at: None,
                recall_count: 0,
                created_at: at,
            },
            valid_from: at,
            valid_to: None,
            superseded_by: None,
            admission: AdmissionRecord {
                verdict: "admit".into(),
                reasons: vec![],
                decided_by: "bench".into(),
            },
            metadata: serde_json::json!({}),
            session_id: None,
            embedding_model: Some(MODEL.to_owned()),
            embedding_dimension: Some(DIMENSION as u32),
        },
        embedding: Some(Embedding {
            model: MODEL.to_owned(),
            vector,
        }),
        near_duplicate_keys: vec![],
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// Runs every query, returning the answers and (p50, p99) latency.
fn measure(
    index: &dyn VectorIndex,
    queries: &[Vec<f32>],
    limit: usize,
) -> (Vec<Vec<MemoryId>>, Duration, Duration) {
    let filter = MemoryFilter::workspace(Workspace::default());
    let mut times = Vec::with_capacity(queries.len());
    let mut answers = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        let found = index.nearest(&filter, MODEL, query, limit).expect("query");
        times.push(started.elapsed());
        answers.push(found.into_iter().map(|(id, _)| id).collect());
    }
    let p50 = percentile(&mut times, 0.5);
    let p99 = percentile(&mut times, 0.99);
    (answers, p50, p99)
}

fn recall(approximate: &[Vec<MemoryId>], exact: &[Vec<MemoryId>]) -> f64 {
    let (mut hits, mut total) = (0usize, 0usize);
    for (a, e) in approximate.iter().zip(exact) {
        hits += a.iter().filter(|id| e.contains(id)).count();
        total += e.len();
    }
    hits as f64 / total.max(1) as f64
}

/// Peak and current resident set size in MiB (Linux).
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let sizes: Vec<usize> = std::env::var("ANN_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("ANN_SIZES: numbers"))
        .collect();
    let defaults = AnnConfig::default();
    // Build even below the production threshold, so 10k shows what an index would cost.
    let config = AnnConfig {
        exact_below: 0,
        ..defaults.clone()
    };
    println!(
        "ann bench: {DIMENSION}-d, {QUERIES} queries, ef_construction {}, ef_search {}",
        config.ef_construction, config.ef_search
    );
    let mut rows = Vec::new();
    for size in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open"));
        // ~50 texts per sub-topic, 10 sub-topics per topic, whatever the size.
        let topics = (size / 500).max(2);
        let mut corpus = Corpus::new(7, topics, 10);
        let actor = Actor::cli();
        let started = Instant::now();
        for n in 0..size {
            let vector = corpus.draw(0.035);
            store
                .insert(&record(vector, n as u64), &[], &|_| None, &actor)
                .expect("insert");
        }
        let fill = started.elapsed();
        let queries: Vec<Vec<f32>> = (0..QUERIES).map(|_| corpus.draw(0.03)).collect();
        let (_, rss_before) = memory();

        let (exact10, exact_p50, exact_p99) = measure(store.as_ref(), &queries, 10);
        let (exact100, exact100_p50, _) = measure(store.as_ref(), &queries, 100);

        let cache = dir.path().join("cache");
        let index = AnnIndex::new(store.clone(), Some(cache.clone()), config.clone());
        let started = Instant::now();
        index.refresh(MODEL, DIMENSION).expect("build");
        let build = started.elapsed();
        let (approx10, approx_p50, approx_p99) = measure(&index, &queries, 10);
        let (approx100, approx100_p50, _) = measure(&index, &queries, 100);
        let (peak, rss_after) = memory();

        // A restart: a fresh index on the same store loads the saved snapshot.
        drop(index);
        let reopened = AnnIndex::new(store.clone(), Some(cache), config.clone());
        let started = Instant::now();
        reopened.refresh(MODEL, DIMENSION).expect("load");
        let load = started.elapsed();
        assert_eq!(
            reopened.stats().builds,
            0,
            "the restart rebuilt instead of loading"
        );

        // A fresh tail of 2% written after the snapshot, scanned exactly on every query.
        for n in size..size + size / 50 {
            let vector = corpus.draw(0.035);
            store
                .insert(&record(vector, n as u64), &[], &|_| None, &actor)
                .expect("insert");
        }
        let (exact_tail, _, _) = measure(store.as_ref(), &queries, 10);
        let (approx_tail, tail_p50, _) = measure(&reopened, &queries, 10);
        assert_eq!(
            reopened.stats().builds,
            0,
            "a 2% tail must not trigger a rebuild"
        );

        println!(
            "{size}: filled in {:.1} s; RSS {rss_before:.0} MiB before the index, {rss_after:.0} MiB after, peak {peak:.0} MiB",
            fill.as_secs_f64()
        );
        rows.push(vec![
            format!("{}k", size / 1000),
            format!("{:.2}", ms(exact_p50)),
            format!("{:.2}", ms(exact_p99)),
            format!(
                "{:.2} ({:.2}×)",
                ms(approx_p50),
                ms(approx_p50) / ms(exact_p50)
            ),
            format!(
                "{:.2} ({:.2}×)",
                ms(approx_p99),
                ms(approx_p99) / ms(exact_p99)
            ),
            format!("{:.3}", recall(&approx10, &exact10)),
            format!("{:.2} / {:.2}", ms(exact100_p50), ms(approx100_p50)),
            format!("{:.3}", recall(&approx100, &exact100)),
            format!(
                "{:.2} / {:.3}",
                ms(tail_p50),
                recall(&approx_tail, &exact_tail)
            ),
            format!("{:.1}", build.as_secs_f64()),
            format!("{:.2}", load.as_secs_f64()),
            format!("{peak:.0}"),
        ]);
    }
    let header = [
        "vectors",
        "exact p50 ms",
        "exact p99 ms",
        "approx p50 ms (vs exact)",
        "approx p99 ms (vs exact)",
        "recall@10",
        "p50 ms @100 exact / approx",
        "recall@100",
        "+2% tail: p50 ms / recall@10",
        "build s",
        "load s",
        "peak RSS MiB",
    ];
    println!("\n| {} |", header.join(" | "));
    println!(
        "|{}|",
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for row in rows {
        println!("| {} |", row.join(" | "));
    }
    println!(
        "\nProduction thresholds: exact below {} vectors of a model, rebuild once the tail passes max({}, snapshot/10).",
        defaults.exact_below, defaults.rebuild_tail
    );
}
