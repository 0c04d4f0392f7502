//! The built-in connectors on their fixtures, through `levh sync`: good items stored, each
//! malformed file one clear error line, nothing panics, and a second run changes nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{json, levh, ok};

fn fixtures(name: &str) -> PathBuf {
    crate::support::repository_root()
        .join("fixtures")
        .join(name)
}

fn sync(home: &Path, connector: &str, key: &str, path: &Path) -> Value {
    json(
        levh(home)
            .args(["sync", connector, "--json", "--config"])
            .arg(format!("{key}={}", path.display())),
    )
}

fn errors(report: &Value) -> Vec<String> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn transcripts_become_meetings_with_speakers_and_bad_files_are_one_line_each() {
    let home = tempfile::tempdir().unwrap();
    let report = sync(
        home.path(),
        "transcript",
        "transcript_dir",
        &fixtures("transcripts"),
    );
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["admitted"], 3, "{report}");
    let errors = errors(&report);
    assert_eq!(report["failed"], 4, "{errors:?}");
    for (file, words) in [
        ("bad-timestamps.vtt", "line 3: bad timestamp"),
        ("not-utf8.txt", "not UTF-8"),
        ("empty.vtt", "empty transcript"),
        ("truncated.vtt", "bad timestamp"),
    ] {
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{file}: ")) && e.contains(words)),
            "{file}: {errors:?}"
        );
    }
    let memories = json(levh(home.path()).args(["list", "--json"]));
    let standup = memories["memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["source_id"] == "standup.vtt")
        .unwrap();
    assert_eq!(standup["kind"], "transcript");
    // Its address is the file on this machine, not the sandbox's path to it.
    let folder = fixtures("transcripts").canonicalize().unwrap();
    assert_eq!(
        standup["metadata"]["source_uri"],
        format!("file:{}", folder.join("standup.vtt").display()),
        "{standup}"
    );
    assert!(
        standup["content"]
            .as_str()
            .unwrap()
            .contains("with Ada, Grace"),
        "{standup}"
    );
    assert!(
        standup["content"]
            .as_str()
            .unwrap()
            .contains("rollback plan")
    );
    assert_eq!(standup["metadata"]["people"][1]["name"], "Grace");

    let again = sync(
        home.path(),
        "transcript",
        "transcript_dir",
        &fixtures("transcripts"),
    );
    assert_eq!(
        (
            again["admitted"].as_u64(),
            again["rejected"].as_u64(),
            again["unchanged"].as_u64()
        ),
        (Some(0), Some(0), Some(3)),
        "{again}"
    );
    // recall finds a meeting by what was said in it
    let hits = json(levh(home.path()).args(["recall", "who writes the rollback plan", "--json"]))
        ["results"]
        .clone();
    assert!(
        hits[0]["content"].as_str().unwrap().contains("standup.vtt"),
        "{hits}"
    );
}

#[test]
fn an_obsidian_vault_keeps_front_matter_tags_and_links_and_skips_settings() {
    let home = tempfile::tempdir().unwrap();
    let report = sync(home.path(), "obsidian", "vault_path", &fixtures("vault"));
    assert_eq!(report["admitted"], 3, "{report}");
    let errors = errors(&report);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("broken.md: ") && errors[0].contains("never ends"),
        "{errors:?}"
    );
    let memories = json(levh(home.path()).args(["list", "--json"]));
    let atlas = memories["memories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["source_id"] == "Atlas launch.md")
        .unwrap();
    assert_eq!(
        atlas["metadata"]["tags"],
        serde_json::json!(["project", "launch", "release"])
    );
    assert_eq!(atlas["metadata"]["links"], serde_json::json!(["Ada"]));
    assert_eq!(
        atlas["valid_from"], "2026-03-02T00:00:00Z",
        "world time from the note's date"
    );
    assert!(
        memories["memories"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| !m["content"].as_str().unwrap().contains("obsidian\""))
    );
}

/// The memories of a synced home, each found by its note's path.
fn memories_by_note(home: &Path) -> impl Fn(&str) -> Value {
    let memories = json(levh(home).args(["list", "--json"]));
    move |note: &str| {
        memories["memories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metadata"]["source_id"] == note)
            .unwrap_or_else(|| panic!("{note} not stored: {memories}"))
            .clone()
    }
}

#[test]
fn obsidian_dates_a_note_by_its_own_date_else_by_when_its_file_changed() {
    // A copy, so the test can set a file's modification time.
    let vault = tempfile::tempdir().unwrap();
    let edge = fixtures("vault-edge");
    for file in walk(&edge) {
        let copy = vault.path().join(file.strip_prefix(&edge).unwrap());
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&file, &copy).unwrap();
    }
    let undated = std::fs::File::options()
        .write(true)
        .open(vault.path().join("Undated.md"))
        .unwrap();
    undated
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_600_000))
        .unwrap();
    drop(undated);

    let home = tempfile::tempdir().unwrap();
    let report = sync(home.path(), "obsidian", "vault_path", vault.path());
    assert_eq!(
        (&report["admitted"], &report["failed"]),
        (&serde_json::json!(6), &serde_json::json!(0)),
        "an unreadable date or broken properties drop no note: {report}"
    );
    let note = memories_by_note(home.path());
    for (path, valid_from) in [
        ("Typed properties.md", "2024-03-05T14:30:00Z"), // date: 2024-03-05 14:30
        ("Table links.md", "2024-03-06T08:15:00Z"),      // date: "…T09:15:00+01:00"
        ("Callout code.md", "2024-03-07T00:00:00Z"),     // created: 2024-03-07
        ("daily/2024-03-08.md", "2024-03-08T00:00:00Z"), // a daily note's name
        ("Undated.md", "2026-01-05T08:00:00Z"),          // date: sometime in spring
    ] {
        assert_eq!(note(path)["valid_from"], valid_from, "{path}");
    }
}

#[test]
fn obsidian_links_through_a_tables_escaped_pipe_takes_no_tags_from_code_and_keeps_property_types() {
    let home = tempfile::tempdir().unwrap();
    let report = sync(
        home.path(),
        "obsidian",
        "vault_path",
        &fixtures("vault-edge"),
    );
    assert_eq!(report["status"], "ok", "{report}");
    let note = memories_by_note(home.path());

    // Properties that are not YAML cost the note its properties, not its text, and say
    // why on their line.
    let broken = note("Broken properties.md");
    assert!(
        broken["content"]
            .as_str()
            .unwrap()
            .contains("Borealis Hydraulics"),
        "{broken}"
    );
    assert_eq!(broken["metadata"]["front_matter"], serde_json::json!({}));
    let why = broken["metadata"]["front_matter_error"].as_str().unwrap();
    assert!(why.starts_with("front matter line "), "{why}");

    let table = note("Table links.md");
    assert_eq!(
        table["metadata"]["links"],
        serde_json::json!(["Tags", "Roadmap"])
    );
    assert!(
        table["content"].as_str().unwrap().contains("tag list"),
        "{table}"
    );

    let callout = note("Callout code.md");
    assert_eq!(callout["metadata"]["tags"], serde_json::json!(["design"]));
    assert_eq!(callout["metadata"]["links"], serde_json::json!([]));

    let typed = note("Typed properties.md");
    let front_matter = &typed["metadata"]["front_matter"];
    assert_eq!(front_matter["draft"], true, "{front_matter}");
    assert_eq!(front_matter["rating"], 4, "{front_matter}");
    assert_eq!(front_matter["ratio"], 0.5, "{front_matter}");
    assert_eq!(
        front_matter["status"], "4",
        "quoted stays text: {front_matter}"
    );
    assert_eq!(front_matter["tags"], serde_json::json!(["pricing"]));
    assert_eq!(typed["metadata"]["tags"], serde_json::json!(["pricing"]));
}

#[test]
fn a_plugins_log_lines_reach_the_hosts_log_tagged_with_its_id() {
    let home = tempfile::tempdir().unwrap();
    let out = levh(home.path())
        .env("LEVH_LOG", "info")
        .args(["sync", "obsidian", "--config"])
        .arg(format!("vault_path={}", fixtures("vault").display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("skipped 1 attachments"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("plugin=\"obsidian\""), "{line}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour codes when stderr is not a terminal"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .all(|l| !l.contains("skipped 1 attachments")),
        "logs never go to stdout"
    );
}

#[test]
fn local_files_reads_text_and_reports_each_unreadable_file_once() {
    let home = tempfile::tempdir().unwrap();
    let report = sync(home.path(), "local_files", "directory", &fixtures("files"));
    assert_eq!(report["admitted"], 2, "{report}");
    let errors = errors(&report);
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (file, words) in [("latin1.txt", "not UTF-8"), ("empty.txt", "empty file")] {
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{file}: ")) && e.contains(words)),
            "{file}: {errors:?}"
        );
    }
    // A binary file is passed over on purpose: counted as skipped, named with why.
    assert_eq!(
        (report["failed"].as_u64(), report["skipped"].as_u64()),
        (Some(2), Some(1)),
        "{report}"
    );
    let skipped = crate::support::not_stored_as(&report, "skipped");
    assert_eq!(
        skipped,
        [("logo.png", "binary file (a NUL byte in the first 8 KiB)")],
        "{report}"
    );
    let again = sync(home.path(), "local_files", "directory", &fixtures("files"));
    assert_eq!(
        (again["admitted"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(2)),
        "{again}"
    );
    let memories = json(levh(home.path()).args(["list", "--json"]));
    assert!(
        memories["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["metadata"]["source_id"] == "sub/planning.txt")
    );
}

#[test]
fn a_corrupt_grants_file_is_an_error_naming_it_and_is_never_overwritten() {
    let home = tempfile::tempdir().unwrap();
    let granted = tempfile::tempdir().unwrap();
    ok(levh(home.path()).args([
        "connector",
        "grant",
        "local_files",
        granted.path().to_str().unwrap(),
    ]));
    let file = walk(home.path())
        .into_iter()
        .find(|p| p.ends_with("local_files/grants.toml"))
        .expect("a grants file");
    std::fs::write(&file, "read_paths = [\"unterminated").unwrap();

    let other = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "connector",
            "grant",
            "local_files",
            other.path().to_str().unwrap(),
        ],
        vec!["connector", "inspect", "local_files"],
        vec![
            "sync",
            "local_files",
            "--config",
            &format!("directory={}", granted.path().display()),
        ],
    ] {
        let out = levh(home.path()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} must fail: {stderr}");
        assert!(
            stderr.contains("grants.toml") && stderr.contains("not a valid grants file"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "read_paths = [\"unterminated",
        "the file was rewritten"
    );
    // The list still lists, with the error on that connector's row.
    let listed = json(levh(home.path()).args(["connector", "list", "--json"]));
    let row = listed["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "local_files")
        .unwrap();
    assert!(
        row["error"].as_str().unwrap().contains("grants.toml"),
        "{row}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn transcripts_in_subfolders_and_upper_case_names_are_read_dated_by_their_file_and_sbv_too() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("2026/march");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(
        nested.join("planning.vtt"),
        "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ada>We ship the atlas beta on Friday.\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("RETRO.VTT"),
        "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n<v Grace>The retro moves to the lake room.\n",
    )
    .unwrap();
    // Same name in two folders: two meetings, not one.
    std::fs::create_dir_all(dir.path().join("2026/april")).unwrap();
    std::fs::write(
        dir.path().join("2026/april/planning.vtt"),
        "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Linus>The gamma release slips a week.\n",
    )
    .unwrap();
    let report = sync(home.path(), "transcript", "transcript_dir", dir.path());
    assert_eq!(
        (&report["admitted"], &report["failed"]),
        (&serde_json::json!(3), &serde_json::json!(0)),
        "{report}"
    );
    let memories = json(levh(home.path()).args(["list", "--json"]));
    let ids: Vec<&str> = memories["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metadata"]["source_id"].as_str().unwrap())
        .collect();
    for id in [
        "2026/march/planning.vtt",
        "2026/april/planning.vtt",
        "RETRO.VTT",
    ] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    // World time: the file's modification time, not the time of the sync.
    let stamp = std::fs::File::options()
        .write(true)
        .open(dir.path().join("RETRO.VTT"))
        .unwrap();
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_600_000);
    stamp.set_modified(when).unwrap();
    drop(stamp);
    let retro = tempfile::tempdir().unwrap();
    let report = sync(
        retro.path(),
        "transcript",
        "transcript_path",
        &dir.path().join("RETRO.VTT"),
    );
    assert_eq!(report["admitted"], 1, "{report}");
    let stored = json(levh(retro.path()).args(["list", "--json"]))["memories"].clone();
    assert_eq!(stored[0]["valid_from"], "2026-01-05T08:00:00Z", "{stored}");

    // SBV (YouTube's captions) is read too, in a directory sync and by its own path.
    let sbv = dir.path().join("captions.sbv");
    std::fs::write(
        &sbv,
        "0:00:01.000,0:00:04.000\nMara: The ferry leaves at noon.\n",
    )
    .unwrap();
    let captions = tempfile::tempdir().unwrap();
    let report = sync(captions.path(), "transcript", "transcript_path", &sbv);
    assert_eq!(
        (&report["admitted"], &report["failed"]),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "{report}"
    );
    let report = sync(home.path(), "transcript", "transcript_dir", dir.path());
    assert_eq!(report["failed"], 0, "{report}");
    let memories = json(levh(home.path()).args(["list", "--json"]));
    assert!(
        memories["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["metadata"]["source_id"] == "captions.sbv"),
        "{memories}"
    );
}

/// A grant belongs to one workspace: a directory granted for `team` is read by `team`'s
/// syncs and refused to another workspace's editor; the operator grants over REST naming
/// the workspace, and the CLI says what it granted to whom.
#[test]
fn a_directory_granted_for_one_workspace_is_refused_to_another_workspace_s_syncs() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("plan.md"),
        "The migration to the new cluster starts in March",
    )
    .unwrap();
    let cli = |workspace: &str| {
        let mut command = crate::support::levh(home);
        command
            .env("LEVH_EMBEDDER", "hash")
            .args(["--workspace", workspace]);
        command
    };
    let said = crate::support::ok(
        cli("team")
            .args(["connector", "grant", "local_files"])
            .arg(notes.path()),
    );
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(said.contains("when workspace team syncs"), "{said}");

    const OPERATOR: &str = "operator-token-for-grants-0123456789";
    let token = |workspace: &str| -> String {
        crate::support::json(cli(workspace).args(["token", "create", "--role", "editor", "--json"]))
            ["secret"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (team, other) = (token("team"), token("other"));
    let (mut server, address) =
        crate::support::serve(home, &[("LEVH_EMBEDDER", "hash"), ("LEVH_TOKEN", OPERATOR)]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let sync = |token: &str| -> (u16, String) {
        let mut response = agent
            .post(format!("http://{address}/api/connectors/local_files/sync"))
            .header("X-LEVH-Token", token)
            .send_json(serde_json::json!({ "config": { "directory": notes.path() } }))
            .unwrap();
        (
            response.status().as_u16(),
            response.body_mut().read_to_string().unwrap(),
        )
    };
    let (status, body) = sync(&other);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("grant"), "{body}");
    let (status, body) = sync(&team);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"admitted\":1"), "{body}");

    // The operator grants `other` over REST, naming it; a workspace's own admin cannot.
    let other_admin = crate::support::json(
        cli("other").args(["token", "create", "--role", "admin", "--json"]),
    )["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let grant = |token: &str| {
        agent
            .post(format!(
                "http://{address}/api/connectors/local_files/grants"
            ))
            .header("X-LEVH-Token", token)
            .send_json(serde_json::json!({ "directory": notes.path(), "workspace": "other" }))
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(grant(&other_admin), 403);
    assert_eq!(grant(OPERATOR), 200);
    let (status, body) = sync(&other);
    assert_eq!(status, 200, "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}

/// A grant the manifest never asks for is refused when it is given (CLI and REST alike),
/// naming what the connector does ask for; nothing is stored.
#[test]
fn a_grant_the_manifest_does_not_ask_for_is_refused_naming_what_it_asks_for() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let refused = levh(home.path())
        .args(["connector", "grant", "local_files", "--host", "example.com"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let words = String::from_utf8_lossy(&refused.stderr);
    assert!(
        words.contains(
            "local_files does not ask to connect to example.com:443 (it asks to: read the path in `directory`); nothing was granted"
        ),
        "{words}"
    );
    let refused = levh(home.path())
        .args(["connector", "grant", "github"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let words = String::from_utf8_lossy(&refused.stderr);
    assert!(
        words.contains(&format!(
            "github reads no directory, so {} cannot be granted to it",
            dir.path().display()
        )),
        "{words}"
    );
    // What it asks for is still granted.
    ok(levh(home.path())
        .args(["connector", "grant", "local_files"])
        .arg(dir.path()));
    let inspected = json(levh(home.path()).args(["connector", "inspect", "local_files", "--json"]));
    assert_eq!(
        inspected["grants"]["http_hosts"],
        serde_json::json!([]),
        "{inspected}"
    );
    assert_eq!(
        inspected["grants"]["read_paths"].as_array().unwrap().len(),
        1,
        "{inspected}"
    );

    // REST says the same, as a 422.
    let (mut child, address) = crate::support::serve(home.path(), &[]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(format!(
            "http://{address}/api/connectors/local_files/grants"
        ))
        .send_json(serde_json::json!({"host": "example.com"}))
        .unwrap();
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(status, 422, "{body}");
    assert!(
        body.contains("local_files does not ask to connect to example.com:443"),
        "{body}"
    );
}

/// With `--json`, a failure is a JSON document on stdout too (the words stay on stderr
/// for a person): a script reads one document whatever happened.
#[test]
fn json_errors_are_json_on_stdout() {
    let home = tempfile::tempdir().unwrap();
    let not_wasm = home.path().join("notes.txt");
    std::fs::write(&not_wasm, "hello").unwrap();
    for args in [
        vec!["--json", "sync", "no_such_connector"],
        vec![
            "--json",
            "connector",
            "add",
            "--yes",
            not_wasm.to_str().unwrap(),
        ],
    ] {
        let output = levh(home.path()).args(&args).output().unwrap();
        assert!(!output.status.success(), "{args:?}");
        let document: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {output:?}"));
        let message = document["error"].as_str().unwrap();
        assert!(!message.is_empty(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(message),
            "{args:?}: {output:?}"
        );
    }
}

/// A folder of transcripts is read whole each sync, a full listing: a meeting whose file
/// was deleted is retired and named, an edited one updated, the rest untouched.
#[test]
fn a_deleted_transcript_is_retired_at_the_next_sync() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cue = |who: &str, said: &str| {
        format!("WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v {who}>{said}\n")
    };
    std::fs::write(
        dir.path().join("standup.vtt"),
        cue("Ada", "The standup moves to the blue room."),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("retro.vtt"),
        cue("Grace", "The retro keeps its Friday slot."),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("launch.vtt"),
        cue("Linus", "The launch checklist has twelve items."),
    )
    .unwrap();
    let first = sync(home.path(), "transcript", "transcript_dir", dir.path());
    assert_eq!(first["admitted"], 3, "{first}");
    std::fs::remove_file(dir.path().join("retro.vtt")).unwrap();
    std::fs::write(
        dir.path().join("launch.vtt"),
        cue("Linus", "The launch checklist has fourteen items now."),
    )
    .unwrap();
    let second = sync(home.path(), "transcript", "transcript_dir", dir.path());
    assert_eq!(
        (
            second["retired"].as_u64(),
            second["updated"].as_u64(),
            second["unchanged"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{second}"
    );
    assert_eq!(
        second["retirements"][0]["source_id"], "retro.vtt",
        "{second}"
    );
    let left = json(levh(home.path()).args(["list", "--json"]));
    assert_eq!(left["memories"].as_array().unwrap().len(), 2);
    let third = sync(home.path(), "transcript", "transcript_dir", dir.path());
    assert_eq!(
        (third["retired"].as_u64(), third["updated"].as_u64()),
        (Some(0), Some(0)),
        "{third}"
    );
}

/// An Obsidian vault is read whole each sync: a deleted note is retired and named, a renamed
/// one stored under its new name (its old name retired), an edited one updated, the rest
/// untouched, and a second sync changes nothing.
#[test]
fn a_deleted_or_renamed_obsidian_note_is_retired_at_the_next_sync() {
    let home = tempfile::tempdir().unwrap();
    let vault = tempfile::tempdir().unwrap();
    let note = |name: &str, text: &str| std::fs::write(vault.path().join(name), text).unwrap();
    note(
        "standup.md",
        "# Standup\nThe standup is at 9:30 in room Atlas.\n",
    );
    note(
        "lunch.md",
        "# Lunch\nTeam lunch is on Thursdays at the Thai place.\n",
    );
    note(
        "badges.md",
        "# Badges\nVisitor badges are printed at the front desk of building C.\n",
    );
    note("db.md", "# Database\nThe API uses PostgreSQL 16.\n");
    let first = sync(home.path(), "obsidian", "vault_path", vault.path());
    assert_eq!(first["admitted"], 4, "{first}");
    std::fs::remove_file(vault.path().join("lunch.md")).unwrap();
    std::fs::rename(
        vault.path().join("badges.md"),
        vault.path().join("visitors.md"),
    )
    .unwrap();
    note(
        "db.md",
        "# Database\nThe API uses PostgreSQL 17 since March.\n",
    );
    let second = sync(home.path(), "obsidian", "vault_path", vault.path());
    let mut retired: Vec<&str> = second["retirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source_id"].as_str().unwrap())
        .collect();
    retired.sort();
    assert_eq!(retired, ["badges.md", "lunch.md"], "{second}");
    assert_eq!(
        (second["updated"].as_u64(), second["admitted"].as_u64()),
        (Some(1), Some(1)),
        "{second}"
    );
    let left = json(levh(home.path()).args(["list", "--json"]));
    let texts: Vec<&str> = left["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts.iter().all(|t| !t.contains("Thai")), "{texts:?}");
    let third = sync(home.path(), "obsidian", "vault_path", vault.path());
    assert_eq!(
        (
            third["retired"].as_u64(),
            third["admitted"].as_u64(),
            third["updated"].as_u64()
        ),
        (Some(0), Some(0), Some(0)),
        "{third}"
    );
}
