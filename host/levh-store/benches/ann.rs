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
//!
//! Real embeddings: `ANN_VECTORS=text` (with `LEVH_MODEL_DIR` and `ORT_DYLIB_PATH`, as
//! `scripts/fetch-test-assets.sh` prints) embeds real English sentences with the local
//! model instead — the comments of the crates under `$CARGO_HOME/registry/src`
//! (`ANN_TEXT_DIR=dir:dir...` to choose other trees; `.rs` and `.py` comments are read),
//! split into sentences, deduplicated, in path order — and queries with held-out
//! sentences. A machine's registry holds ~75k such sentences; 100k needs a second tree,
//! e.g. Python's standard library. Vectors are cached under
//! `target/ann-text-cache`, so a rerun does not embed again.

#[path = "common/record.rs"]
mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use levh_core::{
    Actor, MemoryFilter, MemoryId, NewMemoryRecord, Store, Timestamp, VectorIndex, Workspace,
};
use levh_embed::{Embedder, LocalEmbedder, LocalModel};
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

const DIMENSION: usize = 384;
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

fn record(model: &str, vector: Vec<f32>, n: u64) -> NewMemoryRecord {
    let at = Timestamp::from_second(1_700_000_000 + n as i64).expect("time");
    common::record(format!("memory number {n}"), at, n, model, vector, vec![])
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// Runs every query, returning the answers and (p50, p99) latency.
fn measure(
    model: &str,
    index: &dyn VectorIndex,
    queries: &[Vec<f32>],
    limit: usize,
) -> (Vec<Vec<MemoryId>>, Duration, Duration) {
    let filter = MemoryFilter::workspace(Workspace::default());
    let mut times = Vec::with_capacity(queries.len());
    let mut answers = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        let found = index.nearest(&filter, model, query, limit).expect("query");
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

/// What a run stores and asks: `size` vectors, the queries, and a 2% tail written after
/// the snapshot.
struct Vectors {
    model: String,
    stored: Vec<Vec<f32>>,
    queries: Vec<Vec<f32>>,
    tail: Vec<Vec<f32>>,
}

fn synthetic(size: usize) -> Vectors {
    // ~50 texts per sub-topic, 10 sub-topics per topic, whatever the size.
    let topics = (size / 500).max(2);
    let mut corpus = Corpus::new(7, topics, 10);
    let stored = (0..size).map(|_| corpus.draw(0.035)).collect();
    let queries = (0..QUERIES).map(|_| corpus.draw(0.03)).collect();
    let tail = (0..size / 50).map(|_| corpus.draw(0.035)).collect();
    Vectors {
        model: "bench-minilm-like".to_owned(),
        stored,
        queries,
        tail,
    }
}

/// Sentences of the comments under `dirs`, in path order, deduplicated: real English
/// prose about many topics, already on every machine that builds levh.
fn sentences(dirs: &[PathBuf], wanted: usize) -> Vec<String> {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "py") {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in dirs {
        walk(dir, &mut files);
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(wanted);
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let prose: Vec<&str> = text
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                l.strip_prefix("/// ")
                    .or_else(|| l.strip_prefix("//! "))
                    .or_else(|| l.strip_prefix("// "))
                    .or_else(|| l.strip_prefix("# "))
            })
            .filter(|l| !l.starts_with(['#', '|', '`', '*', '-', '[', '<']))
            .collect();
        for sentence in prose.join(" ").split(". ") {
            let words = sentence.split_whitespace().count();
            let plain = sentence
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " ,'()-:;/.?!\"".contains(c));
            if (6..=40).contains(&words) && plain && seen.insert(sentence.to_owned()) {
                out.push(sentence.to_owned());
                if out.len() == wanted {
                    return out;
                }
            }
        }
    }
    panic!(
        "only {} sentences under {dirs:?} (need {wanted}); add a tree to ANN_TEXT_DIR",
        out.len()
    );
}

fn text(size: usize) -> Vectors {
    let model_dir = PathBuf::from(std::env::var("LEVH_MODEL_DIR").expect(
        "ANN_VECTORS=text needs LEVH_MODEL_DIR and ORT_DYLIB_PATH (scripts/fetch-test-assets.sh)",
    ));
    let runtime = PathBuf::from(std::env::var("ORT_DYLIB_PATH").expect("ORT_DYLIB_PATH"));
    let embedder = LocalEmbedder::new(LocalModel::locate(&model_dir, &runtime).expect("model"));
    let total = size + size / 50 + QUERIES;
    let cache_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/ann-text-cache");
    let cache = cache_dir.join(format!(
        "{}-{total}.f32",
        embedder.model_id().replace('/', "_")
    ));
    let vectors: Vec<Vec<f32>> = match std::fs::read(&cache) {
        Ok(bytes) if bytes.len() == total * DIMENSION * 4 => bytes
            .chunks_exact(DIMENSION * 4)
            .map(|v| {
                v.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect()
            })
            .collect(),
        _ => {
            let dirs: Vec<PathBuf> = match std::env::var_os("ANN_TEXT_DIR") {
                Some(list) => std::env::split_paths(&list).collect(),
                None => {
                    let home = std::env::var_os("CARGO_HOME").map_or_else(
                        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"),
                        PathBuf::from,
                    );
                    vec![home.join("registry/src")]
                }
            };
            let texts = sentences(&dirs, total);
            let started = Instant::now();
            let mut vectors = Vec::with_capacity(total);
            for batch in texts.chunks(64) {
                let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
                vectors.extend(embedder.embed(&refs).expect("embed"));
                if vectors.len() % 6400 == 0 {
                    eprintln!("embedded {}/{total}", vectors.len());
                }
            }
            println!(
                "embedded {total} sentences from {dirs:?} in {:.0} s",
                started.elapsed().as_secs_f64()
            );
            std::fs::create_dir_all(&cache_dir).expect("cache dir");
            let bytes: Vec<u8> = vectors
                .iter()
                .flatten()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            std::fs::write(&cache, bytes).expect("write cache");
            vectors
        }
    };
    // Interleave: every 50th sentence is a query or the tail, so all three share topics.
    let mut stored = Vec::with_capacity(size);
    let mut queries = Vec::with_capacity(QUERIES);
    let mut tail = Vec::with_capacity(size / 50);
    for (n, v) in vectors.into_iter().enumerate() {
        if n % 50 == 7 && queries.len() < QUERIES {
            queries.push(v);
        } else if n % 50 == 31 && tail.len() < size / 50 {
            tail.push(v);
        } else if stored.len() < size {
            stored.push(v);
        } else if queries.len() < QUERIES {
            queries.push(v);
        } else {
            tail.push(v);
        }
    }
    Vectors {
        model: embedder.model_id().to_owned(),
        stored,
        queries,
        tail,
    }
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
    let real = std::env::var("ANN_VECTORS").is_ok_and(|v| v == "text");
    println!(
        "ann bench: {DIMENSION}-d {} vectors, {QUERIES} queries, ef_construction {}, ef_search {}",
        if real {
            "real sentence"
        } else {
            "synthetic clustered"
        },
        config.ef_construction,
        config.ef_search
    );
    let mut rows = Vec::new();
    for size in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open"));
        let vectors = if real { text(size) } else { synthetic(size) };
        let model = vectors.model.as_str();
        let queries = &vectors.queries;
        let actor = Actor::cli();
        let started = Instant::now();
        for (n, vector) in vectors.stored.iter().enumerate() {
            store
                .insert(
                    &record(model, vector.clone(), n as u64),
                    &[],
                    &|_| None,
                    &actor,
                )
                .expect("insert");
        }
        let fill = started.elapsed();
        let (_, rss_before) = memory();

        let (exact10, exact_p50, exact_p99) = measure(model, store.as_ref(), queries, 10);
        let (exact100, exact100_p50, _) = measure(model, store.as_ref(), queries, 100);

        let cache = dir.path().join("cache");
        let index = AnnIndex::new(store.clone(), Some(cache.clone()), config.clone());
        let started = Instant::now();
        index.refresh(model, DIMENSION).expect("build");
        let build = started.elapsed();
        let (approx10, approx_p50, approx_p99) = measure(model, &index, queries, 10);
        let (approx100, approx100_p50, _) = measure(model, &index, queries, 100);
        let (peak, rss_after) = memory();

        // A restart: a fresh index on the same store loads the saved snapshot.
        drop(index);
        let reopened = AnnIndex::new(store.clone(), Some(cache), config.clone());
        let started = Instant::now();
        reopened.refresh(model, DIMENSION).expect("load");
        let load = started.elapsed();
        assert_eq!(
            reopened.stats().builds,
            0,
            "the restart rebuilt instead of loading"
        );

        // A fresh tail of 2% written after the snapshot, scanned exactly on every query.
        for (n, vector) in vectors.tail.iter().enumerate() {
            store
                .insert(
                    &record(model, vector.clone(), (size + n) as u64),
                    &[],
                    &|_| None,
                    &actor,
                )
                .expect("insert");
        }
        let (exact_tail, _, _) = measure(model, store.as_ref(), queries, 10);
        let (approx_tail, tail_p50, _) = measure(model, &reopened, queries, 10);
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
