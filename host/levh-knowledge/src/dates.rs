//! The date a promise names ("by Friday", "tomorrow", "10 Mart", "haftaya pazartesi"),
//! resolved against the moment it was written, in the writer's time zone — so "tomorrow"
//! written late on a Sunday in Istanbul is Monday there, whatever UTC says.
//!
//! The words are data: `data/dates.*.rules`, one `kind: word | word` line per kind.

use std::sync::LazyLock;

use jiff::civil::{Date, Weekday};

/// The built-in vocabularies.
pub const RULE_FILES: &[(&str, &str)] = &[
    ("dates.en.rules", include_str!("../data/dates.en.rules")),
    ("dates.tr.rules", include_str!("../data/dates.tr.rules")),
];

/// One language's date words.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    same_day: Vec<String>,
    next_day: Vec<String>,
    two_days: Vec<String>,
    end_of_week: Vec<String>,
    end_of_month: Vec<String>,
    next_weekday: Vec<String>,
    /// Each weekday's names (`friday/fri`), Monday first.
    weekdays: Vec<Vec<String>>,
    /// Each month's names, January first.
    months: Vec<Vec<String>>,
    /// Whether a word may carry a suffix ("cumaya", "marta"): Turkish yes, English no
    /// (or "mon" would be found in "month").
    suffixes: bool,
}

impl Vocabulary {
    /// Parses one vocabulary file.
    pub fn parse(file: &str, text: &str) -> Result<Self, crate::RuleError> {
        let mut vocabulary = Self::default();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let error = |message: String| crate::RuleError {
                file: file.to_owned(),
                line: number + 1,
                message,
            };
            let (kind, words) = line
                .split_once(':')
                .ok_or_else(|| error(format!("expected `kind: word | word`, found {line:?}")))?;
            let words: Vec<String> = words
                .split('|')
                .map(|w| w.trim().to_lowercase())
                .filter(|w| !w.is_empty())
                .collect();
            // A weekday or a month may have several names: `friday/fri`.
            let names = || -> Vec<Vec<String>> {
                words
                    .iter()
                    .map(|w| {
                        w.split('/')
                            .map(|n| n.trim().to_owned())
                            .filter(|n| !n.is_empty())
                            .collect()
                    })
                    .collect()
            };
            match kind.trim() {
                "suffixes" => {
                    vocabulary.suffixes = words.first().is_some_and(|w| w == "yes");
                    continue;
                }
                "weekdays" => {
                    vocabulary.weekdays = names();
                    continue;
                }
                "months" => {
                    vocabulary.months = names();
                    continue;
                }
                _ => {}
            }
            let slot = match kind.trim() {
                "same-day" => &mut vocabulary.same_day,
                "next-day" => &mut vocabulary.next_day,
                "two-days" => &mut vocabulary.two_days,
                "end-of-week" => &mut vocabulary.end_of_week,
                "end-of-month" => &mut vocabulary.end_of_month,
                "next-weekday" => &mut vocabulary.next_weekday,
                other => return Err(error(format!("unknown kind {other:?}"))),
            };
            *slot = words;
        }
        if vocabulary.weekdays.len() != 7 || vocabulary.months.len() != 12 {
            return Err(crate::RuleError {
                file: file.to_owned(),
                line: 0,
                message: "needs 7 weekdays (Monday first) and 12 months (January first)".into(),
            });
        }
        Ok(vocabulary)
    }
}

static VOCABULARIES: LazyLock<Vec<Vocabulary>> = LazyLock::new(|| {
    RULE_FILES
        .iter()
        .map(|(file, text)| {
            Vocabulary::parse(file, text).unwrap_or_else(|e| panic!("built-in date words: {e}"))
        })
        .collect()
});

/// The words of `sentence`, lower-cased, with their byte offsets in that lower-cased text.
fn words(lower: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices() {
        match (c.is_alphanumeric() || c == '-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &lower[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &lower[s..]));
    }
    out
}

/// Whether `phrase` (one or more words) occurs in `lower` starting at a word boundary and,
/// for the last word, either whole or followed by a suffix when `suffixes` (Turkish:
/// "cumaya", "marta"). Returns the byte offset just after the match.
fn find(lower: &str, phrase: &str, suffixes: bool) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = lower[from..].find(phrase) {
        let at = from + found;
        let end = at + phrase.len();
        let starts_word = lower[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let next = lower[end..].chars().next();
        let ends_word = next.is_none_or(|c| !c.is_alphanumeric())
            || (suffixes && next.is_some_and(|c| c.is_alphabetic() || c == '\'' || c == '’'));
        if starts_word && ends_word {
            return Some(end);
        }
        from = at + phrase.chars().next().map_or(1, char::len_utf8);
    }
    None
}

const WEEKDAYS: [Weekday; 7] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
    Weekday::Saturday,
    Weekday::Sunday,
];

/// The first day after `today` that is `weekday`.
fn next_weekday(today: Date, weekday: Weekday) -> Date {
    let ahead = (weekday.to_monday_zero_offset() - today.weekday().to_monday_zero_offset() + 7) % 7;
    let ahead = if ahead == 0 { 7 } else { ahead };
    today
        .checked_add(jiff::Span::new().days(i64::from(ahead)))
        .unwrap_or(today)
}

/// The Monday of the week after `today`'s.
fn next_monday(today: Date) -> Date {
    let back = i64::from(today.weekday().to_monday_zero_offset());
    today
        .checked_add(jiff::Span::new().days(7 - back))
        .unwrap_or(today)
}

fn plus_days(today: Date, days: i64) -> Date {
    today
        .checked_add(jiff::Span::new().days(days))
        .unwrap_or(today)
}

/// The date `sentence` names as a due date, resolved against `today` (the writer's local
/// date), or `None` when it names none. Explicit dates win over relative words.
pub fn due_date(sentence: &str, today: Date) -> Option<Date> {
    let lower = sentence.to_lowercase();
    if let Some(date) = explicit(&lower, today) {
        return Some(date);
    }
    VOCABULARIES
        .iter()
        .find_map(|vocabulary| relative(vocabulary, &lower, today))
}

fn relative(v: &Vocabulary, lower: &str, today: Date) -> Option<Date> {
    let any = |list: &[String]| list.iter().any(|w| find(lower, w, v.suffixes).is_some());
    // Longest first: "day after tomorrow" before "tomorrow", "next week" before weekdays.
    if any(&v.two_days) {
        return Some(plus_days(today, 2));
    }
    // A weekday, after "next"/"haftaya" (the following week's) or alone (the next one).
    // The longest name found wins, so "cumartesi" is never read as "cuma".
    let weekday = v
        .weekdays
        .iter()
        .enumerate()
        .flat_map(|(index, names)| names.iter().map(move |name| (index, name)))
        .filter_map(|(index, name)| find(lower, name, v.suffixes).map(|end| (index, name, end)))
        .max_by_key(|(_, name, _)| name.len());
    if let Some((index, name, end)) = weekday {
        let before = lower[..end - name.len()].trim_end();
        let following_week = v.next_weekday.iter().any(|w| before.ends_with(w.as_str()));
        return Some(if following_week {
            plus_days(next_monday(today), index as i64)
        } else {
            next_weekday(today, WEEKDAYS[index])
        });
    }
    if any(&v.next_day) {
        return Some(plus_days(today, 1));
    }
    if any(&v.end_of_month) {
        return Some(today.last_of_month());
    }
    if any(&v.end_of_week) {
        let friday = i64::from(Weekday::Friday.to_monday_zero_offset());
        let now = i64::from(today.weekday().to_monday_zero_offset());
        return Some(if now <= friday {
            plus_days(today, friday - now)
        } else {
            next_weekday(today, Weekday::Friday)
        });
    }
    if any(&v.same_day) {
        return Some(today);
    }
    None
}

/// `2026-03-12`, `March 10`, `10 March`, `Mar 10th`, `10 Mart`, `10 Mart'a kadar`: the
/// year is the writer's, or the next when that date has passed.
fn explicit(lower: &str, today: Date) -> Option<Date> {
    // 12.03.2026 or 12/03/2026: day first, as Turkish and most of Europe write it.
    static NUMERIC: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")
            .unwrap_or_else(|e| panic!("{e}"))
    });
    if let Some(c) = NUMERIC.captures(lower) {
        let part = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<i16>().ok());
        if let (Some(day), Some(month), Some(year)) = (part(1), part(2), part(3))
            && let Ok(date) = Date::new(year, month as i8, day as i8)
        {
            return Some(date);
        }
    }
    let tokens = words(lower);
    for (_, word) in &tokens {
        if word.len() == 10
            && let Ok(date) = word.parse::<Date>()
        {
            return Some(date);
        }
    }
    // A month by its name, a Turkish form of it ("marta"), or a 3+ letter abbreviation.
    let month_of = |word: &str| {
        VOCABULARIES.iter().find_map(|v| {
            v.months.iter().position(|names| {
                names.iter().any(|m| {
                    word.starts_with(m.as_str())
                        || (word.chars().count() >= 3 && m.starts_with(word))
                })
            })
        })
    };
    let day_of = |word: &str| {
        let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
        let rest = &word[digits.len()..];
        let suffix_ok = rest.is_empty()
            || ["st", "nd", "rd", "th"].contains(&rest)
            || rest.starts_with('\'')
            || rest.starts_with('’');
        digits
            .parse::<i8>()
            .ok()
            .filter(|d| (1..=31).contains(d) && suffix_ok)
    };
    for pair in tokens.windows(2) {
        let (a, b) = (pair[0].1, pair[1].1);
        let found = match (day_of(a), month_of(b), month_of(a), day_of(b)) {
            (Some(day), Some(month), _, _) => Some((day, month)),
            (_, _, Some(month), Some(day)) => Some((day, month)),
            _ => None,
        };
        if let Some((day, month)) = found
            && let Ok(date) = Date::new(today.year(), month as i8 + 1, day)
        {
            return Some(if date < today {
                Date::new(today.year() + 1, month as i8 + 1, day).unwrap_or(date)
            } else {
                date
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(text: &str, today: &str) -> Option<String> {
        due_date(text, today.parse().unwrap()).map(|d| d.to_string())
    }

    #[test]
    fn resolves_relative_and_explicit_dates_from_the_writers_day() {
        // 2026-03-04 is a Wednesday.
        let wednesday = "2026-03-04";
        assert_eq!(
            on("I'll send it by Friday", wednesday).as_deref(),
            Some("2026-03-06")
        );
        assert_eq!(
            on("I'll call tomorrow", wednesday).as_deref(),
            Some("2026-03-05")
        );
        assert_eq!(
            on("next Monday I'll fix it", wednesday).as_deref(),
            Some("2026-03-09")
        );
        assert_eq!(
            on("I'll fix it tonight", wednesday).as_deref(),
            Some("2026-03-04")
        );
        assert_eq!(
            on("ready by March 10", wednesday).as_deref(),
            Some("2026-03-10")
        );
        assert_eq!(
            on("10 Mart'a kadar bitireceğim", wednesday).as_deref(),
            Some("2026-03-10")
        );
        assert_eq!(
            on("Cumaya kadar göndereceğim", wednesday).as_deref(),
            Some("2026-03-06")
        );
        assert_eq!(
            on("Cumartesi bakarım", wednesday).as_deref(),
            Some("2026-03-07")
        );
        assert_eq!(
            on("Haftaya pazartesi dönüş yapacağım", wednesday).as_deref(),
            Some("2026-03-09")
        );
        assert_eq!(
            on("by the end of the month", wednesday).as_deref(),
            Some("2026-03-31")
        );
        assert_eq!(on("I'll review it", wednesday), None);
        // Written on a Friday, "by Friday" is next week's.
        assert_eq!(
            on("I'll send it by Friday", "2026-03-06").as_deref(),
            Some("2026-03-13")
        );
    }
}
