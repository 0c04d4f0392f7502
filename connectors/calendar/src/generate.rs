//! Generated calendars for benchmarks and size tests: `events` events, one a day
//! backwards and forwards from `around`, every tenth a weekly series, every fifth
//! with attendees and a description, so the shapes real exports have all appear.

use chrono::{DateTime, Duration, Utc};

/// A whole `.ics` file of `events` events centred on `around`.
pub fn calendar(events: usize, around: DateTime<Utc>) -> Vec<u8> {
    let mut out =
        String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//levh//generated//EN\r\n");
    for n in 0..events {
        out.push_str(&event(n, around));
    }
    out.push_str("END:VCALENDAR\r\n");
    out.into_bytes()
}

/// One VEVENT block, CRLF-terminated as the standard writes them.
pub fn event(n: usize, around: DateTime<Utc>) -> String {
    let offset = n as i64 / 2 * if n.is_multiple_of(2) { 1 } else { -1 };
    let start = around + Duration::days(offset) + Duration::minutes((n % 48) as i64 * 30);
    let stamp = start.format("%Y%m%dT%H%M%SZ");
    let end = (start + Duration::minutes(45)).format("%Y%m%dT%H%M%SZ");
    let mut block = format!(
        "BEGIN:VEVENT\r\nUID:gen-{n}@levh.example\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{stamp}\r\nDTEND:{end}\r\nSUMMARY:Generated meeting {n} about topic {}\r\n",
        n % 97
    );
    if n.is_multiple_of(10) {
        block.push_str("RRULE:FREQ=WEEKLY;COUNT=12\r\n");
    }
    if n.is_multiple_of(5) {
        block.push_str(&format!(
            "ORGANIZER;CN=Person {o}:mailto:p{o}@levh.example\r\nATTENDEE;CN=Person {a};PARTSTAT=ACCEPTED:mailto:p{a}@levh.example\r\nDESCRIPTION:Agenda for meeting {n}: review the numbers\\, decide the next\r\n  steps and write them down.\r\n",
            o = n % 13,
            a = n % 17
        ));
    }
    block.push_str("LOCATION:Room 4\r\nEND:VEVENT\r\n");
    block
}
