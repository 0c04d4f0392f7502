//! The calendar connector on its fixtures, through `levh sync`, with the clock fixed so
//! the 30-days-either-side window is always 2026-02-18T12:00Z .. 2026-04-19T12:00Z.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{json, levh};

const NOW: &str = "2026-03-20T12:00:00Z";

fn fixtures() -> PathBuf {
    crate::support::repository_root()
        .join("fixtures")
        .join("calendar")
}

/// `levh sync calendar --json --config ...` at [`NOW`].
fn sync(home: &Path, config: &[String]) -> Command {
    let mut command = levh(home);
    command
        .env("LEVH_NOW", NOW)
        .args(["sync", "calendar", "--json"]);
    for pair in config {
        command.args(["--config", pair]);
    }
    command
}

fn ics_path(path: &Path) -> String {
    format!("ics_path={}", path.display())
}

fn errors(report: &Value) -> Vec<String> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

fn memories(home: &Path) -> Vec<Value> {
    json(levh(home).env("LEVH_NOW", NOW).args(["list", "--json"]))["memories"]
        .as_array()
        .unwrap()
        .clone()
}

fn by_source_id<'m>(memories: &'m [Value], source_id: &str) -> Option<&'m Value> {
    memories
        .iter()
        .find(|m| m["metadata"]["source_id"] == source_id)
}

#[test]
fn a_calendar_directory_becomes_one_memory_per_event_and_each_bad_file_or_event_one_line() {
    let home = tempfile::tempdir().unwrap();
    let report = json(&mut sync(home.path(), &[ics_path(&fixtures())]));
    assert_eq!(report["status"], "ok", "{report}");
    // team.ics: the standup series, the launch review, the offsite, the budget review
    // series; travel.ics: the flight, the dinner, the office hours series; broken-rrule.ics:
    // the design review. One memory per event, a series listing its occurrences, so the
    // gate has no near-duplicate occurrences to hold.
    assert_eq!(report["fetched"], 8, "{report}");
    assert_eq!(report["admitted"], 8, "{report}");
    assert_eq!(report["held"], 0, "{report}");
    let errors = errors(&report);
    assert_eq!(report["failed"], 4, "{errors:?}");
    for (location, words) in [
        (
            "broken-rrule.ics#quarterly-planning@atlas.example",
            "broken RRULE \"FREQ=SOMETIMES;INTERVAL=3\": `SOMETIMES` is not a valid frequency",
        ),
        ("truncated.ics", "truncated: the file ends with"),
        ("empty.ics", "empty file"),
        ("not-utf8.ics", "not UTF-8"),
    ] {
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{location}: ")) && e.contains(words)),
            "{location}: {errors:?}"
        );
    }

    let memories = memories(home.path());
    let review = by_source_id(&memories, "team.ics#launch-review-20260323@atlas.example")
        .unwrap_or_else(|| panic!("{memories:#?}"));
    assert_eq!(review["kind"], "event");
    assert_eq!(
        review["valid_from"], "2026-03-23T13:00:00Z",
        "world time = the start"
    );
    let content = review["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "Atlas launch review\nWhen: Mon 2026-03-23 13:00 – 14:30 (UTC)\nWhere: Berlin office, Room Hopper\n\
             Organizer: Lovelace, Ada <ada@atlas.example>\n"
        ),
        "{content}"
    );
    assert!(
        content.contains("2. Rollback plan for the payment service, owned by Linus"),
        "the folded description is unfolded and unescaped: {content}"
    );
    let metadata = &review["metadata"];
    assert_eq!(
        metadata["people"],
        serde_json::json!([
            {"name": "Lovelace, Ada", "email": "ada@atlas.example", "role": "organizer"},
            {"name": "Grace Hopper", "email": "grace@atlas.example", "role": "attendee"},
            {"name": "Linus Torvalds", "email": "linus@atlas.example", "role": "attendee"},
            {"name": "Margaret Hamilton", "email": "margaret@apollo.example", "role": "attendee"},
        ])
    );
    assert_eq!(metadata["uid"], "launch-review-20260323@atlas.example");
    assert_eq!(
        (&metadata["start"], &metadata["end"]),
        (
            &Value::from("2026-03-23T13:00:00Z"),
            &Value::from("2026-03-23T14:30:00Z")
        )
    );
    assert_eq!(
        (&metadata["all_day"], &metadata["recurring"]),
        (&Value::from(false), &Value::from(false))
    );
    assert_eq!(metadata["file"], "team.ics");
    assert_eq!(metadata["title"], "Atlas launch review");
    assert!(
        metadata["source_uri"]
            .as_str()
            .is_some_and(|u| u.starts_with("file:") && u.ends_with("team.ics")),
        "{metadata}"
    );

    // The standup series: one memory listing its 7 occurrences in the window (10 March is
    // an EXDATE), 09:30 Berlin = 08:30 UTC before the DST change and 07:30 after, and the
    // 17 March override moved to 11:00 Berlin with its own title.
    let standup = by_source_id(&memories, "team.ics#standup-2026@atlas.example")
        .unwrap_or_else(|| panic!("{memories:#?}"));
    assert_eq!(
        standup["valid_from"], "2026-02-24T08:30:00Z",
        "the first in the window"
    );
    assert_eq!(standup["metadata"]["recurring"], true);
    assert_eq!(standup["metadata"]["time_zone"], "Europe/Berlin");
    assert_eq!(
        standup["metadata"]["occurrences"],
        serde_json::json!([
            "2026-02-24T08:30:00Z",
            "2026-03-03T08:30:00Z",
            "2026-03-17T10:00:00Z",
            "2026-03-24T08:30:00Z",
            "2026-03-31T07:30:00Z",
            "2026-04-07T07:30:00Z",
            "2026-04-14T07:30:00Z",
        ])
    );
    let content = standup["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "Atlas standup\nRecurring: 7 occurrences in the window (UTC):\n- Tue 2026-02-24 08:30 – 08:45 (UTC)\n"
        ),
        "{content}"
    );
    assert!(
        content.contains(
            "- Tue 2026-03-17 10:00 – 10:15 (UTC) — Atlas standup (moved for the release)"
        ),
        "{content}"
    );
    assert!(
        !content.contains("2026-03-10"),
        "the EXDATE is left out: {content}"
    );
    // The all-day offsite, and a zone the other side of the Atlantic.
    let offsite = by_source_id(&memories, "team.ics#offsite-2026-spring@atlas.example").unwrap();
    assert_eq!(offsite["valid_from"], "2026-03-26T00:00:00Z");
    assert_eq!(offsite["metadata"]["all_day"], true);
    let dinner = by_source_id(
        &memories,
        "travel.ics#dinner-margaret-20260403@travel.example",
    )
    .unwrap();
    assert_eq!(dinner["valid_from"], "2026-04-03T23:00:00Z");
    // Outside the window: never synced.
    assert!(by_source_id(&memories, "team.ics#kickoff-2024@atlas.example").is_none());
    assert!(
        memories
            .iter()
            .all(|m| !m["content"].as_str().unwrap().contains("kickoff"))
    );

    let held = json(
        levh(home.path())
            .env("LEVH_NOW", NOW)
            .args(["held", "list", "--json"]),
    );
    assert_eq!(
        held["held"],
        serde_json::json!([]),
        "nothing waits for review"
    );
    // Every admitted memory, by source id: 10 March (EXDATE) and the 2024 kickoff are in
    // neither list.
    let mut admitted: Vec<&str> = memories
        .iter()
        .map(|m| m["metadata"]["source_id"].as_str().unwrap())
        .collect();
    admitted.sort();
    assert_eq!(
        admitted,
        [
            "broken-rrule.ics#design-review-20260325@atlas.example",
            "team.ics#budget-review@atlas.example",
            "team.ics#launch-review-20260323@atlas.example",
            "team.ics#offsite-2026-spring@atlas.example",
            "team.ics#standup-2026@atlas.example",
            "travel.ics#dinner-margaret-20260403@travel.example",
            "travel.ics#flight-lh400-20260402@travel.example",
            "travel.ics#nyc-office-hours@travel.example",
        ]
    );

    let again = json(&mut sync(home.path(), &[ics_path(&fixtures())]));
    assert_eq!(
        (
            again["admitted"].as_u64(),
            again["held"].as_u64(),
            again["unchanged"].as_u64(),
            again["failed"].as_u64()
        ),
        (Some(0), Some(0), Some(8), Some(4)),
        "{again}"
    );
}

#[test]
fn one_file_and_a_narrower_window_take_only_the_occurrences_inside_it() {
    let home = tempfile::tempdir().unwrap();
    // 20 March to 4 April 12:00 UTC: the flight and the dinner, not the office hours.
    let report = json(&mut sync(
        home.path(),
        &[
            ics_path(&fixtures().join("travel.ics")),
            "past_days=0".into(),
            "future_days=15".into(),
        ],
    ));
    assert_eq!(
        (report["admitted"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(0)),
        "{report}"
    );
    let memories = memories(home.path());
    let flight = by_source_id(&memories, "travel.ics#flight-lh400-20260402@travel.example")
        .unwrap_or_else(|| panic!("{memories:#?}"));
    // Leaves 10:15 Berlin summer time, lands 13:00 New York summer time.
    assert_eq!(flight["valid_from"], "2026-04-02T08:15:00Z");
    assert_eq!(flight["metadata"]["end"], "2026-04-02T17:00:00Z");
    assert_eq!(flight["metadata"]["title"], "Flight BER → JFK (LH 400)");
    assert_eq!(memories.len(), 2, "{memories:#?}");
}

#[test]
fn config_mistakes_name_the_key() {
    let home = tempfile::tempdir().unwrap();
    let missing = sync(home.path(), &[]).output().unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("ics_path"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );

    let words = sync(
        home.path(),
        &[ics_path(&fixtures()), "past_days=a month".into()],
    )
    .output()
    .unwrap();
    assert!(!words.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&words.stdout),
        String::from_utf8_lossy(&words.stderr)
    );
    assert!(
        said.contains("`past_days` must be a whole number"),
        "{said}"
    );
}

/// What `levh list` stored for each source id, by source id.
fn stored(home: &Path) -> std::collections::HashMap<String, Value> {
    json(
        levh(home)
            .env("LEVH_NOW", NOW)
            .args(["list", "--json", "-n", "1000"]),
    )["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["metadata"]["source_id"].as_str().unwrap().to_owned(),
                m.clone(),
            )
        })
        .collect()
}

#[test]
fn zones_defined_by_the_file_offsets_in_names_periods_and_a_malformed_line_keep_every_event_right()
{
    let home = tempfile::tempdir().unwrap();
    let world = crate::support::repository_root()
        .join("fixtures")
        .join("calendar-world");
    let report = json(&mut sync(home.path(), &[ics_path(&world)]));
    assert_eq!(report["status"], "ok", "{report}");
    let errors = errors(&report);
    // One line for the event whose SUMMARY lost its colon, in the file's terms (the
    // calendar-level line without a colon is not an event's and costs nothing).
    assert_eq!(
        errors,
        [
            "malformed-line.ics#sync-meeting@kestrel.example: not valid iCalendar: line 7 (\"SUMMARY Weekly sync\"): not a property line (NAME:value, or NAME;PARAM=value:value)"
        ],
        "{report}"
    );
    assert_eq!(report["fetched"], 8, "{report}");
    let stored = stored(home.path());
    for (source_id, valid_from) in [
        // Exchange's zone from its VTIMEZONE: +01:00 before the last Sunday of March,
        // +02:00 after.
        (
            "exchange.ics#exchange-winter@kestrel.example",
            "2026-03-24T08:30:00Z",
        ),
        (
            "exchange.ics#exchange-summer@kestrel.example",
            "2026-04-07T07:30:00Z",
        ),
        (
            "lotus.ics#lotus-board@kestrel.example",
            "2026-04-01T12:00:00Z",
        ),
        // An unquoted TZID with a colon in it, defined as -03:00.
        (
            "named-offsets.ics#brasilia-visit@kestrel.example",
            "2026-03-25T13:00:00Z",
        ),
        // No definition: the offset in the name, and a known name behind a prefix.
        (
            "named-offsets.ics#sydney-call@kestrel.example",
            "2026-03-25T22:00:00Z",
        ),
        (
            "named-offsets.ics#custom-ny@kestrel.example",
            "2026-03-27T13:00:00Z",
        ),
        ("periods.ics#clinic@kestrel.example", "2026-03-23T10:00:00Z"),
        (
            "malformed-line.ics#retro@kestrel.example",
            "2026-03-31T10:00:00Z",
        ),
    ] {
        let memory = stored
            .get(source_id)
            .unwrap_or_else(|| panic!("{source_id} not stored: {report}"));
        assert_eq!(memory["valid_from"], valid_from, "{source_id}");
    }
    // Each RDATE period lasts as long as it says, not as the one-hour event does.
    let clinic = stored["periods.ics#clinic@kestrel.example"]["content"]
        .as_str()
        .unwrap();
    for line in [
        "- Mon 2026-03-23 10:00 – 11:00 (UTC)",
        "- Wed 2026-03-25 15:00 – 17:00 (UTC)",
        "- Wed 2026-04-01 15:00 – 18:00 (UTC)",
    ] {
        assert!(clinic.contains(line), "{line}: {clinic}");
    }
    let summer = stored["exchange.ics#exchange-summer@kestrel.example"]["content"]
        .as_str()
        .unwrap();
    assert!(
        summer.contains("Local time: Tue 2026-04-07 09:30 – 10:30"),
        "the local time is the file's wall clock: {summer}"
    );
}

/// One VEVENT, CRLF-terminated, `minutes` long.
fn generated_event(uid: &str, start: jiff::Timestamp, extra: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{}\r\nDURATION:PT1H\r\nSUMMARY:Generated {uid} at {}\r\n{extra}END:VEVENT\r\n",
        start.strftime("%Y%m%dT%H%M%SZ"),
        start.strftime("%A %H:%M")
    )
}

#[test]
fn a_10000_event_calendar_and_a_40_mb_one_sync_whole_beside_a_good_file() {
    use jiff::{Timestamp, ToSpan};
    let at = |text: &str| text.parse::<Timestamp>().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let window = (at("2026-02-18T12:00:00Z"), at("2026-04-19T12:00:00Z"));
    // 10,000 events six hours apart from 2024 on: those inside the window are stored.
    let origin = at("2024-01-01T00:00:00Z");
    let mut ten_thousand = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n");
    let mut inside = 0;
    for n in 0..10_000 {
        let start = origin + (6 * n).hours();
        if start + 1.hour() >= window.0 && start <= window.1 {
            inside += 1;
        }
        ten_thousand.push_str(&generated_event(&format!("ten-{n}"), start, ""));
    }
    ten_thousand.push_str("END:VCALENDAR\r\n");
    std::fs::write(dir.path().join("ten-thousand.ics"), &ten_thousand).unwrap();

    // 40 MB: a weekly series opened in 2010 whose one change comes at the very end of the
    // file, and hourly one-offs of 2010–2022 with long descriptions, all outside the window.
    let old = at("2010-01-04T09:00:00Z");
    let mut large = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n");
    large.push_str(&generated_event(
        "weekly-review",
        old,
        "RRULE:FREQ=WEEKLY\r\n",
    ));
    let description = format!(
        "DESCRIPTION:{}\r\n",
        "Minutes of the old meeting. ".repeat(12)
    );
    let mut n = 0;
    while large.len() < 40 << 20 {
        let start = old + (n + 1).hours();
        large.push_str(&generated_event(&format!("old-{n}"), start, &description));
        n += 1;
    }
    large.push_str(
        "BEGIN:VEVENT\r\nUID:weekly-review\r\nRECURRENCE-ID:20260323T090000Z\r\nDTSTART:20260324T150000Z\r\nDURATION:PT1H\r\nSUMMARY:Weekly review, moved to Tuesday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    std::fs::write(dir.path().join("large.ics"), &large).unwrap();
    std::fs::copy(fixtures().join("travel.ics"), dir.path().join("travel.ics")).unwrap();

    let home = tempfile::tempdir().unwrap();
    let report = json(&mut sync(home.path(), &[ics_path(dir.path())]));
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(errors(&report), Vec::<String>::new(), "{report}");
    // ten-thousand.ics's events inside the window, the large file's series, travel.ics's
    // three.
    assert_eq!(report["fetched"], inside + 1 + 3, "{report}");
    let stored = stored(home.path());
    let weekly = &stored["large.ics#weekly-review"];
    let content = weekly["content"].as_str().unwrap();
    assert!(
        content.contains("- Tue 2026-03-24 15:00 – 16:00 (UTC) — Weekly review, moved to Tuesday"),
        "the change at the end of the file reached its series: {content}"
    );
    assert!(
        !content.contains("Mon 2026-03-23 09:00"),
        "the moved occurrence is not also at its old time: {content}"
    );
    assert!(
        stored.contains_key("travel.ics#flight-lh400-20260402@travel.example"),
        "{report}"
    );
}

#[test]
fn a_weekday_series_over_years_is_one_summarised_memory_not_a_cut_or_dropped_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("standup.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:weekday-standup\r\nDTSTART:20250101T090000Z\r\nDURATION:PT15M\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\r\nSUMMARY:Kestrel standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let report = json(&mut sync(
        home.path(),
        &[
            ics_path(dir.path()),
            "past_days=300".into(),
            "future_days=1000".into(),
        ],
    ));
    assert_eq!(report["admitted"], 1, "{report}");
    let stored = stored(home.path());
    let standup = &stored["standup.ics#weekday-standup"];
    let content = standup["content"].as_str().unwrap();
    assert!(
        content.contains("Recurring every week on weekdays: 929 occurrences in the window (UTC)"),
        "{content}"
    );
    assert!(
        content.contains("(899 more in the window, not listed)"),
        "{content}"
    );
    assert!(
        standup["metadata"].get("truncated").is_none(),
        "summarised, not cut: {standup}"
    );
    assert_eq!(
        standup["metadata"]["occurrences"].as_array().unwrap().len(),
        929
    );
}

#[test]
fn a_second_event_with_the_same_uid_is_reported_not_dropped_silently() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("twice.ics"),
        "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:kestrel-review\nDTSTART:20260324T100000Z\nSUMMARY:Kestrel design review\nEND:VEVENT\nBEGIN:VEVENT\nUID:kestrel-review\nDTSTART:20260326T150000Z\nSUMMARY:Kestrel budget sign-off\nEND:VEVENT\nEND:VCALENDAR\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let report = json(&mut sync(home.path(), &[ics_path(dir.path())]));
    assert_eq!(report["admitted"], 1, "{report}");
    assert_eq!(
        errors(&report),
        [
            "twice.ics#kestrel-review: another event in this file has the same UID; only the first was read"
        ],
        "{report}"
    );
    let failed: Vec<&Value> = report["not_stored"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["fate"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert_eq!(failed[0]["source_id"], "twice.ics#kestrel-review");
}

/// A recurring series is one memory, but the timeline shows it on every day it meets —
/// in the user's zone, across the change to summer time — not once.
#[test]
fn the_timeline_shows_each_occurrence_of_a_series_on_its_own_day() {
    let home = tempfile::tempdir().unwrap();
    let ics = home.path().join("team.ics");
    std::fs::write(
        &ics,
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:design-review\r\nDTSTART:20260316T090000Z\r\nDURATION:PT1H\r\n\
         RRULE:FREQ=WEEKLY;COUNT=4\r\nSUMMARY:Design review\r\nEND:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:offsite\r\nDTSTART:20260325T080000Z\r\nDTEND:20260325T160000Z\r\nSUMMARY:Offsite\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .unwrap();
    let report = json(&mut sync(home.path(), &[ics_path(&ics)]));
    assert_eq!(report["admitted"], 2, "{report}");
    let timeline = json(
        levh(home.path())
            .env("LEVH_NOW", NOW)
            .env("LEVH_TZ", "Europe/Berlin")
            .args([
                "timeline",
                "--from",
                "2026-03-16",
                "--to",
                "2026-04-12",
                "--json",
            ]),
    );
    let seen: Vec<(String, String, String)> = timeline["days"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|day| {
            day["memories"].as_array().unwrap().iter().map(|item| {
                (
                    day["day"].as_str().unwrap().to_owned(),
                    item["time"].as_str().unwrap().to_owned(),
                    item["preview"].as_str().unwrap().to_owned(),
                )
            })
        })
        .collect();
    let want = [
        ("2026-03-16", "10:00", "Design review"),
        ("2026-03-23", "10:00", "Design review"),
        ("2026-03-25", "09:00", "Offsite"),
        ("2026-03-30", "11:00", "Design review"),
        ("2026-04-06", "11:00", "Design review"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(d, t, p)| ((*d).to_owned(), (*t).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(seen, want, "{timeline}");
    // One memory behind the four.
    let ids: std::collections::BTreeSet<&str> = timeline["days"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|day| day["memories"].as_array().unwrap())
        .filter(|item| item["preview"] == "Design review")
        .map(|item| item["memory_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{timeline}");
}

/// A calendar that cancels an event and a whole series, and cancels one occurrence of
/// another series and excludes one more (EXDATE), synced again: the cancelled event and
/// series are retired and named; the changed series is updated in place (it is one
/// memory, listing its occurrences); the rest is untouched; a third sync changes nothing.
#[test]
fn cancelled_events_are_retired_and_a_series_losing_occurrences_is_updated() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("team.ics");
    let write = |standup: &str, override_event: &str, cancel: &str| {
        std::fs::write(
            &file,
            format!(
                "BEGIN:VCALENDAR\nVERSION:2.0\n\
                 BEGIN:VEVENT\nUID:standup\nDTSTART:20260316T090000Z\nDURATION:PT15M\n\
                 RRULE:FREQ=DAILY;COUNT=5\nSUMMARY:Daily standup with the platform team\n{standup}END:VEVENT\n\
                 {override_event}\
                 BEGIN:VEVENT\nUID:retro\nDTSTART:20260317T150000Z\nRRULE:FREQ=WEEKLY;COUNT=3\nSUMMARY:Weekly retro of the mobile squad\n{cancel}END:VEVENT\n\
                 BEGIN:VEVENT\nUID:review\nDTSTART:20260325T140000Z\nSUMMARY:Quarterly budget review with finance\n{cancel}END:VEVENT\n\
                 BEGIN:VEVENT\nUID:offsite\nDTSTART:20260402T080000Z\nSUMMARY:Design offsite in Lisbon\nEND:VEVENT\n\
                 END:VCALENDAR\n"
            ),
        )
        .unwrap();
    };
    write("", "", "");
    let first = json(&mut sync(home.path(), &[ics_path(dir.path())]));
    assert_eq!(first["admitted"], 4, "{first}");
    let before = memories(home.path());

    write(
        "EXDATE:20260319T090000Z\n",
        "BEGIN:VEVENT\nUID:standup\nRECURRENCE-ID:20260317T090000Z\nDTSTART:20260317T090000Z\nSTATUS:CANCELLED\nSUMMARY:Daily standup with the platform team\nEND:VEVENT\n",
        "STATUS:CANCELLED\n",
    );
    let second = json(&mut sync(home.path(), &[ics_path(dir.path())]));
    let mut retired: Vec<(String, String)> = second["retirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source_id"].as_str().unwrap().to_owned(),
                r["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    retired.sort();
    let cancelled = "cancelled in the calendar (STATUS:CANCELLED)".to_owned();
    assert_eq!(
        retired,
        [
            ("team.ics#retro".to_owned(), cancelled.clone()),
            ("team.ics#review".to_owned(), cancelled),
        ],
        "{second}"
    );
    assert_eq!(
        (
            second["retired"].as_u64(),
            second["updated"].as_u64(),
            second["unchanged"].as_u64()
        ),
        (Some(2), Some(1), Some(1)),
        "{second}"
    );
    let after = memories(home.path());
    assert_eq!(after.len(), 2, "{after:?}");
    let standup = by_source_id(&after, "team.ics#standup").unwrap();
    assert!(
        before.iter().any(|b| b["id"] == standup["id"]),
        "updated in place"
    );
    let text = standup["content"].as_str().unwrap();
    assert!(
        !text.contains("2026-03-17") && !text.contains("2026-03-19"),
        "{text}"
    );
    assert!(by_source_id(&after, "team.ics#offsite").is_some());

    let third = json(&mut sync(home.path(), &[ics_path(dir.path())]));
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
