//! levh at scale, through the engine with the gate on (hash embedder, a real WAL file),
//! at 1k, 10k and 100k memories (`SCALE_SIZES=1000,10000,100000,1000000` adds 1M):
//!
//! - bulk ingest: memories/s while filling the store with `capture_batch` (1,000 per
//!   transaction), per range of store sizes;
//! - capture one by one at each size (p50 per capture), beside the same store's get by
//!   id as the baseline of the same run;
//! - `stats` and `fading` at each size (median of 5);
//! - the process's peak RSS after each size.
//!
//! `cargo bench -p levh-store --bench scale`

#[path = "common/text.rs"]
mod text_gen;

use std::sync::Arc;
use std::time::{Duration, Instant};

use levh_core::{Config, FixedClock, Levh, NewMemory, Parts, Scope, Timestamp, Workspace};
use levh_embed::HashEmbedder;
use levh_store::SqliteStore;
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
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open store"));
    let now: Timestamp = "2026-06-01T00:00:00Z".parse().expect("time");
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder: Arc::new(HashEmbedder::default()),
        clock: Arc::new(FixedClock(now)),
        config: Config::default(),
    });
    let scope = Scope::cli(Workspace::default());
    let words = vocabulary();
    let mut seed = 0u64;
    let mut stored = 0u64;
    println!(
        "size | bulk ingest into it (memories/s; admitted/held/rejected) | capture one by one p50 / p99 (per s) | get by id p50 (baseline) | stats p50 | fading p50 | peak RSS"
    );
    for size in sizes {
        // Bulk: from the current size up to `size`, a batch per transaction.
        let (from, start) = (stored, Instant::now());
        let (mut admitted, mut held, mut rejected) = (0u64, 0u64, 0u64);
        while stored < size {
            let take = (size - stored).min(BATCH as u64);
            let batch: Vec<NewMemory> = (0..take)
                .map(|_| {
                    seed += 1;
                    note(&words, seed)
                })
                .collect();
            for outcome in levh.capture_batch(&scope, batch).expect("batch") {
                let outcome = outcome.expect("valid item");
                match (outcome.memory_id, outcome.held_id) {
                    (Some(_), _) => admitted += 1,
                    (None, Some(_)) => held += 1,
                    _ => rejected += 1,
                }
            }
            stored += take;
        }
        let ingest = start.elapsed();
        let rate = (stored - from) as f64 / ingest.as_secs_f64();

        // One by one, at this size.
        let mut captures: Vec<Duration> = (0..200)
            .map(|_| {
                seed += 1;
                let new = note(&words, 10_000_000 + seed);
                let start = Instant::now();
                levh.capture(&scope, new).expect("capture");
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
        let stats = median(
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    levh.stats(&scope, None).expect("stats");
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
        println!(
            "{size} | {rate:.0} ({from}→{size}: {admitted}/{held}/{rejected}) | {} / {} ({:.0}/s) | {} | {} | {} | {:.0} MiB",
            ms(capture_p50),
            ms(capture_p99),
            1.0 / capture_p50.as_secs_f64(),
            ms(get),
            ms(stats),
            ms(fading),
            peak_rss_mib()
        );
    }
}
