//! Requests whose cost would otherwise grow without bound, tried against the real
//! `levh serve` as an attacker would: clients that never finish their headers, more MCP
//! sessions than the cap, a query far longer than any memory.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{levh, levh_binary, spawn_server};

/// `levh serve` under a 1,024-descriptor limit (a common default), with the given flags;
/// the child and its address.
fn serve_limited(home: &std::path::Path, flags: &[&str]) -> (std::process::Child, String) {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 1024 && exec \"$0\" \"$@\"")
        .arg(levh_binary())
        .args(["serve", "--port", "0"])
        .args(flags)
        .env("LEVH_HOME", home)
        .env("LEVH_EMBEDDER", "hash")
        .stderr(Stdio::null());
    for (key, _) in std::env::vars() {
        if key.starts_with("LEVH_") && key != "LEVH_HOME" && key != "LEVH_EMBEDDER" {
            command.env_remove(key);
        }
    }
    spawn_server(&mut command)
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// 1,100 clients that send part of their headers and then nothing: under a 1,024
/// descriptor limit they once locked every other client out, for good. Now they are
/// dropped once the header timeout passes, and a client behind them is answered.
#[test]
fn clients_that_never_finish_their_headers_are_dropped_and_others_are_answered() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve_limited(home.path(), &[]);
    let mut slow = Vec::new();
    for _ in 0..1_100 {
        let mut stream = TcpStream::connect(&address).unwrap();
        stream
            .write_all(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .unwrap();
        slow.push(stream);
    }
    // Answered (within a minute: it may wait for the slow ones to be dropped first).
    let mut response = agent(Duration::from_secs(60))
        .get(format!("http://{address}/api/health"))
        .call()
        .expect("a client behind 1,100 slow ones is answered");
    assert_eq!(response.status(), 200);
    let health: Value = response.body_mut().read_json().unwrap();
    assert_eq!(health["status"], "ok", "{health}");
    // The first slow client was closed by the server (end of stream or a reset), not
    // left waiting forever.
    slow[0]
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut buffer = [0u8; 512];
    match slow[0].read(&mut buffer) {
        Ok(n) => assert!(
            n == 0 || String::from_utf8_lossy(&buffer[..n]).starts_with("HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&buffer[..n])
        ),
        Err(e) => assert!(
            matches!(e.kind(), std::io::ErrorKind::ConnectionReset),
            "{e}"
        ),
    }
    drop(slow);
    server.kill().unwrap();
    server.wait().unwrap();
}

fn initialize(address: &str) -> (u16, Option<String>, String) {
    let mut response = agent(Duration::from_secs(30))
        .post(format!("http://{address}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .send_json(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "limits-test", "version": "1" }
            }
        }))
        .unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let status = response.status().as_u16();
    // An SSE answer stays open for further events: read just its first event.
    let mut body = String::new();
    let mut reader = response.body_mut().as_reader();
    let mut buffer = [0u8; 4096];
    while !body.contains("\n\n") && !body.ends_with('}') {
        let n = reader.read(&mut buffer).unwrap_or(0);
        if n == 0 {
            break;
        }
        body.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    (status, session, body)
}

/// MCP sessions over HTTP are capped and end when idle: past the cap, `initialize` gets a
/// 503 whose JSON-RPC error says why; once the idle ones have ended, a new client gets in.
#[test]
fn mcp_sessions_over_http_are_capped_with_a_clear_refusal_and_end_when_idle() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve_limited(
        home.path(),
        &["--mcp-max-sessions", "3", "--mcp-session-idle-seconds", "2"],
    );
    // A body that is not JSON gets JSON-RPC's parse error, not a plain-text 415.
    let mut malformed = agent(Duration::from_secs(30))
        .post(format!("http://{address}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",")
        .unwrap();
    assert_eq!(malformed.status(), 400);
    let parse_error: Value = malformed.body_mut().read_json().unwrap();
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    for n in 0..3 {
        let (status, session, body) = initialize(&address);
        assert_eq!(status, 200, "session {n}: {body}");
        assert!(session.is_some(), "session {n}");
        assert!(body.contains("serverInfo"), "{body}");
    }
    let (status, session, body) = initialize(&address);
    assert_eq!(status, 503, "{body}");
    assert!(session.is_none());
    let refusal: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(refusal["jsonrpc"], "2.0");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many MCP sessions: this server keeps at most 3 at once"),
        "{refusal}"
    );
    // Idle sessions end; then a new client is let in.
    let mut admitted = false;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(250));
        let (status, _, _) = initialize(&address);
        if status == 200 {
            admitted = true;
            break;
        }
    }
    assert!(admitted, "no session ended while idle");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// A query longer than any memory is refused at once on every surface, naming the
/// limit; one at the limit is answered.
#[test]
fn a_query_longer_than_the_limit_is_refused_on_rest_and_the_cli() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve_limited(home.path(), &[]);
    let too_long = "word ".repeat(7_000); // 35,000 characters
    let mut response = agent(Duration::from_secs(30))
        .post(format!("http://{address}/api/search"))
        .send_json(json!({ "query": too_long }))
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.body_mut().read_json().unwrap();
    assert!(
        body.to_string().contains("longer than 32000 characters"),
        "{body}"
    );
    let at_limit = "word ".repeat(6_400); // 32,000 characters, trimmed to 31,999
    let response = agent(Duration::from_secs(60))
        .post(format!("http://{address}/api/search"))
        .send_json(json!({ "query": at_limit }))
        .unwrap();
    assert_eq!(response.status(), 200);
    server.kill().unwrap();
    server.wait().unwrap();

    let output = levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["recall", &too_long])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("longer than 32000 characters"), "{stderr}");
}

/// Runs `command` to its end; its exit status and its own peak resident memory in KiB
/// (from `wait4`, which reports on this child alone; std has no safe way to it).
#[allow(unsafe_code)]
#[allow(clippy::zombie_processes)] // reaped by wait4, which std's wait cannot replace
fn run_measured(command: &mut Command) -> (i32, String, i64) {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut stdout = String::new();
    child.stdout.unwrap().read_to_string(&mut stdout).unwrap();
    let mut status = 0;
    // SAFETY: `rusage` is a plain C struct that wait4 fills; the pid is our own child,
    // reaped here (std's handle is not waited on after this).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &raw mut status, 0, &raw mut usage) };
    assert_eq!(reaped, pid);
    (libc::WEXITSTATUS(status), stdout, usage.ru_maxrss)
}

/// An import reads its file as it streams: a 256 MiB line between two memories costs
/// no more memory than a small file (it once took ten times the line), the line is
/// refused by its size and the memories around it are stored; an export cut short stores
/// what came before the cut and says where it broke.
#[test]
fn an_import_holds_one_memory_at_a_time_whatever_the_file() {
    let home = tempfile::tempdir().unwrap();
    let small = home.path().join("small.jsonl");
    std::fs::write(&small, "{\"content\": \"the deploy runs at noon\"}\n").unwrap();
    let (code, _, baseline) =
        run_measured(levh(home.path()).args(["import", small.to_str().unwrap(), "--json"]));
    assert_eq!(code, 0);

    let huge = home.path().join("huge.jsonl");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&huge).unwrap());
        file.write_all(b"{\"content\": \"the backups go to the north bucket\"}\n{\"content\": \"")
            .unwrap();
        let block = vec![b'a'; 1 << 20];
        for _ in 0..256 {
            file.write_all(&block).unwrap();
        }
        file.write_all(b"\"}\n{\"content\": \"the staging database is rebuilt on fridays\"}\n")
            .unwrap();
    }
    let (code, stdout, peak) =
        run_measured(levh(home.path()).args(["import", huge.to_str().unwrap(), "--json"]));
    assert_eq!(code, 0, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["read"], 3, "{report}");
    assert_eq!(report["admitted"], 2, "{report}");
    assert_eq!(report["not_stored"][0]["location"], "line 2");
    assert!(
        report["not_stored"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("longer than any memory"),
        "{report}"
    );
    assert!(
        peak < baseline + 32 * 1024,
        "peak {peak} KiB reading a 256 MiB line, {baseline} KiB for one short line"
    );

    let cut = home.path().join("cut.json");
    std::fs::write(
        &cut,
        "{\"memories\": [\n {\"content\": \"invoices are sent on the first\"},\n {\"content\": \"half a mem",
    )
    .unwrap();
    let (code, stdout, _) =
        run_measured(levh(home.path()).args(["import", cut.to_str().unwrap(), "--json"]));
    assert_eq!(code, 1, "{stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["admitted"], 1, "{report}");
    let stopped = report["stopped"].as_str().unwrap();
    assert!(
        stopped.contains("memories[1]") && stopped.contains("line 3"),
        "{stopped}"
    );
    let listed = levh(home.path()).args(["list", "--json"]).output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains("invoices are sent on the first"),
        "{listed}"
    );
    assert!(!listed.contains("half a mem"), "{listed}");
}
