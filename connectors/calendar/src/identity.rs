//! Who a component is: its `UID`, or, when it has none, one made from what it says.

use icalendar::parser::Component;

use crate::property::{all, text, zoned_value};

/// The component's UID, or, when it has none (RFC 5545 requires one, but hand-written files
/// forget it), `no-uid-` and a hash of what the event says: the same on every sync while
/// the event is unchanged, and distinct for events that differ in any of these
/// properties. Attendees' answers and `DTSTAMP` are left out: they change without the
/// event changing.
pub fn uid(event: &Component) -> String {
    text(event, "UID").unwrap_or_else(|| format!("no-uid-{:016x}", content_hash(event)))
}

/// The properties a UID-less event is told apart by.
const IDENTIFYING: [&str; 11] = [
    "DTSTART",
    "DTEND",
    "DUE",
    "DURATION",
    "RECURRENCE-ID",
    "RRULE",
    "RDATE",
    "EXDATE",
    "SUMMARY",
    "LOCATION",
    "DESCRIPTION",
];

/// FNV-1a (64 bits) over the [`IDENTIFYING`] properties, names, zones and values, with
/// whitespace runs made one space. Hand-written rather than `std`'s hasher, whose output
/// may change between Rust releases: these hashes are source ids kept in the store.
fn content_hash(event: &Component) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |text: &str| {
        for byte in text.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for name in IDENTIFYING {
        for property in all(event, name) {
            let (zone, value) = zoned_value(property);
            feed(name);
            feed(zone.as_deref().unwrap_or_default());
            feed(&value.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use icalendar::parser::read_components;

    use super::*;
    use crate::property::unfolded;

    fn id(text: &str) -> String {
        let text = unfolded(text);
        uid(&read_components(&text).unwrap()[0])
    }

    #[test]
    fn a_uid_is_kept_and_a_missing_one_depends_on_what_the_event_says_not_its_stamp() {
        assert_eq!(id("BEGIN:VEVENT\nUID:abc\nEND:VEVENT\n"), "abc");
        let one = id(
            "BEGIN:VEVENT\nDTSTAMP:20260101T000000Z\nDTSTART:20260323T100000Z\nSUMMARY:Lunch\nEND:VEVENT\n",
        );
        let restamped = id(
            "BEGIN:VEVENT\nDTSTAMP:20270101T000000Z\nDTSTART:20260323T100000Z\nSUMMARY:Lunch\nEND:VEVENT\n",
        );
        let elsewhere = id(
            "BEGIN:VEVENT\nDTSTART:20260323T100000Z\nSUMMARY:Lunch\nLOCATION:Park\nEND:VEVENT\n",
        );
        assert!(
            one.starts_with("no-uid-") && one.len() == "no-uid-".len() + 16,
            "{one}"
        );
        assert_eq!(one, restamped);
        assert_ne!(one, elsewhere);
        // Pinned: the id is a source id kept in the store, so it must not drift.
        assert_eq!(one, "no-uid-11c12e0158a74ae2");
    }
}
