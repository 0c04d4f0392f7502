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

/// Groups occurrences (in the order `parse` gives them) into entries: one-off events as
/// they are, each series as one entry, in order of first appearance.
pub fn entries(occurrences: Vec<Occurrence>) -> Vec<Entry> {
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
            out.push(series(group));
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

fn series(mut group: Vec<Occurrence>) -> Entry {
    group.sort_by_key(|o| o.start);
    let base = &group[0];
    let mut when = format!(
        "Recurring: {} occurrence{} in the window (UTC):",
        group.len(),
        if group.len() == 1 { "" } else { "s" }
    );
    for o in &group {
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
    if let Some(tz) = base.time_zone.filter(|tz| tz.name() != "UTC") {
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
        let entries = entries(parsed.occurrences);
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
}
