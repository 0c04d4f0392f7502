//! `levh sync` end to end: the real binary, the built-in `local_files` component, a real
//! directory; and the sync engine's recovery paths with a scripted source.

use std::path::Path;
use std::time::Duration;

use levh_core::sync::{
    FetchError, FetchFailure, Source, SourceItem, SourceItemError, SourcePage, SyncOptions,
};
use levh_core::{MemoryFilter, Page};
use serde_json::Value;

use crate::support::{Harness, distinct_sentence, json, levh, ok};

fn sync(home: &Path, dir: &Path) -> Value {
    json(
        levh(home)
            .args(["sync", "local_files", "--json", "--config"])
            .arg(format!("directory={}", dir.display())),
    )
}

fn memories(home: &Path) -> Vec<Value> {
    json(levh(home).args(["list", "--json", "--limit", "1000"]))["memories"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_second_sync_stores_nothing_new_and_an_edit_updates_exactly_that_memory() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("standup.md", "Standup is at 9:30 in room Atlas"),
        ("db.txt", "The API uses PostgreSQL 16"),
        ("lunch.txt", "Team lunch is on Thursdays"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let first = sync(home.path(), dir.path());
    assert_eq!(
        (
            first["fetched"].as_u64(),
            first["admitted"].as_u64(),
            first["failed"].as_u64()
        ),
        (Some(3), Some(3), Some(0)),
        "{first}"
    );

    let second = sync(home.path(), dir.path());
    assert_eq!(second["admitted"], 0, "{second}");
    assert_eq!(second["rejected"], 0, "no duplicates: {second}");
    assert_eq!(second["unchanged"], 3, "{second}");

    let before = memories(home.path());
    let db_before = before
        .iter()
        .find(|m| m["content"].as_str().unwrap().contains("PostgreSQL"))
        .unwrap()
        .clone();
    std::fs::write(
        dir.path().join("db.txt"),
        "The API uses PostgreSQL 17 since March",
    )
    .unwrap();
    let third = sync(home.path(), dir.path());
    assert_eq!(
        (
            third["updated"].as_u64(),
            third["unchanged"].as_u64(),
            third["admitted"].as_u64()
        ),
        (Some(1), Some(2), Some(0)),
        "{third}"
    );

    let after = memories(home.path());
    assert_eq!(after.len(), 3, "updated in place, not duplicated");
    let db_after = after.iter().find(|m| m["id"] == db_before["id"]).unwrap();
    assert!(
        db_after["content"]
            .as_str()
            .unwrap()
            .contains("PostgreSQL 17"),
        "{db_after}"
    );
    for memory in &after {
        if memory["id"] != db_before["id"] {
            assert!(
                before
                    .iter()
                    .any(|b| b["id"] == memory["id"] && b["content"] == memory["content"])
            );
        }
        assert_eq!(memory["source"], "connector:local_files");
        assert_eq!(memory["kind"], "document");
    }

    let runs = json(levh(home.path()).args(["sync", "status", "--json"]));
    assert_eq!(runs.as_array().unwrap().len(), 3);
    assert_eq!(runs[0]["updated"], 1, "newest first: {runs}");
}

/// The fate column of a row of the not-stored table (cells are padded to the widest).
fn fate_column(line: &str) -> Option<&str> {
    line.split('┆').nth(1).map(str::trim)
}

#[test]
fn a_bad_item_is_skipped_with_a_clear_line_and_the_run_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.txt"),
        "The release train leaves on Wednesdays",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("latin1.txt"),
        [0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x6f, 0x69, 0x72],
    )
    .unwrap();
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    std::fs::write(
        dir.path().join("image.png"),
        [0x89, 0x50, 0x4e, 0x47, 0x00, 0x00],
    )
    .unwrap();
    let report = sync(home.path(), dir.path());
    assert_eq!(report["status"], "ok");
    assert_eq!(report["admitted"], 1, "{report}");
    // The binary image is passed over on purpose: skipped, not failed.
    assert_eq!(report["failed"], 2, "{report}");
    assert_eq!(report["skipped"], 1, "{report}");
    let errors: Vec<&str> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("latin1.txt: ") && e.contains("UTF-8")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("empty.txt: ")),
        "{errors:?}"
    );
    assert!(
        !errors.iter().any(|e| e.starts_with("image.png: ")),
        "{errors:?}"
    );
    assert!(
        report["not_stored"].as_array().unwrap().iter().any(|i| {
            i["source_id"] == "image.png"
                && i["fate"] == "skipped"
                && i["reason"]
                    .as_str()
                    .is_some_and(|why| why.starts_with("binary file"))
        }),
        "{report}"
    );
    // the human output shows one row per bad item, naming it and why
    let text = String::from_utf8(
        ok(levh(home.path())
            .args(["sync", "local_files", "--config"])
            .arg(format!("directory={}", dir.path().display())))
        .stdout,
    )
    .unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| fate_column(l) == Some("failed"))
            .count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| fate_column(l) == Some("skipped"))
            .count(),
        1,
        "{text}"
    );
}

#[test]
fn secrets_in_synced_files_are_redacted_and_a_near_duplicate_is_held() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wifi.txt"),
        "Guest wifi: password=Tr0ub4dor3x",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.txt"),
        "The deploy branch for atlas is main.",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.txt"),
        "The deploy branch for atlas is prod.",
    )
    .unwrap();
    let report = sync(home.path(), dir.path());
    assert_eq!(report["redacted"], 1, "{report}");
    assert_eq!(report["held"], 1, "{report}");
    let held = json(levh(home.path()).args(["held", "list", "--json"]));
    assert_eq!(held["held"].as_array().unwrap().len(), 1);
    let again = sync(home.path(), dir.path());
    assert_eq!(again["held"], 0, "a held item is not held twice: {again}");
    let all: String = memories(home.path())
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(!all.contains("Tr0ub4dor3x"));
}

#[test]
fn a_connector_needs_its_required_settings_and_refuses_unknown_ones() {
    let home = tempfile::tempdir().unwrap();
    let out = levh(home.path())
        .args(["sync", "local_files"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --config directory="));
    let out = levh(home.path())
        .args([
            "sync",
            "local_files",
            "-c",
            "directory=/tmp",
            "-c",
            "colour=blue",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no setting `colour`"));
    let out = levh(home.path())
        .args(["sync", "no_such_connector"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no connector `no_such_connector`"));
}

#[test]
fn killing_a_sync_midway_and_running_it_again_completes_without_duplicates() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = 250;
    for i in 0..files {
        std::fs::write(
            dir.path().join(format!("note-{i:03}.txt")),
            distinct_sentence(i),
        )
        .unwrap();
    }
    let mut child = levh(home.path())
        .args(["sync", "local_files", "--config"])
        .arg(format!("directory={}", dir.path().display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it has stored something, then kill it without warning.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() || std::time::Instant::now() > deadline {
            break;
        }
        let stats = levh(home.path())
            .args(["stats", "--json"])
            .output()
            .unwrap();
        let total = serde_json::from_slice::<Value>(&stats.stdout)
            .ok()
            .and_then(|v| v["total"].as_u64())
            .unwrap_or(0);
        if total > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();

    let report = sync(home.path(), dir.path());
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(
        report["rejected"], 0,
        "nothing counted as a duplicate of itself: {report}"
    );
    let stored = memories(home.path());
    assert_eq!(stored.len(), files as usize, "every file once");
    let again = sync(home.path(), dir.path());
    assert_eq!(again["unchanged"], files, "{again}");
}

/// A source that serves scripted pages, and fails where told to.
struct Scripted {
    pages: Vec<SourcePage>,
    fail_at: Option<usize>,
    calls: usize,
    /// The configuration's cursor key (`scripted` when none).
    key: Option<&'static str>,
}

impl Source for Scripted {
    fn connector(&self) -> &str {
        "scripted"
    }
    fn cursor_key(&self) -> String {
        self.key.unwrap_or("scripted").to_owned()
    }
    fn fetch(&mut self, cursor: Option<String>) -> Result<SourcePage, FetchError> {
        self.calls += 1;
        let index: usize = cursor.as_deref().map_or(0, |c| c.parse().unwrap());
        if self.fail_at == Some(index) {
            return Err(FetchError::new(
                FetchFailure::Unavailable,
                "the source went away",
            ));
        }
        Ok(self.pages[index].clone())
    }
}

fn item(id: &str, text: &str) -> SourceItem {
    SourceItem {
        source_id: id.into(),
        title: String::new(),
        content: text.into(),
        kind: "note".into(),
        occurred_at: Some("2026-02-01T10:00:00Z".parse().unwrap()),
        people: vec![levh_core::sync::ItemPerson {
            name: Some("Ada".into()),
            email: Some("ada@example.com".into()),
            role: "author".into(),
        }],
        source_uri: None,
        metadata: serde_json::json!({ "n": id }),
    }
}

/// Runs a scripted sync; returns the report and how many pages were fetched.
fn scripted_sync(
    h: &Harness,
    fail_at: Option<usize>,
    options: SyncOptions,
) -> (levh_core::sync::SyncReport, usize) {
    let mut source = Scripted {
        pages: pages(),
        fail_at,
        calls: 0,
        key: None,
    };
    let report = h
        .levh
        .sync(&h.scope, &mut source, options, None, &mut |_| {})
        .unwrap();
    (report, source.calls)
}

fn pages() -> Vec<SourcePage> {
    vec![
        SourcePage {
            items: vec![
                item("1", &distinct_sentence(1)),
                item("2", &distinct_sentence(2)),
            ],
            next_cursor: Some("1".into()),
            done: false,
            ..SourcePage::default()
        },
        SourcePage {
            items: vec![item("3", &distinct_sentence(3))],
            next_cursor: None,
            done: true,
            ..SourcePage::default()
        },
    ]
}

#[test]
fn the_cursor_moves_only_past_stored_pages_and_a_failed_run_resumes() {
    let h = Harness::new();
    let (report, _) = scripted_sync(&h, Some(1), SyncOptions::default());
    assert_eq!(report.status.as_str(), "failed");
    assert_eq!(report.admitted, 2);
    assert!(
        report
            .errors
            .iter()
            .any(|e| e.contains("the source went away"))
    );

    let (report, calls) = scripted_sync(&h, None, SyncOptions::default());
    assert_eq!(report.status.as_str(), "ok");
    assert_eq!(calls, 1, "resumed at the saved cursor, page 2 only");
    assert_eq!(report.admitted, 1);
    let stored = h
        .levh
        .list(
            &h.scope,
            MemoryFilter::default(),
            Page {
                limit: 10,
                offset: 0,
            },
        )
        .unwrap();
    assert_eq!(stored.len(), 3);
    let first = stored
        .iter()
        .find(|m| m.metadata["source_id"] == "1")
        .unwrap();
    assert_eq!(
        first.valid_from,
        "2026-02-01T10:00:00Z".parse().unwrap(),
        "world time is the item's time"
    );
    assert_eq!(first.metadata["people"][0]["email"], "ada@example.com");
    assert_eq!(first.source, "connector:scripted");
}

#[test]
fn an_item_stored_by_a_run_that_died_before_recording_it_is_linked_not_duplicated() {
    let h = Harness::new();
    scripted_sync(&h, None, SyncOptions::default());
    // Forget which items were recorded, as if the process died between storing and recording.
    h.store.with_connection(|c| {
        c.execute_batch("DELETE FROM sync_items; DELETE FROM sync_state;")
            .unwrap()
    });
    let (report, _) = scripted_sync(&h, None, SyncOptions::default());
    assert_eq!(
        (report.rejected, report.unchanged, report.admitted),
        (0, 3, 0),
        "{report:?}"
    );
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
        3
    );
}

#[test]
fn a_dry_run_evaluates_every_item_and_stores_nothing() {
    let h = Harness::new();
    let (report, _) = scripted_sync(&h, None, SyncOptions { dry_run: true });
    assert_eq!((report.status.as_str(), report.admitted), ("dry-run", 3));
    assert!(
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
            .is_empty()
    );
    assert!(h.levh.sync_runs(&h.scope, None, 10).unwrap().is_empty());
}

#[test]
fn a_third_party_connector_from_the_template_builds_installs_and_syncs() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("team-notes");
    // Made by a copy of the binary, as one installed elsewhere would be: the crate must
    // carry the SDK and the WIT package itself, never a path into this source tree.
    let installed = work.path().join("bin/levh");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::copy(crate::support::levh_binary(), &installed).unwrap();
    let target = crate::support::repository_root().join("target/third-party");
    let created = ok(std::process::Command::new(&installed)
        .env("LEVH_HOME", home.path())
        .env("CARGO_TARGET_DIR", &target)
        .args(["connector", "new", "team-notes", "--dir"])
        .arg(&crate_dir));
    assert!(crate_dir.join("src/lib.rs").is_file());
    // The path it prints is where the build below puts the component, followed literally.
    let printed = String::from_utf8(created.stdout).unwrap();
    let expected = target.join("wasm32-wasip2/release/team_notes.wasm");
    assert!(
        printed.contains(&format!(
            "add it:    levh connector add {}",
            expected.display()
        )),
        "{printed}"
    );
    let readme = std::fs::read_to_string(crate_dir.join("README.md")).unwrap();
    for step in [
        "rustup target add wasm32-wasip2",
        "cargo build --target wasm32-wasip2 --release",
        "levh connector run target/wasm32-wasip2/release/team_notes.wasm",
        "levh connector add target/wasm32-wasip2/release/team_notes.wasm --grant",
        "levh sync team-notes --config directory=",
    ] {
        assert!(readme.contains(step), "README.md lacks `{step}`:\n{readme}");
    }
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(r#"levh-connector-sdk = { path = "sdk" }"#),
        "{manifest}"
    );
    let root = crate::support::repository_root();
    for file in ["Cargo.toml", "sdk/Cargo.toml", "sdk/src/lib.rs"] {
        let text = std::fs::read_to_string(crate_dir.join(file)).unwrap();
        assert!(
            !text.contains(&*root.to_string_lossy()) && !text.contains("../../wit"),
            "{file} reaches outside the crate"
        );
    }

    // Built as its author would, with the machine's cargo (a target dir shared across runs),
    // at the versions the crate's Cargo.lock pins: `--locked` fails if the embedded lock no
    // longer matches the SDK's dependencies.
    let lock = std::fs::read_to_string(crate_dir.join("Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"team-notes\""), "{lock}");
    let mut build = crate::support::guest_cargo(
        &crate_dir,
        &["--target", "wasm32-wasip2", "--release", "--locked"],
    );
    build.env("CARGO_TARGET_DIR", &target);
    assert!(
        build.status().unwrap().success(),
        "the template must build with its Cargo.lock (after a change to the SDK's \
         dependencies, run scripts/connector-template-lock.sh)"
    );
    let wasm = target.join("wasm32-wasip2/release/team_notes.wasm");

    let refused = levh(home.path())
        .args(["connector", "add"])
        .arg(&wasm)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    let wrong_sha = levh(home.path())
        .args(["connector", "add", "--yes", "--sha256", "00"])
        .arg(&wasm)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&wrong_sha.stderr).contains("not the expected 00"));
    let not_a_connector = levh(home.path())
        .args(["connector", "add", "--yes"])
        .arg(crate_dir.join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&not_a_connector.stderr)
            .contains("is not a levh connector: not a WebAssembly file")
    );

    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("retro.txt"),
        "Retro action: rotate the on-call every week",
    )
    .unwrap();
    std::fs::write(notes.path().join("ignored.md"), "not a .txt file").unwrap();
    // Its author tries it before installing: one run against a throwaway store.
    let tried = json(
        levh(home.path())
            .args(["connector", "run", "--json"])
            .arg(&wasm)
            .arg("--config")
            .arg(format!("directory={}", notes.path().display())),
    );
    assert_eq!(tried["connector"], "team-notes", "{tried}");
    assert_eq!(tried["admitted"], 1, "{tried}");
    assert!(
        memories(home.path()).is_empty(),
        "the person's store is untouched"
    );
    let listed = json(levh(home.path()).args(["connector", "list", "--json"]));
    assert!(
        !listed["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "team-notes"),
        "nothing was installed: {listed}"
    );
    let added = json(
        levh(home.path())
            .args(["connector", "add", "--yes", "--grant"])
            .arg(notes.path())
            .arg(&wasm)
            .arg("--json"),
    );
    assert_eq!(added["installed"], "team-notes", "{added}");
    assert_eq!(added["replaced"], Value::Null, "{added}");
    // Installing it again says what it replaces, before replacing, --yes or not.
    let again = levh(home.path())
        .args(["connector", "add", "--yes", "--json"])
        .arg(&wasm)
        .output()
        .unwrap();
    assert!(again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("replacing team-notes 0.1.0 (sha256 ")
            && said.contains("(the same component: nothing changes)"),
        "{said}"
    );
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["replaced"]["sha256"], added["sha256"], "{again}");
    let listed = json(levh(home.path()).args(["connector", "list", "--json"]));
    assert!(
        listed["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "team-notes" && c["origin"] == "installed")
    );

    let report = json(
        levh(home.path())
            .args(["sync", "team-notes", "--json", "--config"])
            .arg(format!("directory={}", notes.path().display())),
    );
    assert_eq!(report["admitted"], 1, "{report}");
    let stored = memories(home.path());
    assert_eq!(stored[0]["source"], "connector:team-notes");

    ok(levh(home.path()).args(["connector", "remove", "team-notes"]));
    let listed = json(levh(home.path()).args(["connector", "list", "--json"]));
    assert!(
        !listed["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "team-notes")
    );
    assert_eq!(
        memories(home.path()).len(),
        1,
        "removing a connector keeps its memories"
    );
}

#[test]
fn each_configuration_of_a_connector_keeps_its_own_cursor() {
    let h = Harness::new();
    let run = |key, fail_at| {
        let mut source = Scripted {
            pages: pages(),
            fail_at,
            calls: 0,
            key: Some(key),
        };
        let report = h
            .levh
            .sync(
                &h.scope,
                &mut source,
                SyncOptions::default(),
                None,
                &mut |_| {},
            )
            .unwrap();
        (report.status.as_str().to_owned(), source.calls)
    };
    // Configuration A stops after its first page; B runs to the end (its cursor is
    // cleared); A resumes at its second page, not at the start B's run left behind.
    assert_eq!(run("scripted@a", Some(1)).0, "failed");
    assert_eq!(run("scripted@b", None), ("ok".to_owned(), 2));
    assert_eq!(
        run("scripted@a", None),
        ("ok".to_owned(), 1),
        "A resumed at its own cursor"
    );
}

/// The files of a directory a person syncs: a copy, a one-fact update, a file that is
/// not text, and ordinary notes.
fn untidy_notes(dir: &Path) {
    for (name, text) in [
        ("branch.txt", "The deploy branch for atlas is main."),
        ("branch-copy.txt", "The deploy branch for atlas is main."),
        ("branch-new.txt", "The deploy branch for atlas is prod."),
        ("lunch.txt", "Team lunch is on Thursdays at the noodle bar."),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    // Same text as the first under another name: the titles differ, the content not.
    std::fs::write(
        dir.join("port-a.md"),
        "The staging database runs on port 5432.",
    )
    .unwrap();
    std::fs::write(
        dir.join("port-b.md"),
        "The staging database runs on port 5432.",
    )
    .unwrap();
    std::fs::write(dir.join("blob.txt"), [0xffu8, 0xfe, 0x00, 0x81, 0x9f, 0xc3]).unwrap();
}

#[test]
fn every_item_a_sync_did_not_store_is_named_with_its_fate_and_reason_in_the_report_and_status() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    untidy_notes(dir.path());
    let report = sync(home.path(), dir.path());
    let not_stored = report["not_stored"].as_array().unwrap();
    let count = |fate: &str| not_stored.iter().filter(|i| i["fate"] == fate).count() as u64;
    assert_eq!(
        (
            count("held"),
            count("rejected"),
            count("failed"),
            count("skipped")
        ),
        (
            report["held"].as_u64().unwrap(),
            report["rejected"].as_u64().unwrap(),
            report["failed"].as_u64().unwrap(),
            report["skipped"].as_u64().unwrap()
        ),
        "every item not stored is named: {report}"
    );
    assert!(
        not_stored.len() >= 2,
        "a copy and an update at least: {report}"
    );
    for item in not_stored {
        assert!(
            item["source_id"].as_str().is_some_and(|s| !s.is_empty()),
            "{item}"
        );
        assert!(
            item["reason"].as_str().is_some_and(|s| !s.is_empty()),
            "{item}"
        );
        if item["fate"] == "held" {
            assert!(item["held_id"].is_string(), "{item}");
            assert!(item["nearest"].is_string(), "{item}");
        }
    }
    // The same list, from the run record.
    let run = report["run_id"].as_str().unwrap();
    let again = json(levh(home.path()).args(["sync", "status", run, "--json"]));
    assert_eq!(again["not_stored"], report["not_stored"]);
    // And in the table a person reads.
    let table = ok(levh(home.path()).args(["sync", "status", run]));
    let table = String::from_utf8_lossy(&table.stdout);
    for item in not_stored {
        let file = Path::new(item["source_id"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(table.contains(&file), "{file} missing from:\n{table}");
    }
}

#[test]
fn a_dry_run_judges_the_runs_own_items_as_the_real_run_does() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    untidy_notes(dir.path());
    for n in 0..6 {
        // A template many files share: only the first is new.
        std::fs::write(
            dir.path().join(format!("standup-{n}.md")),
            "Standup notes: nothing to report, everyone is on track.",
        )
        .unwrap();
    }
    let dry = json(
        levh(home.path())
            .args(["sync", "local_files", "--dry-run", "--json", "--config"])
            .arg(format!("directory={}", dir.path().display())),
    );
    let real = sync(home.path(), dir.path());
    for field in ["admitted", "redacted", "held", "rejected", "failed"] {
        assert_eq!(dry[field], real[field], "{field}: dry {dry}\nreal {real}");
    }
}

/// A source whose second page never comes back: the process dies while fetching it.
struct DiesOnSecondPage;

impl Source for DiesOnSecondPage {
    fn connector(&self) -> &str {
        "scripted"
    }
    fn cursor_key(&self) -> String {
        "scripted".into()
    }
    fn fetch(&mut self, cursor: Option<String>) -> Result<SourcePage, FetchError> {
        match cursor {
            None => Ok(pages().remove(0)),
            Some(_) => panic!("killed"),
        }
    }
}

#[test]
fn a_run_killed_midway_shows_as_interrupted_with_what_it_stored() {
    let h = Harness::new();
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        h.levh.sync(
            &h.scope,
            &mut DiesOnSecondPage,
            SyncOptions::default(),
            None,
            &mut |_| {},
        )
    }));
    assert!(died.is_err());
    let runs = h.levh.sync_runs(&h.scope, None, 10).unwrap();
    assert_eq!(runs[0].status.as_str(), "running", "{runs:?}");
    assert_eq!(
        (runs[0].fetched, runs[0].admitted),
        (2, 2),
        "the first page is recorded"
    );
    h.clock
        .advance_hours((levh_core::sync::STALE_RUN_MINUTES + 1) as f64 / 60.0);
    let runs = h.levh.sync_runs(&h.scope, None, 10).unwrap();
    assert_eq!(runs[0].status.as_str(), "interrupted", "{runs:?}");
    assert_eq!(runs[0].admitted, 2);
    let one = h.levh.sync_run(&h.scope, &runs[0].run_id).unwrap().unwrap();
    assert_eq!(one.status.as_str(), "interrupted");
}

#[test]
fn a_note_longer_than_the_gate_admits_is_stored_cut_with_a_marker_not_dropped() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let paragraph =
        |n: usize| format!("Paragraph {n} of the design notes. ") + &"detail ".repeat(150);
    let long: Vec<String> = (0..60).map(paragraph).collect();
    let long = long.join("\n\n");
    assert!(long.chars().count() > 32_000);
    std::fs::write(dir.path().join("design.md"), &long).unwrap();
    let report = sync(home.path(), dir.path());
    assert_eq!(
        (&report["admitted"], &report["rejected"]),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "{report}"
    );
    let stored = memories(home.path());
    let content = stored[0]["content"].as_str().unwrap();
    assert!(content.chars().count() <= 32_000);
    assert!(content.starts_with("design.md\n\nParagraph 0 of the design notes."));
    assert!(
        content.contains("characters kept; the whole item is at file:"),
        "{}",
        &content[content.len() - 200..]
    );
    let truncated = &stored[0]["metadata"]["truncated"];
    assert!(
        truncated["chars"].as_u64().unwrap() > truncated["kept"].as_u64().unwrap(),
        "{truncated}"
    );
    // Unchanged on the next run: the whole file's hash is what is compared.
    let again = sync(home.path(), dir.path());
    assert_eq!(again["unchanged"], 1, "{again}");
}

/// One calendar's distinct events (another day's stand-up, with the same title, room and
/// people) are neither held as versions of each other nor interfere — within a page and
/// across runs — while two notes of one folder saying different things are still held,
/// and a copy is still a duplicate.
#[test]
fn distinct_events_of_one_source_are_not_held_as_versions_of_each_other() {
    let event = |id: &str, day: u32, kind: &str| SourceItem {
        source_id: id.into(),
        title: "Weekly planning with the platform team".into(),
        content: format!(
            "Weekly planning with the platform team\nWhen: Monday {day} March 2026, 10:00 to 11:00 (Europe/Berlin)\nWhere: Room 4, second floor\nWho: Ada Lovelace, Bruno Costa, Chen Wei"
        ),
        kind: kind.into(),
        occurred_at: Some(format!("2026-03-{day:02}T09:00:00Z").parse().unwrap()),
        people: Vec::new(),
        source_uri: None,
        metadata: serde_json::json!({}),
    };
    let run = |h: &Harness, items: Vec<SourceItem>| {
        let mut source = Scripted {
            pages: vec![SourcePage {
                items,
                next_cursor: None,
                done: true,
                ..SourcePage::default()
            }],
            fail_at: None,
            calls: 0,
            key: None,
        };
        h.levh
            .sync(
                &h.scope,
                &mut source,
                SyncOptions::default(),
                None,
                &mut |_| {},
            )
            .unwrap()
    };

    let events = Harness::new();
    let first = run(
        &events,
        vec![event("a", 2, "event"), event("b", 9, "event")],
    );
    assert_eq!((first.admitted, first.held), (2, 0), "{first:?}");
    let later = run(&events, vec![event("c", 16, "event")]);
    assert_eq!((later.admitted, later.held), (1, 0), "{later:?}");
    // A copy of an event under another id is still a duplicate.
    let mut copy = event("d", 16, "event");
    copy.occurred_at = Some("2026-03-16T09:30:00Z".parse().unwrap());
    let again = run(&events, vec![copy]);
    assert_eq!((again.admitted, again.rejected), (0, 1), "{again:?}");

    // The same texts as notes: the gate's usual rule holds the second.
    let notes = Harness::new();
    let report = run(&notes, vec![event("a", 2, "note"), event("b", 9, "note")]);
    assert_eq!((report.admitted, report.held), (1, 1), "{report:?}");
}

/// The `connector:` source is the sync engine's: a client that names itself after a
/// connector (REST's `X-Levh-Client`, as an MCP client name would) is recorded as a
/// client and judged as any capture — it cannot borrow the rule that keeps one
/// calendar's distinct events apart to slip a near-copy past the held queue.
#[test]
fn a_client_naming_itself_a_connector_is_judged_as_a_client() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, address) = crate::support::serve(home.path(), &[("LEVH_EMBEDDER", "hash")]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let store = |id: &str, day: u32| -> Value {
        let mut response = agent
            .post(format!("http://{address}/api/memories"))
            .header("x-levh-client", "connector:calendar")
            .send_json(serde_json::json!({
                "content": format!(
                    "Weekly planning with the platform team\nWhen: Monday {day} March 2026, 10:00 to 11:00 (Europe/Berlin)\nWhere: Room 4, second floor\nWho: Ada Lovelace, Bruno Costa, Chen Wei"
                ),
                "kind": "event",
                "valid_from": format!("2026-03-{day:02}T09:00:00Z"),
                "metadata": {"source_id": id},
            }))
            .unwrap();
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    };
    let first = store("a", 2);
    let second = store("b", 9);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(first["verdict"], "admit", "{first}");
    assert_eq!(first["source"], "client:connector:calendar", "{first}");
    assert_eq!(second["verdict"], "review", "{second}");
}

fn recall_contents(home: &Path, query: &str, known_at: Option<&str>) -> Vec<String> {
    let mut command = levh(home);
    command.args(["recall", query, "--json", "--no-reinforce", "--limit", "20"]);
    if let Some(at) = known_at {
        command.args(["--known-at", at]);
    }
    json(&mut command)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"].as_str().unwrap().to_owned())
        .collect()
}

/// Deleted, renamed and edited files, synced again through the binary: the deleted one is
/// retired (gone from recall, there with `--known-at` before the sync, named in the
/// report), the renamed one keeps being recalled under its new name, the edited one is
/// updated in place, the rest untouched; a second sync changes nothing.
#[test]
fn files_deleted_or_renamed_at_the_source_are_retired_and_named_in_the_report() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("standup.md", "Standup is at 9:30 in room Atlas"),
        ("db.txt", "The API uses PostgreSQL 16"),
        ("lunch.txt", "Team lunch is on Thursdays at the Thai place"),
        (
            "badge.txt",
            "Visitor badges are printed at the front desk of building C",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let first = sync(home.path(), dir.path());
    assert_eq!(first["admitted"], 4, "{first}");
    let before_change = first["finished_at"].as_str().unwrap().to_owned();
    let ids_before: Vec<Value> = memories(home.path())
        .iter()
        .map(|m| m["id"].clone())
        .collect();

    std::fs::remove_file(dir.path().join("lunch.txt")).unwrap();
    std::fs::rename(
        dir.path().join("badge.txt"),
        dir.path().join("visitors.txt"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("db.txt"),
        "The API uses PostgreSQL 17 since March",
    )
    .unwrap();
    let second = sync(home.path(), dir.path());
    assert_eq!(second["status"], "ok", "{second}");
    assert_eq!(
        (
            second["retired"].as_u64(),
            second["updated"].as_u64(),
            second["unchanged"].as_u64(),
            second["admitted"].as_u64(),
            second["held"].as_u64(),
            second["rejected"].as_u64()
        ),
        (Some(2), Some(1), Some(1), Some(1), Some(0), Some(0)),
        "{second}"
    );
    let mut retired: Vec<(&str, &str)> = second["retirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source_id"].as_str().unwrap(),
                r["reason"].as_str().unwrap(),
            )
        })
        .collect();
    retired.sort();
    assert_eq!(
        retired,
        [
            ("badge.txt", levh_core::sync::NOT_LISTED),
            ("lunch.txt", levh_core::sync::NOT_LISTED)
        ]
    );
    assert!(
        second["not_stored"].as_array().unwrap().is_empty(),
        "the renamed file is judged again once its old name is retired: {second}"
    );

    // Gone from default recall, still there for what levh knew before the sync.
    assert!(
        recall_contents(home.path(), "Thai lunch Thursdays", None)
            .iter()
            .all(|c| !c.contains("Thai"))
    );
    assert!(
        recall_contents(home.path(), "Thai lunch Thursdays", Some(&before_change))
            .iter()
            .any(|c| c.contains("Thai"))
    );
    // The renamed file is recalled once, under its new name.
    let badges = recall_contents(home.path(), "visitor badges front desk", None);
    assert_eq!(
        badges.iter().filter(|c| c.contains("badges")).count(),
        1,
        "{badges:?}"
    );
    let now = memories(home.path());
    assert_eq!(now.len(), 3, "{now:?}");
    let visitors = now
        .iter()
        .find(|m| m["content"].as_str().unwrap().contains("badges"))
        .unwrap();
    assert_eq!(visitors["metadata"]["source_id"], "visitors.txt");
    // Untouched and edited-in-place memories keep their ids.
    for memory in &now {
        if memory["metadata"]["source_id"] != "visitors.txt" {
            assert!(ids_before.contains(&memory["id"]), "{memory}");
        }
    }
    let third = sync(home.path(), dir.path());
    assert_eq!(
        (
            third["retired"].as_u64(),
            third["unchanged"].as_u64(),
            third["admitted"].as_u64(),
            third["updated"].as_u64()
        ),
        (Some(0), Some(3), Some(0), Some(0)),
        "{third}"
    );

    // A file that comes back is a new item again.
    std::fs::write(dir.path().join("lunch.txt"), files[2].1).unwrap();
    let fourth = sync(home.path(), dir.path());
    assert_eq!(fourth["admitted"], 1, "{fourth}");
    assert!(
        recall_contents(home.path(), "Thai lunch Thursdays", None)
            .iter()
            .any(|c| c.contains("Thai"))
    );
}

/// Only a listing that ran to its end retires: a dry run names what it would retire and
/// changes nothing; a folder that cannot be read retires nothing.
#[test]
fn a_dry_run_names_what_it_would_retire_and_a_failed_listing_retires_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.txt"),
        "The build uses cargo nextest in CI",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.txt"),
        "Release notes live in docs/CHANGELOG.md",
    )
    .unwrap();
    assert_eq!(sync(home.path(), dir.path())["admitted"], 2);
    std::fs::remove_file(dir.path().join("b.txt")).unwrap();
    let dry = json(
        levh(home.path())
            .args(["sync", "local_files", "--json", "--dry-run", "--config"])
            .arg(format!("directory={}", dir.path().display())),
    );
    assert_eq!(dry["retired"], 1, "{dry}");
    assert_eq!(dry["retirements"][0]["source_id"], "b.txt", "{dry}");
    assert_eq!(memories(home.path()).len(), 2, "a dry run retires nothing");

    let real = sync(home.path(), dir.path());
    assert_eq!(real["retired"], 1, "{real}");
    assert_eq!(memories(home.path()).len(), 1);
}

/// A full listing retires only when it named every item it read: an unreadable item
/// without an id, or a page naming more than levh keeps, keeps what was not named (and a
/// report line says how many); items named `unchanged` (without their text) are kept and
/// counted as unchanged.
#[test]
fn a_listing_that_could_not_name_every_item_retires_nothing_and_says_so() {
    let h = Harness::new();
    let listing = |items: Vec<SourceItem>,
                   unchanged: &[&str],
                   errors: Vec<SourceItemError>,
                   overflowed: bool| {
        let mut source = Scripted {
            pages: vec![SourcePage {
                items,
                errors,
                unchanged: unchanged.iter().map(|s| (*s).to_owned()).collect(),
                names_overflowed: overflowed,
                listing_started: true,
                listing_complete: true,
                next_cursor: None,
                done: true,
                ..SourcePage::default()
            }],
            fail_at: None,
            calls: 0,
            key: None,
        };
        h.levh
            .sync(
                &h.scope,
                &mut source,
                SyncOptions::default(),
                None,
                &mut |_| {},
            )
            .unwrap()
    };
    let first = listing(
        vec![
            item("a", &distinct_sentence(1)),
            item("b", &distinct_sentence(2)),
        ],
        &[],
        vec![],
        false,
    );
    assert_eq!(first.admitted, 2, "{first:?}");

    let unreadable = SourceItemError {
        source_id: None,
        location: "result 7".into(),
        message: "malformed".into(),
    };
    let unsure = listing(vec![], &["a"], vec![unreadable], false);
    assert_eq!((unsure.retired, unsure.unchanged), (0, 1), "{unsure:?}");
    assert!(
        unsure.errors.iter().any(|e| e.starts_with(
            "nothing retired: the full listing did not name 1 stored item(s), but it could not read every item"
        )),
        "{:?}",
        unsure.errors
    );
    let overflow = listing(vec![], &["a"], vec![], true);
    assert_eq!(overflow.retired, 0, "{overflow:?}");
    assert!(
        overflow
            .errors
            .iter()
            .any(|e| e.contains("more items than levh keeps")),
        "{:?}",
        overflow.errors
    );

    // Named unchanged, nothing unsure: the one not named is retired; the other kept.
    let sure = listing(vec![], &["a"], vec![], false);
    assert_eq!((sure.retired, sure.unchanged), (1, 1), "{sure:?}");
    assert_eq!(sure.retirements[0].source_id, "b");
    let live = h
        .levh
        .list(
            &h.scope,
            MemoryFilter::default(),
            Page {
                limit: 10,
                offset: 0,
            },
        )
        .unwrap();
    assert_eq!(live.len(), 1, "{live:?}");
}

/// An item whose time alone changed at its source (an event moved to another day with the
/// same text) is a change: its memory's `valid_from` moves, the report counts an update,
/// and the next sync of the same item changes nothing.
#[test]
fn an_item_whose_time_alone_changed_is_updated() {
    let h = Harness::new();
    let once = |at: &str| {
        let mut moved = item("standup", &distinct_sentence(4));
        moved.occurred_at = Some(at.parse().unwrap());
        let mut source = Scripted {
            pages: vec![SourcePage {
                items: vec![moved],
                next_cursor: None,
                done: true,
                ..SourcePage::default()
            }],
            fail_at: None,
            calls: 0,
            key: None,
        };
        h.levh
            .sync(
                &h.scope,
                &mut source,
                SyncOptions::default(),
                None,
                &mut |_| {},
            )
            .unwrap()
    };
    assert_eq!(once("2026-03-02T09:00:00Z").admitted, 1);
    let moved = once("2026-03-09T09:00:00Z");
    assert_eq!((moved.updated, moved.unchanged), (1, 0), "{moved:?}");
    let stored = h
        .levh
        .list(
            &h.scope,
            MemoryFilter::default(),
            Page {
                limit: 10,
                offset: 0,
            },
        )
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].valid_from.to_string(), "2026-03-09T09:00:00Z");
    let again = once("2026-03-09T09:00:00Z");
    assert_eq!((again.updated, again.unchanged), (0, 1), "{again:?}");
}
