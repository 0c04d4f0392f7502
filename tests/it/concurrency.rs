//! Many processes on one file: several agents each spawn their own `levh`.

use std::collections::HashSet;

use crate::support::{distinct_sentence, levh};

#[test]
fn eight_processes_capturing_two_hundred_memories_each_lose_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (workers, per_worker) = (8, 200);
    let threads: Vec<_> = (0..workers)
        .map(|worker| {
            let home = home.path().to_path_buf();
            std::thread::spawn(move || {
                for i in 0..per_worker {
                    let text = distinct_sentence((worker * 1000 + i) as u64);
                    let out = crate::support::json(levh(&home).args(["capture", &text, "--json"]));
                    assert_eq!(out["verdict"], "admit", "{text}: {out}");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }

    let listed =
        crate::support::json(levh(home.path()).args(["list", "--limit", "5000", "--json"]));
    let contents: HashSet<String> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(contents.len(), workers * per_worker);
    let doctor = crate::support::json(levh(home.path()).args(["doctor", "--json"]));
    assert_eq!(doctor["health"]["memories"], 1600);
    assert_eq!(doctor["ok"], true);
}

/// A minute of writes over REST and the CLI into a real `levh serve`, with a purge, a
/// backup and an attempted restore every few seconds and three `kill -9`s of the server
/// (restarted each time): every acknowledged write is stored exactly once, every purge
/// took, every restore was refused while a server lived (naming it), and SQLite's own
/// integrity check passes.
#[test]
fn a_minute_of_writes_purges_backups_and_refused_restores_through_three_kills_loses_nothing() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cli = |home: &std::path::Path| {
        let mut command = levh(home);
        command.env("LEVH_EMBEDDER", "hash");
        command
    };
    assert!(
        cli(&home)
            .args(["capture", "the first memory of the home"])
            .status()
            .unwrap()
            .success()
    );
    let baseline = dir.path().join("baseline.tar");
    assert!(
        cli(&home)
            .args(["backup", "create", "--to"])
            .arg(&baseline)
            .status()
            .unwrap()
            .success()
    );

    // The live server's address, or None while it is being restarted.
    let server: Arc<Mutex<Option<(std::process::Child, String)>>> = Arc::new(Mutex::new(Some(
        crate::support::serve(&home, &[("LEVH_EMBEDDER", "hash")]),
    )));
    let address = |server: &Mutex<Option<(std::process::Child, String)>>| {
        server
            .lock()
            .unwrap()
            .as_ref()
            .map(|(_, address)| address.clone())
    };
    let next = Arc::new(AtomicU64::new(10_000));
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into();

    let mut workers = Vec::new();
    for _ in 0..2 {
        let (server, next, stop, acknowledged, agent) = (
            server.clone(),
            next.clone(),
            stop.clone(),
            acknowledged.clone(),
            agent.clone(),
        );
        workers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let Some(address) = address(&server) else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let content = distinct_sentence(next.fetch_add(1, Ordering::Relaxed));
                let Ok(mut response) = agent
                    .post(format!("http://{address}/api/memories"))
                    .send_json(serde_json::json!({ "content": content }))
                else {
                    continue; // the server died mid-request: not acknowledged
                };
                if response.status() == 201 {
                    let body: serde_json::Value = response.body_mut().read_json().unwrap();
                    // Acknowledged as stored (a near-copy the gate holds is not a memory).
                    if body["verdict"] == "admit" {
                        acknowledged.lock().unwrap().push(content);
                    }
                }
            }
        }));
    }
    {
        let (home, next, stop, acknowledged) = (
            home.clone(),
            next.clone(),
            stop.clone(),
            acknowledged.clone(),
        );
        workers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let content = distinct_sentence(next.fetch_add(1, Ordering::Relaxed));
                let output = cli(&home)
                    .args(["capture", &content, "--json"])
                    .output()
                    .unwrap();
                if output.status.success()
                    && serde_json::from_slice::<serde_json::Value>(&output.stdout)
                        .is_ok_and(|v| v["verdict"] == "admit")
                {
                    acknowledged.lock().unwrap().push(content);
                }
            }
        }));
    }

    let started = Instant::now();
    let (mut kills, mut purged, mut backups, mut refused) = (0, Vec::new(), 0, 0);
    let mut round = 0u64;
    while started.elapsed() < Duration::from_secs(60) {
        round += 1;
        std::thread::sleep(Duration::from_millis(1_500));
        if let Some(address) = address(&server) {
            // A purge: a memory written for it, then erased.
            let doomed = format!("{} (to be purged)", distinct_sentence(900_000 + round));
            if let Ok(mut stored) = agent
                .post(format!("http://{address}/api/memories"))
                .send_json(serde_json::json!({ "content": doomed }))
                && stored.status() == 201
            {
                let body: serde_json::Value = stored.body_mut().read_json().unwrap();
                let id = body["memory_id"].as_str().unwrap().to_owned();
                if let Ok(response) = agent
                    .post(format!("http://{address}/api/memories/{id}/purge"))
                    .send_json(serde_json::json!({}))
                    && response.status() == 200
                {
                    purged.push(doomed);
                }
            }
        }
        if cli(&home)
            .args(["backup", "create"])
            .output()
            .unwrap()
            .status
            .success()
        {
            backups += 1;
        }
        // A restore, attempted only while a server is known to live (held across the
        // attempt, so no kill or restart comes between).
        {
            let guard = server.lock().unwrap();
            if let Some((child, _)) = guard.as_ref() {
                let output = cli(&home)
                    .args(["backup", "restore"])
                    .arg(&baseline)
                    .output()
                    .unwrap();
                assert!(
                    !output.status.success(),
                    "a restore went through while the server lived"
                );
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(
                    stderr.contains(&format!("pid {} (levh serve)", child.id())),
                    "{stderr}"
                );
                refused += 1;
            }
        }
        if kills < 3 && started.elapsed() > Duration::from_secs(15 * (kills + 1)) {
            let mut guard = server.lock().unwrap();
            if let Some((mut child, _)) = guard.take() {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
            }
            kills += 1;
            *guard = Some(crate::support::serve(&home, &[("LEVH_EMBEDDER", "hash")]));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().unwrap();
    }
    if let Some((mut child, _)) = server.lock().unwrap().take() {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(kills, 3);
    assert!(
        backups >= 5 && refused >= 5 && purged.len() >= 5,
        "{backups} backups, {refused} refused restores, {} purges",
        purged.len()
    );

    let connection = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    let integrity: String = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let mut statement = connection.prepare("SELECT content FROM memories").unwrap();
    let stored: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let distinct: HashSet<&String> = stored.iter().collect();
    assert_eq!(distinct.len(), stored.len(), "a memory stored twice");
    let acknowledged = acknowledged.lock().unwrap();
    assert!(acknowledged.len() > 300, "{}", acknowledged.len());
    let missing: Vec<&String> = acknowledged
        .iter()
        .filter(|c| !distinct.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged writes lost: {missing:?}",
        missing.len()
    );
    for doomed in &purged {
        assert!(!distinct.contains(doomed), "a purged memory came back");
    }
    // Shown with --nocapture: what the minute did.
    println!(
        "{} acknowledged writes, {} stored, {} purges, {backups} backups, {refused} refused restores, {kills} kills",
        acknowledged.len(),
        stored.len(),
        purged.len()
    );
}

/// Two `levh serve` processes on one SQLite file, and the same text sent to both at the
/// same moment, twenty times: each text is stored once — one server admits it, the
/// other refuses it as a duplicate of that memory (before the store checked what another
/// writer stored between the gate's judgement and the write, 11 of 20 were stored twice).
#[test]
fn the_same_text_sent_to_two_servers_on_one_file_at_once_is_stored_once() {
    let home = tempfile::tempdir().unwrap();
    let env = [("LEVH_EMBEDDER", "hash")];
    let servers = [
        crate::support::serve(home.path(), &env),
        crate::support::serve(home.path(), &env),
    ];
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    for n in 0..20 {
        let content = distinct_sentence(50_000 + n);
        let start = std::sync::Barrier::new(2);
        let verdicts: Vec<(u16, serde_json::Value)> = std::thread::scope(|threads| {
            let handles: Vec<_> = servers
                .iter()
                .map(|(_, address)| {
                    let (start, agent, content) = (&start, &agent, &content);
                    threads.spawn(move || {
                        start.wait();
                        let mut response = agent
                            .post(format!("http://{address}/api/memories"))
                            .send_json(serde_json::json!({ "content": content }))
                            .unwrap();
                        let status = response.status().as_u16();
                        (status, response.body_mut().read_json().unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut kinds: Vec<&str> = verdicts
            .iter()
            .map(|(_, body)| body["verdict"].as_str().unwrap())
            .collect();
        kinds.sort_unstable();
        assert_eq!(kinds, ["admit", "reject"], "{content}: {verdicts:?}");
        let admitted = verdicts.iter().find(|(s, _)| *s == 201).unwrap();
        let refused = verdicts.iter().find(|(s, _)| *s != 201).unwrap();
        assert!(
            refused
                .1
                .to_string()
                .contains(admitted.1["memory_id"].as_str().unwrap()),
            "the refusal names the memory stored: {verdicts:?}"
        );
    }
    for (mut child, _) in servers {
        let _ = child.kill();
        let _ = child.wait();
    }
    let listed = crate::support::json(levh(home.path()).args(["list", "--limit", "100", "--json"]));
    assert_eq!(listed["memories"].as_array().unwrap().len(), 20, "{listed}");
}
