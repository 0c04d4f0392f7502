//! How fast an MCP client gets going: spawn `levh mcp stdio`, send `initialize`, read the
//! answer; then `tools/list`. Clients spawn one process per session, so this is paid at
//! the start of every agent session.
//!
//! Baseline in the same run: spawning `levh --version` (process start and exit, no
//! store). Figures are reported as ratios to it; the machines are shared and noisy.
//!
//! `cargo bench -p levh --bench mcp_startup`

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

const LEVH: &str = env!("CARGO_BIN_EXE_levh");

fn spawn(home: &std::path::Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(LEVH)
        .args(["mcp", "stdio"])
        .env("LEVH_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawning levh mcp stdio");
    let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    (child, stdout)
}

fn send(child: &mut Child, message: &str) {
    let stdin = child.stdin.as_mut().expect("piped stdin");
    writeln!(stdin, "{message}").expect("writing to levh");
    stdin.flush().expect("flushing");
}

/// Reads lines until the response with this id.
fn answer(stdout: &mut BufReader<ChildStdout>, id: u32) -> String {
    let needle = format!("\"id\":{id}");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("reading levh") > 0,
            "levh closed stdout"
        );
        if line.contains(&needle) {
            return line.clone();
        }
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;

/// Spawn → initialize answered, and spawn → first tools/list answered.
fn session(home: &std::path::Path) -> (Duration, Duration) {
    let start = Instant::now();
    let (mut child, mut stdout) = spawn(home);
    send(&mut child, INITIALIZE);
    let init = answer(&mut stdout, 1);
    assert!(init.contains("serverInfo"), "{init}");
    let initialized = start.elapsed();
    send(&mut child, INITIALIZED);
    send(&mut child, TOOLS_LIST);
    let tools = answer(&mut stdout, 2);
    assert!(tools.contains("recall_memory"), "{tools}");
    let listed = start.elapsed();
    drop(child.stdin.take());
    let _ = child.wait();
    (initialized, listed)
}

fn startup(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary home");
    // A store that exists and holds memories, as on a user's machine.
    for i in 0..50 {
        let status = Command::new(LEVH)
            .args([
                "capture",
                &format!("bench memory number {i} about topic {}", i * 7919 % 97),
            ])
            .env("LEVH_HOME", home.path())
            .stdout(Stdio::null())
            .status()
            .expect("levh capture");
        assert!(status.success());
    }
    let mut group = c.benchmark_group("mcp_startup");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("baseline: levh --version", |b| {
        b.iter(|| {
            let status = Command::new(LEVH)
                .arg("--version")
                .stdout(Stdio::null())
                .status()
                .expect("levh --version");
            assert!(status.success());
        })
    });
    group.bench_function("spawn to initialize", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| session(home.path()).0).sum())
    });
    group.bench_function("spawn to first tools/list", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| session(home.path()).1).sum())
    });
    group.finish();
}

criterion_group!(benches, startup);
criterion_main!(benches);
