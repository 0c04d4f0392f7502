//! Ask: an answer to a question from the memories, citing the ones it used.
//!
//! Evidence is found as `search` finds it (nothing is reinforced: asking is read-only),
//! preferring the memories of people the question names and keeping to the days its time
//! words choose ("last week", "yesterday"), within a token budget. Without a model the
//! answer is the evidence itself, grouped by person, each memory shown by the sentence that
//! best matches the question: deterministic, and every word of it is in a cited memory.
//! With a model (`LEVH_LLM_URL`), the model writes the answer from that evidence only, and
//! every id it cites is checked against the evidence: one it invents is removed and named.

use std::collections::{BTreeSet, HashMap, HashSet};

use jiff::tz::TimeZone;
use levh_core::{AnswerModel, Levh, Memory, RecallRequest, Scope, text};

use crate::requests::{AskArgs, EntityListArgs};
use crate::views::{AnswerGroupView, AnswerView, CitationView};
use crate::{Error, Result};

/// Evidence tokens when no budget is given.
pub const DEFAULT_MAX_TOKENS: usize = 1000;
/// Evidence memories when no limit is given, and the most a caller may ask for.
pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 50;
/// Characters of a question: a question, not a document.
pub const MAX_QUESTION_CHARS: usize = 2000;
/// Candidates read before the person preference and the budget choose the evidence.
const CANDIDATES: usize = 40;

/// [`Operation::Ask`](crate::Operation::Ask).
pub fn ask(
    levh: &Levh,
    scope: &Scope,
    args: AskArgs,
    model: Option<&dyn AnswerModel>,
) -> Result<AnswerView> {
    let question = args.question.trim().to_owned();
    if !text::has_visible(&question) {
        return Err(Error::invalid(
            "invalid question: it has nothing visible (empty, or only spaces and invisible characters)",
        ));
    }
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(Error::invalid(format!(
            "invalid question: longer than {MAX_QUESTION_CHARS} characters"
        )));
    }
    let max_tokens = args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if max_tokens == 0 {
        return Err(Error::invalid("invalid max_tokens: must be at least 1"));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Error::invalid(format!(
            "invalid limit: {limit} is outside 1..{MAX_LIMIT}"
        )));
    }
    let zone = crate::knowledge::user_time_zone(levh)?;
    let today = levh.now().to_zoned(zone.clone()).date();
    let range = time_range(&question, today);
    let (since, until) = match range {
        Some((from, to)) => (
            Some(crate::timeline::start_of(from, &zone)?),
            Some(crate::timeline::start_of(
                to.tomorrow().map_err(|e| Error::invalid(e.to_string()))?,
                &zone,
            )?),
        ),
        None => (None, None),
    };
    let output = levh.recall(
        scope,
        &RecallRequest {
            limit: CANDIDATES,
            project: args.project.clone(),
            since,
            until,
            reinforce: false,
            ..RecallRequest::new(question.clone())
        },
    )?;
    levh.log_recall(scope, "ask", &question, args.project.as_deref(), &output);
    let named = people_named(levh, scope, &question)?;
    // A memory of a person the question names first; otherwise the recall's order.
    let mut ranked: Vec<&Memory> = output.hits.iter().map(|h| &h.memory).collect();
    if !named.is_empty() {
        ranked.sort_by_key(|m| !mentions_any(m, &named));
    }
    // The people are found by their entity; their names would make every header line
    // that lists them look like an answer.
    let name_words: HashSet<String> = named
        .iter()
        .flat_map(|n| {
            n.to_lowercase()
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    let terms: Vec<String> = terms(&question)
        .into_iter()
        .filter(|t| !name_words.contains(t))
        .collect();
    let (mut tokens, mut omitted) = (0, 0);
    let mut evidence: Vec<(&Memory, CitationView)> = Vec::new();
    for memory in ranked {
        if evidence.len() >= limit {
            break;
        }
        let cost = text::estimate_tokens(&memory.content);
        if tokens + cost > max_tokens {
            omitted += 1;
            continue;
        }
        tokens += cost;
        evidence.push((memory, citation(memory, &terms, &zone)));
    }
    let mut view = AnswerView {
        question: question.clone(),
        answer: String::new(),
        mode: "deterministic".into(),
        model: None,
        citations: Vec::new(),
        groups: Vec::new(),
        dropped_citations: Vec::new(),
        time_range: range.map(|(from, to)| vec![from.to_string(), to.to_string()]),
        people: named.iter().cloned().collect(),
        tokens,
        omitted,
        warnings: Vec::new(),
    };
    if let Some(model) = model
        && !evidence.is_empty()
    {
        match written_by(model, &question, &evidence) {
            Ok((answer, cited, dropped)) => {
                view.mode = "model".into();
                view.model = Some(model.model_id().to_owned());
                view.answer = answer;
                view.citations = cited
                    .iter()
                    .filter_map(|id| {
                        evidence
                            .iter()
                            .find(|(m, _)| m.id.to_string() == *id)
                            .map(|(_, c)| c.clone())
                    })
                    .collect();
                view.dropped_citations = dropped;
                return Ok(view);
            }
            Err(why) => view.warnings.push(format!(
                "the model did not answer ({why}); this answer is levh's own"
            )),
        }
    }
    view.groups = grouped(&evidence, &named);
    view.citations = view
        .groups
        .iter()
        .flat_map(|g| g.citations.iter().cloned())
        .collect();
    view.answer = deterministic_text(&view.groups);
    Ok(view)
}

/// The days a question's time words choose, in English, German or Turkish.
fn time_range(
    question: &str,
    today: jiff::civil::Date,
) -> Option<(jiff::civil::Date, jiff::civil::Date)> {
    let lower = question.to_lowercase();
    let phrases: &[(&str, &str)] = &[
        ("last week", "last week"),
        ("this week", "this week"),
        ("next week", "next week"),
        ("last month", "last month"),
        ("this month", "this month"),
        ("yesterday", "yesterday"),
        ("today", "today"),
        ("tomorrow", "tomorrow"),
        ("letzte woche", "last week"),
        ("diese woche", "this week"),
        ("gestern", "yesterday"),
        ("heute", "today"),
        ("morgen", "tomorrow"),
        ("geçen hafta", "last week"),
        ("bu hafta", "this week"),
        ("dün", "yesterday"),
        ("bugün", "today"),
        ("yarın", "tomorrow"),
    ];
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let joined = format!(" {} ", words.join(" "));
    phrases.iter().find_map(|(phrase, named)| {
        joined
            .contains(&format!(" {phrase} "))
            .then(|| crate::timeline::named_range(named, today).ok())
            .flatten()
    })
}

/// The people of the entity index whose name (or first name, when only one person has
/// it) the question contains.
fn people_named(levh: &Levh, scope: &Scope, question: &str) -> Result<BTreeSet<String>> {
    let people = crate::entities::people(
        levh,
        scope,
        EntityListArgs {
            limit: Some(1000),
            ..EntityListArgs::default()
        },
    )?;
    let words: HashSet<String> = question
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let mut first_names: HashMap<String, Vec<String>> = HashMap::new();
    let mut named = BTreeSet::new();
    for person in &people.people {
        let name = person.person.name.clone();
        let lower = name.to_lowercase();
        let parts: Vec<&str> = lower.split_whitespace().collect();
        if parts.len() > 1 && parts.iter().all(|p| words.contains(*p)) {
            named.insert(name.clone());
        }
        if let Some(first) = parts.first() {
            first_names
                .entry((*first).to_owned())
                .or_default()
                .push(name);
        }
    }
    for (first, names) in first_names {
        if names.len() == 1 && first.chars().count() >= 3 && words.contains(&first) {
            named.insert(names[0].clone());
        }
    }
    Ok(named)
}

fn mentions_any(memory: &Memory, names: &BTreeSet<String>) -> bool {
    let people = crate::knowledge::people(memory);
    names
        .iter()
        .any(|name| people.iter().any(|p| p == name) || memory.content.contains(name.as_str()))
}

/// The question's words that carry meaning: lower-cased, three letters or more, no
/// question words or glue.
fn terms(question: &str) -> Vec<String> {
    const GLUE: &[&str] = &[
        "the", "and", "what", "when", "who", "whom", "which", "where", "why", "how", "did", "does",
        "was", "were", "are", "is", "for", "with", "about", "from", "that", "this", "have", "has",
        "had", "will", "would", "can", "could", "our", "your", "you", "they", "she", "him", "her",
        "his", "its", "any", "last", "week", "day", "der", "die", "das", "und", "wer", "wie",
        "was", "wann", "ist", "ne", "bir", "ile", "için", "mı", "mi", "zaman", "kim", "hangi",
        "nedir",
    ];
    question
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !GLUE.contains(w))
        .map(str::to_owned)
        .collect()
}

/// How many of `terms` a sentence holds (a word counts when it shares its first five
/// letters with a term: "shipping" finds "ship", "raporu" finds "rapor").
fn overlap(sentence: &str, terms: &[String]) -> usize {
    let words: Vec<String> = sentence
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let stem = |w: &str| w.chars().take(5).collect::<String>();
    terms
        .iter()
        .filter(|t| {
            let t = stem(t);
            words.iter().any(|w| {
                let w = stem(w);
                w.starts_with(&t) || t.starts_with(&w) && w.chars().count() >= 4
            })
        })
        .count()
}

fn citation(memory: &Memory, terms: &[String], zone: &TimeZone) -> CitationView {
    let sentences = levh_knowledge::sentences(&memory.content);
    // Most question words first; then a sentence over a header line (`To: …`), then the
    // longer (a subject line says less than the sentence of the body that repeats it).
    let best = sentences
        .iter()
        .map(|s| s.text.trim())
        .filter(|s| !s.is_empty())
        .enumerate()
        .max_by_key(|(i, s)| {
            (
                overlap(s, terms),
                !is_header(s),
                s.chars().count().min(200),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(_, s)| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    CitationView {
        memory_id: memory.id.to_string(),
        at: memory.valid_from.to_string(),
        day: memory.valid_from.to_zoned(zone.clone()).date().to_string(),
        source: memory.source.clone(),
        kind: memory.kind.to_string(),
        people: crate::knowledge::people(memory),
        sentence: best,
    }
}

/// A header line of a mail or an event (`To: …`, `Attendees: …`).
fn is_header(line: &str) -> bool {
    const HEADERS: &[&str] = &[
        "to",
        "cc",
        "bcc",
        "from",
        "subject",
        "date",
        "attendees",
        "organizer",
        "who",
        "status",
        "kime",
        "von",
        "an",
    ];
    line.split_once(':')
        .is_some_and(|(key, _)| HEADERS.contains(&key.trim().to_lowercase().as_str()))
}

/// The evidence by person: the first person the question names that a memory has, else
/// its first recorded person, else none; groups in the order of their best memory, each
/// oldest first.
fn grouped(evidence: &[(&Memory, CitationView)], named: &BTreeSet<String>) -> Vec<AnswerGroupView> {
    let mut groups: Vec<AnswerGroupView> = Vec::new();
    for (memory, citation) in evidence {
        let entity = named
            .iter()
            .find(|n| citation.people.contains(n) || memory.content.contains(n.as_str()))
            .cloned()
            .or_else(|| citation.people.first().cloned());
        match groups.iter_mut().find(|g| g.entity == entity) {
            Some(group) => group.citations.push(citation.clone()),
            None => groups.push(AnswerGroupView {
                entity,
                citations: vec![citation.clone()],
            }),
        }
    }
    for group in &mut groups {
        group.citations.sort_by(|a, b| a.at.cmp(&b.at));
    }
    groups
}

fn deterministic_text(groups: &[AnswerGroupView]) -> String {
    let count: usize = groups.iter().map(|g| g.citations.len()).sum();
    if count == 0 {
        return "No memory answers this.".into();
    }
    let mut out = format!(
        "From {count} {}:",
        if count == 1 { "memory" } else { "memories" }
    );
    for group in groups {
        out.push_str(&format!(
            "\n\n{}",
            group.entity.as_deref().unwrap_or("Other memories")
        ));
        for c in &group.citations {
            out.push_str(&format!(
                "\n- {} ({}, {}): {} [{}]",
                c.day, c.kind, c.source, c.sentence, c.memory_id
            ));
        }
    }
    out
}

/// The model's answer from the evidence, with the ids it cited that are evidence (in the
/// order cited) and those that are not (removed from the text).
fn written_by(
    model: &dyn AnswerModel,
    question: &str,
    evidence: &[(&Memory, CitationView)],
) -> std::result::Result<(String, Vec<String>, Vec<String>), String> {
    const SYSTEM: &str = "You answer questions from a person's memory store. Use only the \
        memories given, never outside knowledge. Cite every memory you use as [id], with the \
        id exactly as given. If the memories do not answer the question, say so briefly. \
        Answer in the language of the question, in a few sentences.";
    let mut user = format!("Question: {question}\n\nMemories:\n");
    for (memory, c) in evidence {
        // Stored content is redacted at admission; redact again for what leaves levh.
        let content = levh_core::gate::secrets::redact(&memory.content).0;
        user.push_str(&format!(
            "\n[{}] {} · {} · {}{}\n{}\n",
            c.memory_id,
            c.day,
            c.kind,
            c.source,
            if c.people.is_empty() {
                String::new()
            } else {
                format!(" · {}", c.people.join(", "))
            },
            content.trim()
        ));
    }
    let reply = model.complete(SYSTEM, &user)?;
    let known: HashSet<String> = evidence.iter().map(|(m, _)| m.id.to_string()).collect();
    let (mut cited, mut dropped) = (Vec::new(), Vec::new());
    let mut answer = String::with_capacity(reply.len());
    let mut rest = reply.as_str();
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let inside = rest[open + 1..close].trim();
        answer.push_str(&rest[..open]);
        if inside.parse::<levh_core::MemoryId>().is_ok() {
            if known.contains(inside) {
                if !cited.iter().any(|c| c == inside) {
                    cited.push(inside.to_owned());
                }
                answer.push_str(&rest[open..=close]);
            } else if !dropped.iter().any(|d| d == inside) {
                dropped.push(inside.to_owned());
            }
        } else {
            answer.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    answer.push_str(rest);
    let answer = answer.replace(" .", ".").replace("  ", " ");
    Ok((answer.trim().to_owned(), cited, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_words_choose_days_in_three_languages() {
        let today: jiff::civil::Date = "2026-10-29".parse().unwrap();
        let range = |q: &str| time_range(q, today).map(|(a, b)| (a.to_string(), b.to_string()));
        let last_week = Some(("2026-10-19".to_owned(), "2026-10-25".to_owned()));
        assert_eq!(range("What did Priya send last week?"), last_week);
        assert_eq!(range("Was hat Priya letzte Woche geschickt?"), last_week);
        assert_eq!(range("Ayşe geçen hafta ne gönderdi?"), last_week);
        assert_eq!(
            range("what happened yesterday"),
            Some(("2026-10-28".to_owned(), "2026-10-28".to_owned()))
        );
        assert_eq!(range("When is the firmware shipping?"), None);
        assert_eq!(
            range("Is the weekday standup today-ish"),
            Some(("2026-10-29".into(), "2026-10-29".into()))
        );
    }

    #[test]
    fn the_best_sentence_shares_the_most_question_words() {
        let terms = terms("When is the gripper firmware shipping?");
        assert!(terms.contains(&"gripper".to_owned()) && !terms.contains(&"when".to_owned()));
        assert!(
            overlap(
                "We decided to ship the gripper firmware on November 3.",
                &terms
            ) > overlap("Hi Deniz, thanks for the budget.", &terms)
        );
    }
}
