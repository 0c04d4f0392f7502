//! Periods that a query names ("in March", "March 2025", "last summer", "around
//! Christmas"), so that recall can favour memories whose world time falls in them.
//!
//! Deliberately small and table-driven: month names (English, Turkish, German, Spanish,
//! French), seasons (northern hemisphere), Christmas, and a four-digit year. Relative words
//! ("last", "this") are not resolved: "last summer" favours every summer's memories, which
//! is right for a conversation read back later and never wrong by a year. Words that are
//! also common verbs or names ("May", "March", "fall") count only when written as a
//! period: capitalised, or after "in", "during", "early", "late", "mid", "last", "this",
//! "next" or "the".

use jiff::tz::TimeZone;

use crate::Timestamp;

/// Month names by language, lowercase, with the month they name (1–12).
const MONTHS: &[(&str, i8)] = &[
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("sept", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
    // Turkish
    ("ocak", 1),
    ("şubat", 2),
    ("mart", 3),
    ("nisan", 4),
    ("mayıs", 5),
    ("haziran", 6),
    ("temmuz", 7),
    ("ağustos", 8),
    ("eylül", 9),
    ("ekim", 10),
    ("kasım", 11),
    ("aralık", 12),
    // German
    ("januar", 1),
    ("februar", 2),
    ("märz", 3),
    ("mai", 5),
    ("juni", 6),
    ("juli", 7),
    ("oktober", 10),
    ("dezember", 12),
    // Spanish
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    // French
    ("janvier", 1),
    ("février", 2),
    ("mars", 3),
    ("avril", 4),
    ("juin", 6),
    ("juillet", 7),
    ("août", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
];

/// Season and holiday words with the months they cover.
const SEASONS: &[(&str, &[i8])] = &[
    ("spring", &[3, 4, 5]),
    ("summer", &[6, 7, 8]),
    ("autumn", &[9, 10, 11]),
    ("fall", &[9, 10, 11]),
    ("winter", &[12, 1, 2]),
    ("christmas", &[12]),
    ("xmas", &[12]),
];

/// Names that are periods only in context (see the module docs).
const AMBIGUOUS: &[&str] = &["may", "march", "mar", "fall", "jan", "dec", "sept", "aug"];

/// Words after which an ambiguous name is a period.
const PERIOD_CUES: &[&str] = &[
    "in", "during", "early", "late", "mid", "last", "this", "next", "the", "of", "since", "until",
    "before", "after", "around", "by",
];

/// A period named by a query: some months, of one year or of every year.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedPeriod {
    /// The year, when the query names one.
    pub year: Option<i16>,
    /// The months (1–12); every month when only a year is named.
    pub months: Vec<i8>,
}

impl NamedPeriod {
    /// Whether `at` (read in UTC) falls in the period.
    pub fn contains(&self, at: Timestamp) -> bool {
        let date = at.to_zoned(TimeZone::UTC).date();
        self.year.is_none_or(|y| y == date.year()) && self.months.contains(&date.month())
    }
}

/// The period the query names, if any.
pub fn named_period(query: &str) -> Option<NamedPeriod> {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut months: Vec<i8> = Vec::new();
    let mut year = None;
    for (i, word) in words.iter().enumerate() {
        let lower = word.to_lowercase();
        if lower.len() == 4
            && lower.chars().all(|c| c.is_ascii_digit())
            && (lower.starts_with("19") || lower.starts_with("20"))
        {
            year = lower.parse().ok();
            continue;
        }
        let named: Vec<i8> = if let Some((_, month)) = MONTHS.iter().find(|(n, _)| *n == lower) {
            vec![*month]
        } else if let Some((_, covered)) = SEASONS.iter().find(|(n, _)| *n == lower) {
            covered.to_vec()
        } else {
            continue;
        };
        if AMBIGUOUS.contains(&lower.as_str()) {
            let capitalised = word.chars().next().is_some_and(char::is_uppercase) && i > 0;
            let cued = i > 0 && PERIOD_CUES.contains(&words[i - 1].to_lowercase().as_str());
            // "fall" is a period only after a cue, capitalised or not.
            let ok = if lower == "fall" {
                cued
            } else {
                capitalised || cued
            };
            if !ok {
                continue;
            }
        }
        months.extend(named);
    }
    months.sort_unstable();
    months.dedup();
    match (months.is_empty(), year) {
        (true, None) => None,
        (true, Some(year)) => Some(NamedPeriod {
            year: Some(year),
            months: (1..=12).collect(),
        }),
        (false, year) => Some(NamedPeriod { year, months }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn months_seasons_and_years_are_found() {
        let p = named_period("What was Tom cooking in March 2025?").unwrap();
        assert_eq!(
            p,
            NamedPeriod {
                year: Some(2025),
                months: vec![3]
            }
        );
        assert!(p.contains(at("2025-03-31T23:00:00Z")));
        assert!(!p.contains(at("2026-03-10T10:00:00Z")));
        assert!(!p.contains(at("2025-04-01T00:00:00Z")));

        let p = named_period("where did she go last summer").unwrap();
        assert_eq!(p.months, vec![6, 7, 8]);
        assert!(p.contains(at("2024-07-04T12:00:00Z")));
        assert_eq!(
            named_period("plans for the winter").unwrap().months,
            vec![1, 2, 12]
        );
        assert_eq!(named_period("around Christmas").unwrap().months, vec![12]);
        assert_eq!(
            named_period("what happened in 2024").unwrap().months.len(),
            12
        );
        assert_eq!(named_period("Mart ayında ne oldu").unwrap().months, vec![3]);
        assert_eq!(named_period("im Oktober").unwrap().months, vec![10]);
        assert_eq!(named_period("en septiembre").unwrap().months, vec![9]);
        assert_eq!(named_period("en août").unwrap().months, vec![8]);
    }

    #[test]
    fn words_that_are_also_verbs_count_only_as_periods() {
        assert_eq!(named_period("may I ask what the deploy branch is"), None);
        assert_eq!(named_period("did the shelf fall down"), None);
        assert_eq!(
            named_period("what did she plant in May").unwrap().months,
            vec![5]
        );
        assert_eq!(
            named_period("what did she plant in the fall")
                .unwrap()
                .months,
            vec![9, 10, 11]
        );
        assert_eq!(named_period("which database do we use"), None);
        // a number that is not a year
        assert_eq!(named_period("budget of 4000 euros"), None);
    }
}
