//! Reading iCalendar (RFC 5545) properties out of what the `icalendar` parser gives: a
//! component's properties by name, their parameters (`TZID`, `VALUE`, `CN`, …), TEXT
//! values, unfolded text, and the DATE-TIME form.
//!
//! The crate's leaf: it knows the parser's types and nothing of the other modules, so
//! `zones` (reading `VTIMEZONE`s), `time` and `parse` can all stand on it without
//! reaching into each other.

use chrono::NaiveDateTime;
use icalendar::parser::{Component, Property, unfold};

/// Component text with its folded lines joined (RFC 5545 §3.1) and line ends made LF,
/// ready for `read_components`.
pub fn unfolded(text: &str) -> String {
    unfold(text).replace("\r\n", "\n")
}

/// The first property of this name (names are case-insensitive).
pub fn find<'c>(component: &'c Component<'c>, name: &str) -> Option<&'c Property<'c>> {
    component
        .properties
        .iter()
        .find(|p| p.name.as_str().eq_ignore_ascii_case(name))
}

/// Every property of this name, in order.
pub fn all<'c>(
    component: &'c Component<'c>,
    name: &'c str,
) -> impl Iterator<Item = &'c Property<'c>> {
    component
        .properties
        .iter()
        .filter(move |p| p.name.as_str().eq_ignore_ascii_case(name))
}

/// The first value of a property, by case-insensitive name, as written.
pub fn value<'c>(component: &'c Component<'c>, name: &str) -> Option<&'c str> {
    find(component, name).map(|p| p.val.as_str())
}

/// A parameter's value, trimmed; `None` when absent or empty.
pub fn param<'p>(property: &'p Property<'p>, key: &str) -> Option<&'p str> {
    property
        .params
        .iter()
        .find(|p| p.key.as_str().eq_ignore_ascii_case(key))
        .and_then(|p| p.val.as_ref())
        .map(|v| v.as_str().trim())
        .filter(|v| !v.is_empty())
}

/// A TEXT property, unescaped, trimmed, and only when not empty.
pub fn text(component: &Component, name: &str) -> Option<String> {
    text_of(find(component, name)?)
}

/// Every TEXT property of this name that is not empty, unescaped and trimmed (a journal
/// entry may have several `DESCRIPTION`s).
pub fn texts(component: &Component, name: &str) -> Vec<String> {
    all(component, name).filter_map(text_of).collect()
}

fn text_of(property: &Property) -> Option<String> {
    // The parser unescapes TEXT only under upper-case names.
    let value = if property.name.as_str().chars().any(char::is_lowercase) {
        property.val.clone().unescape_text().as_str().to_owned()
    } else {
        property.val.as_str().to_owned()
    };
    let value = value.replace("\r\n", "\n");
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// A date or date-time property's `TZID` parameter and its value.
///
/// `TZID=(UTC-03:00) Brasília:20260325T100000`: a zone name with a colon, unquoted
/// as RFC 5545 asks, ends at the parser's first colon; the value's last colon is the
/// real one.
pub fn zoned_value<'p>(property: &'p Property<'p>) -> (Option<String>, &'p str) {
    let tzid = param(property, "TZID");
    let value = property.val.as_str();
    match (tzid, value.rsplit_once(':')) {
        (Some(zone), Some((rest, value))) => (Some(format!("{zone}:{rest}")), value),
        (zone, _) => (zone.map(str::to_owned), value),
    }
}

/// A DATE-TIME value (RFC 5545 §3.3.5, `20260324T093000`, `20260323T130000Z`): its
/// wall-clock time, and whether it is UTC (`Z`). `None` for anything else, dates
/// included. What zone a time without `Z` is in is the caller's to say.
pub fn date_time(value: &str) -> Option<(NaiveDateTime, bool)> {
    let value = value.trim();
    let (text, utc) = match value.strip_suffix(['Z', 'z']) {
        Some(text) => (text, true),
        None => (value, false),
    };
    NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S")
        .ok()
        .map(|naive| (naive, utc))
}

#[cfg(test)]
mod tests {
    use icalendar::parser::read_components;

    use super::*;

    #[test]
    fn an_unquoted_tzid_with_a_colon_keeps_its_colon_and_the_value_its_time() {
        let text = unfolded(
            "BEGIN:VEVENT\r\nDTSTART;TZID=(UTC-03:00) Brasília:20260325T100000\r\nDTEND;TZID=Europe/Berlin:20260325T1\r\n 10000\r\nEND:VEVENT\r\n",
        );
        let components = read_components(&text).unwrap();
        let event = &components[0];
        let start = find(event, "dtstart").unwrap();
        assert_eq!(
            zoned_value(start),
            (Some("(UTC-03:00) Brasília".to_owned()), "20260325T100000")
        );
        assert_eq!(
            zoned_value(find(event, "DTEND").unwrap()),
            (Some("Europe/Berlin".to_owned()), "20260325T110000")
        );
    }

    #[test]
    fn date_times_say_whether_they_are_utc_and_dates_are_not_date_times() {
        let at = NaiveDateTime::parse_from_str("20260323T130000", "%Y%m%dT%H%M%S").unwrap();
        assert_eq!(date_time(" 20260323T130000Z "), Some((at, true)));
        assert_eq!(date_time("20260323T130000"), Some((at, false)));
        assert_eq!(date_time("20260323"), None);
        assert_eq!(date_time("2026-03-23T13:00:00"), None);
    }
}
