//! The quality harnesses through the real binary: `levh benchmark [--check]` on the
//! shipped labelled query set in hash and local mode, thresholds that fail, bad datasets;
//! `levh eval run|report` on the shipped golden scenarios in both modes, a failing
//! scenario, a bad scenario file. Neither harness may touch the user's store.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::embed::assets;
use crate::support::{json, levh};

fn run(command: &mut Command) -> (Output, String, String) {
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

/// The user's own store is empty: the harnesses ran on throwaway stores.
fn assert_store_untouched(home: &Path) {
    let listed = json(levh(home).args(["list", "--json"]));
    assert_eq!(
        listed,
        json!({"memories": [], "total": 0}),
        "a harness wrote to the user's store"
    );
}

fn slice<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["report"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["slice"] == name)
        .unwrap_or_else(|| panic!("no slice {name} in {report}"))
}

fn benchmark_checked(command: &mut Command) -> Value {
    let (output, stdout, stderr) = run(command.args(["benchmark", "--check", "--json"]));
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"));
    assert!(
        output.status.success() && report["passed"] == true,
        "benchmark --check failed: {}\n{stderr}",
        serde_json::to_string_pretty(&report["checks"]).unwrap()
    );
    for s in ["all", "exact", "paraphrase", "distractor", "non-english"] {
        assert!(slice(&report, s)["queries"].as_u64().unwrap() > 0, "{s}");
    }
    assert!(!report["checks"].as_array().unwrap().is_empty());
    report
}

#[test]
fn benchmark_check_passes_in_hash_mode_on_the_shipped_query_set() {
    let home = tempfile::tempdir().unwrap();
    let report = benchmark_checked(levh(home.path()).env("LEVH_EMBEDDER", "hash"));
    assert_eq!(report["report"]["measure"], "lexical");
    assert_eq!(report["report"]["embedder"], "hash-v1-256");
    // The table a person reads names every metric.
    let (output, stdout, _) = run(levh(home.path()).args(["benchmark", "--embedder", "hash"]));
    assert!(output.status.success());
    for word in [
        "hit@1",
        "hit@3",
        "hit@5",
        "MRR@10",
        "paraphrase",
        "non-english",
    ] {
        assert!(stdout.contains(word), "{word} missing from:\n{stdout}");
    }
    assert_store_untouched(home.path());
}

#[test]
fn benchmark_check_passes_with_the_local_model_and_beats_hash_on_paraphrases() {
    let Some(assets) =
        assets("benchmark_check_passes_with_the_local_model_and_beats_hash_on_paraphrases")
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let local = benchmark_checked(assets.levh(home.path()).env("LEVH_EMBEDDER", "local"));
    assert_eq!(local["report"]["measure"], "semantic");
    let hash = benchmark_checked(assets.levh(home.path()).env("LEVH_EMBEDDER", "hash"));
    let mrr = |r: &Value| slice(r, "paraphrase")["mrr"].as_f64().unwrap();
    assert!(
        mrr(&local) > mrr(&hash) + 0.2,
        "paraphrase MRR: local {} vs hash {}",
        mrr(&local),
        mrr(&hash)
    );
    assert_store_untouched(home.path());
}

const TINY: &str = r#"{
  "name": "tiny", "version": 1,
  "memories": [
    {"id": "salt", "content": "My physician told me to reduce salt intake."},
    {"id": "report", "content": "The quarterly report is due at the end of March."}
  ],
  "queries": [
    {"query": "when is the quarterly report due", "expect": ["report"], "slice": "exact"},
    {"query": "doctor advised cutting down on sodium", "expect": ["salt"], "slice": "paraphrase"}
  ],
  "thresholds": {"lexical": {"paraphrase": {"hit_at_1": 1.0}, "exact": {"mrr": 1.0}}}
}"#;

#[test]
fn benchmark_check_fails_below_a_threshold_and_says_which() {
    let home = tempfile::tempdir().unwrap();
    let dataset = home.path().join("tiny.json");
    std::fs::write(&dataset, TINY).unwrap();
    let (output, stdout, _) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["benchmark", "--check", "--misses", "--dataset"])
        .arg(&dataset));
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("BELOW"), "{stdout}");
    assert!(
        stdout.contains("check failed: 1 of 2 lexical thresholds"),
        "{stdout}"
    );
    // --misses names the query the hash embedder could not answer first.
    assert!(
        stdout.contains("doctor advised cutting down on sodium"),
        "{stdout}"
    );

    // No thresholds for this measure: a check that checks nothing must not pass.
    std::fs::write(&dataset, TINY.replace("\"lexical\"", "\"semantic\"")).unwrap();
    let (output, _, stderr) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["benchmark", "--check", "--dataset"])
        .arg(&dataset));
    assert!(!output.status.success());
    assert!(stderr.contains("no thresholds for lexical"), "{stderr}");
}

#[test]
fn a_bad_dataset_is_refused_naming_the_file_and_the_place() {
    let home = tempfile::tempdir().unwrap();
    let dataset = home.path().join("bad.json");
    std::fs::write(
        &dataset,
        TINY.replace("\"expect\": [\"salt\"]", "\"expect\": [\"sugar\"]"),
    )
    .unwrap();
    let (output, _, stderr) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["benchmark", "--dataset"])
        .arg(&dataset));
    assert!(!output.status.success());
    assert!(
        stderr.contains("bad.json") && stderr.contains("queries[1]") && stderr.contains("`sugar`"),
        "{stderr}"
    );

    // Two memories the gate takes for one: the benchmark says which, instead of
    // measuring a corpus that is not the one labelled.
    let duplicate = TINY.replace(
        "The quarterly report is due at the end of March.",
        "My physician told me to reduce salt intake!",
    );
    std::fs::write(&dataset, duplicate).unwrap();
    let (output, _, stderr) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["benchmark", "--dataset"])
        .arg(&dataset));
    assert!(!output.status.success());
    assert!(
        stderr.contains("memory `report` was not stored") && stderr.contains("`salt`"),
        "{stderr}"
    );
}

fn eval_run(command: &mut Command, report: &Path) -> (Output, Value, String) {
    let (output, stdout, stderr) = run(command.arg("--output").arg(report));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(report).unwrap_or_else(|e| {
            panic!(
                "no report at {} ({e}): {stdout}\n{stderr}",
                report.display()
            )
        }))
        .unwrap();
    (output, written, stdout)
}

fn failures(report: &Value) -> String {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "failed")
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn eval_run_passes_the_shipped_scenarios_in_hash_mode_and_report_reads_them_back() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("out").join("report.json");
    let (output, report, stdout) = eval_run(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["eval", "run"]),
        &path,
    );
    assert!(output.status.success(), "{}\n{stdout}", failures(&report));
    assert_eq!(report["evaluation_version"], 1);
    assert_eq!(report["measure"], "lexical");
    let summary = &report["summary"];
    assert_eq!(summary["failed"], 0, "{}", failures(&report));
    assert!(summary["passed"].as_u64().unwrap() >= 10, "{summary}");
    assert!(summary["checks"].as_u64().unwrap() >= 30, "{summary}");
    // Scenarios that need a semantic model are skipped, and say so.
    for s in report["scenarios"].as_array().unwrap() {
        if s["status"] == "skipped" {
            assert!(s["note"].as_str().unwrap().contains("semantic"), "{s}");
        }
    }
    assert!(summary["skipped"].as_u64().unwrap() >= 1, "{summary}");

    let (output, printed, _) = run(levh(home.path()).args(["eval", "report"]).arg(&path));
    assert!(output.status.success());
    for s in report["scenarios"].as_array().unwrap() {
        assert!(printed.contains(s["name"].as_str().unwrap()), "{printed}");
    }
    // Without --output, the report goes to $LEVH_HOME/eval/report.json, which
    // `eval report` reads by default.
    let (output, _, _) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["eval", "run"]));
    assert!(output.status.success());
    let again = json(levh(home.path()).args(["eval", "report", "--json"]));
    assert_eq!(again["summary"], report["summary"]);
    assert_store_untouched(home.path());
}

#[test]
fn eval_run_passes_every_shipped_scenario_with_the_local_model() {
    let Some(assets) = assets("eval_run_passes_every_shipped_scenario_with_the_local_model") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("report.json");
    let (output, report, stdout) = eval_run(
        assets
            .levh(home.path())
            .env("LEVH_EMBEDDER", "local")
            .args(["eval", "run"]),
        &path,
    );
    assert!(output.status.success(), "{}\n{stdout}", failures(&report));
    assert_eq!(report["measure"], "semantic");
    assert_eq!(
        report["summary"]["skipped"], 0,
        "nothing is skipped with a model"
    );
    assert_eq!(report["summary"]["failed"], 0, "{}", failures(&report));
}

#[test]
fn a_failing_scenario_is_reported_with_what_was_expected_and_the_run_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let fixtures = home.path().join("scenarios");
    std::fs::create_dir(&fixtures).unwrap();
    std::fs::write(
        fixtures.join("a-wrong.json"),
        r#"{"name": "wrong", "steps": [
            {"store": "Staging key AKIAIOSFODNN7EXAMPLE rotates monthly.", "as": "key", "expect": "admit"},
            {"store": "The standup moved to 9:30 on Mondays.", "as": "standup", "expect": "admit"},
            {"recall": "when is the standup", "expect_top": "key", "forbid": ["standup"]},
            {"store": "The standup moved to 9:30 on Mondays.", "as": "again", "expect": "reject"},
            {"pin": "again"}
        ]}"#,
    )
    .unwrap();
    std::fs::write(
        fixtures.join("b-right.json"),
        r#"{"name": "right", "steps": [
            {"store": "The standup moved to 9:30 on Mondays.", "as": "standup", "expect": "admit"},
            {"recall": "standup Mondays", "expect_top": "standup"}
        ]}"#,
    )
    .unwrap();
    let path = home.path().join("report.json");
    let (output, report, stdout) = eval_run(
        levh(home.path())
            .env("LEVH_EMBEDDER", "hash")
            .args(["eval", "run", "--fixtures"])
            .arg(&fixtures),
        &path,
    );
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let scenarios = report["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    let wrong = &scenarios[0];
    assert_eq!(wrong["status"], "failed");
    let failed: Vec<&Value> = wrong["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .collect();
    // The secret was redacted, not admitted; the standup came first, not the key; the
    // standup was returned although forbidden.
    assert_eq!(failed.len(), 3, "{wrong}");
    assert_eq!(failed[0]["expected"], "verdict admit");
    assert_eq!(failed[0]["actual"], "verdict redact");
    assert!(
        failed[1]["actual"]
            .as_str()
            .unwrap()
            .starts_with("returned [standup"),
        "{wrong}"
    );
    // Pinning what was rejected cannot run: the scenario stops and says why.
    assert!(
        wrong["note"]
            .as_str()
            .unwrap()
            .contains("`again` was not stored"),
        "{wrong}"
    );
    assert_eq!(scenarios[1]["status"], "passed");
    assert!(
        stdout.contains("wrong step 1 (store): expected verdict admit; got verdict redact"),
        "{stdout}"
    );
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
}

#[test]
fn a_bad_scenario_file_is_refused_naming_the_file_and_the_step() {
    let home = tempfile::tempdir().unwrap();
    let fixtures = home.path().join("scenarios");
    std::fs::create_dir(&fixtures).unwrap();
    std::fs::write(
        fixtures.join("typo.json"),
        r#"{"name": "typo", "steps": [
            {"store": "The standup moved to 9:30.", "as": "standup", "expect": "admit"},
            {"recall": "standup", "expect_first": "standup"}
        ]}"#,
    )
    .unwrap();
    let (output, _, stderr) = run(levh(home.path())
        .env("LEVH_EMBEDDER", "hash")
        .args(["eval", "run", "--fixtures"])
        .arg(&fixtures));
    assert!(!output.status.success());
    assert!(
        stderr.contains("typo.json")
            && stderr.contains("step 2")
            && stderr.contains("expect_first"),
        "{stderr}"
    );
    // No report is written for a run that did not happen.
    assert!(!home.path().join("eval/report.json").exists());

    let (output, _, stderr) = run(levh(home.path()).args(["eval", "report"]));
    assert!(!output.status.success());
    assert!(stderr.contains("levh eval run"), "{stderr}");
}

/// `levh benchmark --dataset conversational --check --json`, asserted to pass, with every
/// kind reported for levh and for the BM25 baseline and no evidence turn lost to the gate.
fn conversational_checked(command: &mut Command) -> Value {
    set_checked("conversational", command)
}

/// [`conversational_checked`] for any shipped conversational set.
fn set_checked(set: &str, command: &mut Command) -> Value {
    let (output, stdout, stderr) =
        run(command.args(["benchmark", "--dataset", set, "--check", "--json"]));
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{stderr}"));
    assert!(
        output.status.success() && report["passed"] == true,
        "{set} --check failed: {}\n{stderr}",
        serde_json::to_string_pretty(&report["checks"]).unwrap()
    );
    for side in ["levh", "bm25"] {
        let kinds: Vec<&str> = report["report"][side]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["all", "single-hop", "multi-hop", "temporal", "paraphrased"],
            "{side}"
        );
    }
    let report = report["report"].clone();
    assert!(report["turns"].as_u64().unwrap() >= 1400);
    assert!(report["questions"].as_array().unwrap().len() >= 300);
    let lost: Vec<&Value> = report["not_stored"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["evidence"] == true)
        .collect();
    assert!(
        lost.is_empty(),
        "the gate did not store evidence turns: {lost:?}"
    );
    report
}

fn all(report: &Value, side: &str, metric: &str) -> f64 {
    report[side][0][metric].as_f64().unwrap()
}

#[test]
fn conversational_benchmark_in_hash_mode_beats_the_in_run_bm25_baseline() {
    let home = tempfile::tempdir().unwrap();
    let hash = conversational_checked(levh(home.path()).env("LEVH_EMBEDDER", "hash"));
    assert_eq!(hash["measure"], "lexical");
    for metric in ["hit_at_10", "mrr"] {
        let (levh, bm25) = (all(&hash, "levh", metric), all(&hash, "bm25", metric));
        assert!(levh >= bm25 + 0.05, "{metric}: levh {levh} vs BM25 {bm25}");
    }
    // The table a person reads sets levh beside the baseline, kind by kind.
    let (output, stdout, _) = run(levh(home.path()).env("LEVH_EMBEDDER", "hash").args([
        "benchmark",
        "--dataset",
        "conversational",
        "--misses",
    ]));
    assert!(output.status.success());
    for word in [
        "BM25 hit@10",
        "Δ MRR",
        "single-hop",
        "multi-hop",
        "temporal",
        "paraphrased",
        "wanted",
    ] {
        assert!(stdout.contains(word), "{word} missing from:\n{stdout}");
    }
    assert_store_untouched(home.path());
}

/// The rule the fusion default was chosen by (#42), held on every shipped set of
/// different character — not on the mean: with the local model, levh beats BM25 and the
/// hash embedder in hit@10 and MRR, each set's `--check` passes for both embedders, and
/// the gate stores every evidence turn.
#[test]
fn with_the_local_model_levh_beats_bm25_and_the_hash_embedder_on_every_set() {
    let Some(assets) =
        assets("with_the_local_model_levh_beats_bm25_and_the_hash_embedder_on_every_set")
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    for set in ["conversational", "chat", "worknotes"] {
        let local = set_checked(set, assets.levh(home.path()).env("LEVH_EMBEDDER", "local"));
        assert_eq!(local["measure"], "semantic");
        let hash = set_checked(set, assets.levh(home.path()).env("LEVH_EMBEDDER", "hash"));
        for metric in ["hit_at_10", "mrr"] {
            let (l, h, b) = (
                all(&local, "levh", metric),
                all(&hash, "levh", metric),
                all(&local, "bm25", metric),
            );
            assert!(
                l > h && l > b,
                "{set} {metric}: local {l}, hash {h}, BM25 {b}"
            );
        }
    }
    assert_store_untouched(home.path());
}

#[test]
fn a_conversational_dataset_directory_with_a_bad_label_is_refused_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("dataset.json"),
        r#"{"name":"tiny","version":1,"thresholds":{"lexical":{"all":{"hit_at_10":1.0}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("a.json"),
        r#"{"id":"a","speakers":["Ann","Bo"],"sessions":[{"date":"2025-01-01T10:00:00Z","turns":[
            {"id":"s1t1","speaker":"Ann","text":"I adopted a grey cat called Pepper"},
            {"id":"s1t2","speaker":"Bo","text":"Lovely, my garden needs rain"}]}],
           "questions":[{"id":"q1","kind":"single-hop","question":"What is the cat called?","evidence":["s1t1"]}]}"#,
    )
    .unwrap();
    let (output, stdout, stderr) = run(levh(home.path()).env("LEVH_EMBEDDER", "hash").args([
        "benchmark",
        "--dataset",
        dir.to_str().unwrap(),
        "--check",
        "--json",
    ]));
    assert!(output.status.success(), "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["report"]["levh"][0]["hit_at_1"], 1.0, "{report}");
    assert_eq!(report["passed"], true);

    std::fs::write(
        dir.join("a.json"),
        r#"{"id":"a","speakers":["Ann","Bo"],"sessions":[{"date":"2025-01-01T10:00:00Z","turns":[
            {"id":"s1t1","speaker":"Ann","text":"I adopted a grey cat called Pepper"}]}],
           "questions":[{"id":"q1","kind":"single-hop","question":"What is the cat called?","evidence":["s4t4"]}]}"#,
    )
    .unwrap();
    let (output, _, stderr) = run(levh(home.path()).env("LEVH_EMBEDDER", "hash").args([
        "benchmark",
        "--dataset",
        dir.to_str().unwrap(),
    ]));
    assert!(!output.status.success());
    assert!(
        stderr.contains("a.json") && stderr.contains("q1") && stderr.contains("s4t4"),
        "{stderr}"
    );
    assert_store_untouched(home.path());
}

/// `levh eval detectors --check`: precision and recall of the decision, commitment (and due
/// date) and people detectors on the shipped labelled sets, per set and language, above the
/// thresholds kept with them; the held-out set's decisions and commitments at ≥ 0.85
/// precision.
#[test]
fn eval_detectors_check_passes_and_reports_every_slice() {
    let home = tempfile::tempdir().unwrap();
    let (output, stdout, stderr) =
        run(levh(home.path()).args(["eval", "detectors", "--check", "--json"]));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["failures"], json!([]), "{report}");
    let slices = report["slices"].as_array().unwrap();
    let find = |name: &str| {
        slices
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no slice {name} in {report}"))
    };
    for name in [
        "decisions/holdout/en",
        "decisions/holdout/tr",
        "commitments/holdout/en",
        "commitments/holdout/tr",
        "commitments/holdout/due",
        "people/holdout/all",
        "conflicts/holdout/en",
        "conflicts/holdout/de",
        "conflicts/holdout/kind/value",
        "conflicts/holdout/kind/negation",
        "conflicts/holdout/kind/antonym",
        "conflicts/holdout/kind/swap",
    ] {
        let slice = find(name);
        let found =
            slice["true_positives"].as_u64().unwrap() + slice["false_positives"].as_u64().unwrap();
        assert!(found > 0, "{name}: {slice}");
    }
    for name in [
        "decisions/holdout/all",
        "commitments/holdout/all",
        "conflicts/holdout/all",
    ] {
        let slice = find(name);
        let (tp, fp) = (
            slice["true_positives"].as_f64().unwrap(),
            slice["false_positives"].as_f64().unwrap(),
        );
        assert!(tp / (tp + fp) >= 0.85, "{name}: {slice}");
    }
    // The labelled sets are at least 100 sentences each (dev), plus the held-out ones.
    let total = |name: &str| {
        let s = find(name);
        [
            "true_positives",
            "false_positives",
            "false_negatives",
            "true_negatives",
        ]
        .iter()
        .map(|k| s[k].as_u64().unwrap())
        .sum::<u64>()
    };
    assert!(
        total("decisions/dev/all") >= 100 && total("commitments/dev/all") >= 100,
        "{report}"
    );
    assert_store_untouched(home.path());
}

/// `levh tune` on one conversation of the worknotes set, from a config.toml that sets a
/// poor hash weight: it cross-validates, reports the held-out gain over the current
/// settings, and `--write` saves the chosen ones into config.toml keeping the user's other
/// keys and comments — after which levh reads them back as its settings. Without
/// `--write` nothing is saved; a bad dataset is refused naming it.
#[test]
fn tune_cross_validates_and_writes_only_when_asked_and_only_a_held_out_gain() {
    let home = tempfile::tempdir().unwrap();
    let set = home.path().join("set");
    std::fs::create_dir(&set).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/benchmark/worknotes");
    std::fs::copy(shipped.join("dataset.json"), set.join("dataset.json")).unwrap();
    let mut conversations: Vec<_> = std::fs::read_dir(&shipped)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "dataset.json")
        .collect();
    conversations.sort();
    std::fs::copy(&conversations[0], set.join("one.json")).unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        "# my settings\ngain = 0.6\nfusion_hash_weight = 0.9\n",
    )
    .unwrap();
    let tune = |write: bool| {
        let mut command = levh(home.path());
        command.env("LEVH_EMBEDDER", "hash").args([
            "--json",
            "tune",
            "--dataset",
            set.to_str().unwrap(),
        ]);
        if write {
            command.arg("--write");
        }
        let (output, stdout, stderr) = run(&mut command);
        assert!(output.status.success(), "{stdout}{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };

    let dry = tune(false);
    let report = &dry["report"];
    assert_eq!(report["current"]["fusion_weight"], 0.9, "{report}");
    assert!(report["questions"].as_u64().unwrap() > 50);
    assert_eq!(report["folds"], 5);
    assert_eq!(report["fold_choices"].as_array().unwrap().len(), 5);
    let gain = report["held_out_gain"].as_f64().unwrap();
    let (held_out, current) = (
        report["held_out_tuned"]["mrr"].as_f64().unwrap(),
        report["current_score"]["mrr"].as_f64().unwrap(),
    );
    assert!((gain - (held_out - current)).abs() < 1e-9, "{report}");
    assert!(
        gain > 0.0,
        "a 0.9 hash weight should be beaten held out: {report}"
    );
    assert_eq!(dry["written"], Value::Null);
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("fusion_hash_weight = 0.9")
    );

    let wrote = tune(true);
    let chosen = wrote["report"]["chosen"]["fusion_weight"].as_f64().unwrap();
    assert!(chosen < 0.9, "{wrote}");
    assert!(wrote["written"].as_str().unwrap().ends_with("config.toml"));
    let saved = std::fs::read_to_string(&config).unwrap();
    assert!(saved.starts_with("# my settings\ngain = 0.6\n"), "{saved}");
    assert!(
        saved.contains(&format!("fusion_hash_weight = {chosen}")),
        "{saved}"
    );
    assert!(saved.contains("fusion_temporal_boost = "), "{saved}");
    // levh reads what was saved: tuning again starts from it and has nothing to gain.
    let again = tune(false);
    assert_eq!(
        again["report"]["current"]["fusion_weight"], chosen,
        "{again}"
    );

    let (output, _, stderr) = run(levh(home.path()).args(["tune", "--dataset", "no-such-set"]));
    assert!(!output.status.success());
    assert!(stderr.contains("no-such-set"), "{stderr}");
    assert_store_untouched(home.path());
}
