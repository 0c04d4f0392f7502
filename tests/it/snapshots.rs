//! What people and agents read, snapshotted (insta): the CLI's table and `--json` output
//! of capture, recall, show, stats, held and sync status, from the real binary on a real
//! store. Ids, times and paths are filtered; everything else is the contract. A change
//! here is a change users see: review it with `cargo insta review`.

use std::path::Path;

use crate::support::{levh, ok};

const NOW: &str = "2026-11-30T09:00:00Z";

/// The binary with a fixed clock and the hash embedder: the same output on every machine.
fn run(home: &Path, args: &[&str]) -> String {
    let output = ok(levh(home)
        .env("LEVH_NOW", NOW)
        .env("LEVH_EMBEDDER", "hash")
        .args(args));
    String::from_utf8(output.stdout).unwrap()
}

fn id_of(capture_json: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(capture_json).unwrap();
    value["memory_id"].as_str().unwrap().to_owned()
}

/// Filters for what differs between runs: ids (UUIDs, token and run ids), times and the
/// temporary directories.
fn settings(paths: &[(&Path, &'static str)]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    for (path, name) in paths {
        let text = path.canonicalize().unwrap().display().to_string();
        settings.add_filter(&regex_escape(&text), *name);
        settings.add_filter(&regex_escape(&path.display().to_string()), *name);
    }
    settings.add_filter(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[uuid]",
    );
    settings.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
        "[time]",
    );
    settings.add_filter(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "[time]");
    // A content hash changes with nothing a reader controls.
    settings.add_filter(
        r#""content_hash": "[0-9a-f]+""#,
        r#""content_hash": "[hash]""#,
    );
    settings
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

#[test]
fn cli_output_of_capture_recall_show_stats_held_and_sync_status() {
    let home = tempfile::tempdir().unwrap();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("runbook.md"),
        "# Runbook\n\nRestart the queue workers with `systemctl restart workers` after a deploy.\n",
    )
    .unwrap();
    let home_path = home.path();
    let settings = settings(&[(home_path, "[home]"), (notes.path(), "[notes]")]);
    settings.bind(|| {
        let stored = run(
            home_path,
            &[
                "capture",
                "The main database is PostgreSQL 16 on host db-main",
                "--project",
                "infra",
                "--json",
            ],
        );
        insta::assert_snapshot!("capture_json", stored);
        let id = id_of(&stored);
        insta::assert_snapshot!(
            "capture_table",
            run(
                home_path,
                &[
                    "capture",
                    "Deploys happen on Fridays after the standup",
                    "--project",
                    "infra"
                ]
            )
        );
        insta::assert_snapshot!(
            "capture_held_table",
            run(
                home_path,
                &[
                    "capture",
                    "The main database is PostgreSQL 17 on host db-main",
                    "--project",
                    "infra"
                ]
            )
        );
        insta::assert_snapshot!(
            "recall_table",
            run(
                home_path,
                &["recall", "which database do we use", "--explain"]
            )
        );
        insta::assert_snapshot!(
            "recall_json",
            run(home_path, &["recall", "which database do we use", "--json"])
        );
        insta::assert_snapshot!("show_table", run(home_path, &["show", &id]));
        insta::assert_snapshot!("show_json", run(home_path, &["show", &id, "--json"]));
        insta::assert_snapshot!("stats_table", run(home_path, &["stats"]));
        insta::assert_snapshot!("stats_json", run(home_path, &["stats", "--json"]));
        insta::assert_snapshot!("held_table", run(home_path, &["held", "list"]));
        insta::assert_snapshot!("held_json", run(home_path, &["held", "list", "--json"]));
        let directory = format!("directory={}", notes.path().display());
        run(home_path, &["sync", "local_files", "--config", &directory]);
        insta::assert_snapshot!("sync_status_table", run(home_path, &["sync", "status"]));
        insta::assert_snapshot!(
            "sync_status_json",
            run(home_path, &["sync", "status", "--json"])
        );
    });
}
