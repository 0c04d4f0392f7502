//! Obsidian notes: front matter, tags, wikilinks.
//!
//! Front matter is read as the flat `key: value` and `key: [a, b]` / `- item` lists that
//! Obsidian writes; nested YAML is kept as text. (The maintained YAML crates either pull
//! in a large dependency tree for the component or are deprecated; notes rarely need more.)

use std::path::Path;

use serde_json::{Map, Value, json};

/// One parsed note.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The file name without `.md`, or the front matter's `title`.
    pub title: String,
    /// The Markdown body without front matter.
    pub body: String,
    /// Front matter fields.
    pub front_matter: Map<String, Value>,
    /// `#tags` from the body and `tags:` from the front matter, without `#`.
    pub tags: Vec<String>,
    /// `[[Wikilink]]` targets.
    pub links: Vec<String>,
    /// A `date:` from the front matter, as RFC 3339, when it is one.
    pub date: Option<String>,
}

impl Note {
    /// The metadata stored with the memory.
    pub fn metadata(&self) -> Value {
        json!({ "front_matter": self.front_matter, "tags": self.tags, "links": self.links })
    }
}

/// Relative paths of the vault's notes (`.md`), sorted, and how many other files were
/// skipped. `.obsidian/`, `.trash/` and other hidden folders are not entered.
pub fn vault_notes(vault: &Path) -> Result<(Vec<String>, usize), String> {
    if !vault.is_dir() {
        return Err(format!("`vault_path` {} is not a folder", vault.display()));
    }
    fn walk(dir: &Path, vault: &Path, notes: &mut Vec<String>, skipped: &mut usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                walk(&path, vault, notes, skipped);
            } else if name.ends_with(".md") {
                notes.push(
                    path.strip_prefix(vault)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            } else {
                *skipped += 1;
            }
        }
    }
    let (mut notes, mut skipped) = (Vec::new(), 0);
    walk(vault, vault, &mut notes, &mut skipped);
    notes.sort();
    Ok((notes, skipped))
}

fn list_value(text: &str) -> Value {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Value::Array(
            inner
                .split(',')
                .map(|s| Value::String(unquote(s)))
                .filter(|v| v != "")
                .collect(),
        );
    }
    Value::String(unquote(text))
}

fn unquote(text: &str) -> String {
    text.trim().trim_matches('"').trim_matches('\'').to_owned()
}

/// Parses one note. Errors (not UTF-8, unclosed front matter) name the problem.
pub fn parse(relative: &str, bytes: &[u8]) -> Result<Note, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    let text = text.trim_start_matches('\u{feff}');
    let mut front_matter = Map::new();
    let mut body = text;
    if let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    {
        let end = rest
            .find("\n---")
            .ok_or("front matter starts with --- but never ends")?;
        let yaml = &rest[..end];
        body = rest[end + 4..].trim_start_matches(['-', '\r', '\n']);
        let mut current_list: Option<String> = None;
        for line in yaml.lines() {
            if let Some(item) = line.trim_start().strip_prefix("- ")
                && let Some(key) = &current_list
            {
                if let Some(Value::Array(items)) = front_matter.get_mut(key) {
                    items.push(Value::String(unquote(item)));
                }
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_owned();
            if value.trim().is_empty() {
                front_matter.insert(key.clone(), Value::Array(Vec::new()));
                current_list = Some(key);
            } else {
                front_matter.insert(key, list_value(value));
                current_list = None;
            }
        }
    }
    let stem = relative
        .rsplit('/')
        .next()
        .unwrap_or(relative)
        .trim_end_matches(".md")
        .to_owned();
    let title = front_matter
        .get("title")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or(stem);

    let mut tags: Vec<String> = match front_matter.get("tags") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|t| t.trim_start_matches('#').to_owned())
            .collect(),
        Some(Value::String(one)) => one
            .split([',', ' '])
            .filter(|t| !t.is_empty())
            .map(|t| t.trim_start_matches('#').to_owned())
            .collect(),
        _ => Vec::new(),
    };
    for word in body.split(|c: char| c.is_whitespace() || c == ',' || c == '.' || c == ';') {
        if let Some(tag) = word.strip_prefix('#')
            && tag.chars().next().is_some_and(|c| c.is_alphabetic())
            && tag
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
            && !tags.iter().any(|t| t == tag)
        {
            tags.push(tag.to_owned());
        }
    }
    let mut links = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("[[") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("]]") else { break };
        let target = after[..end]
            .split(['|', '#'])
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        if !target.is_empty() && !links.contains(&target) {
            links.push(target);
        }
        rest = &after[end + 2..];
    }
    let date = front_matter
        .get("date")
        .and_then(Value::as_str)
        .and_then(|d| {
            let d = d.trim();
            let valid = d.len() >= 10
                && d.as_bytes()[4] == b'-'
                && d.as_bytes()[7] == b'-'
                && d[..4].chars().all(|c| c.is_ascii_digit());
            valid.then(|| {
                if d.len() == 10 {
                    format!("{d}T00:00:00Z")
                } else {
                    d.to_owned()
                }
            })
        });
    Ok(Note {
        title,
        body: body.to_owned(),
        front_matter,
        tags,
        links,
        date,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_tags_and_links() {
        let text = "---\ntitle: Atlas launch\ndate: 2026-03-02\ntags: [project, launch]\naliases:\n  - atlas\n---\n# Plan\nShip with [[Ada Lovelace|Ada]] and [[Runbook#Rollback]]. #release #q1/plan\n";
        let note = parse("projects/atlas.md", text.as_bytes()).unwrap();
        assert_eq!(note.title, "Atlas launch");
        assert_eq!(note.tags, ["project", "launch", "release", "q1/plan"]);
        assert_eq!(note.links, ["Ada Lovelace", "Runbook"]);
        assert_eq!(note.date.as_deref(), Some("2026-03-02T00:00:00Z"));
        assert_eq!(note.front_matter["aliases"], json!(["atlas"]));
        assert!(note.body.starts_with("# Plan"));
    }

    #[test]
    fn plain_notes_and_bad_ones() {
        let note = parse("inbox/idea.md", b"Just an idea about #caching").unwrap();
        assert_eq!(note.title, "idea");
        assert_eq!(note.tags, ["caching"]);
        assert!(
            parse("x.md", b"---\ntitle: never closed\n")
                .unwrap_err()
                .contains("never ends")
        );
        assert!(
            parse("y.md", &[0xff, 0xfe])
                .unwrap_err()
                .contains("not UTF-8")
        );
        assert!(
            parse("z.md", b"# 1 heading, not a tag")
                .unwrap()
                .tags
                .is_empty()
        );
    }

    #[test]
    fn the_vault_walk_skips_settings_and_attachments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".obsidian")).unwrap();
        std::fs::write(dir.path().join(".obsidian/app.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.path().join("daily")).unwrap();
        std::fs::write(dir.path().join("daily/2026-03-02.md"), "standup notes").unwrap();
        std::fs::write(dir.path().join("home.md"), "welcome").unwrap();
        std::fs::write(dir.path().join("diagram.png"), [0u8; 4]).unwrap();
        let (notes, skipped) = vault_notes(dir.path()).unwrap();
        assert_eq!(notes, ["daily/2026-03-02.md", "home.md"]);
        assert_eq!(skipped, 1);
    }
}
