//! Scorer plugins: recall hands the candidates' features to the active scorer, and falls
//! back to the H-score, with a warning, whenever the scorer fails.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use levh_core::rank::{Features, Scorer};
use levh_core::{H_SCORE, NewMemory, RecallRequest};
use serde_json::Value;

use crate::support::{Harness, json, levh, ok};

/// A scorer written in the test: ranks by `rank(features)`, or fails as told.
#[derive(Debug)]
struct Scripted(fn(&[Features]) -> Result<Vec<f64>, String>);

impl Scorer for Scripted {
    fn id(&self) -> &str {
        "scripted"
    }

    fn score(&self, _query: &str, candidates: &[Features]) -> Result<Vec<f64>, String> {
        (self.0)(candidates)
    }
}

/// Three memories about deploys, matched by the query with different strength.
fn deploy_harness() -> Harness {
    let h = Harness::new();
    h.capture("Deploys happen on Tuesdays after the standup");
    h.capture("Deploys of the billing service need a second reviewer");
    h.capture("The deploy pipeline runs the integration suite first, deploys to staging, then deploys to production");
    h
}

fn ids(out: &levh_core::RecallOutput) -> Vec<levh_core::MemoryId> {
    out.hits.iter().map(|hit| hit.memory.id).collect()
}

#[test]
fn recall_ranks_by_the_active_scorer_and_records_its_scores() {
    let h = deploy_harness();
    let request = RecallRequest {
        reinforce: false,
        ..RecallRequest::new("deploys")
    };
    let by_h = h.levh.recall(&h.scope, &request).unwrap();
    assert_eq!(by_h.ranked_by, H_SCORE);
    assert_eq!(by_h.hits.len(), 3);

    // The reverse of the H-score: the worst H first.
    let reversed = h.levh.clone().with_scorer(Arc::new(Scripted(|c| {
        Ok(c.iter().map(|f| f.relevance).collect())
    })));
    let out = reversed.recall(&h.scope, &request).unwrap();
    assert_eq!(out.ranked_by, "scripted");
    assert!(out.warnings.is_empty());
    let mut expected: Vec<_> = by_h.hits.iter().collect();
    expected.sort_by(|a, b| a.score.relevance.total_cmp(&b.score.relevance));
    assert_eq!(
        ids(&out),
        expected.iter().map(|hit| hit.memory.id).collect::<Vec<_>>()
    );
    for hit in &out.hits {
        assert_eq!(hit.policy_score, Some(hit.score.relevance));
    }
}

#[test]
fn a_failing_scorer_falls_back_to_the_h_score_with_a_warning() {
    let h = deploy_harness();
    let request = RecallRequest {
        reinforce: false,
        ..RecallRequest::new("deploys")
    };
    let by_h = ids(&h.levh.recall(&h.scope, &request).unwrap());
    for (scorer, words) in [
        (Scripted(|_| Err("it fell over".into())), "it fell over"),
        (Scripted(|_| Ok(vec![0.0])), "returned 1 scores for 3"),
        (
            Scripted(|c| Ok(c.iter().map(|_| f64::NAN).collect())),
            "not a number",
        ),
    ] {
        let out = h
            .levh
            .clone()
            .with_scorer(Arc::new(scorer))
            .recall(&h.scope, &request)
            .unwrap();
        assert_eq!(out.ranked_by, H_SCORE);
        assert_eq!(ids(&out), by_h, "same order as without a scorer");
        assert!(out.hits.iter().all(|hit| hit.policy_score.is_none()));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(
            out.warnings[0].contains("scorer `scripted` failed") && out.warnings[0].contains(words),
            "{:?}",
            out.warnings
        );
    }
}

#[test]
fn the_scorer_sees_age_and_pinning() {
    let h = Harness::new();
    let old = h.capture_with(NewMemory {
        content: "The release train leaves every other Wednesday".into(),
        pinned: true,
        ..NewMemory::default()
    });
    h.clock.advance_hours(48.0);
    h.capture("Release notes are written by whoever cut the release");
    // Ranks by age, youngest first; pinned memories last.
    let scorer = Scripted(|c| {
        assert!(
            c.iter()
                .any(|f| (f.age_hours - 48.0).abs() < 1e-6 && f.pinned)
        );
        assert!(c.iter().any(|f| f.age_hours == 0.0 && !f.pinned));
        Ok(c.iter()
            .map(|f| f.age_hours + if f.pinned { 1e6 } else { 0.0 })
            .collect())
    });
    let out = h
        .levh
        .clone()
        .with_scorer(Arc::new(scorer))
        .recall(&h.scope, &RecallRequest::new("release"))
        .unwrap();
    assert_eq!(out.ranked_by, "scripted");
    assert_eq!(out.hits.last().map(|hit| hit.memory.id), Some(old));
}

/// Builds the erratic test scorer once per run.
fn erratic_scorer() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let root = crate::support::repository_root();
        let args = [
            "-p",
            "levh-test-guest-erratic-scorer",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "guest",
            "--target-dir",
            "target/guests",
        ];
        let status = crate::support::guest_cargo(&root, &args).status().unwrap();
        assert!(status.success(), "building the erratic test scorer failed");
        root.join("target/guests/wasm32-wasip2/guest/levh_test_guest_erratic_scorer.wasm")
    })
}

const NOW: &str = "2026-03-20T12:00:00Z";

fn capture_at(home: &Path, at: &str, content: &str, importance: &str) {
    ok(levh(home)
        .env("LEVH_NOW", at)
        .args(["capture", content, "--importance", importance]));
}

fn recall(home: &Path, query: &str) -> (Vec<Value>, String) {
    let output =
        ok(levh(home)
            .env("LEVH_NOW", NOW)
            .args(["recall", query, "--json", "--no-reinforce"]));
    let hits: Value = serde_json::from_slice(&output.stdout).unwrap();
    (
        hits["results"].as_array().unwrap().clone(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn contents(hits: &[Value]) -> Vec<&str> {
    hits.iter()
        .map(|h| h["content"].as_str().unwrap())
        .collect()
}

/// An important month-old note and an unimportant fresh one that replaces it.
fn deploy_window_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    capture_at(
        home.path(),
        "2026-02-18T12:00:00Z",
        "The deploy window is Tuesday afternoon after the standup",
        "1.0",
    );
    capture_at(
        home.path(),
        NOW,
        "From this week the deploy window moves to Thursday morning",
        "0.1",
    );
    home
}

#[test]
fn the_recency_scorer_puts_the_newest_relevant_memory_first() {
    let home = deploy_window_home();
    let (by_h, _) = recall(home.path(), "deploy window");
    assert_eq!(by_h[0]["ranked_by"], "h-score");
    assert!(contents(&by_h)[0].contains("Tuesday"), "{by_h:?}");

    let list = json(levh(home.path()).args(["scorer", "list", "--json"]));
    assert_eq!(list["active"], Value::Null);
    assert!(
        list["scorers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "recency" && s["origin"] == "built-in"),
        "{list}"
    );

    ok(levh(home.path()).args(["scorer", "use", "recency"]));
    let (by_recency, stderr) = recall(home.path(), "deploy window");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(by_recency[0]["ranked_by"], "recency");
    assert!(
        contents(&by_recency)[0].contains("Thursday"),
        "{by_recency:?}"
    );
    assert_ne!(by_recency[0]["score"], by_recency[0]["h_score"]);
    let list = json(levh(home.path()).args(["scorer", "list", "--json"]));
    assert_eq!(list["active"], "recency");

    ok(levh(home.path()).args(["scorer", "off"]));
    let (after, _) = recall(home.path(), "deploy window");
    assert_eq!(after[0]["ranked_by"], "h-score");
    assert_eq!(contents(&after), contents(&by_h));
}

#[test]
fn a_third_party_scorer_that_fails_leaves_recall_working_with_a_warning() {
    let home = deploy_window_home();
    let (by_h, _) = recall(home.path(), "deploy window");

    let added = json(
        levh(home.path())
            .args(["scorer", "add", "--json"])
            .arg(erratic_scorer()),
    );
    assert_eq!(added["installed"], "erratic");
    ok(levh(home.path()).args(["scorer", "use", "erratic"]));

    // Well-behaved: least similar first, so the order differs from the H-score's.
    let (ranked, stderr) = recall(home.path(), "deploy window");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(ranked[0]["ranked_by"], "erratic");
    let similarity: Vec<f64> = ranked
        .iter()
        .map(|h| h["relevance"].as_f64().unwrap())
        .collect();
    assert!(
        similarity.windows(2).all(|w| w[0] <= w[1]),
        "{similarity:?}"
    );

    for (query, words) in [
        ("deploy window panic", "asked to panic"),
        ("deploy window loop", "time limit"),
        ("deploy window short", "returned 1 scores for 2 candidates"),
        ("deploy window nan", "not a number"),
    ] {
        let (hits, stderr) = recall(home.path(), query);
        assert!(
            stderr.contains("warning: scorer `erratic` failed")
                && stderr.contains(words)
                && stderr.contains("H-score instead"),
            "{query}: {stderr}"
        );
        assert_eq!(hits.len(), 2, "{query}: recall still answers");
        assert_eq!(hits[0]["ranked_by"], "h-score");
        assert_eq!(contents(&hits), contents(&by_h), "{query}");
    }

    // A scorer whose component went bad on disk: the same fallback, a clear reason.
    let component = home.path().join("scorers/erratic/component.wasm");
    std::fs::write(&component, b"not a component any more").unwrap();
    let (hits, stderr) = recall(home.path(), "deploy window");
    assert!(
        stderr.contains("scorer `erratic` could not be loaded")
            && stderr.contains("not a WebAssembly file"),
        "{stderr}"
    );
    assert_eq!(contents(&hits), contents(&by_h));

    // Removing the active scorer turns it off.
    ok(levh(home.path()).args(["scorer", "remove", "erratic"]));
    let list = json(levh(home.path()).args(["scorer", "list", "--json"]));
    assert_eq!(list["active"], Value::Null);
}

#[test]
fn the_scorer_commands_refuse_what_is_not_a_scorer() {
    let home = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], path: Option<&Path>| {
        let mut command = levh(home.path());
        command.args(args);
        if let Some(path) = path {
            command.arg(path);
        }
        let output = command.output().unwrap();
        assert!(!output.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let unknown = refused(&["scorer", "use", "alphabetical"], None);
    assert!(
        unknown.contains("no scorer `alphabetical`") && unknown.contains("recency"),
        "{unknown}"
    );
    let connector = crate::support::repository_root()
        .join("target/guests/wasm32-wasip2/guest/levh_connector_transcript.wasm");
    let wrong_kind = refused(&["scorer", "add"], Some(&connector));
    assert!(wrong_kind.contains("is not a levh scorer"), "{wrong_kind}");
    let text = home.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let not_wasm = refused(&["scorer", "add"], Some(&text));
    assert!(
        not_wasm.contains("is not a levh scorer: not a WebAssembly file"),
        "{not_wasm}"
    );
    let as_connector = refused(&["connector", "add", "--yes"], Some(erratic_scorer()));
    assert!(
        as_connector.contains("is not a levh connector"),
        "{as_connector}"
    );
    let builtin = refused(&["scorer", "remove", "recency"], None);
    assert!(builtin.contains("built in"), "{builtin}");
    let list = json(levh(home.path()).args(["scorer", "list", "--json"]));
    assert_eq!(list["active"], Value::Null, "nothing was turned on");
}
