//! `levh backup`: the real binary backs up a home while a real server writes to it,
//! restores it (refused while the server runs), encrypts with a passphrase, and refuses
//! damaged or crafted files without touching the home.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;
use sha2::Digest as _;

use crate::support::{distinct_sentence, json, levh, ok, serve};

fn levh_hash(home: &Path) -> Command {
    let mut command = levh(home);
    command.env("LEVH_EMBEDDER", "hash");
    command
}

fn capture(home: &Path, args: &[&str]) -> Value {
    json(levh_hash(home).args(["capture", "--json"]).args(args))
}

/// `(id, content, pinned)` of every memory, sorted by id.
fn memories(home: &Path) -> Vec<(String, String, bool)> {
    let listed = json(levh_hash(home).args(["list", "--json", "--limit", "10000"]));
    let mut rows: Vec<_> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap().to_owned(),
                m["pinned"].as_bool().unwrap(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn held(home: &Path) -> usize {
    json(levh_hash(home).args(["held", "list", "--json"]))["held"]
        .as_array()
        .unwrap()
        .len()
}

fn failure(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(!output.status.success(), "{command:?} succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Folders and files in `home/backups` besides backups themselves (a restore's or a
/// backup's leftovers, what a restore replaced).
fn backups_entries(home: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(home.join("backups"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A home with pinned and plain memories, one held for review, settings and a scorer file.
fn filled_home(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    capture(
        &home,
        &["--pin", "never deploy on fridays: the on-call rota is thin"],
    );
    capture(
        &home,
        &["our staging database runs postgres 16 on the blue cluster"],
    );
    let near = capture(
        &home,
        &["our staging database runs postgres 16 on the green cluster"],
    );
    assert_eq!(near["verdict"], "review", "{near}");
    for n in 0..20 {
        capture(&home, &[&distinct_sentence(n)]);
    }
    std::fs::write(home.join("config.toml"), "tz = \"Europe/Istanbul\"\n").unwrap();
    std::fs::create_dir_all(home.join("scorers")).unwrap();
    std::fs::write(home.join("scorers").join("active"), "recency\n").unwrap();
    set_token(&home, "github", GITHUB_TOKEN);
    home
}

/// A token in the shape GitHub issues; only an encrypted backup may carry it.
const GITHUB_TOKEN: &str = "ghp_Zq8vBackupTestTokenNotRealAbCdEf0123";

/// `levh connector secret set ID` with the token on standard input, as a script would.
fn set_token(home: &Path, connector: &str, token: &str) {
    let mut child = levh_hash(home)
        .args(["connector", "secret", "set", connector])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{token}").unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        home.join("plugins")
            .join(connector)
            .join("credential")
            .exists()
    );
}

#[test]
fn a_backup_taken_while_a_server_writes_restores_the_home_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let home = filled_home(dir.path());

    // A server keeps capturing while the backup is taken.
    let (mut server, address) = serve(&home, &[("LEVH_EMBEDDER", "hash")]);
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, written, address) = (stop.clone(), written.clone(), address.clone());
        std::thread::spawn(move || {
            let mut n = 1_000;
            while !stop.load(Ordering::Relaxed) {
                let response = ureq::post(format!("http://{address}/api/memories"))
                    .send_json(serde_json::json!({ "content": distinct_sentence(n) }))
                    .unwrap();
                assert_eq!(response.status(), 201);
                written.fetch_add(1, Ordering::Relaxed);
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    while written.load(Ordering::Relaxed) < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Everything committed before the backup starts must be in it.
    let before = memories(&home);
    let created = json(levh_hash(&home).args(["--json", "backup", "create"]));
    let file = PathBuf::from(created["path"].as_str().unwrap());
    assert!(file.starts_with(home.join("backups")), "{created}");
    assert_eq!(created["encrypted"], false);
    let manifest = &created["manifest"];
    assert_eq!(
        manifest["files"],
        serde_json::json!(["config.toml", "scorers/active"])
    );
    // The connector's token stays out of a backup that is not encrypted.
    assert_eq!(
        manifest["left_out"],
        serde_json::json!(["plugins/github/credential"])
    );
    let archived = std::fs::read(&file).unwrap();
    assert!(
        !archived
            .windows(GITHUB_TOKEN.len())
            .any(|w| w == GITHUB_TOKEN.as_bytes())
    );
    assert_eq!(manifest["held"], 1);

    // A restore is refused while the server has the store open, and changes nothing.
    let refused = failure(levh_hash(&home).args(["backup", "restore"]).arg(&file));
    // Said once: the cause is not printed again as a chained source.
    assert_eq!(
        refused
            .matches("another process has the store open")
            .count(),
        1,
        "{refused}"
    );
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    let at_stop = memories(&home);
    assert!(
        backups_entries(&home)
            .iter()
            .all(|name| !name.starts_with("replaced-")),
        "{:?}",
        backups_entries(&home)
    );

    // Taken mid-write, the copy is whole: its counts are what it holds, every memory
    // written before the backup started is in it, and it is still written to after.
    let in_backup = manifest["memories"].as_u64().unwrap() as usize;
    assert!(
        in_backup >= 22 + 5 && in_backup < at_stop.len(),
        "{in_backup} of {}",
        at_stop.len()
    );

    // Changes after the backup: a new memory, a pin removed, the settings edited.
    let after = capture(
        &home,
        &["written after the backup: the cafeteria closes at five"],
    );
    let pinned = at_stop.iter().find(|m| m.2).unwrap().0.clone();
    ok(levh_hash(&home).args(["unpin", &pinned]));
    std::fs::write(home.join("config.toml"), "tz = \"UTC\"\n").unwrap();
    let changed = memories(&home);

    let verified = json(
        levh_hash(&home)
            .args(["--json", "backup", "verify"])
            .arg(&file),
    );
    assert_eq!(verified["manifest"], *manifest);
    let restored = json(
        levh_hash(&home)
            .args(["--json", "backup", "restore"])
            .arg(&file),
    );
    assert_eq!(restored["manifest"], *manifest);

    // The home is what the backup holds...
    let now = memories(&home);
    assert_eq!(now.len(), in_backup);
    assert!(
        now.iter().all(|m| at_stop.contains(m)),
        "every restored memory existed"
    );
    assert!(
        before.iter().all(|m| now.contains(m)),
        "nothing written before the backup is lost"
    );
    assert!(
        now.iter()
            .any(|(id, _, pinned_now)| *id == pinned && *pinned_now)
    );
    assert!(
        now.iter()
            .all(|(id, ..)| Some(id.as_str()) != after["memory_id"].as_str())
    );
    assert_eq!(held(&home), 1);
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "tz = \"Europe/Istanbul\"\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("scorers").join("active")).unwrap(),
        "recency\n"
    );
    let found = json(levh_hash(&home).args(["recall", "--json", "on-call rota on fridays"]));
    assert!(
        found.to_string().contains("never deploy on fridays"),
        "{found}"
    );
    // ...and what it replaced is kept whole beside it.
    let replaced = PathBuf::from(restored["replaced"].as_str().unwrap());
    assert_eq!(memories(&replaced), changed);
    assert_eq!(
        std::fs::read_to_string(replaced.join("config.toml")).unwrap(),
        "tz = \"UTC\"\n"
    );
    assert!(!home.join("plugins/github/credential").exists());
    assert_eq!(
        std::fs::read_to_string(replaced.join("plugins/github/credential")).unwrap(),
        GITHUB_TOKEN
    );
    // No staging folder or partial file is left behind.
    let entries = backups_entries(&home);
    assert_eq!(entries.len(), 2, "{entries:?}");
    let listed = json(levh_hash(&home).args(["--json", "backup", "list"]));
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["path"], created["path"]);
}

#[test]
fn an_encrypted_backup_needs_its_passphrase_and_shows_nothing_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    capture(
        &home,
        &["the vault combination is kept by margarethe in accounting"],
    );
    set_token(&home, "github", GITHUB_TOKEN);
    let file = dir.path().join("secret.tar.age");

    let refused = failure(
        levh_hash(&home)
            .args(["backup", "create", "--encrypt", "--to"])
            .arg(&file),
    );
    assert!(refused.contains("LEVH_BACKUP_PASSPHRASE"), "{refused}");
    assert!(!file.exists());

    let created = json(
        levh_hash(&home)
            .env("LEVH_BACKUP_PASSPHRASE", "correct horse battery staple")
            .args(["--json", "backup", "create", "--encrypt", "--to"])
            .arg(&file),
    );
    assert_eq!(created["encrypted"], true);
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.starts_with(b"age-encryption.org/v1\n"));
    for plain in [&b"margarethe"[..], b"SQLite format 3", b"manifest.json"] {
        assert!(!bytes.windows(plain.len()).any(|w| w == plain));
    }

    let other = dir.path().join("other");
    let missing = failure(levh_hash(&other).args(["backup", "restore"]).arg(&file));
    assert!(
        missing.contains("is encrypted") && missing.contains("LEVH_BACKUP_PASSPHRASE"),
        "{missing}"
    );
    let wrong = failure(
        levh_hash(&other)
            .env("LEVH_BACKUP_PASSPHRASE", "incorrect horse")
            .args(["backup", "restore"])
            .arg(&file),
    );
    assert!(wrong.contains("the passphrase does not open"), "{wrong}");
    assert!(!other.join("levh.db").exists());

    // Into a new home: nothing to replace.
    let restored = json(
        levh_hash(&other)
            .env("LEVH_BACKUP_PASSPHRASE", "correct horse battery staple")
            .args(["--json", "backup", "restore"])
            .arg(&file),
    );
    assert_eq!(restored["replaced"], Value::Null);
    assert_eq!(memories(&other), memories(&home));
    // Encrypted, the connector's token travels with it.
    assert_eq!(created["manifest"]["left_out"], serde_json::json!([]));
    assert_eq!(
        std::fs::read_to_string(other.join("plugins/github/credential")).unwrap(),
        GITHUB_TOKEN
    );

    // Cut short, it no longer opens, whatever the passphrase.
    let cut = dir.path().join("cut.tar.age");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let damaged = failure(
        levh_hash(&other)
            .env("LEVH_BACKUP_PASSPHRASE", "correct horse battery staple")
            .args(["backup", "verify"])
            .arg(&cut),
    );
    assert!(damaged.contains("damaged or cut short"), "{damaged}");
}

/// A tar file of `entries`, written as an attacker or a broken tool would.
fn crafted(path: &Path, entries: &[(&str, &[u8])]) {
    let mut tar = tar::Builder::new(std::fs::File::create(path).unwrap());
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        // Written raw: `set_path` refuses `..`, as it should for honest archives.
        let field = &mut header.as_old_mut().name;
        field[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        tar.append(&header, *bytes).unwrap();
    }
    tar.into_inner().unwrap().flush().unwrap();
}

fn manifest_for(database: &[u8], memories: u64, schema: i64) -> Vec<u8> {
    let sha: String = sha2::Sha256::digest(database)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "format": 1, "levh_version": "test", "created_at": "2026-12-04T00:00:00Z",
        "schema_version": schema, "memories": memories, "held": 0,
        "database_bytes": database.len(), "database_sha256": sha, "files": [],
    }))
    .unwrap()
}

#[test]
fn damaged_and_crafted_backups_are_refused_and_the_home_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for n in 0..30 {
        capture(&home, &[&distinct_sentence(n)]);
    }
    let file = dir.path().join("good.tar");
    ok(levh_hash(&home)
        .args(["backup", "create", "--to"])
        .arg(&file));
    let good = std::fs::read(&file).unwrap();
    let database = {
        let copy = dir.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        ok(Command::new("tar")
            .arg("xf")
            .arg(&file)
            .arg("-C")
            .arg(&copy));
        std::fs::read(copy.join("levh.db")).unwrap()
    };
    let before = memories(&home);

    let mut cases: Vec<(&str, PathBuf, &str)> = Vec::new();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    // One byte of the store changed (well inside the first entry's data).
    let mut flipped = good.clone();
    flipped[512 + 20_000] ^= 0x55;
    cases.push((
        "one byte changed",
        write("flipped.tar", &flipped),
        "does not match the manifest",
    ));
    cases.push((
        "cut short",
        write("cut.tar", &good[..good.len() / 2]),
        "damaged or cut short",
    ));
    cases.push((
        "not a backup",
        write("notes.tar", b"just some text, not an archive"),
        "not a usable levh backup",
    ));

    let escape = dir.path().join("escape.tar");
    crafted(&escape, &[("../escaped", b"x")]);
    cases.push((
        "a path out of the home",
        escape,
        "which a backup never does",
    ));

    let newer_path = dir.path().join("newer.db");
    rusqlite::Connection::open(&newer_path)
        .unwrap()
        .execute_batch("CREATE TABLE memories(x); PRAGMA user_version = 99;")
        .unwrap();
    let newer_bytes = std::fs::read(&newer_path).unwrap();
    let too_new = dir.path().join("newer.tar");
    crafted(
        &too_new,
        &[
            ("levh.db", &newer_bytes),
            ("manifest.json", &manifest_for(&newer_bytes, 0, 99)),
        ],
    );
    cases.push(("a newer schema", too_new, "newer than this levh knows"));

    let lying = dir.path().join("lying.tar");
    crafted(
        &lying,
        &[
            ("levh.db", &database),
            ("manifest.json", &manifest_for(&database, 31, 10)),
        ],
    );
    cases.push((
        "counts the store does not hold",
        lying,
        "the manifest says 31",
    ));

    for (what, path, expected) in &cases {
        for action in ["verify", "restore"] {
            let error = failure(levh_hash(&home).args(["backup", action]).arg(path));
            assert!(error.contains(expected), "{what}, {action}: {error}");
            assert!(
                error.contains(&path.display().to_string()),
                "{what}: names the file: {error}"
            );
        }
    }
    assert!(!dir.path().join("escaped").exists());
    assert_eq!(memories(&home), before);
    assert!(
        backups_entries(&home).is_empty(),
        "{:?}",
        backups_entries(&home)
    );
    // The honest archive still restores.
    ok(levh_hash(&home).args(["backup", "restore"]).arg(&file));
    assert_eq!(memories(&home), before);
}

/// A purge inside a running server scans the store for what it left; that scan must not
/// release the server's hold on the store (reading the file would drop SQLite's POSIX
/// locks): a restore afterwards is still refused, naming the server, and the server's
/// store stays whole.
#[test]
fn a_restore_after_a_purge_inside_the_server_is_refused_and_names_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for n in 0..10 {
        capture(&home, &[&distinct_sentence(n)]);
    }
    let created = json(levh_hash(&home).args(["--json", "backup", "create"]));
    let file = PathBuf::from(created["path"].as_str().unwrap());

    let (mut server, address) = serve(&home, &[("LEVH_EMBEDDER", "hash")]);
    let post = |path: &str, body: Value| -> Value {
        ureq::post(format!("http://{address}{path}"))
            .send_json(body)
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap()
    };
    let stored = post(
        "/api/memories",
        serde_json::json!({ "content": "the vendor's private price list is 41 euros a seat" }),
    );
    let id = stored["memory_id"].as_str().unwrap().to_owned();
    let purged = post(&format!("/api/memories/{id}/purge"), serde_json::json!({}));
    assert_eq!(purged["residue"], serde_json::json!([]), "{purged}");

    let refused = failure(levh_hash(&home).args(["backup", "restore"]).arg(&file));
    assert!(
        refused.contains("another process has the store open (pid ")
            && refused.contains(&format!("pid {} (levh serve)", server.id())),
        "{refused}"
    );
    assert!(
        backups_entries(&home)
            .iter()
            .all(|name| !name.starts_with("replaced-")),
        "{:?}",
        backups_entries(&home)
    );
    // The server still writes into a whole store.
    let after = post(
        "/api/memories",
        serde_json::json!({ "content": distinct_sentence(500) }),
    );
    assert_eq!(after["verdict"], "admit", "{after}");
    server.kill().unwrap();
    server.wait().unwrap();
    let listed = memories(&home);
    assert_eq!(listed.len(), 11);
    assert!(
        listed
            .iter()
            .all(|(_, content, _)| !content.contains("41 euros"))
    );
    let integrity: String = rusqlite::Connection::open(home.join("levh.db"))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");

    // With the server gone (killed: its holder file is left behind), the restore goes
    // through.
    ok(levh_hash(&home).args(["backup", "restore"]).arg(&file));
    assert_eq!(memories(&home).len(), 10);
}

/// levh's own export imported into an empty store reproduces every memory: id, decay
/// state (stability, recalls, last recall, creation), validity, the supersede chain, source
/// and labels — field by field — with nothing held or rejected (the older, superseded fact
/// is history, judged at its own time, not against the fact that replaced it). Imported
/// again, nothing is added: not even the expired item, once copied on every run.
#[test]
fn levh_s_own_export_imports_into_an_empty_store_exactly_and_a_second_import_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("from");
    let main = capture(
        &home,
        &[
            "The deploy branch for atlas is main.",
            "--project",
            "atlas",
            "--importance",
            "0.9",
        ],
    );
    let main_id = main["memory_id"].as_str().unwrap().to_owned();
    capture(
        &home,
        &["--pin", "Never deploy on fridays: the on-call rota is thin"],
    );
    capture(
        &home,
        &[
            "Bob was on call the first week of January",
            "--valid-from",
            "2026-01-01",
            "--valid-to",
            "2026-01-08",
        ],
    );
    for n in 0..5 {
        capture(&home, &[&distinct_sentence(n)]);
    }
    ok(levh_hash(&home).args(["recall", "deploy branch atlas"]));
    ok(levh_hash(&home).args(["reinforce", &main_id]));
    let prod = capture(
        &home,
        &["The deploy branch for atlas is prod.", "--project", "atlas"],
    );
    assert_eq!(prod["verdict"], "review", "{prod}");
    ok(levh_hash(&home).args([
        "held",
        "admit",
        prod["held_id"].as_str().unwrap(),
        "--supersede",
    ]));

    let (mut server, address) = serve(&home, &[("LEVH_EMBEDDER", "hash")]);
    let export = |address: &str| -> Value {
        ureq::get(format!("http://{address}/api/export"))
            .call()
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap()
    };
    let exported = export(&address);
    server.kill().unwrap();
    server.wait().unwrap();
    let file = dir.path().join("export.json");
    std::fs::write(&file, exported.to_string()).unwrap();
    let count = exported["memories"].as_array().unwrap().len();
    assert_eq!(count, 9, "{exported}");

    let into = dir.path().join("into");
    let imported = json(levh_hash(&into).args(["import"]).arg(&file).arg("--json"));
    let text = imported.to_string();
    assert!(
        !text.contains("\"review\"") && !text.contains("\"reject\""),
        "{imported}"
    );

    let (mut server, address) = serve(&into, &[("LEVH_EMBEDDER", "hash")]);
    let again = export(&address);
    server.kill().unwrap();
    server.wait().unwrap();
    let by_id = |list: &Value| -> std::collections::BTreeMap<String, Value> {
        list["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["id"].as_str().unwrap().to_owned(), m.clone()))
            .collect()
    };
    let (before, after) = (by_id(&exported), by_id(&again));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (id, old) in &before {
        let new = &after[id];
        for field in [
            "content",
            "project",
            "kind",
            "source",
            "importance",
            "pinned",
            "stability_hours",
            "recall_count",
            "last_recalled_at",
            "created_at",
            "valid_from",
            "valid_to",
            "superseded_by",
            "metadata",
        ] {
            assert_eq!(old[field], new[field], "{id}: {field}");
        }
    }
    let old_main = &after[&main_id];
    assert_eq!(
        old_main["superseded_by"],
        prod_memory_id(&after, "is prod.")
    );
    assert!(
        old_main["recall_count"].as_u64().unwrap() >= 2,
        "{old_main}"
    );

    // Again: every item is already there.
    let twice = json(levh_hash(&into).args(["import"]).arg(&file).arg("--json"));
    assert!(!twice.to_string().contains("\"admit\""), "{twice}");
    let (mut server, address) = serve(&into, &[("LEVH_EMBEDDER", "hash")]);
    let thrice = export(&address);
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(
        thrice["memories"].as_array().unwrap().len(),
        count,
        "{thrice}"
    );
}

fn prod_memory_id(memories: &std::collections::BTreeMap<String, Value>, ending: &str) -> Value {
    let found: Vec<&String> = memories
        .iter()
        .filter(|(_, m)| m["content"].as_str().unwrap().ends_with(ending))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    Value::String(found[0].clone())
}

/// A backup counts what it holds as `levh doctor` counts the store: live memories,
/// forgotten ones, and candidates still waiting for review (not rows of every kind).
#[test]
fn a_backup_counts_memories_as_doctor_does() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let kept = capture(&home, &["The weekly report goes out on Fridays at four"]);
    let gone = capture(&home, &["The coffee machine on floor two is broken again"]);
    capture(
        &home,
        &["The design review moved to the large room upstairs"],
    );
    let held = capture(&home, &["The weekly report goes out on Fridays at five"]);
    assert_eq!(held["verdict"], "review", "{held}");
    assert!(kept["memory_id"].is_string());
    ok(levh_hash(&home).args(["forget", gone["memory_id"].as_str().unwrap()]));

    let text = |output: std::process::Output| String::from_utf8(output.stdout).unwrap();
    let doctor = text(ok(levh_hash(&home).arg("doctor")));
    assert!(doctor.contains("2 memories, 1 forgotten"), "{doctor}");
    let created = text(ok(levh_hash(&home).args(["backup", "create"])));
    assert!(
        created.contains("backed up 2 memories, 1 forgotten, 1 held for review"),
        "{created}"
    );
}
