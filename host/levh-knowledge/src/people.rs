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

/// People already known by name, compiled once into one automaton over their full names
/// and their first names (a first name counts only when one known person has it, and is
/// not a common word). Matching is leftmost-longest, so "Priya" inside "Priya Raman" is the
/// full name, not a second mention — and a text is read once, however many people are
/// known (a store indexes thousands of names against every memory).
#[derive(Debug, Clone)]
pub struct KnownPeople {
    automaton: Option<aho_corasick::AhoCorasick>,
    /// The person each pattern names.
    people: Vec<String>,
}

impl KnownPeople {
    /// Compiles `known` (full names as written).
    pub fn new(known: &[String]) -> Self {
        let mut patterns: Vec<String> = Vec::new();
        let mut people: Vec<String> = Vec::new();
        for person in known {
            let person = person.trim();
            if person.is_empty() || patterns.iter().any(|p| p == person) {
                continue;
            }
            patterns.push(person.to_owned());
            people.push(person.to_owned());
        }
        let mut firsts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for person in known {
            if let Some(first) = person.split_whitespace().next() {
                *firsts.entry(first).or_default() += 1;
            }
        }
        for person in known {
            let person = person.trim();
            let first = person.split_whitespace().next().unwrap_or(person);
            if first != person
                && firsts.get(first) == Some(&1)
                && !WORDS.not_first_names.contains(&first.to_lowercase())
                && !patterns.iter().any(|p| p == first)
            {
                patterns.push(first.to_owned());
                people.push(person.to_owned());
            }
        }
        let automaton = (!patterns.is_empty())
            .then(|| {
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(&patterns)
                    .ok()
            })
            .flatten();
        Self { automaton, people }
    }

    /// Each known person named in `text` as a whole word (not inside an address or a
    /// longer word), with where.
    fn find<'a>(&'a self, text: &str) -> Vec<(usize, &'a str)> {
        let Some(automaton) = &self.automaton else {
            return Vec::new();
        };
        automaton
            .find_iter(text)
            .filter(|m| whole(text, m.start(), m.len()))
            .map(|m| (m.start(), self.people[m.pattern().as_usize()].as_str()))
            .collect()
    }
}

/// The people `text` mentions, each once, in order of first appearance. `known` are full
/// names of people the memory already knows.
pub fn mentions(text: &str, known: &[String]) -> Vec<Mention> {
    KnownPeople::new(known).mentions(text)
}

impl KnownPeople {
    /// [`mentions`] with the known names already compiled.
    pub fn mentions(&self, text: &str) -> Vec<Mention> {
        let known = self;
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
        for (at, person) in known.find(&blank) {
            push(&mut found, at, person.to_owned(), MentionKind::Known);
        }
        found.sort_by_key(|(at, _)| *at);
        found.into_iter().map(|(_, m)| m).collect()
    }
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
