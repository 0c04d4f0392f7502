//! The reader on the shared fixtures (`fixtures/calendar/`) and on small inline calendars,
//! with the clock at 2026-03-20T12:00:00Z and the default 30-day window either side.

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn window() -> Window {
    Window::around(at("2026-03-20T12:00:00Z"), 30, 30).unwrap()
}

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/calendar")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(name: &str) -> Parsed {
    parse(name, &fixture(name), &window()).unwrap()
}

/// A calendar around some VEVENT lines.
fn calendar(events: &str) -> Vec<u8> {
    format!(
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n{}\nEND:VCALENDAR\n",
        events.trim()
    )
    .into_bytes()
}

fn inline(events: &str) -> Parsed {
    parse("inline.ics", &calendar(events), &window()).unwrap()
}

fn of<'p>(parsed: &'p Parsed, uid: &str) -> Vec<&'p Occurrence> {
    parsed.occurrences.iter().filter(|o| o.uid == uid).collect()
}

fn starts(occurrences: &[&Occurrence]) -> Vec<String> {
    occurrences.iter().map(|o| rfc3339(o.start)).collect()
}

#[test]
fn the_window_is_thirty_days_either_side_of_now_and_refuses_a_century_more() {
    let w = window();
    assert_eq!(
        (rfc3339(w.start), rfc3339(w.end)),
        ("2026-02-18T12:00:00Z".into(), "2026-04-19T12:00:00Z".into())
    );
    assert_eq!(
        Window::around(at("2026-03-20T12:00:00Z"), 36_526, 0).unwrap_err(),
        "`past_days` must be at most 36525, got 36526"
    );
    assert!(
        Window::around(at("2026-03-20T12:00:00Z"), 0, u64::MAX)
            .unwrap_err()
            .contains("`future_days`")
    );
}

#[test]
fn the_weekly_standup_expands_across_the_dst_change_without_its_exdate_and_with_its_override() {
    let team = read("team.ics");
    let standups = of(&team, "standup-2026@atlas.example");
    // 09:30 Berlin is 08:30 UTC in winter and 07:30 UTC from 29 March; 10 March is an
    // EXDATE; 17 March was moved to 11:00 Berlin (10:00 UTC) by a RECURRENCE-ID override.
    assert_eq!(
        starts(&standups),
        [
            "2026-02-24T08:30:00Z",
            "2026-03-03T08:30:00Z",
            "2026-03-17T10:00:00Z",
            "2026-03-24T08:30:00Z",
            "2026-03-31T07:30:00Z",
            "2026-04-07T07:30:00Z",
            "2026-04-14T07:30:00Z",
        ]
    );
    assert!(
        standups
            .iter()
            .all(|o| o.end - o.start == Duration::minutes(15) && o.recurring)
    );
    let ids: Vec<&str> = standups.iter().map(|o| o.source_id.as_str()).collect();
    assert_eq!(
        ids[0],
        "team.ics#standup-2026@atlas.example@2026-02-24T08:30:00Z"
    );
    // The override keeps the id of the occurrence it replaces: the 09:30 slot.
    assert_eq!(
        ids[2],
        "team.ics#standup-2026@atlas.example@2026-03-17T08:30:00Z"
    );
    assert_eq!(
        ids[4],
        "team.ics#standup-2026@atlas.example@2026-03-31T07:30:00Z"
    );
    let moved = standups[2];
    assert_eq!(moved.title, "Atlas standup (moved for the release)");
    assert_eq!(
        moved.description.as_deref(),
        Some("Moved to 11:00: the release train leaves at 10:00.")
    );
    // What the override leaves out comes from its series.
    assert_eq!(moved.location.as_deref(), Some("Room Ada, 3rd floor"));
    assert_eq!(moved.attendees.len(), 2);
    assert_eq!(
        standups[4].time_zone,
        Some(Zone::Database(chrono_tz::Tz::Europe__Berlin))
    );
    assert_eq!(
        standups[4].content(),
        "Atlas standup\n\
         When: Tue 2026-03-31 07:30 – 07:45 (UTC)\n\
         Local time: Tue 2026-03-31 09:30 – 09:45 Europe/Berlin\n\
         Where: Room Ada, 3rd floor\n\
         Organizer: Ada Lovelace <ada@atlas.example>\n\
         Attendees: Grace Hopper <grace@atlas.example> (accepted), Linus Torvalds <linus@atlas.example> (tentative)\n\
         \n\
         Yesterday, today, blockers. Fifteen minutes, standing."
    );
}

#[test]
fn a_one_off_meeting_has_its_people_place_and_unfolded_description() {
    let team = read("team.ics");
    let review = of(&team, "launch-review-20260323@atlas.example");
    assert_eq!(review.len(), 1);
    let review = review[0];
    assert_eq!(
        review.source_id,
        "team.ics#launch-review-20260323@atlas.example"
    );
    assert!(!review.recurring);
    assert_eq!(
        (rfc3339(review.start), rfc3339(review.end)),
        ("2026-03-23T13:00:00Z".into(), "2026-03-23T14:30:00Z".into())
    );
    assert_eq!(
        review.organizer,
        Some(Attendee {
            name: Some("Lovelace, Ada".into()),
            email: Some("ada@atlas.example".into()),
            status: None
        })
    );
    let people: Vec<(Option<&str>, Option<&str>, Option<&str>)> = review
        .attendees
        .iter()
        .map(|a| (a.name.as_deref(), a.email.as_deref(), a.status.as_deref()))
        .collect();
    assert_eq!(
        people,
        [
            (
                Some("Grace Hopper"),
                Some("grace@atlas.example"),
                Some("accepted")
            ),
            (
                Some("Linus Torvalds"),
                Some("linus@atlas.example"),
                Some("declined")
            ),
            // MAILTO: in capitals, and an unanswered invitation shows no status.
            (
                Some("Margaret Hamilton"),
                Some("margaret@apollo.example"),
                None
            ),
        ]
    );
    assert_eq!(
        review.content(),
        "Atlas launch review\n\
         When: Mon 2026-03-23 13:00 – 14:30 (UTC)\n\
         Where: Berlin office, Room Hopper\n\
         Organizer: Lovelace, Ada <ada@atlas.example>\n\
         Attendees: Grace Hopper <grace@atlas.example> (accepted), Linus Torvalds <linus@atlas.example> (declined), Margaret Hamilton <margaret@apollo.example>\n\
         \n\
         Agenda:\n\
         1. Launch checklist status (Grace)\n\
         2. Rollback plan for the payment service, owned by Linus\n\
         3. Go/no-go decision\n\
         \n\
         Bring the load-test numbers from last Friday."
    );
    assert_eq!(
        review.metadata(),
        serde_json::json!({
            "uid": "launch-review-20260323@atlas.example",
            "start": "2026-03-23T13:00:00Z",
            "end": "2026-03-23T14:30:00Z",
            "all_day": false,
            "time_zone": null,
            "location": "Berlin office, Room Hopper",
            "recurring": false,
            "status": "confirmed",
            "file": "team.ics",
        })
    );
}

#[test]
fn an_all_day_event_spans_its_dates_and_the_2024_kickoff_is_outside_the_window() {
    let team = read("team.ics");
    let offsite = of(&team, "offsite-2026-spring@atlas.example");
    assert_eq!(offsite.len(), 1);
    let offsite = offsite[0];
    assert!(offsite.all_day);
    assert_eq!(
        (rfc3339(offsite.start), rfc3339(offsite.end)),
        ("2026-03-26T00:00:00Z".into(), "2026-03-28T00:00:00Z".into())
    );
    assert!(offsite.content().starts_with(
        "Atlas team offsite\nWhen: Thu 2026-03-26 – Fri 2026-03-27 (all day)\nWhere: Schloss Kröchlendorff, Uckermark\n"
    ));
    assert_eq!(offsite.metadata()["all_day"], true);
    assert!(of(&team, "kickoff-2024@atlas.example").is_empty());
    assert!(team.errors.is_empty(), "{:?}", team.errors);
    assert_eq!(team.occurrences.len(), 7 + 1 + 1 + 2);
}

#[test]
fn a_monthly_series_from_last_year_yields_only_its_occurrences_in_the_window() {
    let team = read("team.ics");
    let budget = of(&team, "budget-review@atlas.example");
    // 15:00 Berlin: 14:00 UTC on 1 March (winter), 13:00 UTC on 1 April (summer).
    assert_eq!(
        starts(&budget),
        ["2026-03-01T14:00:00Z", "2026-04-01T13:00:00Z"]
    );
    assert_eq!(
        budget[0].source_id,
        "team.ics#budget-review@atlas.example@2026-03-01T14:00:00Z"
    );
}

#[test]
fn travel_crosses_zones_uses_a_duration_and_adds_an_rdate_to_a_counted_series() {
    let travel = read("travel.ics");
    assert!(travel.errors.is_empty(), "{:?}", travel.errors);
    let flight = of(&travel, "flight-lh400-20260402@travel.example")[0];
    // Leaves 10:15 Berlin (summer, +2), lands 13:00 New York (summer, −4).
    assert_eq!(
        (rfc3339(flight.start), rfc3339(flight.end)),
        ("2026-04-02T08:15:00Z".into(), "2026-04-02T17:00:00Z".into())
    );
    assert_eq!(flight.title, "Flight BER → JFK (LH 400)");
    assert!(
        flight
            .content()
            .contains("Local time: Thu 2026-04-02 10:15 – 19:00 Europe/Berlin")
    );
    let dinner = of(&travel, "dinner-margaret-20260403@travel.example")[0];
    assert_eq!(
        (rfc3339(dinner.start), rfc3339(dinner.end)),
        ("2026-04-03T23:00:00Z".into(), "2026-04-04T01:00:00Z".into())
    );
    assert!(dinner.content().contains("When: Fri 2026-04-03 23:00 – Sat 2026-04-04 01:00 (UTC)\nLocal time: Fri 2026-04-03 19:00 – 21:00 America/New_York"));
    let hours = of(&travel, "nyc-office-hours@travel.example");
    assert_eq!(
        starts(&hours),
        [
            "2026-04-06T13:00:00Z",
            "2026-04-07T13:00:00Z",
            "2026-04-08T13:00:00Z",
            "2026-04-13T13:00:00Z"
        ]
    );
    assert_eq!(travel.occurrences.len(), 6);
}

#[test]
fn a_broken_rrule_is_one_error_and_the_files_other_event_still_counts() {
    let parsed = read("broken-rrule.ics");
    assert_eq!(
        parsed.errors,
        [EventError {
            location: "broken-rrule.ics#quarterly-planning@atlas.example".into(),
            message:
                "broken RRULE \"FREQ=SOMETIMES;INTERVAL=3\": `SOMETIMES` is not a valid frequency."
                    .into(),
        }]
    );
    assert_eq!(parsed.occurrences.len(), 1);
    assert_eq!(parsed.occurrences[0].title, "Payment service design review");
}

#[test]
fn empty_truncated_and_non_utf8_files_are_one_clear_error_each() {
    let w = window();
    assert_eq!(
        parse("empty.ics", &fixture("empty.ics"), &w).unwrap_err(),
        "empty file"
    );
    assert_eq!(
        parse("blank.ics", b" \r\n\n", &w).unwrap_err(),
        "empty file"
    );
    assert_eq!(
        parse("truncated.ics", &fixture("truncated.ics"), &w).unwrap_err(),
        "truncated: the file ends with \"DESCRIPTION:We will go through the\" and never reaches END:VCALENDAR"
    );
    assert_eq!(
        parse("not-utf8.ics", &fixture("not-utf8.ics"), &w).unwrap_err(),
        "not UTF-8 (invalid byte at offset 172); iCalendar files are UTF-8"
    );
    assert_eq!(
        parse("notes.ics", b"Shopping list\nmilk\n", &w).unwrap_err(),
        "not an iCalendar file: it starts with \"Shopping list\", not BEGIN:VCALENDAR"
    );
    let garbage = parse(
        "garbage.ics",
        b"BEGIN:VCALENDAR\nBEGIN:VEVENT\nEND:VCALENDAR\n",
        &w,
    )
    .unwrap_err();
    eprintln!("{garbage}");
    assert!(garbage.starts_with("not valid iCalendar: "), "{garbage}");
    assert!(!garbage.contains('\n'), "{garbage}");
}

#[test]
fn a_bad_event_is_reported_by_uid_and_its_neighbours_are_kept() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:no-start\nSUMMARY:Lost\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:mars\nDTSTART;TZID=Mars/Olympus_Mons:20260321T100000\nSUMMARY:Far\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:backwards\nDTSTART:20260321T100000Z\nDTEND:20260321T090000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:bad-exdate\nDTSTART:20260321T100000Z\nRRULE:FREQ=DAILY\nEXDATE:tomorrow\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:bad-duration\nDTSTART:20260321T100000Z\nDURATION:a while\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:bad-until\nDTSTART:20260321T100000Z\nRRULE:FREQ=DAILY;UNTIL=someday\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:fine\nDTSTART:20260321T100000Z\nSUMMARY:Fine\nEND:VEVENT",
    );
    let errors: Vec<(&str, &str)> = parsed
        .errors
        .iter()
        .map(|e| (e.location.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        errors,
        [
            ("inline.ics#no-start", "no DTSTART: the event has no start"),
            (
                "inline.ics#mars",
                "bad DTSTART: unknown time zone \"Mars/Olympus_Mons\""
            ),
            (
                "inline.ics#backwards",
                "DTEND (2026-03-21T09:00:00Z) is before DTSTART (2026-03-21T10:00:00Z)"
            ),
            (
                "inline.ics#bad-exdate",
                "bad EXDATE: \"tomorrow\" is not a date-time (YYYYMMDDTHHMMSS)"
            ),
            (
                "inline.ics#bad-duration",
                "bad DURATION: \"a while\" is not a duration (like PT1H30M or P1D)"
            ),
            (
                "inline.ics#bad-until",
                "broken RRULE \"FREQ=DAILY;UNTIL=someday\": UNTIL \"someday\" is not a date-time (YYYYMMDDTHHMMSS)"
            ),
        ]
    );
    assert_eq!(parsed.occurrences.len(), 1);
    assert_eq!(parsed.occurrences[0].title, "Fine");
}

#[test]
fn other_rrule_mistakes_name_the_problem() {
    for (rule, words) in [
        ("FREQ=WEEKLY;BYDAY=XX", "`XX` is not a valid weekday"),
        ("INTERVAL=2", "FREQ"),
        ("FREQ=DAILY;COUNT=many", "`many` is not a valid COUNT value"),
        ("FREQ=DAILY;UNTIL=20250101T000000Z", "UNTIL"),
    ] {
        let parsed = inline(&format!(
            "BEGIN:VEVENT\nUID:r\nDTSTART:20260321T100000Z\nRRULE:{rule}\nEND:VEVENT"
        ));
        assert_eq!(parsed.errors.len(), 1, "{rule}");
        let message = &parsed.errors[0].message;
        assert!(
            message.starts_with("broken RRULE ") && message.contains(words),
            "{rule}: {message}"
        );
        assert!(parsed.occurrences.is_empty());
    }
}

#[test]
fn floating_times_are_read_as_utc() {
    let parsed =
        inline("BEGIN:VEVENT\nUID:f\nDTSTART:20260321T100000\nDTEND:20260321T110000\nEND:VEVENT");
    let only = &parsed.occurrences[0];
    assert_eq!(
        (rfc3339(only.start), rfc3339(only.end)),
        ("2026-03-21T10:00:00Z".into(), "2026-03-21T11:00:00Z".into())
    );
    assert_eq!(only.time_zone, None);
    assert_eq!(only.title, "(untitled event)");
}

#[test]
fn until_is_read_in_the_series_zone_whatever_form_it_takes() {
    // Daily at 09:00 Berlin from 20 March. UNTIL as UTC, as a floating Berlin time, and as a
    // date all end the series on 22 March (three occurrences).
    for until in ["20260322T080000Z", "20260322T090000", "20260322"] {
        let parsed = inline(&format!(
            "BEGIN:VEVENT\nUID:u\nDTSTART;TZID=Europe/Berlin:20260320T090000\nRRULE:FREQ=DAILY;UNTIL={until}\nEND:VEVENT"
        ));
        assert!(parsed.errors.is_empty(), "{until}: {:?}", parsed.errors);
        assert_eq!(
            starts(&parsed.occurrences.iter().collect::<Vec<_>>()),
            [
                "2026-03-20T08:00:00Z",
                "2026-03-21T08:00:00Z",
                "2026-03-22T08:00:00Z"
            ],
            "{until}"
        );
    }
    // An all-day series with a date UNTIL includes that day.
    let parsed = inline(
        "BEGIN:VEVENT\nUID:d\nDTSTART;VALUE=DATE:20260320\nRRULE:FREQ=DAILY;UNTIL=20260321\nEND:VEVENT",
    );
    assert_eq!(
        starts(&parsed.occurrences.iter().collect::<Vec<_>>()),
        ["2026-03-20T00:00:00Z", "2026-03-21T00:00:00Z"]
    );
    assert!(
        parsed
            .occurrences
            .iter()
            .all(|o| o.all_day && o.end - o.start == Duration::days(1))
    );
}

#[test]
fn date_exdates_cancelled_overrides_and_orphan_overrides() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:s\nDTSTART;TZID=America/New_York:20260316T090000\nDTEND;TZID=America/New_York:20260316T093000\n\
         RRULE:FREQ=DAILY;COUNT=4\nEXDATE;VALUE=DATE:20260317\nSUMMARY:Sync\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:s\nRECURRENCE-ID;TZID=America/New_York:20260318T090000\nDTSTART;TZID=America/New_York:20260318T090000\n\
         STATUS:CANCELLED\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:invite\nRECURRENCE-ID:20260325T150000Z\nDTSTART:20260325T160000Z\nDTEND:20260325T170000Z\n\
         SUMMARY:One of someone else's series\nEND:VEVENT",
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let series = of(&parsed, "s");
    assert_eq!(
        starts(&series),
        ["2026-03-16T13:00:00Z", "2026-03-19T13:00:00Z"]
    );
    let invite = of(&parsed, "invite");
    assert_eq!(starts(&invite), ["2026-03-25T16:00:00Z"]);
    assert_eq!(
        invite[0].source_id,
        "inline.ics#invite@2026-03-25T15:00:00Z"
    );
    assert!(invite[0].recurring);
}

#[test]
fn occurrences_overlapping_the_window_edges_count_and_others_do_not() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:ongoing\nDTSTART;VALUE=DATE:20260210\nDTEND;VALUE=DATE:20260220\nSUMMARY:Conference season\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:ended\nDTSTART:20260218T100000Z\nDTEND:20260218T110000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:last\nDTSTART:20260419T120000Z\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:too-late\nDTSTART:20260419T120001Z\nEND:VEVENT",
    );
    let uids: Vec<&str> = parsed.occurrences.iter().map(|o| o.uid.as_str()).collect();
    assert_eq!(uids, ["ongoing", "last"]);
}

#[test]
fn a_rule_making_too_many_occurrences_keeps_those_nearest_now_and_names_the_cut() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:tick\nDTSTART:20260301T000000Z\nRRULE:FREQ=MINUTELY\nSUMMARY:Tick\nEND:VEVENT",
    );
    assert_eq!(parsed.occurrences.len(), MAX_OCCURRENCES);
    // Now is 2026-03-20T12:00:00Z: 500 minutes either side (one more before).
    assert_eq!(rfc3339(parsed.occurrences[0].start), "2026-03-20T03:40:00Z");
    assert_eq!(
        rfc3339(parsed.occurrences[MAX_OCCURRENCES - 1].start),
        "2026-03-20T20:19:00Z"
    );
    // Not a failure: a skip the report names.
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(
        parsed.skipped,
        [Skipped {
            source_id: "inline.ics#tick".into(),
            reason: "more than 1000 occurrences in the window: the series is kept with the 1000 nearest now (2026-03-20T03:40:00Z to 2026-03-20T20:19:00Z), the others are left out".into(),
        }]
    );
}

#[test]
fn an_endless_weekly_series_from_years_ago_keeps_the_occurrences_around_now() {
    // Three times a week since 2016, in a window of 40 years either side: the first 1,000
    // would end in 2022; the 1,000 nearest now are some three years either side of it.
    let wide = Window::around(at("2026-03-20T12:00:00Z"), 14_600, 14_600).unwrap();
    let calendar = calendar(
        "BEGIN:VEVENT\nUID:weekly\nDTSTART:20160104T090000Z\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR\nSUMMARY:Weekly\nEND:VEVENT",
    );
    let parsed = parse("weekly.ics", &calendar, &wide).unwrap();
    assert_eq!(parsed.occurrences.len(), MAX_OCCURRENCES);
    let first = parsed.occurrences[0].start;
    let last = parsed.occurrences[MAX_OCCURRENCES - 1].start;
    assert!(first > at("2022-12-01T00:00:00Z"), "{first}");
    assert!(first < at("2023-03-20T00:00:00Z"), "{first}");
    assert!(last > at("2029-03-01T00:00:00Z"), "{last}");
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.skipped.len(), 1);
}

#[test]
fn a_rule_that_never_reaches_the_window_gives_up_instead_of_hanging() {
    let parsed =
        inline("BEGIN:VEVENT\nUID:old\nDTSTART:19700101T000000Z\nRRULE:FREQ=SECONDLY\nEND:VEVENT");
    assert!(parsed.occurrences.is_empty());
    assert_eq!(parsed.errors.len(), 1);
    assert!(
        parsed.errors[0].message.contains("not expanded"),
        "{:?}",
        parsed.errors
    );
    // A rule that can never match stops on rrule's own loop limit, with no occurrence.
    let never = inline(
        "BEGIN:VEVENT\nUID:feb30\nDTSTART:20260101T000000Z\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\nEND:VEVENT",
    );
    assert!(never.occurrences.is_empty(), "{:?}", never.occurrences);
}

#[test]
fn duplicate_uids_keep_the_first_and_missing_uids_get_a_stable_one() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:twice\nDTSTART:20260321T100000Z\nSUMMARY:First\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:twice\nDTSTART:20260322T100000Z\nSUMMARY:Second\nEND:VEVENT\n\
         BEGIN:VEVENT\nDTSTART:20260323T100000Z\nSUMMARY:Hand written\nEND:VEVENT",
    );
    assert_eq!(parsed.errors.len(), 1);
    assert_eq!(parsed.errors[0].location, "inline.ics#twice");
    assert!(parsed.errors[0].message.contains("same UID"));
    let ids: Vec<&str> = parsed
        .occurrences
        .iter()
        .map(|o| o.source_id.as_str())
        .collect();
    assert_eq!(ids[0], "inline.ics#twice");
    assert!(ids[1].starts_with("inline.ics#no-uid-"), "{ids:?}");
    // Stable: the same event on the next sync (re-exported, with a new DTSTAMP) has the
    // same id.
    let again = inline(
        "BEGIN:VEVENT\nDTSTAMP:20270101T000000Z\nDTSTART:20260323T100000Z\nSUMMARY:Hand written\nEND:VEVENT",
    );
    assert_eq!(again.occurrences[0].source_id, ids[1]);
}

#[test]
fn events_without_uids_have_distinct_ids_and_never_collide_as_a_uid() {
    // Same start and title, different place or end: two events, no "same UID" error.
    let parsed = inline(
        "BEGIN:VEVENT\nDTSTART:20260323T100000Z\nDTEND:20260323T110000Z\nSUMMARY:Lunch\nLOCATION:Canteen\nEND:VEVENT\n\
         BEGIN:VEVENT\nDTSTART:20260323T100000Z\nDTEND:20260323T113000Z\nSUMMARY:Lunch\nLOCATION:Park\nEND:VEVENT\n\
         BEGIN:VEVENT\nDTSTART:20260323T100000Z\nDTEND:20260323T113000Z\nSUMMARY:Lunch\nLOCATION:Park\nEND:VEVENT",
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let ids: std::collections::HashSet<&str> = parsed
        .occurrences
        .iter()
        .map(|o| o.source_id.as_str())
        .collect();
    assert_eq!(ids.len(), 2, "{:?}", parsed.occurrences);
    assert_eq!(parsed.occurrences.len(), 2);
    // The exact copy is named as skipped, not failed.
    assert_eq!(parsed.skipped.len(), 1, "{:?}", parsed.skipped);
    assert!(parsed.skipped[0].reason.contains("copy"));
}

#[test]
fn mangled_copies_of_the_fixtures_never_panic() {
    let w = window();
    for name in ["team.ics", "travel.ics", "broken-rrule.ics"] {
        let bytes = fixture(name);
        for cut in (0..bytes.len()).step_by(7) {
            let _ = parse(name, &bytes[..cut], &w);
        }
        for position in (0..bytes.len()).step_by(13) {
            for replacement in [b';', b':', b'\n', b'Z', b'9', 0xff] {
                let mut mangled = bytes.clone();
                mangled[position] = replacement;
                let _ = parse(name, &mangled, &w);
            }
        }
    }
}

#[test]
fn hostile_dates_and_rules_never_panic() {
    let w = window();
    for (start, rule) in [
        ("99991231T235959Z", "FREQ=SECONDLY"),
        ("99991231", "FREQ=YEARLY;INTERVAL=1"),
        ("00000101T000000Z", "FREQ=YEARLY;BYSETPOS=-1;BYDAY=MO"),
        (
            "00010101T000000Z",
            "FREQ=MONTHLY;BYMONTHDAY=-31;BYSETPOS=366",
        ),
        ("20260320T100000Z", "FREQ=DAILY;INTERVAL=0"),
        (
            "20260320T100000Z",
            "FREQ=DAILY;INTERVAL=65535;COUNT=4294967295",
        ),
        ("20260320T100000Z", "FREQ=WEEKLY;BYDAY=53MO;BYWEEKNO=-53"),
        (
            "20260320T100000Z",
            "FREQ=YEARLY;BYYEARDAY=-366,366;BYEASTER=1",
        ),
        ("20260320T100000Z", "FREQ=HOURLY;BYHOUR=99"),
        ("20260320T100000Z", "FREQ=DAILY;UNTIL=99991231T235959Z"),
        ("20260320T100000Z", ";;;=;FREQ"),
    ] {
        for extra in [
            "",
            "DURATION:P9999W\n",
            "DTEND:99991231T235959Z\n",
            "EXDATE:00000101T000000Z\n",
        ] {
            let ics = calendar(&format!(
                "BEGIN:VEVENT\nUID:h\nDTSTART:{start}\n{extra}RRULE:{rule}\nRDATE:99991231T235959Z\nEND:VEVENT"
            ));
            let _ = parse("hostile.ics", &ics, &w);
        }
    }
}

#[test]
fn a_bad_override_is_reported_and_the_rest_of_its_series_kept() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:s\nDTSTART:20260316T090000Z\nRRULE:FREQ=DAILY;COUNT=3\nSUMMARY:Sync\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20260317T090000Z\nDTSTART:tomorrow\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:next week\nDTSTART:20260320T090000Z\nEND:VEVENT",
    );
    let errors: Vec<&str> = parsed.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        errors,
        [
            "bad RECURRENCE-ID: \"next week\" is not a date-time (YYYYMMDDTHHMMSS)",
            "the change to the occurrence of 2026-03-17T09:00:00Z: bad DTSTART: \"tomorrow\" is not a date-time (YYYYMMDDTHHMMSS)",
        ]
    );
    assert!(parsed.errors.iter().all(|e| e.location == "inline.ics#s"));
    // 17 March was changed in a way that cannot be read: it is left out (and reported)
    // rather than shown at a time the organizer moved it from.
    assert_eq!(
        starts(&parsed.occurrences.iter().collect::<Vec<_>>()),
        ["2026-03-16T09:00:00Z", "2026-03-18T09:00:00Z"]
    );
}

#[test]
fn the_override_with_the_higher_sequence_wins_and_ids_stay_unique() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:s\nDTSTART:20260316T090000Z\nRRULE:FREQ=DAILY;COUNT=2\nSUMMARY:Sync\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20260317T090000Z\nSEQUENCE:4\nDTSTART:20260317T100000Z\nSUMMARY:Newer\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:s\nRECURRENCE-ID:20260317T090000Z\nSEQUENCE:2\nDTSTART:20260317T110000Z\nSUMMARY:Older\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:one\nDTSTART:20260321T090000Z\nSUMMARY:Once\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:one\nRECURRENCE-ID:20260321T090000Z\nDTSTART:20260321T093000Z\nSUMMARY:Once, later\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:one\nRECURRENCE-ID:20260322T090000Z\nDTSTART:20260322T090000Z\nSUMMARY:Stray\nEND:VEVENT",
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let seen: Vec<(&str, &str, String)> = parsed
        .occurrences
        .iter()
        .map(|o| (o.source_id.as_str(), o.title.as_str(), rfc3339(o.start)))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "inline.ics#s@2026-03-16T09:00:00Z",
                "Sync",
                "2026-03-16T09:00:00Z".into()
            ),
            (
                "inline.ics#s@2026-03-17T09:00:00Z",
                "Newer",
                "2026-03-17T10:00:00Z".into()
            ),
            // A one-off moved by an override keeps the one-off's id.
            (
                "inline.ics#one",
                "Once, later",
                "2026-03-21T09:30:00Z".into()
            ),
            (
                "inline.ics#one@2026-03-22T09:00:00Z",
                "Stray",
                "2026-03-22T09:00:00Z".into()
            ),
        ]
    );
}

/// The fixtures of both folders, damaged as real files are (bytes flipped, cut short,
/// ranges repeated or lost, iCalendar syntax pasted anywhere): the reader never panics,
/// and whatever it cannot read is an error with a message — the whole file's, on one
/// line, or an event's with its place.
mod mutated {
    use levh_connector_sdk::fixture;
    use levh_connector_sdk::mutations::mutated;
    use proptest::prelude::*;

    use super::*;

    const FIXTURES: &[(&str, &[u8])] = &[
        fixture!("calendar", "team.ics"),
        fixture!("calendar", "travel.ics"),
        fixture!("calendar", "broken-rrule.ics"),
        fixture!("calendar-world", "exchange.ics"),
        fixture!("calendar-world", "lotus.ics"),
        fixture!("calendar-world", "named-offsets.ics"),
        fixture!("calendar-world", "periods.ics"),
    ];

    const TOKENS: &[&str] = &[
        "BEGIN:VEVENT\r\n",
        "END:VEVENT\n",
        "BEGIN:VTIMEZONE\nTZID:X\n",
        "END:VCALENDAR\n",
        "RRULE:FREQ=SECONDLY\n",
        "RECURRENCE-ID:20260324T083000Z\n",
        "RDATE;VALUE=PERIOD:20260325T150000Z/PT2H\n",
        ";TZID=",
        ":",
        ";",
        "\r\n ",
        "é",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn damaged_calendars_never_panic_and_every_failure_is_a_message(
            (name, bytes) in mutated(FIXTURES, TOKENS),
        ) {
            match parse(name, &bytes, &window()) {
                Ok(parsed) => {
                    for error in &parsed.errors {
                        prop_assert!(error.location.starts_with(name), "{error:?}");
                        prop_assert!(!error.message.trim().is_empty());
                        prop_assert!(!error.message.contains("Many0"), "{error:?}");
                    }
                }
                Err(message) => {
                    prop_assert!(!message.trim().is_empty());
                    prop_assert!(!message.contains('\n'), "{message}");
                }
            }
        }
    }
}

#[test]
fn rdate_and_exdate_keep_a_colon_in_an_unquoted_tzid() {
    let parsed = inline(
        "BEGIN:VEVENT\nUID:colon\nDTSTART;TZID=(UTC+02:00) Eastern Europe:20260320T100000\n\
         RDATE;TZID=(UTC+02:00) Eastern Europe:20260325T100000\n\
         EXDATE;TZID=(UTC+02:00) Eastern Europe:20260320T100000\nSUMMARY:Colons\nEND:VEVENT",
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(
        starts(&parsed.occurrences.iter().collect::<Vec<_>>()),
        ["2026-03-25T08:00:00Z"]
    );
}

#[test]
fn floating_times_in_a_calendar_that_names_its_zone_are_in_that_zone() {
    let text = "BEGIN:VCALENDAR\nVERSION:2.0\nX-WR-TIMEZONE:Europe/Berlin\n\
                BEGIN:VEVENT\nUID:f\nDTSTART:20260401T100000\nDTEND:20260401T110000\nEND:VEVENT\n\
                BEGIN:VEVENT\nUID:z\nDTSTART:20260401T100000Z\nEND:VEVENT\nEND:VCALENDAR\n";
    let parsed = parse("berlin.ics", text.as_bytes(), &window()).unwrap();
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let floating = &of(&parsed, "f")[0];
    assert_eq!(
        (rfc3339(floating.start), rfc3339(floating.end)),
        ("2026-04-01T08:00:00Z".into(), "2026-04-01T09:00:00Z".into())
    );
    assert!(
        floating
            .content()
            .contains("Local time: Wed 2026-04-01 10:00 – 11:00 Europe/Berlin"),
        "{}",
        floating.content()
    );
    assert_eq!(rfc3339(of(&parsed, "z")[0].start), "2026-04-01T10:00:00Z");
}

/// +12 until May, +10 from the first Sunday of May, +12 again from October.
const MY_TIMEZONE: &str = "BEGIN:VTIMEZONE\nTZID:MyTimezone\nBEGIN:STANDARD\nDTSTART:19700503T030000\nTZOFFSETFROM:+1200\nTZOFFSETTO:+1000\nRRULE:FREQ=YEARLY;BYMONTH=5;BYDAY=1SU\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:19701004T020000\nTZOFFSETFROM:+1000\nTZOFFSETTO:+1200\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU\nEND:DAYLIGHT\nEND:VTIMEZONE";

#[test]
fn a_zone_the_file_defines_is_used_as_defined_for_one_offs_and_series() {
    let wide = Window::around(at("2026-03-20T12:00:00Z"), 30, 90).unwrap();
    let text = calendar(&format!(
        "{MY_TIMEZONE}\n\
         BEGIN:VEVENT\nUID:once\nDTSTART;TZID=MyTimezone:20260401T100000\nSUMMARY:Once\nEND:VEVENT\n\
         BEGIN:VEVENT\nUID:weekly\nDTSTART;TZID=MyTimezone:20260426T100000\nDURATION:PT1H\n\
         RRULE:FREQ=WEEKLY;COUNT=3\nSUMMARY:Weekly\nEND:VEVENT"
    ));
    let parsed = parse("mine.ics", &text, &wide).unwrap();
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(starts(&of(&parsed, "once")), ["2026-03-31T22:00:00Z"]);
    // 10:00 on the wall clock every week, across the change on 3 May.
    assert_eq!(
        starts(&of(&parsed, "weekly")),
        [
            "2026-04-25T22:00:00Z",
            "2026-05-03T00:00:00Z",
            "2026-05-10T00:00:00Z"
        ]
    );
    let once = &of(&parsed, "once")[0];
    assert!(
        once.content()
            .contains("Local time: Wed 2026-04-01 10:00 MyTimezone"),
        "{}",
        once.content()
    );
    assert_eq!(once.metadata()["time_zone"], "MyTimezone");
}

#[test]
fn a_bare_event_without_a_calendar_around_it_is_read() {
    let parsed = parse(
        "shared.ics",
        b"BEGIN:VEVENT\r\nUID:shared\r\nDTSTART:20260321T100000Z\r\nSUMMARY:Shared with me\r\nEND:VEVENT\r\n",
        &window(),
    )
    .unwrap();
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.occurrences.len(), 1);
    assert_eq!(parsed.occurrences[0].title, "Shared with me");
}

#[test]
fn to_dos_are_tasks_journal_entries_notes_and_other_components_are_named_as_skipped() {
    let parsed = inline(
        "BEGIN:VTODO\nUID:report\nDUE;TZID=Europe/Berlin:20260325T170000\nSTATUS:NEEDS-ACTION\n\
         SUMMARY:Send the report\nDESCRIPTION:Numbers for Q1\\, with the charts.\nEND:VTODO\n\
         BEGIN:VTODO\nUID:someday\nSUMMARY:Clean the garage\nSTATUS:IN-PROCESS\nEND:VTODO\n\
         BEGIN:VTODO\nUID:long-ago\nDUE:20200101T000000Z\nSUMMARY:Old\nEND:VTODO\n\
         BEGIN:VJOURNAL\nUID:diary\nDTSTART;VALUE=DATE:20260319\nSUMMARY:Offsite notes\n\
         DESCRIPTION:We chose the blue plan.\nDESCRIPTION:Next: costs.\nEND:VJOURNAL\n\
         BEGIN:VFREEBUSY\nUID:busy\nFREEBUSY:20260321T090000Z/20260321T100000Z\nEND:VFREEBUSY\n\
         BEGIN:X-APP-SETTINGS\nCOLOR:blue\nEND:X-APP-SETTINGS",
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert!(parsed.occurrences.is_empty());
    let ids: Vec<&str> = parsed
        .records
        .iter()
        .map(|r| r.source_id.as_str())
        .collect();
    // The to-do due in 2020 is outside the window, as an event then would be.
    assert_eq!(
        ids,
        [
            "inline.ics#report",
            "inline.ics#someday",
            "inline.ics#diary"
        ]
    );
    let report = &parsed.records[0];
    assert_eq!(report.kind.as_str(), "task");
    assert_eq!(
        report.content,
        "Send the report\nTask: to do\nDue: Wed 2026-03-25 16:00 (UTC), Wed 2026-03-25 17:00 Europe/Berlin\n\nNumbers for Q1, with the charts."
    );
    assert_eq!(report.at, Some(at("2026-03-25T16:00:00Z")));
    assert_eq!(report.metadata["due"], "2026-03-25T16:00:00Z");
    assert_eq!(report.metadata["status"], "needs-action");
    let someday = &parsed.records[1];
    assert_eq!(someday.at, None);
    assert!(someday.content.contains("Task: in progress"));
    let diary = &parsed.records[2];
    assert_eq!(diary.kind.as_str(), "note");
    assert_eq!(
        diary.content,
        "Offsite notes\nDate: Thu 2026-03-19\n\nWe chose the blue plan.\n\nNext: costs."
    );
    let skipped: Vec<(&str, &str)> = parsed
        .skipped
        .iter()
        .map(|s| (s.source_id.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "inline.ics#busy",
                "a VFREEBUSY (free/busy times, no event in it): not read"
            ),
            (
                "inline.ics line 32",
                "a X-APP-SETTINGS component (not an event, to-do or journal entry): not read"
            )
        ]
    );
}
