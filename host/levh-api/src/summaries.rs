//! Summaries of what happened in a session, as one memory: deterministic and extractive —
//! what was asked first, what was decided and what was promised (levh-knowledge's
//! detectors, as `levh decisions` and `levh commitments` read them).

use std::io::BufRead;

use serde_json::Value;

/// A transcript line longer than this is skipped (a pasted file, a tool's output).
const MAX_LINE: usize = 256 * 1024;
/// Decisions and promises a summary names, at most.
const MAX_FOUND: usize = 12;

/// What a summary names: the decisions and promises its texts state, each once, in order.
#[derive(Default)]
struct Found {
    decided: Vec<String>,
    promised: Vec<String>,
}

impl Found {
    /// Reads one text's decisions and promises (up to [`MAX_FOUND`] of each).
    fn read(&mut self, text: &str, today: jiff::civil::Date) {
        for sentence in levh_knowledge::decisions::decisions(text) {
            if self.decided.len() < MAX_FOUND && !self.decided.contains(&sentence) {
                self.decided.push(sentence);
            }
        }
        for found in levh_knowledge::commitments::commitments(text, today) {
            if self.promised.len() < MAX_FOUND && !self.promised.contains(&found.sentence) {
                self.promised.push(found.sentence);
            }
        }
    }

    /// `Decided:` and `Promised:` lists, one sentence a line (those with any).
    fn write_to(&self, text: &mut String) {
        for (title, found) in [("Decided", &self.decided), ("Promised", &self.promised)] {
            if !found.is_empty() {
                text.push_str(&format!("\n{title}:"));
                for sentence in found {
                    text.push_str(&format!("\n- {}", one_line(sentence)));
                }
            }
        }
    }
}

/// A text's words on one line, single-spaced.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text a transcript line carries: a user's or the assistant's words (tool calls and
/// their results left out).
fn said(line: &Value) -> Option<(bool, String)> {
    let user = match line["type"].as_str()? {
        "user" => true,
        "assistant" => false,
        _ => return None,
    };
    let content = &line["message"]["content"];
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some((user, text))
}

/// One summary of a Claude Code transcript (its JSON Lines: `user` and `assistant` lines,
/// tool calls and results left out, lines that are not JSON skipped): the first request,
/// what was decided and promised. None when nobody asked anything yet.
pub fn transcript(
    transcript: impl BufRead,
    session: &str,
    project: Option<&str>,
    today: jiff::civil::Date,
) -> Option<String> {
    let mut first: Option<String> = None;
    let mut found = Found::default();
    let mut turns = 0usize;
    for line in transcript.lines().map_while(std::result::Result::ok) {
        if line.len() > MAX_LINE {
            continue;
        }
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some((user, text)) = said(&value) else {
            continue;
        };
        turns += 1;
        if user && first.is_none() && !text.trim_start().starts_with('<') {
            first = Some(one_line(&text).chars().take(300).collect());
        }
        found.read(&text, today);
    }
    let first = first?;
    let mut text = format!(
        "Claude Code session {}{} ({turns} turns), summarised before compaction.\nAsked: {first}",
        session.chars().take(8).collect::<String>(),
        project.map(|p| format!(" in {p}")).unwrap_or_default()
    );
    found.write_to(&mut text);
    Some(text)
}

/// Memories a session summary reads, at most (the oldest first).
pub const SESSION_MEMORIES: usize = 500;
/// Stored memories a session summary lists by their first line, at most.
const LISTED: usize = 10;

/// One summary of a session: how many memories it stored, what they decided and promised,
/// and the first lines of the first of them. None when it stored nothing.
pub fn session(
    session: &levh_core::Session,
    memories: &[levh_core::Memory],
    today: jiff::civil::Date,
) -> Option<String> {
    if memories.is_empty() {
        return None;
    }
    let mut found = Found::default();
    for memory in memories {
        found.read(&memory.content, today);
    }
    let mut text = format!(
        "Session {}{}{}: {} {} stored.",
        session.id.as_str().chars().take(8).collect::<String>(),
        session
            .client
            .as_deref()
            .map(|c| format!(" of {c}"))
            .unwrap_or_default(),
        session
            .project
            .as_deref()
            .map(|p| format!(" in {p}"))
            .unwrap_or_default(),
        memories.len(),
        if memories.len() == 1 {
            "memory"
        } else {
            "memories"
        }
    );
    found.write_to(&mut text);
    text.push_str("\nStored:");
    for memory in memories.iter().take(LISTED) {
        let line: String = one_line(memory.content.lines().next().unwrap_or_default())
            .chars()
            .take(160)
            .collect();
        text.push_str(&format!("\n- {line}"));
    }
    if memories.len() > LISTED {
        text.push_str(&format!("\n- … and {} more", memories.len() - LISTED));
    }
    Some(text)
}
