//! levh at scale, through the engine with the gate on (hash embedder, a real WAL file),
//! at 1k, 10k and 100k memories (`SCALE_SIZES=1000,10000,100000,1000000` adds 1M):
//!
//! - bulk ingest: memories/s while filling the store with `capture_batches` (batches of
//!   1,000, five per transaction, the next five judged while those are written), per
//!   range of store sizes (`SCALE_INGEST=sequential`: `capture_batch` one batch after
//!   another, one per transaction, the baseline), with a clock that moves as during a
//!   real import (`SCALE_CLOCK=fixed`: stuck, as the figures before 2026-12-04's night
//!   were taken, which puts every id at a random place of its index);
//! - capture one by one at each size (p50 per capture), beside the same store's get by
//!   id as the baseline of the same run;
//! - `stats` and `fading` at each size (median of 5, after a first call that fills the
//!   standings cache), beside the same run's baseline: what they did before the cache,
//!   every live memory's state read from SQLite and folded per call;
//! - hybrid recall (k = 10, no reinforcement, so both paths see one state) p50/p99 with
//!   the exact vector scan and with the approximate index (HNSW snapshot + exact tail,
//!   built before timing), and the approximate path's recall@10 against the exact one;
//!   the same queries scoped to one project of ten (how agents call recall);
//!   then recall as a user calls it (reinforcing what it returns) on the approximate path
//!   (`SCALE_RECALL_UP_TO=100000` skips recall above that size: at 1M the graph build
//!   takes ~11 minutes on 2 cores and the exact baseline ~2 more);
//! - `SCALE_DIR=<dir>` keeps the store and the graph's snapshot there; a later run on
//!   the same dir starts from the memories it holds (to re-measure or profile a 1M
//!   store without filling it again);
//! - the process's peak RSS after each size.
//!
//! `cargo bench -p levh-store --bench scale`

#[path = "common/text.rs"]
mod text_gen;

use std::sync::Arc;
use std::time::{Duration, Instant};

use levh_core::{
    Config, Embedder, FixedClock, Levh, MemoryId, NewMemory, Parts, RecallRequest, Scope,
    Timestamp, Workspace,
};
use levh_embed::HashEmbedder;
use levh_store::{AnnConfig, AnnIndex, SqliteStore};
use text_gen::{sentence, vocabulary};

const BATCH: usize = 1000;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// The process's peak resident set (VmHWM), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// What the resident set is made of now: anonymous memory (the heap: caches, the graph,
/// the full-text ranking) and pages of files (the database read through its memory map),
/// which the kernel can drop under pressure and which peak RSS counts alike.
fn rss_parts() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    format!(
        "now {:.0} MiB: anonymous {:.0}, file-backed {:.0}",
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:")
    )
}

/// The baseline for `stats`: what it did before the standings cache — every live
/// memory's labels and state read from SQLite on each call, then folded (count, pinned,
/// recalls, fading, retention histogram, per-project counts).
fn stats_by_full_scan(db: &rusqlite::Connection, now: Timestamp) -> (u64, f64, [u64; 10]) {
    let mut statement = db
        .prepare_cached(
            "SELECT id, project, kind, source, importance, pinned, stability_hours,
                    last_recalled_at, recall_count, created_at
             FROM memories
             WHERE workspace = 'default' AND forgotten_at IS NULL
               AND (valid_to IS NULL OR valid_to > ?1)",
        )
        .expect("prepare");
    let config = levh_core::ModelConfig::default();
    let (mut total, mut sum, mut histogram) = (0u64, 0.0, [0u64; 10]);
    let mut by_project = std::collections::BTreeMap::<Option<String>, u64>::new();
    let mut rows = statement.query([now.as_microsecond()]).expect("query");
    while let Some(row) = rows.next().expect("row") {
        let _id: levh_core::MemoryId = row.get::<_, String>(0).unwrap().parse().unwrap();
        let project: Option<String> = row.get(1).unwrap();
        let (_kind, _source): (String, String) = (row.get(2).unwrap(), row.get(3).unwrap());
        let state = levh_core::MemoryState {
            importance: row.get(4).unwrap(),
            pinned: row.get(5).unwrap(),
            stability_hours: row.get(6).unwrap(),
            last_recalled_at: row
                .get::<_, Option<i64>>(7)
                .unwrap()
                .map(|t| Timestamp::from_microsecond(t).unwrap()),
            recall_count: row.get(8).unwrap(),
            created_at: Timestamp::from_microsecond(row.get(9).unwrap()).unwrap(),
        };
        let retention = levh_core::model::retention(&state, now);
        total += 1;
        sum += retention;
        histogram[((retention * 10.0) as usize).min(9)] += 1;
        let _fading = levh_core::model::is_fading(&state, &config, now);
        *by_project.entry(project).or_default() += 1;
    }
    (total, sum, histogram)
}

fn note(words: &[String], seed: u64) -> NewMemory {
    NewMemory {
        content: sentence(words, seed),
        project: Some(format!("project-{}", seed % 10)),
        ..NewMemory::default()
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used here.
    let sizes: Vec<u64> = std::env::var("SCALE_SIZES")
        .ok()
        .map(|s| {
            s.split(',')
                .map(|n| n.trim().parse().expect("SCALE_SIZES: numbers"))
                .collect()
        })
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let recall_up_to: u64 = std::env::var("SCALE_RECALL_UP_TO")
        .ok()
        .map_or(u64::MAX, |s| {
            s.trim().parse().expect("SCALE_RECALL_UP_TO: a number")
        });
    // `SCALE_DIR=<dir>` keeps the store (and the graph's snapshot) there afterwards, to
    // profile or inspect it; a later run on the same dir starts from what it holds.
    let temp = tempfile::tempdir().expect("temp dir");
    // `SCALE_INGEST=sequential`: each batch judged and written before the next is
    // judged (`capture_batch` in a loop, as before `capture_batches`), the baseline.
    let sequential_ingest = std::env::var("SCALE_INGEST").is_ok_and(|v| v == "sequential");
    let kept = std::env::var_os("SCALE_DIR").map(std::path::PathBuf::from);
    let dir = kept.clone().unwrap_or_else(|| temp.path().to_owned());
    let store = Arc::new(SqliteStore::open(&dir.join("levh.db")).expect("open store"));
    let db = rusqlite::Connection::open(dir.join("levh.db")).expect("open baseline");
    let now: Timestamp = "2026-06-01T00:00:00Z".parse().expect("time");
    let embedder = HashEmbedder::default();
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder: Arc::new(embedder.clone()),
        clock: Arc::new(FixedClock(now)),
        config: Config::default(),
    });
    // Stores with a clock that moves as during a real import (`SCALE_CLOCK=fixed`: stuck
    // at `now`, as before): a memory's id is a UUIDv7 of its creation time, so with the
    // clock stuck every id falls at a random place of the id index (and of the events'
    // index by memory), which no real import does. Reads keep the fixed clock, so the
    // exact and approximate recalls see one state.
    let importer = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder: Arc::new(embedder.clone()),
        clock: if std::env::var("SCALE_CLOCK").is_ok_and(|v| v == "fixed") {
            Arc::new(FixedClock(now)) as Arc<dyn levh_core::Clock>
        } else {
            Arc::new(StartedClock {
                at: now,
                started: Instant::now(),
            })
        },
        config: Config::default(),
    });
    // The same store behind the approximate index, as `levh serve` builds it.
    let ann = Arc::new(AnnIndex::new(store.clone(), kept, AnnConfig::default()));
    let approximate = Levh::new(Parts {
        store: store.clone(),
        index: ann.clone(),
        embedder: Arc::new(embedder.clone()),
        clock: Arc::new(FixedClock(now)),
        config: Config::default(),
    });
    let scope = Scope::cli(Workspace::default());
    let words = vocabulary();
    let mut stored = db
        .query_row("SELECT count(*) FROM memories", [], |row| {
            row.get::<_, i64>(0)
        })
        .expect("count") as u64;
    let mut seed = stored;
    println!(
        "size | bulk ingest into it (memories/s; admitted/held/rejected) | capture one by one p50 / p99 (per s) | get by id p50 (baseline) | stats p50 (first call; full scan baseline) | fading p50 | peak RSS"
    );
    for size in sizes {
        // Bulk: from the current size up to `size`, in batches of 1,000.
        let (from, start) = (stored, Instant::now());
        let (mut admitted, mut held, mut rejected) = (0u64, 0u64, 0u64);
        let batches = (from..size).step_by(BATCH).map(|at| {
            let take = (size - at).min(BATCH as u64);
            (0..take)
                .map(|_| {
                    seed += 1;
                    note(&words, seed)
                })
                .collect::<Vec<NewMemory>>()
        });
        let mut count = |outcomes: Vec<levh_core::Result<levh_core::CaptureOutcome>>| {
            for outcome in outcomes {
                let outcome = outcome.expect("valid item");
                match (outcome.memory_id, outcome.held_id) {
                    (Some(_), _) => admitted += 1,
                    (None, Some(_)) => held += 1,
                    _ => rejected += 1,
                }
            }
        };
        if sequential_ingest {
            for batch in batches {
                count(importer.capture_batch(&scope, batch).expect("batch"));
            }
        } else {
            importer
                .capture_batches(&scope, batches, |outcomes| {
                    count(outcomes);
                    Ok::<(), levh_core::Error>(())
                })
                .expect("batches");
        }
        stored = size.max(stored);
        let ingest = start.elapsed();
        let rate = (stored - from) as f64 / ingest.as_secs_f64();

        // One by one, at this size.
        let mut captures: Vec<Duration> = (0..200)
            .map(|_| {
                seed += 1;
                let new = note(&words, 10_000_000 + seed);
                let start = Instant::now();
                importer.capture(&scope, new).expect("capture");
                start.elapsed()
            })
            .collect();
        stored += 200;
        let capture_p50 = percentile(&mut captures, 0.5);
        let capture_p99 = percentile(&mut captures, 0.99);
        let some = levh
            .list(
                &scope,
                levh_core::MemoryFilter::workspace(Workspace::default()),
                levh_core::Page {
                    limit: 1,
                    offset: 0,
                },
            )
            .expect("list")
            .remove(0)
            .id;
        let get = median(
            (0..200)
                .map(|_| {
                    let start = Instant::now();
                    levh.get(&scope, some).expect("get");
                    start.elapsed()
                })
                .collect(),
        );
        let first = Instant::now();
        levh.stats(&scope, None).expect("stats");
        let first = first.elapsed();
        let stats = median(
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    levh.stats(&scope, None).expect("stats");
                    start.elapsed()
                })
                .collect(),
        );
        let scan = median(
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(stats_by_full_scan(&db, now));
                    start.elapsed()
                })
                .collect(),
        );
        let fading = median(
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    levh.fading(&scope, None, 20).expect("fading");
                    start.elapsed()
                })
                .collect(),
        );
        if size <= recall_up_to {
            // Recall: 200 four-word queries per path, the same queries on both.
            let queries: Vec<String> = (0..200u64)
                .map(|i| {
                    sentence(&words, 50_000_000 + i)
                        .split(' ')
                        .take(4)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let ask = |query: &str, reinforce: bool| RecallRequest {
                reinforce,
                ..RecallRequest::new(query.to_owned())
            };
            // Scoped to one of the ten projects, as agents call recall: the i-th query
            // asks project i mod 10.
            let ask_scoped = |i: usize, query: &str| RecallRequest {
                project: Some(format!("project-{}", i % 10)),
                reinforce: false,
                ..RecallRequest::new(query.to_owned())
            };
            // `forget`: each query reads the project's seqs from the index, as before they
            // were kept between queries (the same run's baseline for that cache).
            let run_scoped = |engine: &Levh, forget: bool| -> (Vec<Duration>, Vec<Vec<MemoryId>>) {
                queries
                    .iter()
                    .enumerate()
                    .map(|(i, query)| {
                        if forget {
                            store.forget_project_seqs();
                        }
                        let start = Instant::now();
                        let out = engine
                            .recall(&scope, &ask_scoped(i, query))
                            .expect("recall");
                        let took = start.elapsed();
                        (took, out.hits.iter().map(|h| h.memory.id).collect())
                    })
                    .unzip()
            };
            let run = |engine: &Levh, reinforce: bool| -> (Vec<Duration>, Vec<Vec<MemoryId>>) {
                queries
                    .iter()
                    .map(|query| {
                        let start = Instant::now();
                        let out = engine
                            .recall(&scope, &ask(query, reinforce))
                            .expect("recall");
                        let took = start.elapsed();
                        (took, out.hits.iter().map(|h| h.memory.id).collect())
                    })
                    .unzip()
            };
            // Build (or load) the graph before timing: the first query starts the job; the
            // second adds what a loaded snapshot lacks (the captures above, or a kept
            // store's later writes), which queries would otherwise scan exactly meanwhile.
            for _ in 0..2 {
                approximate
                    .recall(&scope, &ask("warm", false))
                    .expect("recall");
                ann.wait_idle(embedder.model_id(), embedder.dimension());
            }
            store.wait_text_ranking();
            let (mut exact_times, exact_hits) = run(&levh, false);
            let (mut ann_times, ann_hits) = run(&approximate, false);
            if let Some(reinforce) = std::env::var_os("SCALE_PROFILE_RECALL") {
                // A profiler's window: approximate recall over and over (`reinforce`:
                // as a user calls it; `scoped`: scoped to one project); attach with `perf record -p <pid>` on this line.
                eprintln!("profiling window opens: pid {}", std::process::id());
                for _ in 0..20 {
                    if reinforce == "scoped" {
                        run_scoped(&approximate, false);
                    } else {
                        run(&approximate, reinforce == "reinforce");
                    }
                }
            }
            let (mut exact_scoped_times, exact_scoped_hits) = run_scoped(&levh, false);
            let (mut read_scoped_times, _) = run_scoped(&approximate, true);
            let (mut ann_scoped_times, ann_scoped_hits) = run_scoped(&approximate, false);
            let (mut user_times, _) = run(&approximate, true);
            let recall_at_10 = |exact_hits: &[Vec<MemoryId>], ann_hits: &[Vec<MemoryId>]| {
                let (found, wanted) = exact_hits.iter().zip(ann_hits).fold(
                    (0usize, 0usize),
                    |(found, wanted), (exact, ann)| {
                        (
                            found + exact.iter().filter(|id| ann.contains(id)).count(),
                            wanted + exact.len(),
                        )
                    },
                );
                found as f64 / wanted.max(1) as f64
            };
            println!(
                "{size} recall k=10 | exact p50 {} p99 {} | approximate p50 {} p99 {} (recall@10 vs exact {:.3}; graph: {:?}) | reinforcing p50 {} p99 {}",
                ms(percentile(&mut exact_times, 0.5)),
                ms(percentile(&mut exact_times, 0.99)),
                ms(percentile(&mut ann_times, 0.5)),
                ms(percentile(&mut ann_times, 0.99)),
                recall_at_10(&exact_hits, &ann_hits),
                ann.stats(),
                ms(percentile(&mut user_times, 0.5)),
                ms(percentile(&mut user_times, 0.99)),
            );
            println!(
                "{size} recall k=10 scoped to one project | exact p50 {} p99 {} | approximate p50 {} p99 {} (recall@10 vs exact {:.3}) | approximate, the project's seqs read per query p50 {} p99 {}",
                ms(percentile(&mut exact_scoped_times, 0.5)),
                ms(percentile(&mut exact_scoped_times, 0.99)),
                ms(percentile(&mut ann_scoped_times, 0.5)),
                ms(percentile(&mut ann_scoped_times, 0.99)),
                recall_at_10(&exact_scoped_hits, &ann_scoped_hits),
                ms(percentile(&mut read_scoped_times, 0.5)),
                ms(percentile(&mut read_scoped_times, 0.99)),
            );
        }
        println!(
            "{size} | {rate:.0} ({from}→{size}: {admitted}/{held}/{rejected}) | {} / {} ({:.0}/s) | {} | {} ({}; {}) | {} | {:.0} MiB",
            ms(capture_p50),
            ms(capture_p99),
            1.0 / capture_p50.as_secs_f64(),
            ms(get),
            ms(stats),
            ms(first),
            ms(scan),
            ms(fading),
            peak_rss_mib()
        );
        println!("{size} resident set {}", rss_parts());
    }
}

/// A wall clock started at `at`.
#[derive(Debug)]
struct StartedClock {
    at: Timestamp,
    started: Instant,
}

impl levh_core::Clock for StartedClock {
    fn now(&self) -> Timestamp {
        self.at
            .checked_add(self.started.elapsed())
            .expect("in range")
    }
}
