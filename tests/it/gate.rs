//! The admission gate, the held queue, secret redaction and purge, on a real WAL file and
//! through the real binary. No part of the gate is stubbed.

use levh_core::{HeldStatus, MemoryFilter, NewMemory, Page, RecallRequest, Store};
use serde_json::Value;

use crate::support::{Harness, distinct_sentence, hours_after, json, levh, ok, start};

const MAIN: &str = "The deploy branch for atlas is main.";
const PROD: &str = "The deploy branch for atlas is prod.";

fn recalled(home: &std::path::Path, args: &[&str]) -> Vec<String> {
    let hits = json(
        levh(home)
            .args(["recall", "deploy branch atlas", "--json", "--no-reinforce"])
            .args(args),
    );
    hits["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn duplicate_rejects_near_duplicate_is_held_and_a_person_admits_it_as_a_replacement() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let at = |hours: f64| hours_after(start(), hours).to_string();

    let first = json(
        levh(home)
            .env("LEVH_NOW", at(0.0))
            .args(["capture", MAIN, "--json"]),
    );
    assert_eq!(first["verdict"], "admit", "{first}");
    let first_id = first["memory_id"].as_str().unwrap().to_owned();

    let again = json(
        levh(home)
            .env("LEVH_NOW", at(1.0))
            .args(["capture", MAIN, "--json"]),
    );
    assert_eq!(again["verdict"], "reject", "{again}");
    assert_eq!(again["nearest"]["id"], first_id.as_str());
    assert!(
        again["reason"].as_str().unwrap().contains(&first_id),
        "{again}"
    );
    assert!(again["memory_id"].is_null());

    let held = json(
        levh(home)
            .env("LEVH_NOW", at(2.0))
            .args(["capture", PROD, "--json"]),
    );
    assert_eq!(held["verdict"], "review", "{held}");
    assert_eq!(held["nearest"]["id"], first_id.as_str());
    assert!(held["nearest"]["similarity"].as_f64().unwrap() < 0.95);
    let held_id = held["held_id"].as_str().unwrap().to_owned();

    let list = json(levh(home).args(["held", "list", "--json"]))["held"].clone();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], held_id.as_str());
    assert_eq!(list[0]["content"], PROD);
    assert_eq!(
        recalled(home, &[]),
        vec![MAIN],
        "a held candidate is never recalled"
    );

    let admitted = json(levh(home).env("LEVH_NOW", at(3.0)).args([
        "held",
        "admit",
        &held_id,
        "--supersede",
        "--json",
    ]));
    assert_eq!(admitted["superseded"], first_id.as_str());
    assert_eq!(recalled(home, &[]), vec![PROD], "the old fact is retired");
    assert_eq!(
        recalled(home, &["--as-of", &at(2.5)]),
        vec![MAIN],
        "but it was true before the admit"
    );
    let old = json(levh(home).args(["show", &first_id, "--json"]));
    assert_eq!(old["superseded_by"], admitted["memory_id"]);
    assert_eq!(old["valid_to"], at(3.0));

    let second = levh(home)
        .args(["held", "admit", &held_id])
        .output()
        .unwrap();
    assert!(!second.status.success());
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already decided"),
        "{second:?}"
    );
    let discard = levh(home)
        .args(["held", "discard", &held_id])
        .output()
        .unwrap();
    assert!(!discard.status.success());

    let shown = json(levh(home).args(["held", "show", &held_id, "--json"]));
    assert_eq!(shown["status"], "admitted");
    assert!(
        shown["decided_by"].as_str().unwrap().ends_with("via cli"),
        "{shown}"
    );
}

#[test]
fn a_held_candidate_can_be_discarded_once_and_the_decision_is_logged() {
    let h = Harness::new();
    h.capture(MAIN);
    let outcome = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: PROD.into(),
                ..NewMemory::default()
            },
        )
        .unwrap();
    let held = outcome.held_id.unwrap();
    let discarded = h.levh.held_discard(&h.scope, held).unwrap();
    assert_eq!(discarded.status, HeldStatus::Discarded);
    let again = h.levh.held_discard(&h.scope, held).unwrap_err();
    assert!(
        again.to_string().contains("already decided (discarded)"),
        "{again}"
    );
    assert!(h.levh.held_admit(&h.scope, held, false).is_err());
    assert_eq!(h.events("hold").len(), 1);
    assert_eq!(h.events("discard").len(), 1);
    assert_eq!(
        h.levh
            .list(
                &h.scope,
                MemoryFilter::default(),
                Page {
                    limit: 10,
                    offset: 0
                }
            )
            .unwrap()
            .len(),
        1
    );
}

/// The memory and the decision are one transaction: a failure while closing the row
/// leaves nothing stored and the candidate held (to admit again or discard), never a
/// memory whose candidate says otherwise.
#[test]
fn a_failure_while_closing_rolls_the_whole_admission_back_and_a_retry_completes_it() {
    let h = Harness::new();
    h.capture(MAIN);
    let held = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: PROD.into(),
                ..NewMemory::default()
            },
        )
        .unwrap()
        .held_id
        .unwrap();
    let prods = || {
        h.levh
            .list(
                &h.scope,
                MemoryFilter::default(),
                Page {
                    limit: 10,
                    offset: 0,
                },
            )
            .unwrap()
            .into_iter()
            .filter(|m| m.content == PROD)
            .collect::<Vec<_>>()
    };

    // Inject the failure in the database itself: closing the row aborts.
    h.store.with_connection(|c| {
        c.execute_batch(
            "CREATE TEMP TRIGGER injected_crash BEFORE UPDATE OF status ON held_candidates
             BEGIN SELECT RAISE (ABORT, 'injected crash'); END;",
        )
        .unwrap()
    });
    let err = h.levh.held_admit(&h.scope, held, false).unwrap_err();
    assert!(err.to_string().contains("injected crash"), "{err}");
    assert!(prods().is_empty(), "nothing was stored");
    assert_eq!(
        h.levh.held_get(&h.scope, held).unwrap().status,
        HeldStatus::Held,
        "and the row is still held"
    );

    h.store
        .with_connection(|c| c.execute_batch("DROP TRIGGER injected_crash").unwrap());
    let admission = h.levh.held_admit(&h.scope, held, false).unwrap();
    let stored = prods();
    assert_eq!(stored.len(), 1, "exactly one memory");
    assert_eq!(admission.memory_id, stored[0].id);
    let closed = h.levh.held_get(&h.scope, held).unwrap();
    assert_eq!(closed.status, HeldStatus::Admitted);
    assert_eq!(closed.memory_id, Some(stored[0].id));
}

#[test]
fn admitting_a_held_near_duplicate_interferes_with_its_neighbour() {
    let h = Harness::new();
    let older = h.capture("The team standup is at 9:30 every weekday in room Atlas");
    let held = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: "The team standup is at 9:30 every weekday in room Orion".into(),
                ..NewMemory::default()
            },
        )
        .unwrap()
        .held_id
        .unwrap();
    h.levh.held_admit(&h.scope, held, false).unwrap();
    let stability = h.levh.get(&h.scope, older).unwrap().state.stability_hours;
    assert!((stability - 168.0 * 0.6).abs() < 1e-9, "{stability}");
}

#[test]
fn held_candidates_expire_as_a_status_when_an_expiry_is_configured() {
    let mut config = levh_core::Config::default();
    config.gate.held_expiry_hours = Some(24.0);
    let h = Harness::with_config(config);
    h.capture(MAIN);
    let held = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: PROD.into(),
                ..NewMemory::default()
            },
        )
        .unwrap()
        .held_id
        .unwrap();
    h.clock.advance_hours(25.0);
    assert!(
        h.levh
            .held_list(&h.scope, Some(HeldStatus::Held))
            .unwrap()
            .is_empty()
    );
    let expired = h
        .levh
        .held_list(&h.scope, Some(HeldStatus::Expired))
        .unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].content, PROD, "expiry keeps the row");
    let err = h.levh.held_admit(&h.scope, held, false).unwrap_err();
    assert!(
        err.to_string().contains("already decided (expired)"),
        "{err}"
    );
    assert_eq!(h.events("expire").len(), 1);
}

/// Made-up credentials of every recognised shape.
fn secret_examples() -> Vec<(String, String)> {
    include_str!("../../fixtures/secrets/examples.tsv")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (kind, example) = line.split_once('\t').unwrap();
            (kind.to_owned(), example.replace("\\n", "\n"))
        })
        .collect()
}

/// The distinctive part of an example: what must never reach the database.
fn secret_part(kind: &str, example: &str) -> String {
    match kind {
        "url-password" => "hunter2pass".into(),
        "password" => "CorrectHorse9".into(),
        "private-key" => example.lines().nth(1).unwrap().to_owned(),
        _ => example
            .chars()
            .rev()
            .take(16)
            .collect::<String>()
            .chars()
            .rev()
            .collect(),
    }
}

fn file_bytes(dir: &std::path::Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file()
            && path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("levh.db")
        {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn every_secret_kind_is_redacted_on_capture_and_never_reaches_the_file() {
    let home = tempfile::tempdir().unwrap();
    let examples = secret_examples();
    assert!(examples.len() >= 20);
    for (i, (kind, example)) in examples.iter().enumerate() {
        let text = format!("{} — credential: {example}", distinct_sentence(i as u64));
        let out = json(levh(home.path()).args(["capture", &text, "--json"]));
        assert_eq!(out["verdict"], "redact", "{kind}: {out}");
        let kinds: Vec<&str> = out["redactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(kinds.contains(&kind.as_str()), "{kind}: {kinds:?}");
        let shown =
            json(levh(home.path()).args(["show", out["memory_id"].as_str().unwrap(), "--json"]));
        assert!(
            shown["content"]
                .as_str()
                .unwrap()
                .contains(&format!("[REDACTED:{kind}]")),
            "{shown}"
        );
    }
    let bytes = file_bytes(home.path());
    assert!(contains(&bytes, "REDACTED"), "the scan reads the real file");
    for (kind, example) in &examples {
        let secret = secret_part(kind, example);
        assert!(
            !contains(&bytes, &secret),
            "{kind}: {secret:?} is in the database file"
        );
    }
    let audit = json(levh(home.path()).args(["audit-secrets", "--json"]));
    assert_eq!(audit["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn near_misses_are_stored_unchanged() {
    let home = tempfile::tempdir().unwrap();
    for line in include_str!("../../fixtures/secrets/near-misses.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let out = json(levh(home.path()).args(["capture", line, "--json"]));
        assert_eq!(out["verdict"], "admit", "{line}: {out}");
        let shown =
            json(levh(home.path()).args(["show", out["memory_id"].as_str().unwrap(), "--json"]));
        assert_eq!(shown["content"], line);
    }
}

#[test]
fn secrets_stored_before_a_pattern_existed_are_found_and_stripped() {
    let h = Harness::new();
    let id = h.capture("The staging token lives in the vault");
    // Simulate a memory written before its secret's pattern existed.
    let token = format!("ghp_{}", "Zx9".repeat(12));
    h.store.with_connection(|c| {
        c.execute(
            "UPDATE memories SET content = ?1 WHERE id = ?2",
            [format!("The staging token is {token}"), id.to_string()],
        )
        .unwrap()
    });
    let found = h.levh.audit_secrets(&h.scope).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kinds, vec!["github-token"]);
    h.levh.redact_secrets(&h.scope).unwrap();
    let memory = h.levh.get(&h.scope, id).unwrap();
    assert_eq!(
        memory.content,
        "The staging token is [REDACTED:github-token]"
    );
    assert!(h.levh.audit_secrets(&h.scope).unwrap().is_empty());
    assert_eq!(h.events("redact"), vec![id.to_string()]);
    let hits = h
        .store
        .lexical_candidates(&MemoryFilter::default(), &token, 5)
        .unwrap();
    assert!(hits.is_empty(), "the full-text index forgot the token");
}

#[test]
fn purge_leaves_no_trace_in_any_table_index_or_the_file() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let secretish = "Project Nightingale acquisition closes on the ninth of March";
    let out = json(levh(home).args(["capture", secretish, "--json", "--project", "m-and-a"]));
    let id = out["memory_id"].as_str().unwrap().to_owned();
    // give it a life: recalled, pinned, and a held near-duplicate with the same content words
    ok(levh(home).args(["recall", "Nightingale acquisition", "--json"]));
    ok(levh(home).args(["pin", &id]));
    let near = json(levh(home).args([
        "capture",
        "Project Nightingale acquisition closes on the tenth of March",
        "--json",
        "--project",
        "m-and-a",
    ]));
    assert_eq!(near["verdict"], "review", "{near}");
    for i in 0..30 {
        ok(levh(home).args(["capture", &distinct_sentence(i), "--json"]));
    }
    let hash = json(levh(home).args(["show", &id, "--json"]))["content_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        contains(&file_bytes(home), "Nightingale"),
        "before the purge the content is in the file"
    );

    let report: Value = json(levh(home).args(["purge", &id, "--json"]));
    assert_eq!(report["residue"], serde_json::json!([]), "{report}");

    let bytes = file_bytes(home);
    assert!(
        !contains(&bytes, "Nightingale acquisition closes on the ninth"),
        "content bytes remain in the file"
    );
    assert!(
        !contains(&bytes, &hash),
        "the content hash remains in the file"
    );
    assert!(
        !levh(home)
            .args(["show", &id])
            .output()
            .unwrap()
            .status
            .success()
    );
    let recall = json(levh(home).args(["recall", "Nightingale", "--json"]));
    assert!(
        recall["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| !h["content"].as_str().unwrap().contains("ninth"))
    );
    // the unrelated memories are intact
    let stats = json(levh(home).args(["stats", "--json"]));
    assert_eq!(stats["total"], 30);
}

#[test]
fn no_gate_override_exists_on_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args(["capture", MAIN]));
    for flag in ["--force", "--no-gate", "--skip-gate"] {
        let out = levh(home.path())
            .args(["capture", PROD, flag])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{flag} must not exist");
    }
    let dry = json(levh(home.path()).args(["admit", PROD, "--dry-run", "--json"]));
    assert_eq!(dry["verdict"], "review");
    assert!(
        json(levh(home.path()).args(["held", "list", "--json"]))["held"]
            .as_array()
            .unwrap()
            .is_empty(),
        "a dry run holds nothing"
    );
}

#[test]
fn recall_never_returns_held_candidates_and_the_gate_checks_the_same_project_only() {
    let h = Harness::new();
    h.capture_with(NewMemory {
        content: MAIN.into(),
        project: Some("atlas".into()),
        ..NewMemory::default()
    });
    let elsewhere = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: MAIN.into(),
                project: Some("orion".into()),
                ..NewMemory::default()
            },
        )
        .unwrap();
    assert_eq!(
        elsewhere.verdict.name(),
        "admit",
        "another project may hold the same fact"
    );
    let held = h
        .levh
        .capture(
            &h.scope,
            NewMemory {
                content: PROD.into(),
                project: Some("atlas".into()),
                ..NewMemory::default()
            },
        )
        .unwrap();
    assert_eq!(held.verdict.name(), "review");
    let hits = h
        .levh
        .recall(&h.scope, &RecallRequest::new("deploy branch atlas prod"))
        .unwrap()
        .hits;
    assert!(hits.iter().all(|hit| hit.memory.content != PROD));
}

/// What the gate does with `content` (in `project`), through the engine.
fn offer(h: &Harness, content: &str, project: Option<&str>) -> levh_core::CaptureOutcome {
    h.levh
        .capture(
            &h.scope,
            NewMemory {
                content: content.into(),
                project: project.map(str::to_owned),
                ..NewMemory::default()
            },
        )
        .unwrap()
}

#[test]
fn a_repeat_of_a_waiting_held_candidate_is_rejected_naming_it_not_queued_twice() {
    let h = Harness::new();
    h.capture(MAIN);
    let held = offer(&h, PROD, None);
    let held_id = held.held_id.expect("a one-fact update is held");
    // The same text again (case and spacing aside) while the first copy waits.
    let again = offer(&h, "the deploy branch for  atlas is PROD.", None);
    assert_eq!(again.verdict.name(), "reject", "{again:?}");
    assert!(again.held_id.is_none() && again.memory_id.is_none());
    assert!(
        again.reason().unwrap().contains(&held_id.to_string()),
        "{:?}",
        again.reason()
    );
    let waiting = h.levh.held_list(&h.scope, Some(HeldStatus::Held)).unwrap();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    // Once a person has decided, the text is judged afresh.
    h.levh.held_discard(&h.scope, held_id).unwrap();
    let after = offer(&h, PROD, None);
    assert_eq!(after.verdict.name(), "review", "{after:?}");
    let waiting = after.held_id.unwrap();
    // In another project, it is another candidate, not a repeat of the waiting one.
    let elsewhere = offer(&h, PROD, Some("other"));
    assert_eq!(elsewhere.verdict.name(), "admit", "{elsewhere:?}");
    assert_eq!(
        h.levh
            .held_list(&h.scope, Some(HeldStatus::Held))
            .unwrap()
            .iter()
            .map(|c| c.id)
            .collect::<Vec<_>>(),
        [waiting]
    );
}

#[test]
fn the_gate_stores_a_conversation_answers_and_other_speakers_words_included() {
    let h = Harness::new();
    let turns = [
        "Gina: Hey Jon! How's the store going?",
        "Jon: Hey Gina! The store's going great, we hired two people!",
        "Nadia: Have a great day!",
        "Oskar: Have a great day!",
        "Sam: Did you ever fix the boiler in the end?",
        "Sam: I did fix the boiler in the end.",
    ];
    for turn in turns {
        let outcome = offer(&h, turn, None);
        assert_eq!(outcome.verdict.name(), "admit", "{turn:?}: {outcome:?}");
    }
    // The same speaker saying the same thing again is still a duplicate.
    let again = offer(&h, "Nadia: have a great day", None);
    assert_eq!(again.verdict.name(), "reject", "{again:?}");
    // A changed word is held for a person, never dropped.
    let changed = offer(
        &h,
        "Jon: Hey Gina! The store's going great, we hired three people!",
        None,
    );
    assert_eq!(changed.verdict.name(), "review", "{changed:?}");
}

/// `held admit` and `held discard` of one candidate started at the same moment from two
/// processes: exactly one takes effect, the other is told it was already decided, and the
/// store agrees with the decision (a discarded candidate's text is not stored; an admitted
/// one's is).
#[test]
fn a_held_candidate_raced_by_admit_and_discard_from_two_processes_is_decided_once() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    assert_eq!(
        json(levh(home).args(["capture", MAIN, "--json"]))["verdict"],
        "admit"
    );
    let words = [
        "prod", "stable", "trunk", "live", "green", "blue", "canary", "edge", "next", "beta",
        "gamma", "delta", "release", "ship", "final", "gold",
    ];
    let mut candidates = Vec::new();
    for word in words {
        let content = format!("The deploy branch for atlas is {word}.");
        let held = json(levh(home).args(["capture", &content, "--json"]));
        if held["verdict"] == "review" {
            candidates.push((held["held_id"].as_str().unwrap().to_owned(), content));
        }
    }
    assert!(candidates.len() >= 10, "{candidates:?}");

    for (n, (id, content)) in candidates.iter().enumerate() {
        let mut admit = levh(home);
        admit.args(["held", "admit", id]);
        if n % 2 == 0 {
            admit.arg("--supersede");
        }
        let mut discard = levh(home);
        discard.args(["held", "discard", id]);
        let (admit, discard) = (admit.output_spawned(), discard.output_spawned());
        let (admit, discard) = (
            admit.wait_with_output().unwrap(),
            discard.wait_with_output().unwrap(),
        );
        assert!(
            admit.status.success() != discard.status.success(),
            "candidate {n}: admit {:?} {}, discard {:?} {}",
            admit.status,
            String::from_utf8_lossy(&admit.stderr),
            discard.status,
            String::from_utf8_lossy(&discard.stderr)
        );
        let loser = if admit.status.success() {
            &discard
        } else {
            &admit
        };
        assert!(
            String::from_utf8_lossy(&loser.stderr).contains("already decided"),
            "{}",
            String::from_utf8_lossy(&loser.stderr)
        );
        let shown = json(levh(home).args(["held", "show", id, "--json"]));
        let stored = json(levh(home).args(["list", "--json", "--limit", "1000"]))["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"] == content.as_str());
        let status = shown["status"].as_str().unwrap().to_owned();
        assert_eq!(
            (status.as_str(), stored),
            if admit.status.success() {
                ("admitted", true)
            } else {
                ("discarded", false)
            },
            "candidate {n}: {shown}"
        );
    }
}

/// Spawning without waiting, so that two commands run at once.
trait SpawnOutput {
    fn output_spawned(&mut self) -> std::process::Child;
}

impl SpawnOutput for std::process::Command {
    fn output_spawned(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }
}
