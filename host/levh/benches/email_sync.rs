//! Email sync throughput on a generated 10,000-message mbox (~15 MB: plain, quoted-
//! printable, base64, multipart/alternative and HTML-only messages, all distinct):
//!
//! - `native_parse`: the email connector's plain-Rust page reader, natively, page by page
//!   over the whole mailbox (no host, no store);
//! - `component_parse`: the built-in email component in the plugin sandbox, paged through
//!   the same mailbox with `PluginHost::sync` (no store): the native figure plus wasm,
//!   one fresh instance per page and copying pages out through the component model;
//! - `end_to_end`: what `levh sync email` does: the component through `ConnectorSource`
//!   into a real `Levh` engine (gate, hash embedder, a fresh SQLite WAL file per run).
//!
//! Throughput is reported in messages (elements) per second; the end-to-end run takes
//! minutes, so it is timed by hand (two runs) after criterion's groups.
//!
//! `cargo bench -p levh --bench email_sync`

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use levh_connector_email::sync::{Settings, fetch};
use levh_core::sync::SyncOptions;
use levh_core::{Config, FixedClock, Levh, Parts, Scope, Timestamp, Workspace};
use levh_embed::HashEmbedder;
use levh_plugins::{Connector, ConnectorSource, Grants, PluginHost};
use levh_store::SqliteStore;

const MESSAGES: u64 = 10_000;
/// 2026-03-20T12:00:00Z: the clock of the run (no message is older than `past_days`).
const NOW: &str = "2026-03-20T12:00:00Z";

const PEOPLE: &[(&str, &str)] = &[
    ("Ada Lovelace", "ada@example.com"),
    ("Grace Hopper", "grace@example.com"),
    ("Linus Pauling", "linus@example.org"),
    ("Renée Dupré", "renee@example.fr"),
    ("Zoë Ångström", "zoe@example.se"),
    ("Alan Turing", "alan@example.co.uk"),
    ("Katherine Johnson", "katherine@example.com"),
    ("Edsger Dijkstra", "edsger@example.nl"),
];

/// A vocabulary of 2,400 words, so no two generated messages look alike to the gate.
fn vocabulary() -> Vec<String> {
    let stems = [
        "deploy", "database", "service", "cluster", "invoice", "meeting", "review", "release",
        "budget", "customer", "schema", "latency", "queue", "token", "backup", "incident",
        "roadmap", "design", "contract", "vendor", "metric", "alert", "sprint", "ticket",
    ];
    (0..2400)
        .map(|i| format!("{}{}", stems[i % stems.len()], i / stems.len()))
        .collect()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn sentence(words: &[String], rng: &mut Rng) -> String {
    let length = 10 + (rng.next() % 12) as usize;
    let mut text = (0..length)
        .map(|_| words[(rng.next() % words.len() as u64) as usize].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    text.push('.');
    text
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push('\n');
        }
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Writes the mailbox: 10,000 distinct messages of 1–2 KB, a fifth of each kind.
fn write_mailbox(path: &Path) -> u64 {
    let words = vocabulary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("mbox file"));
    for n in 0..MESSAGES {
        let (from_name, from) = PEOPLE[(n % PEOPLE.len() as u64) as usize];
        let (to_name, to) = PEOPLE[((n / 3 + 1) % PEOPLE.len() as u64) as usize];
        let (cc_name, cc) = PEOPLE[((n / 7 + 2) % PEOPLE.len() as u64) as usize];
        let day = 1 + n % 28;
        let month = ["Jan", "Feb", "Mar"][(n % 3) as usize];
        let (hour, minute) = (n % 24, n % 60);
        let paragraphs: Vec<String> = (0..2 + rng.next() % 3)
            .map(|_| {
                (0..2)
                    .map(|_| sentence(&words, &mut rng))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let text = format!(
            "Hi {to_name},\n\n{}\n\n{from_name}\n",
            paragraphs.join("\n\n")
        );
        let subject = format!(
            "{} {n}: {}",
            words[(n % 2400) as usize],
            words[(rng.next() % 2400) as usize]
        );
        write!(
            out,
            "From {from} Mon {month} {day:2} {hour:02}:{minute:02}:00 2026\n\
             Message-ID: <bench-{n}@example.com>\n\
             Date: {day:02} {month} 2026 {hour:02}:{minute:02}:00 +0100\n\
             From: {from_name} <{from}>\n\
             To: {to_name} <{to}>\n\
             Cc: {cc_name} <{cc}>\n\
             Subject: {subject}\n\
             MIME-Version: 1.0\n"
        )
        .expect("write");
        if n > 0 && n % 11 == 0 {
            write!(
                out,
                "In-Reply-To: <bench-{}@example.com>\nReferences: <bench-{}@example.com>\n",
                n - 1,
                n - 1
            )
            .expect("write");
        }
        match n % 5 {
            0 => {
                let html: String = paragraphs
                    .iter()
                    .map(|p| format!("<p>{}</p>\n", p.replace('.', ".&nbsp;")))
                    .collect();
                write!(
                    out,
                    "Content-Type: multipart/alternative; boundary=\"b{n}\"\n\n\
                     --b{n}\nContent-Type: text/plain; charset=UTF-8\n\n{text}\n\
                     --b{n}\nContent-Type: text/html; charset=UTF-8\n\n\
                     <html><body>{html}</body></html>\n--b{n}--\n"
                )
                .expect("write");
            }
            1 => {
                let html: String = paragraphs
                    .iter()
                    .map(|p| format!("<div>{p}</div>"))
                    .collect();
                write!(
                    out,
                    "Content-Type: text/html; charset=UTF-8\n\n\
                     <html><head><style>p {{ margin: 0 }}</style></head><body>{html}</body></html>\n"
                )
                .expect("write");
            }
            2 => {
                write!(
                    out,
                    "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64\n\n{}\n",
                    base64(text.as_bytes())
                )
                .expect("write");
            }
            3 => {
                // quoted-printable with soft line breaks every 70 characters
                let mut qp = String::new();
                for line in text.lines() {
                    let mut width = 0;
                    for c in line.chars() {
                        if width >= 70 {
                            qp.push_str("=\n");
                            width = 0;
                        }
                        qp.push(c);
                        width += 1;
                    }
                    qp.push('\n');
                }
                write!(
                    out,
                    "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n\n{qp}"
                )
                .expect("write");
            }
            _ => {
                write!(out, "Content-Type: text/plain; charset=UTF-8\n\n{text}").expect("write");
            }
        }
        out.write_all(b"\n").expect("write");
    }
    out.flush().expect("flush");
    std::fs::metadata(path).expect("mbox metadata").len()
}

struct Fixture {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    mbox: PathBuf,
    host: PluginHost,
    connector: Connector,
    config: Vec<(String, String)>,
    grants: Grants,
    now: Timestamp,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().canonicalize().expect("tempdir path");
    let mbox = path.join("bench.mbox");
    let bytes = write_mailbox(&mbox);
    eprintln!(
        "email_sync: {MESSAGES} messages, {:.1} MB, {:.2} KB a message",
        bytes as f64 / 1e6,
        bytes as f64 / MESSAGES as f64 / 1e3
    );
    let now: Timestamp = NOW.parse().expect("NOW");
    let host = PluginHost::new(None)
        .expect("plugin host")
        .with_fixed_clock(std::time::SystemTime::from(now));
    let connector = host
        .load_connector(
            "email",
            levh_builtins::connector("email").expect("the built-in email connector"),
        )
        .expect("loading the email component");
    let config = vec![
        ("mbox_path".to_owned(), mbox.display().to_string()),
        // the whole mailbox in one run
        ("max_messages".to_owned(), "0".to_owned()),
    ];
    let grants = Grants {
        read_paths: vec![path.clone()],
        ..Grants::default()
    };
    Fixture {
        _dir: dir,
        dir: path,
        mbox,
        host,
        connector,
        config,
        grants,
        now,
    }
}

/// The whole mailbox natively; returns the items read.
fn native(settings: &Settings) -> u64 {
    let mut cursor: Option<String> = None;
    let mut items = 0;
    loop {
        let page = fetch(settings, cursor.as_deref()).expect("native page");
        items += page.items.len() as u64;
        if page.done || page.next_cursor.is_none() {
            return items;
        }
        cursor = page.next_cursor;
    }
}

/// The whole mailbox through the component; returns the items read.
fn component(f: &Fixture) -> u64 {
    let mut cursor: Option<String> = None;
    let mut items = 0;
    loop {
        let page = f
            .host
            .sync(&f.connector, &f.config, cursor, &f.grants)
            .expect("component page");
        items += page.items.len() as u64;
        if page.done || page.next_cursor.is_none() {
            return items;
        }
        cursor = page.next_cursor;
    }
}

/// One `levh sync email` into a fresh store; returns (time, messages admitted).
fn end_to_end(f: &Fixture) -> (Duration, u64) {
    run_sync(f, false)
}

/// `levh sync email --dry-run` into a fresh store: every message judged, nothing stored;
/// returns (time, messages that would be admitted).
fn dry_run(f: &Fixture) -> (Duration, u64) {
    run_sync(f, true)
}

fn run_sync(f: &Fixture, dry_run: bool) -> (Duration, u64) {
    let dir = tempfile::tempdir_in(&f.dir).expect("store dir");
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("store"));
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store,
        embedder: Arc::new(HashEmbedder::default()),
        clock: Arc::new(FixedClock(f.now)),
        config: Config::default(),
    });
    let scope = Scope::cli(Workspace::default());
    let mut source =
        ConnectorSource::new(&f.host, &f.connector, f.config.clone(), f.grants.clone());
    let start = Instant::now();
    let report = levh
        .sync(
            &scope,
            &mut source,
            SyncOptions { dry_run },
            None,
            &mut |_| {},
        )
        .expect("sync");
    let elapsed = start.elapsed();
    let expected = if dry_run {
        levh_core::sync::SyncStatus::DryRun
    } else {
        levh_core::sync::SyncStatus::Ok
    };
    assert_eq!(report.status, expected, "{report:?}");
    assert_eq!(report.fetched, MESSAGES, "{report:?}");
    (elapsed, report.admitted)
}

fn bench(c: &mut Criterion) {
    let f = fixture();
    let settings = Settings::from_config(&f.config, f.now.as_second()).expect("settings");
    assert_eq!(
        settings.mailbox,
        levh_connector_email::sync::Mailbox::Mbox(f.mbox.clone())
    );
    assert_eq!(
        native(&settings),
        MESSAGES,
        "every generated message parses"
    );
    assert_eq!(component(&f), MESSAGES, "the same inside the component");

    let mut group = c.benchmark_group("email_sync_10k");
    group.throughput(Throughput::Elements(MESSAGES));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("native_parse", |b| b.iter(|| native(&settings)));
    group.bench_function("component_parse", |b| b.iter(|| component(&f)));
    group.finish();

    // One end-to-end run takes minutes (every message goes through the gate, the embedder
    // and the store), too long for criterion's ten samples: timed by hand.
    const RUNS: u32 = 2;
    let mut total = Duration::ZERO;
    for run in 1..=RUNS {
        let (elapsed, admitted) = end_to_end(&f);
        println!(
            "email_sync_10k/end_to_end run {run}: {:.1} s, {:.0} messages/s ({admitted} of {MESSAGES} admitted)",
            elapsed.as_secs_f64(),
            MESSAGES as f64 / elapsed.as_secs_f64()
        );
        total += elapsed;
    }
    let mean = total.as_secs_f64() / f64::from(RUNS);
    // The dry run judges every message as the real sync does (against the store and the
    // run's earlier items) and stores nothing: it must cost no more than the sync.
    let (dry, would) = dry_run(&f);
    println!(
        "email_sync_10k/dry_run: {:.1} s, {:.0} messages/s ({would} of {MESSAGES} would be admitted); the real sync {mean:.1} s",
        dry.as_secs_f64(),
        MESSAGES as f64 / dry.as_secs_f64()
    );
    // The component's parse, timed the same way in the same run: the part of a sync no
    // engine work can remove.
    let mut parses: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            component(&f);
            start.elapsed().as_secs_f64()
        })
        .collect();
    parses.sort_by(f64::total_cmp);
    let parse = parses[1];
    println!(
        "email_sync_10k/end_to_end mean of {RUNS}: {mean:.1} s, {:.0} messages/s; component parse alone {parse:.2} s: the sync takes {:.1}x the parse",
        MESSAGES as f64 / mean,
        mean / parse
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
