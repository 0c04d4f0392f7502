//! REST recall latency and throughput under concurrent clients on loopback.
//!
//! `cargo bench -p levh-http --bench rest_load`
//! (`REST_MEMORIES=100000 REST_PROJECTS=10` for the scale agents call it at: searches
//! scoped to one project of ten, right after the bulk ingest — the graph still building —
//! and once it is built)
//!
//! A real `levh_http::serve` on 127.0.0.1:0 over a WAL store of 10,000 memories (hash
//! embedder; the approximate vector index `levh serve` uses). Clients are keep-alive HTTP/1.1 connections, each sending one request at a
//! time for a fixed period. The baseline, measured in the same run with the same clients,
//! is `GET /api/health` (auth, routing, one store read): the recall figures are read as
//! ratios against it, since this machine is shared and noisy.

use std::sync::Arc;
use std::time::{Duration, Instant};

use levh_core::{
    Actor, AdmissionRecord, Embedder, Embedding, FixedClock, Kind, Levh, Memory, MemoryId,
    MemoryState, NewMemoryRecord, Parts, Store, Timestamp, Workspace, text,
};
use levh_embed::HashEmbedder;
use levh_http::{AppState, AuthConfig};
use levh_store::SqliteStore;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Memories in the store (`REST_MEMORIES`, default 10,000).
fn memories() -> u64 {
    std::env::var("REST_MEMORIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

/// Projects the memories are spread over (`REST_PROJECTS`, default none); with some,
/// the scoped rows ask one project each.
fn projects() -> u64 {
    std::env::var("REST_PROJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
const PERIOD: Duration = Duration::from_secs(4);
const WORDS: [&str; 24] = [
    "deploy", "database", "service", "cluster", "invoice", "meeting", "review", "release",
    "budget", "customer", "schema", "latency", "queue", "token", "backup", "incident", "roadmap",
    "design", "contract", "vendor", "metric", "alert", "sprint", "ticket",
];

/// A deterministic sentence of 12–24 words over a 2,400-word vocabulary.
fn sentence(seed: u64) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let length = 12 + (next() % 13) as usize;
    (0..length)
        .map(|_| {
            let n = next() % 2400;
            format!("{}{}", WORDS[(n % 24) as usize], n / 24)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fill(store: &SqliteStore, embedder: &HashEmbedder) {
    let actor = Actor::cli();
    let projects = projects();
    let mut batch = Vec::new();
    for n in 0..memories() {
        let at = Timestamp::from_second(1_700_000_000 + n as i64).expect("time");
        let content = sentence(n);
        let vector = embedder.embed(&[&content]).expect("embed").remove(0);
        let record = NewMemoryRecord {
            memory: Memory {
                id: MemoryId::new_at(at),
                workspace: Workspace::default(),
                project: (projects > 0).then(|| format!("project-{}", n % projects)),
                content_hash: text::content_hash(&content),
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
                    verdict: levh_core::AdmissionVerdict::Admit,
                    reasons: vec![],
                    decided_by: "bench".into(),
                },
                metadata: serde_json::json!({}),
                session_id: None,
                embedding_model: Some(embedder.model_id().to_owned()),
                embedding_dimension: Some(embedder.dimension() as u32),
                content: content.clone(),
            },
            embedding: Some(Embedding {
                model: embedder.model_id().to_owned(),
                vector,
            }),
            near_duplicate_keys: text::near_duplicate_keys(&content),
            working: false,
            forgotten_at: None,
        };
        batch.push(levh_core::BatchWrite::Memory {
            record,
            neighbours: Vec::new(),
            identical_seen: Vec::new(),
        });
        if batch.len() == 1_000 {
            store
                .write_batch(&batch, None, &|_| None, &actor)
                .expect("write");
            batch.clear();
        }
    }
    store
        .write_batch(&batch, None, &|_| None, &actor)
        .expect("write");
}

/// One keep-alive connection: sends a request, reads the whole response.
struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    async fn connect(address: std::net::SocketAddr) -> Self {
        let stream = TcpStream::connect(address).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            reader: BufReader::new(stream),
        }
    }

    async fn send(&mut self, method: &str, path: &str, body: &str) -> u16 {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .expect("write");
        let mut line = String::new();
        self.reader.read_line(&mut line).await.expect("status line");
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status");
        let mut length = 0usize;
        loop {
            line.clear();
            self.reader.read_line(&mut line).await.expect("header");
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("length");
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).await.expect("body");
        status
    }
}

#[derive(Clone, Copy)]
struct Figures {
    requests: usize,
    p50: Duration,
    p99: Duration,
    per_second: f64,
}

/// `clients` keep-alive clients on `path` for [`PERIOD`]; with `scoped` projects, each
/// search asks one of them (the n-th request `project-{n % scoped}`).
async fn load(
    address: std::net::SocketAddr,
    clients: usize,
    method: &'static str,
    path: &'static str,
    scoped: Option<u64>,
) -> Figures {
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            tokio::spawn(async move {
                let mut client = Client::connect(address).await;
                let mut latencies = Vec::new();
                let mut n = c as u64 * 1_000_000;
                while started.elapsed() < PERIOD {
                    n += 1;
                    let body = if method == "POST" {
                        let query: Vec<String> = sentence(5_000_000 + n)
                            .split(' ')
                            .take(3)
                            .map(str::to_owned)
                            .collect();
                        let mut body = serde_json::json!({ "query": query.join(" "), "limit": 10 });
                        if let Some(projects) = scoped {
                            body["project"] = format!("project-{}", n % projects).into();
                        }
                        body.to_string()
                    } else {
                        String::new()
                    };
                    let sent = Instant::now();
                    let status = client.send(method, path, &body).await;
                    latencies.push(sent.elapsed());
                    assert_eq!(status, 200, "{method} {path}");
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("client"));
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Figures {
        requests: latencies.len(),
        p50: at(0.50),
        p99: at(0.99),
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
    }
}

fn main() {
    // `cargo test --benches` runs this with --bench absent: keep that instant.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open"));
    let embedder = HashEmbedder::default();
    let (model, dimension) = (embedder.model_id().to_owned(), embedder.dimension());
    let (size, projects) = (memories(), projects());
    eprintln!("filling {size} memories in {projects} projects…");
    fill(&store, &embedder);
    // As `levh serve` has it: exact scans while few, an HNSW graph once many.
    let index = Arc::new(levh_store::AnnIndex::new(
        store.clone(),
        None,
        levh_store::AnnConfig::default(),
    ));
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: index.clone(),
        embedder: Arc::new(embedder),
        clock: Arc::new(FixedClock("2026-06-01T00:00:00Z".parse().expect("time"))),
        config: Default::default(),
    });
    // The server first: the store was just filled, and an agent's scoped searches right
    // after an import (the graph not built yet; the first query starts its build) are
    // one of the rows.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let address = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let state = AppState::new(levh.clone(), store.clone(), AuthConfig::default());
        tokio::spawn(levh_http::serve(listener, state, std::future::pending()));
        address
    });
    // As `levh serve` does from start-up: the indexes kept up to date every 2 s.
    {
        let (store, index, model) = (store.clone(), index.clone(), model.clone());
        std::thread::spawn(move || {
            loop {
                store.keep_text_ranking_up().expect("text ranking");
                index.keep_up(&model, dimension).expect("vector index");
                std::thread::sleep(Duration::from_secs(2));
            }
        });
    }
    let scoped = (projects > 0).then_some(projects);
    if scoped.is_some() {
        for (label, scope) in [("scoped to one project", scoped), ("unscoped", None)] {
            let f = runtime.block_on(load(address, 1, "POST", "/api/search", scope));
            println!(
                "REST search {label} right after the ingest, 1 client: {:.0}/s, p50 {:.2} ms, p99 {:.2} ms ({} requests; graph {:?})",
                f.per_second,
                f.p50.as_secs_f64() * 1e3,
                f.p99.as_secs_f64() * 1e3,
                f.requests,
                index.stats(),
            );
        }
    }
    // Then at steady state: the graph built.
    levh.recall(
        &levh_core::Scope::cli(Workspace::default()),
        &levh_core::RecallRequest::new("warm"),
    )
    .expect("warm");
    index.wait_idle(&model, dimension);
    store.wait_text_ranking();
    // Second baseline: the same searches called on the engine in-process, one caller,
    // so the REST rows also read as "HTTP, auth and JSON on top of the engine". Beside
    // it, each search followed by the `recall` event every surface appends to the log
    // (the recall report's source), and the whole of levh-api's search (the view too).
    let scope = levh_core::Scope::cli(Workspace::default());
    let query = |n: u64| -> String {
        sentence(5_000_000 + n)
            .split(' ')
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let in_process = |label: &str, search: &dyn Fn(String)| -> Duration {
        let started = Instant::now();
        let mut times = Vec::new();
        let mut n = 0u64;
        while started.elapsed() < PERIOD {
            n += 1;
            let query = query(n);
            let sent = Instant::now();
            search(query);
            times.push(sent.elapsed());
        }
        times.sort_unstable();
        let p50 = times[times.len() / 2];
        println!(
            "{label}, 1 caller: {:.0}/s, p50 {:.3} ms, p99 {:.3} ms ({} calls)",
            times.len() as f64 / started.elapsed().as_secs_f64(),
            p50.as_secs_f64() * 1e3,
            times[(times.len() * 99 / 100).min(times.len() - 1)].as_secs_f64() * 1e3,
            times.len()
        );
        p50
    };
    let engine_p50 = in_process("engine search in-process", &|query| {
        let request = levh_core::RecallRequest {
            reinforce: false,
            ..levh_core::RecallRequest::new(query)
        };
        levh.recall(&scope, &request).expect("search");
    });
    let logged_p50 = in_process("the same + its recall event", &|query| {
        let request = levh_core::RecallRequest {
            reinforce: false,
            ..levh_core::RecallRequest::new(query)
        };
        let output = levh.recall(&scope, &request).expect("search");
        levh.log_recall(&scope, "search", &request.query, None, &output);
    });
    in_process("levh-api search in-process (view and event)", &|query| {
        let args = serde_json::from_value(serde_json::json!({ "query": query })).expect("args");
        levh_api::recall::recall(&levh, &scope, args, false).expect("search");
    });
    println!(
        "the recall event adds {:.3} ms to a search's p50 ({:.1}%)",
        (logged_p50.as_secs_f64() - engine_p50.as_secs_f64()) * 1e3,
        (logged_p50.as_secs_f64() / engine_p50.as_secs_f64() - 1.0) * 100.0
    );
    runtime.block_on(async {
        println!(
            "REST on loopback, {size} memories in {projects} projects, {} s per row",
            PERIOD.as_secs()
        );
        println!(
            "{:<34} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10}",
            "route", "clients", "req/s", "p50 ms", "p99 ms", "vs health", "vs engine"
        );
        let rows: Vec<(&str, &'static str, &'static str, Option<u64>)> = [
            ("GET /api/health", "GET", "/api/health", None),
            ("POST /api/search", "POST", "/api/search", None),
            (
                "POST /api/search, one project",
                "POST",
                "/api/search",
                scoped,
            ),
            ("POST /api/recall", "POST", "/api/recall", None),
        ]
        .into_iter()
        .filter(|row| !row.0.ends_with("one project") || scoped.is_some())
        .collect();
        for clients in [1, 4, 16] {
            let base = load(address, clients, "GET", "/api/health", None).await;
            for &(label, method, path, scope) in &rows {
                let f = if path == "/api/health" {
                    base
                } else {
                    load(address, clients, method, path, scope).await
                };
                println!(
                    "{:<34} {:>7} {:>9.0} {:>9.2} {:>9.2} {:>8.1}× {:>9.2}×   ({} requests)",
                    label,
                    clients,
                    f.per_second,
                    f.p50.as_secs_f64() * 1e3,
                    f.p99.as_secs_f64() * 1e3,
                    f.p50.as_secs_f64() / base.p50.as_secs_f64(),
                    f.p50.as_secs_f64() / engine_p50.as_secs_f64(),
                    f.requests,
                );
            }
        }
    });
}
