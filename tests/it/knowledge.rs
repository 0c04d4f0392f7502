//! `levh decisions` and `levh commitments` through the real binary: due dates land on the
//! user's calendar day (`LEVH_TZ`), not UTC's, and a day already past is overdue.

use crate::support::{json, levh};

#[test]
fn cli_lists_commitments_due_in_the_users_time_zone_and_marks_the_overdue() {
    let home = tempfile::tempdir().unwrap();
    let capture = |text: &str, at: &str| {
        json(
            levh(home.path())
                .env("LEVH_NOW", "2026-03-07T12:00:00Z")
                .args(["capture", text, "--valid-from", at, "--json"]),
        )
    };
    // 22:30 UTC on Friday 6 March is already Saturday 01:30 in Istanbul: "tomorrow" there is
    // Sunday the 8th (UTC would say the 7th).
    let late = capture(
        "Thanks all. I'll send the minutes tomorrow.",
        "2026-03-06T22:30:00Z",
    );
    assert_eq!(late["verdict"], "admit", "{late}");
    let early = capture(
        "Raporu cuma gününe kadar göndereceğim. Bütçeyi sabit tutmaya karar verdik.",
        "2026-03-02T08:00:00Z",
    );
    assert_eq!(early["verdict"], "admit", "{early}");

    let list = |zone: &str| {
        json(
            levh(home.path())
                .env("LEVH_NOW", "2026-03-07T12:00:00Z")
                .env("LEVH_TZ", zone)
                .args(["commitments", "--json"]),
        )
    };
    let istanbul = list("Europe/Istanbul");
    assert_eq!(istanbul["time_zone"], "Europe/Istanbul");
    let due: Vec<(&str, &str, bool)> = istanbul["commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["sentence"].as_str().unwrap(),
                c["due"].as_str().unwrap(),
                c["overdue"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        due,
        [
            ("Raporu cuma gününe kadar göndereceğim.", "2026-03-06", true),
            ("I'll send the minutes tomorrow.", "2026-03-08", false),
        ]
    );
    let utc = list("UTC");
    assert_eq!(utc["commitments"][1]["due"], "2026-03-07", "{utc}");

    let decisions = json(levh(home.path()).args(["decisions", "--json"]));
    assert_eq!(
        decisions["decisions"][0]["sentence"], "Bütçeyi sabit tutmaya karar verdik.",
        "{decisions}"
    );

    // A zone that does not exist is an error that names it, not a silent UTC.
    let output = levh(home.path())
        .env("LEVH_TZ", "Mars/Olympus")
        .args(["commitments"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("LEVH_TZ") && stderr.contains("Mars/Olympus"),
        "{stderr}"
    );
}

/// A synced transcript states each promise and decision once (its summary quotes them
/// again), each by who said it: with `LEVH_ME` naming one speaker, only that speaker's
/// promise is the user's; without it, each promise is listed once with its speaker —
/// never as "you".
#[test]
fn a_transcript_s_promises_and_decisions_are_listed_once_each_by_their_speaker() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("release-sync.vtt"),
        "WEBVTT\n\n00:00:01.000 --> 00:00:05.000\n<v Ada Lovelace>I'll send the budget to finance by Friday.\n\n\
         00:00:06.000 --> 00:00:09.000\n<v Bob Smith>We decided to ship the release on Monday.\n\n\
         00:00:10.000 --> 00:00:12.000\n<v Bob Smith>I will update the changelog tomorrow.\n",
    )
    .unwrap();
    let cli = || {
        let mut command = levh(home.path());
        command.env("LEVH_EMBEDDER", "hash").env("LEVH_TZ", "UTC");
        command
    };
    let report = json(
        cli()
            .args(["sync", "transcript", "--json", "-c"])
            .arg(format!("transcript_dir={}", dir.path().display())),
    );
    assert_eq!(report["admitted"], 1, "{report}");

    let decisions = json(cli().args(["decisions", "--json"]));
    let decided = decisions["decisions"].as_array().unwrap();
    assert_eq!(decided.len(), 1, "{decisions}");
    assert_eq!(decided[0]["by"], "Bob Smith");

    let mine = json(
        cli()
            .env("LEVH_ME", "Ada Lovelace")
            .args(["commitments", "--json"]),
    );
    let mine = mine["commitments"].as_array().unwrap();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["by"], "Ada Lovelace");
    assert!(mine[0]["sentence"].as_str().unwrap().contains("budget"));

    let everyone = json(cli().args(["commitments", "--json"]));
    let everyone = everyone["commitments"].as_array().unwrap();
    let mut by: Vec<&str> = everyone
        .iter()
        .map(|c| c["by"].as_str().unwrap_or("you"))
        .collect();
    by.sort();
    assert_eq!(by, ["Ada Lovelace", "Bob Smith"], "{everyone:?}");
}
