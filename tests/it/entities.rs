//! The entity index from outside: a mailbox, a calendar and two meeting transcripts
//! (fixtures/knowledge/world, written for this) synced by the real connectors through
//! the real binary, then read through the CLI and over MCP stdio — people merged across
//! the three sources, organizations without personal providers, the timeline in Berlin
//! across the end of summer time, decisions and the user's own commitments in English and
//! Turkish, a commitment kept by a later mail and one marked done by hand; merging what
//! the heuristics missed; and a purge leaving no entity behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::{json, levh, ok, repository_root, runtime};

pub(crate) const NOW: &str = "2026-10-31T09:00:00Z";
pub(crate) const ME: &str = "Deniz Kaya, deniz.kaya@gmail.com";

pub(crate) fn world() -> std::path::PathBuf {
    repository_root().join("fixtures/knowledge/world")
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(world().join("expected.json")).unwrap()).unwrap()
}

/// `levh` in `home` with the world's clock, zone and user.
pub(crate) fn cli(home: &Path) -> std::process::Command {
    let mut command = levh(home);
    command
        .env("LEVH_NOW", NOW)
        .env("LEVH_TZ", "Europe/Berlin")
        .env("LEVH_EMBEDDER", "hash")
        .env("LEVH_ME", ME);
    command
}

/// Syncs the three sources; transcripts take the meeting's time from the file's
/// modification time, which git does not keep, so copies get the times the world says.
pub(crate) fn sync_world(home: &Path) {
    let transcripts = home.join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    for (name, at) in expected()["transcript_times"].as_object().unwrap() {
        let target = transcripts.join(name);
        std::fs::copy(world().join("transcripts").join(name), &target).unwrap();
        let at: jiff::Timestamp = at.as_str().unwrap().parse().unwrap();
        let when = SystemTime::UNIX_EPOCH + Duration::from_secs(at.as_second() as u64);
        std::fs::File::options()
            .write(true)
            .open(&target)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    for (connector, setting) in [
        (
            "email",
            format!("mbox_path={}", world().join("mail/deniz.mbox").display()),
        ),
        (
            "calendar",
            format!("ics_path={}", world().join("calendar/deniz.ics").display()),
        ),
        (
            "transcript",
            format!("transcript_dir={}", transcripts.display()),
        ),
    ] {
        let report = json(cli(home).args(["sync", connector, "-c", &setting, "--json"]));
        assert_eq!(report["failed"], 0, "{connector}: {report}");
        assert!(
            report["admitted"].as_u64().unwrap() >= 2,
            "{connector}: {report}"
        );
    }
}

fn strings(value: &Value, key: &str) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_synced_mailbox_calendar_and_transcripts_give_people_organizations_a_timeline_decisions_and_commitments()
 {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    sync_world(home);
    let expected = expected();

    // People: one each across mail, calendar and transcripts (Priya is an address
    // without a name in one invitation and a name without an address in the meetings).
    let people = json(cli(home).args(["people", "--json"]));
    let people = people["people"].as_array().unwrap();
    let names: BTreeSet<String> = people
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, strings(&expected["people"], "name"), "{people:?}");
    for want in expected["people"].as_array().unwrap() {
        let got = people.iter().find(|p| p["name"] == want["name"]).unwrap();
        assert_eq!(got["emails"], want["emails"], "{got}");
        let channels: BTreeSet<String> = want["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("connector:{}", s.as_str().unwrap()))
            .collect();
        assert_eq!(strings_of(&got["channels"]), channels, "{got}");
    }
    // Organizations: by work domain; gmail.com and outlook.com are people's, not companies.
    let organizations = json(cli(home).args(["orgs", "--json"]));
    let organizations = organizations["organizations"].as_array().unwrap();
    let mut found: Vec<(String, BTreeSet<String>)> = organizations
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_owned(),
                strings(&o["people"], "name"),
            )
        })
        .collect();
    found.sort();
    let mut want: Vec<(String, BTreeSet<String>)> = expected["organizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["domain"].as_str().unwrap().to_owned(),
                strings_of(&o["people"]),
            )
        })
        .collect();
    want.sort();
    assert_eq!(found, want);

    // The timeline: Berlin's days, on both sides of 25 October's extra hour.
    let timeline = json(cli(home).args([
        "timeline",
        "--from",
        "2026-10-20",
        "--to",
        "2026-10-30",
        "--json",
    ]));
    assert_eq!(timeline["time_zone"], "Europe/Berlin");
    let days = days_of(&timeline);
    let want: Vec<(String, BTreeSet<String>)> = expected["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["day"].as_str().unwrap().to_owned(),
                strings_of(&d["items"]),
            )
        })
        .collect();
    assert_eq!(days, want);
    let at = |title: &str| -> String {
        timeline["days"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|d| d["memories"].as_array().unwrap())
            .find(|m| m["preview"] == title)
            .map(|m| m["at"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(at("Night soak test kick-off"), "2026-10-25T00:30:00+02:00");
    assert_eq!(at("Soak test results"), "2026-10-26T00:30:00+01:00");
    // In UTC both are on the day before.
    let utc = json(cli(home).env("LEVH_TZ", "UTC").args([
        "timeline",
        "--from",
        "2026-10-24",
        "--to",
        "2026-10-25",
        "--json",
    ]));
    let utc_days = days_of(&utc);
    assert_eq!(
        utc_days,
        [
            (
                "2026-10-24".to_owned(),
                BTreeSet::from(["Night soak test kick-off".to_owned()])
            ),
            (
                "2026-10-25".to_owned(),
                BTreeSet::from(["Soak test results".to_owned()])
            ),
        ]
    );
    // With one person: only the meetings and mails she was part of.
    let lena = json(cli(home).args([
        "timeline",
        "--from",
        "2026-10-20",
        "--to",
        "2026-10-30",
        "--person",
        "Lena Fischer",
        "--json",
    ]));
    let lena_items: BTreeSet<String> = lena["days"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| strings(&d["memories"], "preview"))
        .collect();
    assert_eq!(
        lena_items,
        BTreeSet::from([
            "Climbing on Friday?".to_owned(),
            "Bouldering with Lena".to_owned()
        ])
    );

    // Decisions, English and Turkish, without the speaker's prefix, with who said them.
    let decisions = json(cli(home).args(["decisions", "--json"]));
    assert_eq!(
        strings(&decisions["decisions"], "sentence"),
        strings(&expected["decisions"], "sentence")
    );
    let torque = decisions["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["sentence"].as_str().unwrap().contains("torque"))
        .unwrap();
    assert_eq!(torque["by"], "Tomás Ortega");

    // Commitments: the user's own (LEVH_ME), with due days in Berlin; the budget was
    // sent in a later mail, so it is done; others' promises are theirs.
    let all = json(cli(home).args(["commitments", "--include-done", "--json"]));
    let mut got: Vec<(String, String, bool)> = all["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["sentence"].as_str().unwrap().to_owned(),
                c["due"].as_str().unwrap_or("-").to_owned(),
                c["done"].as_bool().unwrap(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, String, bool)> = expected["commitments_of_the_user"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["sentence"].as_str().unwrap().to_owned(),
                c["due"].as_str().unwrap().to_owned(),
                c["done"].as_bool().unwrap(),
            )
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
    let budget = all["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["done"] == true)
        .unwrap();
    assert!(budget["done_by_memory"].is_string(), "{budget}");
    let open = json(cli(home).args(["commitments", "--json"]));
    let open_ids: Vec<String> = open["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(open_ids.len(), want.len() - 1);
    // Without LEVH_ME, levh cannot tell whose a transcript's words are: others' promises
    // are listed, each with who made it.
    let everyone = json(
        cli(home)
            .env_remove("LEVH_ME")
            .args(["commitments", "--json"]),
    );
    for other in expected["commitments_of_others"].as_array().unwrap() {
        let listed = everyone["commitments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["sentence"] == other["sentence"])
            .unwrap_or_else(|| panic!("{other} missing: {everyone}"));
        assert_eq!(listed["by"], other["speaker"]);
    }
    // Marked done by hand: it leaves the open list, and stays done.
    let done = json(cli(home).args(["commitments", "done", &open_ids[0], "--json"]));
    assert_eq!(done["done"], true, "{done}");
    let open = json(cli(home).args(["commitments", "--json"]));
    assert_eq!(
        open["commitments"].as_array().unwrap().len(),
        want.len() - 2
    );
    let unknown = cli(home)
        .args(["commitments", "done", "c0000000000"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("c0000000000"));

    // About a person, by address: her memories, organization, who she works with.
    let priya = json(cli(home).args(["people", "show", "priya.raman@acme-robotics.com", "--json"]));
    assert_eq!(priya["entity"]["name"], "Priya Raman");
    assert_eq!(
        strings(&priya["memberships"], "name"),
        BTreeSet::from(["acme-robotics.com".to_owned()])
    );
    let with: BTreeSet<String> = priya["related"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["entity"]["kind"] == "person")
        .map(|r| r["entity"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        with,
        BTreeSet::from(["Deniz Kaya".to_owned(), "Tomás Ortega".to_owned()])
    );
    let roles: BTreeSet<String> = priya["memories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| strings_of(&m["roles"]))
        .collect();
    for role in ["sender", "attendee", "speaker", "organizer"] {
        assert!(roles.contains(role), "{role} missing from {roles:?}");
    }
    // `about` works for every kind: the organization lists its people.
    let acme = json(cli(home).args(["about", "acme-robotics.com", "--json"]));
    assert_eq!(acme["entity"]["kind"], "organization");
    assert_eq!(
        strings(&acme["memberships"], "name"),
        BTreeSet::from(["Priya Raman".to_owned(), "Tomás Ortega".to_owned()])
    );
    let meeting = json(cli(home).args(["about", "budget-sync.srt", "--kind", "event", "--json"]));
    assert_eq!(meeting["entity"]["kind"], "event", "{meeting}");

    // Over MCP stdio, the same answers.
    runtime().block_on(async {
        let (client, _child) = crate::mcp::spawn_stdio_with_env(
            home,
            "entities-test",
            &[
                ("LEVH_NOW", NOW),
                ("LEVH_TZ", "Europe/Berlin"),
                ("LEVH_EMBEDDER", "hash"),
                ("LEVH_ME", ME),
            ],
        )
        .await;
        let mcp_people = crate::mcp::ok(&client, "list_people", json!({})).await;
        assert_eq!(
            strings(&mcp_people["people"], "name"),
            strings(&expected["people"], "name")
        );
        let mcp_orgs = crate::mcp::ok(&client, "list_organizations", json!({})).await;
        assert_eq!(mcp_orgs["organizations"].as_array().unwrap().len(), 2);
        let mcp_timeline = crate::mcp::ok(
            &client,
            "timeline",
            json!({"from": "2026-10-20", "to": "2026-10-30"}),
        )
        .await;
        assert_eq!(mcp_timeline["days"], timeline["days"]);
        let about = crate::mcp::ok(&client, "about_entity", json!({"entity": "Priya Raman"})).await;
        assert_eq!(about["entity"]["id"], priya["entity"]["id"]);
        let graph = crate::mcp::ok(&client, "entity_graph", json!({"kind": "person"})).await;
        let heaviest = &graph["edges"][0];
        assert!(heaviest["weight"].as_u64().unwrap() >= 8, "{graph}");
        let commitments = crate::mcp::ok(&client, "list_commitments", json!({})).await;
        assert_eq!(
            commitments["commitments"].as_array().unwrap().len(),
            want.len() - 2
        );
        let refused =
            crate::mcp::call(&client, "about_entity", json!({"entity": "Nobody Atall"})).await;
        assert_eq!(refused.is_error, Some(true));
        client.cancel().await.unwrap();
    });
}

/// A timeline's days with the titles of their memories.
fn days_of(timeline: &Value) -> Vec<(String, BTreeSet<String>)> {
    timeline["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["day"].as_str().unwrap().to_owned(),
                strings(&d["memories"], "preview"),
            )
        })
        .collect()
}

fn strings_of(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn merging_joins_what_the_heuristics_kept_apart_and_a_purge_leaves_no_orphan_entity() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let capture = |text: &str| {
        let stored = json(cli(home).args(["capture", text, "--json"]));
        assert_eq!(stored["verdict"], "admit", "{stored}");
        stored["memory_id"].as_str().unwrap().to_owned()
    };
    capture("Grace Hopper sent the compiler notes from grace@navy-labs.example.org");
    capture("Reviewed the compiler backlog with @ghopper this afternoon");
    let lonely = capture("Invoice questions go to billing@zed-accounting.example.com now");
    let entities = json(cli(home).args(["entities", "--kind", "person", "--json"]));
    let names = strings(&entities["entities"], "name");
    assert!(
        names.contains("@ghopper") && names.contains("grace@navy-labs.example.org"),
        "{names:?}"
    );

    // The handle is the same person: merged, it is one entity with both keys.
    let merged = json(cli(home).args([
        "entities",
        "merge",
        "grace@navy-labs.example.org",
        "@ghopper",
        "--json",
    ]));
    assert_eq!(merged["memories"], 2, "{merged}");
    assert_eq!(merged["handles"], json!(["@ghopper"]));
    // A later mention of the handle finds the merged person, not a new one.
    capture("Asked @ghopper about the linker flags for the nightly build");
    let again = json(cli(home).args(["about", "@ghopper", "--json"]));
    assert_eq!(again["entity"]["id"], merged["id"]);
    assert_eq!(again["entity"]["memories"], 3);
    // A NUL would end SQLite's LIKE pattern and match everyone: refused, naming it.
    let nul = cli(home).args(["about", "\u{1}"]).output().unwrap();
    assert!(!nul.status.success());
    assert!(String::from_utf8_lossy(&nul.stderr).contains("control characters"));
    let same = cli(home)
        .args([
            "entities",
            "merge",
            "@ghopper",
            "grace@navy-labs.example.org",
        ])
        .output()
        .unwrap();
    assert!(!same.status.success());
    assert!(String::from_utf8_lossy(&same.stderr).contains("already one entity"));

    // Purge the only memory naming billing@: its person and organization go with it.
    let before = json(cli(home).args(["entities", "--json"]));
    assert!(before.to_string().contains("zed-accounting"), "{before}");
    ok(cli(home).args(["purge", &lonely]));
    let after = json(cli(home).args(["entities", "--json"]));
    assert!(!after.to_string().contains("zed-accounting"), "{after}");
    let db = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    let orphans: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM entities e WHERE NOT EXISTS
               (SELECT 1 FROM memory_entities me WHERE me.entity_seq = e.seq)",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    let residue: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM entity_keys WHERE key LIKE '%zed-accounting%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(residue, 0);
}

#[test]
fn reindex_indexes_a_store_written_before_the_index_and_resumes_where_it_stopped() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    for n in 0..12 {
        ok(cli(home).args([
            "capture",
            &format!(
                "{} — ask person{n}@firm{}-labs.com",
                crate::support::distinct_sentence(n),
                n % 3
            ),
        ]));
    }
    // As if written before the index existed (or by older rules): no link, no record.
    let db = rusqlite::Connection::open(home.join("levh.db")).unwrap();
    db.execute_batch(
        "DELETE FROM entity_indexed; DELETE FROM memory_entities; DELETE FROM entities;",
    )
    .unwrap();
    let empty = json(cli(home).args(["people", "--json"]));
    assert_eq!(empty["people"], json!([]));

    let first = json(cli(home).args(["entities", "reindex", "--max", "5", "--json"]));
    assert_eq!(
        (first["indexed"].as_u64(), first["remaining"].as_u64()),
        (Some(5), Some(7))
    );
    let rest = json(cli(home).args(["entities", "reindex", "--json"]));
    assert_eq!(
        (rest["indexed"].as_u64(), rest["remaining"].as_u64()),
        (Some(7), Some(0))
    );
    let people = json(cli(home).args(["people", "--json"]));
    assert_eq!(people["people"].as_array().unwrap().len(), 12);
    let orgs = json(cli(home).args(["orgs", "--json"]));
    assert_eq!(orgs["organizations"].as_array().unwrap().len(), 3);
    // Nothing left to do; --all does every memory again, and changes nothing.
    let idle = json(cli(home).args(["entities", "reindex", "--json"]));
    assert_eq!(idle["indexed"], 0);
    let all = json(cli(home).args(["entities", "reindex", "--all", "--json"]));
    assert_eq!(
        (all["indexed"].as_u64(), all["entities"].as_u64()),
        (Some(12), Some(15))
    );
}
