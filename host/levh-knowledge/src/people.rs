//! People mentioned in text: people already known by name (full, or a first name only
//! one known person has), `@handles`, and e-mail addresses. Names are matched as written —
//! capitalised, with Turkish suffixes after an apostrophe ("Mehmet Yılmaz'a") and English
//! possessives ("Priya's") — and never inside an address or a URL.

use std::sync::LazyLock;

use regex::Regex;

const RULES: &str = include_str!("../data/people.rules");

/// How a person was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MentionKind {
    /// A known person, by name.
    Known,
    /// An `@handle`.
    Handle,
    /// An e-mail address.
    Email,
}

/// One person a text mentions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mention {
    /// The known person's full name, the handle with its `@`, or the address lower-cased.
    pub name: String,
    /// How it was found.
    pub kind: MentionKind,
}

struct Words {
    not_first_names: Vec<String>,
    not_handles: Vec<String>,
    not_handle_endings: Vec<String>,
}

static WORDS: LazyLock<Words> = LazyLock::new(|| {
    let list = |key: &str| -> Vec<String> {
        RULES
            .lines()
            .filter_map(|line| line.trim().strip_prefix(key)?.strip_prefix(':'))
            .flat_map(|words| words.split('|'))
            .map(|w| w.trim().to_lowercase())
            .filter(|w| !w.is_empty())
            .collect()
    };
    Words {
        not_first_names: list("not-first-names"),
        not_handles: list("not-handles"),
        not_handle_endings: list("not-handle-endings"),
    }
});

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.\w{2,}").unwrap_or_else(|e| panic!("{e}"))
});
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:https?://|www\.)\S+").unwrap_or_else(|e| panic!("{e}")));
static HANDLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|[^\w@.])@(\w[\w.-]*)").unwrap_or_else(|e| panic!("{e}")));

/// Whether `name` occurs in `text` at `at` as a whole name: not inside a longer word
/// (a suffix after an apostrophe is fine).
fn whole(text: &str, at: usize, len: usize) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at + len..].chars().next();
    before.is_none_or(|c| !c.is_alphanumeric() && c != '@' && c != '.' && c != '_')
        && after.is_none_or(|c| !c.is_alphanumeric() && c != '@' && c != '_')
}

fn occurrences(text: &str, name: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        if whole(text, at, name.len()) {
            found.push(at);
        }
        from = at + name.len();
    }
    found
}

/// The people `text` mentions, each once, in order of first appearance. `known` are full
/// names of people the memory already knows.
pub fn mentions(text: &str, known: &[String]) -> Vec<Mention> {
    let mut found: Vec<(usize, Mention)> = Vec::new();
    let push = |found: &mut Vec<(usize, Mention)>, at: usize, name: String, kind| {
        if !found.iter().any(|(_, m)| m.name == name) {
            found.push((at, Mention { name, kind }));
        }
    };
    for m in EMAIL.find_iter(text) {
        push(
            &mut found,
            m.start(),
            m.as_str().to_lowercase(),
            MentionKind::Email,
        );
    }
    // Names and handles are looked for with addresses and URLs blanked out.
    let mut blank = text.to_owned();
    for m in EMAIL.find_iter(text).chain(URL.find_iter(text)) {
        blank.replace_range(m.range(), &" ".repeat(m.len()));
    }
    for capture in HANDLE.captures_iter(&blank) {
        let Some(handle) = capture.get(1) else {
            continue;
        };
        let name = handle.as_str().trim_end_matches(['.', '-']);
        let lower = name.to_lowercase();
        let words = &*WORDS;
        if words.not_handles.contains(&lower)
            || words
                .not_handle_endings
                .iter()
                .any(|end| lower.ends_with(end.as_str()))
        {
            continue;
        }
        push(
            &mut found,
            handle.start() - 1,
            format!("@{name}"),
            MentionKind::Handle,
        );
    }
    // Full names first: a first name inside one ("Demir" in "Ali Demir") is that person's,
    // not another known person's first name.
    let full_spans: Vec<(usize, usize)> = known
        .iter()
        .map(|p| p.trim())
        .flat_map(|p| {
            occurrences(&blank, p)
                .into_iter()
                .map(move |at| (at, at + p.len()))
        })
        .collect();
    for person in known {
        let person = person.trim();
        let mut at = occurrences(&blank, person);
        let first = person.split_whitespace().next().unwrap_or(person);
        let shared = known
            .iter()
            .filter(|other| other.split_whitespace().next() == Some(first))
            .count();
        let not_a_name = WORDS.not_first_names.contains(&first.to_lowercase());
        if first != person && shared == 1 && !not_a_name {
            at.extend(
                occurrences(&blank, first)
                    .into_iter()
                    .filter(|&i| !full_spans.iter().any(|&(start, end)| i >= start && i < end)),
            );
        }
        if let Some(&first_at) = at.iter().min() {
            push(&mut found, first_at, person.to_owned(), MentionKind::Known);
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, m)| m).collect()
}

/// A person's name as one key for every way it is written: "Priya Raman", "PRIYA  RAMAN",
/// "Raman, Priya" and "Priya Ramán" are all `priya raman` (lower case, accents and quotes
/// dropped, "Last, First" turned round, spacing collapsed), so sources that spell a name
/// differently still meet on one person.
pub fn normalized_name(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;

    let folded: String = name
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\u{131}' { 'i' } else { c }) // Turkish dotless ı
        .filter(|c| {
            !matches!(
                c,
                '"' | '\'' | '`' | '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}'
            )
        })
        .collect();
    let turned = match folded.split_once(',') {
        Some((last, first)) if !first.trim().is_empty() && !first.contains(',') => {
            format!("{} {}", first.trim(), last.trim())
        }
        _ => folded,
    };
    turned.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_name_written_many_ways_normalises_to_one_key() {
        for written in [
            "Priya Raman",
            "PRIYA  RAMAN",
            "Raman, Priya",
            " Priya Ramán ",
            "\"Priya Raman\"",
        ] {
            assert_eq!(normalized_name(written), "priya raman", "{written}");
        }
        assert_eq!(
            normalized_name("Tomás Ortega"),
            normalized_name("Tomas Ortega")
        );
        assert_eq!(normalized_name("Ayşe Demir"), "ayse demir");
        assert_eq!(normalized_name("IŞIK Yılmaz"), "isik yilmaz");
    }

    fn names(text: &str, known: &[&str]) -> Vec<String> {
        let known: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
        mentions(text, &known).into_iter().map(|m| m.name).collect()
    }

    #[test]
    fn finds_known_people_handles_and_addresses_in_order() {
        let known = ["Priya Raman", "Mehmet Yılmaz", "May Chen"];
        assert_eq!(
            names(
                "Mehmet Yılmaz'a sordum; Priya's notes are with @dmitri and alex.kim@acme.io",
                &known
            ),
            [
                "Mehmet Yılmaz",
                "Priya Raman",
                "@dmitri",
                "alex.kim@acme.io"
            ]
        );
        // A month, a bot, a channel, a name inside an address: none is a person.
        assert_eq!(
            names(
                "In May @deploy-bot told @here to mail priya@acme.io",
                &known
            ),
            ["priya@acme.io"]
        );
        // A first name two known people share is nobody in particular.
        assert!(names("Ask Priya", &["Priya Raman", "Priya Shah"]).is_empty());
        assert_eq!(names("Ask Priya", &["Priya Raman"]), ["Priya Raman"]);
        // "Demir" is Ali Demir's surname here, not Demir Aslan.
        assert_eq!(
            names("Ali Demir reviewed it", &["Ali Demir", "Demir Aslan"]),
            ["Ali Demir"]
        );
        assert!(names("the priya field", &["Priya Raman"]).is_empty());
    }
}
