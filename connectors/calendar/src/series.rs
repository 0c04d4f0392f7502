//! One memory per event: a recurring series becomes one item that lists its occurrences
//! inside the window, rather than one item per occurrence.
//!
//! Occurrences of a series differ only in their dates, so as separate memories they
//! would crowd every recall about the meeting and trip the admission gate's
//! near-duplicate check (each later standup held for review). As one memory, "when is
//! the standup" finds one answer with every date, and the sliding window updates it in
//! place.

use chrono::{DateTime, Utc};

use crate::parse::{Attendee, Occurrence, rfc3339};

/// What becomes one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub source_id: String,
    /// The file it came from, relative to the configured path.
    pub file: String,
    pub title: String,
    pub content: String,
    /// The (first, for a series) start inside the window: the item's occurred-at.
    pub start: DateTime<Utc>,
    pub metadata: serde_json::Value,
    pub organizer: Option<Attendee>,
    pub attendees: Vec<Attendee>,
}

/// Occurrences a series lists one by one; a longer series is summarised: its rule in
/// words, how many, from when to when, and the next ones from now (a weekday series over a
/// three-year window would otherwise be 30,000 characters of dates).
pub const MAX_LISTED: usize = 30;

/// Groups occurrences (in the order `parse` gives them) into entries: one-off events as
/// they are, each series as one entry, in order of first appearance. `now` decides which
/// occurrences of a long series are "next".
pub fn entries(occurrences: Vec<Occurrence>, now: DateTime<Utc>) -> Vec<Entry> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: std::collections::HashMap<(String, String), Vec<Occurrence>> =
        std::collections::HashMap::new();
    let mut singles = Vec::new();
    for (position, occurrence) in occurrences.into_iter().enumerate() {
        if occurrence.recurring {
            let key = (occurrence.file.clone(), occurrence.uid.clone());
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            groups.entry(key).or_default().push(occurrence);
        } else {
            singles.push((position, occurrence));
        }
    }
    let mut out: Vec<Entry> = singles.into_iter().map(|(_, o)| single(&o)).collect();
    for key in order {
        if let Some(group) = groups.remove(&key) {
            out.push(series(group, now));
        }
    }
    out.sort_by(|a, b| a.start.cmp(&b.start).then(a.source_id.cmp(&b.source_id)));
    out
}

fn single(o: &Occurrence) -> Entry {
    Entry {
        source_id: o.source_id.clone(),
        file: o.file.clone(),
        title: o.title.clone(),
        content: o.content(),
        start: o.start,
        metadata: o.metadata(),
        organizer: o.organizer.clone(),
        attendees: o.attendees.clone(),
    }
}

fn series(mut group: Vec<Occurrence>, now: DateTime<Utc>) -> Entry {
    group.sort_by_key(|o| o.start);
    let base = &group[0];
    let count = group.len();
    let plural = if count == 1 { "" } else { "s" };
    let rule = base.rule.as_deref().map(describe);
    let listed: &[Occurrence] = if count <= MAX_LISTED {
        &group
    } else {
        // The next ones from now; the last ones when the series is over.
        let next = group
            .partition_point(|o| o.end < now)
            .min(count - MAX_LISTED);
        &group[next..next + MAX_LISTED]
    };
    let mut when = if count <= MAX_LISTED {
        format!("Recurring: {count} occurrence{plural} in the window (UTC):")
    } else {
        format!(
            "Recurring{}: {count} occurrences in the window (UTC), the first {}, the last {}; the {MAX_LISTED} from {}:",
            rule.map(|r| format!(" {r}")).unwrap_or_default(),
            group[0].when(),
            group[count - 1].when(),
            listed[0].start.format("%a %Y-%m-%d"),
        )
    };
    for o in listed {
        when.push_str(&format!("\n- {}", o.when()));
        if o.title != base.title {
            when.push_str(&format!(" — {}", o.title));
        }
        if o.location != base.location
            && let Some(location) = &o.location
        {
            when.push_str(&format!(" at {location}"));
        }
        if let Some(status) = o.status.as_deref().filter(|s| *s != "confirmed") {
            when.push_str(&format!(" ({status})"));
        }
    }
    if listed.len() < count {
        when.push_str(&format!(
            "\n({} more in the window, not listed)",
            count - listed.len()
        ));
    }
    if let Some(tz) = base.time_zone.as_ref().filter(|tz| !tz.is_utc()) {
        when.push_str(&format!("\nWritten in {}", tz.name()));
    }
    let mut metadata = base.metadata();
    metadata["recurring"] = true.into();
    metadata["end"] = rfc3339(group.iter().map(|o| o.end).max().unwrap_or(base.end)).into();
    metadata["occurrences"] = group
        .iter()
        .map(|o| serde_json::Value::from(rfc3339(o.start)))
        .collect();
    Entry {
        source_id: format!("{}#{}", base.file, base.uid),
        file: base.file.clone(),
        title: base.title.clone(),
        content: base.content_with(&when),
        start: base.start,
        metadata,
        organizer: base.organizer.clone(),
        attendees: base.attendees.clone(),
    }
}

/// An `RRULE` in words, for the common parts (`FREQ`, `INTERVAL`, `BYDAY`,
/// `BYMONTHDAY`, `BYMONTH`, `COUNT`, `UNTIL`): `every week on weekdays, until 2029-06-01`.
/// A rule with other parts keeps them written as they are.
pub fn describe(rule: &str) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    for part in rule.split(';').filter(|p| !p.trim().is_empty()) {
        if let Some((key, value)) = part.split_once('=') {
            parts.push((
                key.trim().to_ascii_uppercase(),
                value.trim().to_ascii_uppercase(),
            ));
        }
    }
    let get = |key: &str| {
        parts
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let interval: u32 = get("INTERVAL").and_then(|v| v.parse().ok()).unwrap_or(1);
    let unit = match get("FREQ") {
        Some("SECONDLY") => "second",
        Some("MINUTELY") => "minute",
        Some("HOURLY") => "hour",
        Some("DAILY") => "day",
        Some("WEEKLY") => "week",
        Some("MONTHLY") => "month",
        Some("YEARLY") => "year",
        _ => return format!("by the rule {rule}"),
    };
    let mut words = if interval == 1 {
        format!("every {unit}")
    } else {
        format!("every {interval} {unit}s")
    };
    const DAYS: [(&str, &str); 7] = [
        ("MO", "Monday"),
        ("TU", "Tuesday"),
        ("WE", "Wednesday"),
        ("TH", "Thursday"),
        ("FR", "Friday"),
        ("SA", "Saturday"),
        ("SU", "Sunday"),
    ];
    if let Some(days) = get("BYDAY") {
        let days: Vec<&str> = days.split(',').map(str::trim).collect();
        if days == ["MO", "TU", "WE", "TH", "FR"] {
            words.push_str(" on weekdays");
        } else {
            let named: Vec<String> = days
                .iter()
                .map(|day| {
                    let split = day.len().saturating_sub(2);
                    let (ordinal, code) = day.split_at(split);
                    let name = DAYS
                        .iter()
                        .find(|(c, _)| *c == code)
                        .map_or(code, |(_, n)| n);
                    match ordinal {
                        "" => name.to_string(),
                        "1" | "+1" => format!("the first {name}"),
                        "2" | "+2" => format!("the second {name}"),
                        "3" | "+3" => format!("the third {name}"),
                        "4" | "+4" => format!("the fourth {name}"),
                        "-1" => format!("the last {name}"),
                        other => format!("the {other}. {name}"),
                    }
                })
                .collect();
            words.push_str(&format!(" on {}", named.join(", ")));
        }
    }
    if let Some(days) = get("BYMONTHDAY") {
        words.push_str(&format!(" on day {days}"));
    }
    if let Some(months) = get("BYMONTH") {
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let named: Vec<&str> = months
            .split(',')
            .map(|m| {
                m.trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| MONTHS.get(n.wrapping_sub(1)).copied())
                    .unwrap_or(m)
            })
            .collect();
        words.push_str(&format!(" in {}", named.join(", ")));
    }
    if let Some(count) = get("COUNT") {
        words.push_str(&format!(", {count} times"));
    }
    if let Some(until) = get("UNTIL") {
        let day = until.get(..8).unwrap_or(until);
        let day = match (day.get(..4), day.get(4..6), day.get(6..8)) {
            (Some(y), Some(m), Some(d)) => format!("{y}-{m}-{d}"),
            _ => day.to_owned(),
        };
        words.push_str(&format!(", until {day}"));
    }
    let known = [
        "FREQ",
        "INTERVAL",
        "BYDAY",
        "BYMONTHDAY",
        "BYMONTH",
        "COUNT",
        "UNTIL",
        "WKST",
    ];
    let rest: Vec<String> = parts
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !rest.is_empty() {
        words.push_str(&format!(" ({})", rest.join(";")));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Window, parse};

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/calendar")
                .join(name),
        )
        .unwrap()
    }

    fn window() -> Window {
        Window::around("2026-03-20T12:00:00Z".parse().unwrap(), 30, 30).unwrap()
    }

    #[test]
    fn a_series_is_one_entry_listing_its_occurrences_and_one_offs_stay_single() {
        let parsed = parse("team.ics", &fixture("team.ics"), &window()).unwrap();
        let occurrences = parsed.occurrences.len();
        let entries = entries(parsed.occurrences, "2026-03-20T12:00:00Z".parse().unwrap());
        assert!(entries.len() < occurrences, "series were grouped");
        let ids: Vec<&str> = entries.iter().map(|e| e.source_id.as_str()).collect();
        let unique: std::collections::HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        let standup = entries
            .iter()
            .find(|e| e.metadata["recurring"] == true && e.content.contains("7 occurrences"))
            .unwrap_or_else(|| panic!("{entries:#?}"));
        assert_eq!(standup.source_id, "team.ics#standup-2026@atlas.example");
        assert_eq!(standup.metadata["occurrences"].as_array().unwrap().len(), 7);
        let first = standup.metadata["occurrences"][0].as_str().unwrap();
        assert_eq!(rfc3339(standup.start), first);
        assert_eq!(
            standup.content.matches("\n- ").count(),
            7,
            "{}",
            standup.content
        );
        assert!(
            standup.content.contains("Written in Europe/Berlin"),
            "{}",
            standup.content
        );
        // Every occurrence of the series is listed in time order.
        let listed: Vec<&str> = standup.metadata["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
        let single = entries
            .iter()
            .find(|e| e.metadata["recurring"] == false)
            .unwrap();
        assert!(single.content.contains("When: "), "{}", single.content);
    }

    #[test]
    fn rules_in_words() {
        for (rule, words) in [
            ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "every week on weekdays"),
            (
                "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE",
                "every 2 weeks on Monday, Wednesday",
            ),
            (
                "FREQ=MONTHLY;BYDAY=-1FR;COUNT=6",
                "every month on the last Friday, 6 times",
            ),
            (
                "FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=15;UNTIL=20300101T000000Z",
                "every year on day 15 in March, until 2030-01-01",
            ),
            ("FREQ=DAILY;BYHOUR=9,17", "every day (BYHOUR=9,17)"),
            ("INTERVAL=2", "by the rule INTERVAL=2"),
        ] {
            assert_eq!(describe(rule), words, "{rule}");
        }
    }

    #[test]
    fn a_long_series_is_summarised_with_its_rule_count_span_and_next_occurrences() {
        let now = "2026-03-20T12:00:00Z".parse().unwrap();
        let wide = Window::around(now, 300, 1_000).unwrap();
        let calendar = b"BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:weekdays\nDTSTART:20250101T090000Z\nDURATION:PT15M\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\nSUMMARY:Standup\nEND:VEVENT\nEND:VCALENDAR\n";
        let parsed = parse("long.ics", calendar, &wide).unwrap();
        assert!(
            parsed.occurrences.len() > 900,
            "{}",
            parsed.occurrences.len()
        );
        let count = parsed.occurrences.len();
        let entries = entries(parsed.occurrences, now);
        assert_eq!(entries.len(), 1);
        let content = &entries[0].content;
        assert!(content.len() < 4_000, "{} chars: {content}", content.len());
        assert!(
            content.contains(&format!("Recurring every week on weekdays: {count} occurrences in the window (UTC), the first Mon 2025-05-26 09:00 – 09:15 (UTC)")),
            "{content}"
        );
        // Friday's 09:00 is over at noon: the next is Monday's.
        assert!(
            content.contains("; the 30 from Mon 2026-03-23:\n- Mon 2026-03-23 09:00 – 09:15 (UTC)"),
            "{content}"
        );
        assert!(
            content.contains(&format!(
                "({} more in the window, not listed)",
                count - MAX_LISTED
            )),
            "{content}"
        );
        assert_eq!(
            entries[0].metadata["occurrences"].as_array().unwrap().len(),
            count
        );
    }
}
