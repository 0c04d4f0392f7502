//! Notion blocks to plain text: paragraphs, headings, list items, to-dos, quotes, code,
//! callouts, toggles and table rows, each one line (or a few, for code) of their rich
//! text. Other block types (images, embeds, child pages, ...) are skipped.

use serde_json::Value;

/// The plain text of a rich-text array (`[{"plain_text": ...}, ...]`).
pub fn rich_text(value: &Value) -> String {
    value
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| {
                    part.get("plain_text")
                        .and_then(Value::as_str)
                        .or_else(|| part.pointer("/text/content").and_then(Value::as_str))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A block's type name (`paragraph`, `to_do`, ...).
pub fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Whether the children of a block of this type are worth reading: its nested content,
/// not a separate page or database.
pub fn descends(block: &Value) -> bool {
    block.get("has_children").and_then(Value::as_bool) == Some(true)
        && matches!(
            kind(block),
            "paragraph"
                | "heading_1"
                | "heading_2"
                | "heading_3"
                | "bulleted_list_item"
                | "numbered_list_item"
                | "to_do"
                | "quote"
                | "callout"
                | "toggle"
                | "column_list"
                | "column"
                | "synced_block"
                | "table"
        )
}

/// One block as text, without indentation; `number` is its position in a run of numbered
/// list items. None for an unsupported or empty block.
pub fn render(block: &Value, number: usize) -> Option<String> {
    let kind = kind(block);
    let body = block.get(kind)?;
    let text = rich_text(body.get("rich_text").unwrap_or(&Value::Null));
    match kind {
        "code" => {
            if text.trim().is_empty() {
                return None;
            }
            let language = body
                .get("language")
                .and_then(Value::as_str)
                .filter(|l| *l != "plain text")
                .unwrap_or("");
            return Some(format!("```{language}\n{}\n```", text.trim_end()));
        }
        "table_row" => {
            let cells: Vec<String> = body
                .get("cells")
                .and_then(Value::as_array)
                .map(|cells| {
                    cells
                        .iter()
                        .map(|c| rich_text(c).trim().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            return (!cells.iter().all(String::is_empty)).then(|| cells.join(" | "));
        }
        _ => {}
    }
    if text.trim().is_empty() {
        return None;
    }
    let text = text.trim_end();
    Some(match kind {
        "paragraph" | "toggle" => text.to_owned(),
        "heading_1" => format!("# {text}"),
        "heading_2" => format!("## {text}"),
        "heading_3" => format!("### {text}"),
        "bulleted_list_item" => format!("- {text}"),
        "numbered_list_item" => format!("{number}. {text}"),
        "to_do" => {
            let checked = body.get("checked").and_then(Value::as_bool) == Some(true);
            format!("[{}] {text}", if checked { 'x' } else { ' ' })
        }
        "quote" => format!("> {text}"),
        "callout" => match body.pointer("/icon/emoji").and_then(Value::as_str) {
            Some(emoji) => format!("{emoji} {text}"),
            None => text.to_owned(),
        },
        _ => return None,
    })
}

/// Numbers runs of numbered list items: each block's number (1, 2, ... within a run).
pub fn numbers(blocks: &[Value]) -> Vec<usize> {
    let mut run = 0;
    blocks
        .iter()
        .map(|block| {
            if kind(block) == "numbered_list_item" {
                run += 1;
            } else {
                run = 0;
            }
            run
        })
        .collect()
}

/// Renders a flat list of blocks (no children read), one line each.
pub fn render_all(blocks: &[Value]) -> String {
    let mut out = Vec::new();
    for (block, number) in blocks.iter().zip(numbers(blocks)) {
        if let Some(line) = render(block, number) {
            out.push(line);
        }
    }
    out.join("\n")
}

/// Gives a block's children, all their pages; `Ok(None)` when they cannot be read.
pub type Fetch<'a, E> = dyn FnMut(&str) -> Result<Option<Vec<Value>>, E> + 'a;

/// Reads a block tree: `fetch(id)` gives a block's children (all of their pages); nested
/// content is read up to `max_depth` levels below the page and indented two spaces a
/// level. A child list that fails to load (`fetch` says `Ok(None)`) is skipped.
pub fn walk<E>(
    page_id: &str,
    max_depth: usize,
    fetch: &mut Fetch<'_, E>,
) -> Result<Option<String>, E> {
    let Some(blocks) = fetch(page_id)? else {
        return Ok(None);
    };
    let mut lines = Vec::new();
    descend(&blocks, 0, max_depth, fetch, &mut lines)?;
    Ok(Some(lines.join("\n")))
}

fn descend<E>(
    blocks: &[Value],
    depth: usize,
    max_depth: usize,
    fetch: &mut Fetch<'_, E>,
    lines: &mut Vec<String>,
) -> Result<(), E> {
    let indent = "  ".repeat(depth);
    for (block, number) in blocks.iter().zip(numbers(blocks)) {
        if let Some(text) = render(block, number) {
            for line in text.lines() {
                lines.push(format!("{indent}{line}"));
            }
        }
        if depth < max_depth
            && descends(block)
            && let Some(id) = block.get("id").and_then(Value::as_str)
            && let Some(children) = fetch(id)?
        {
            // Columns and synced blocks only group their children: no extra indent.
            let next = if matches!(kind(block), "column_list" | "column" | "synced_block") {
                depth
            } else {
                depth + 1
            };
            descend(&children, next, max_depth, fetch, lines)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(s: &str) -> Value {
        json!([{
            "type": "text",
            "text": { "content": s, "link": null },
            "annotations": { "bold": false, "italic": false, "strikethrough": false,
                             "underline": false, "code": false, "color": "default" },
            "plain_text": s,
            "href": null
        }])
    }

    fn block(kind: &str, body: Value) -> Value {
        json!({
            "object": "block",
            "id": format!("{kind}-id"),
            "created_time": "2026-03-02T10:00:00.000Z",
            "last_edited_time": "2026-03-02T10:00:00.000Z",
            "has_children": false,
            "archived": false,
            "type": kind,
            kind: body
        })
    }

    fn with_text(kind: &str, s: &str) -> Value {
        block(kind, json!({ "rich_text": text(s), "color": "default" }))
    }

    #[test]
    fn rich_text_joins_plain_text_runs() {
        let runs = json!([
            { "type": "text", "plain_text": "Ship ", "text": { "content": "Ship " } },
            { "type": "mention", "plain_text": "@Ada", "mention": {} },
            { "type": "text", "text": { "content": " today" } }
        ]);
        assert_eq!(rich_text(&runs), "Ship @Ada today");
        assert_eq!(rich_text(&Value::Null), "");
    }

    #[test]
    fn every_supported_block_becomes_a_line() {
        let blocks = vec![
            with_text("heading_1", "Launch"),
            with_text("heading_2", "Scope"),
            with_text("heading_3", "Details"),
            with_text("paragraph", "We ship on Friday."),
            with_text("paragraph", ""),
            with_text("bulleted_list_item", "docs"),
            with_text("numbered_list_item", "build"),
            with_text("numbered_list_item", "test"),
            block(
                "to_do",
                json!({ "rich_text": text("write notes"), "checked": false }),
            ),
            block(
                "to_do",
                json!({ "rich_text": text("book room"), "checked": true }),
            ),
            with_text("quote", "Done is better than perfect."),
            block(
                "code",
                json!({ "rich_text": text("cargo test\n"), "language": "shell", "caption": [] }),
            ),
            block(
                "callout",
                json!({ "rich_text": text("Freeze at noon"), "icon": { "type": "emoji", "emoji": "💡" } }),
            ),
            with_text("toggle", "Open questions"),
            with_text("numbered_list_item", "again"),
            block("divider", json!({})),
            block(
                "image",
                json!({ "type": "external", "external": { "url": "https://x/y.png" } }),
            ),
            block("child_page", json!({ "title": "Sub page" })),
            block("unsupported", json!({})),
            json!({ "object": "block", "type": "paragraph" }),
            json!({ "object": "block" }),
        ];
        assert_eq!(
            render_all(&blocks),
            "# Launch\n## Scope\n### Details\nWe ship on Friday.\n- docs\n1. build\n2. test\n\
             [ ] write notes\n[x] book room\n> Done is better than perfect.\n```shell\ncargo test\n```\n\
             💡 Freeze at noon\nOpen questions\n1. again"
        );
    }

    #[test]
    fn empty_list_items_and_to_dos_are_dropped() {
        let blocks = vec![
            with_text("bulleted_list_item", ""),
            block("to_do", json!({ "rich_text": [], "checked": true })),
            with_text("heading_2", " "),
        ];
        assert_eq!(render_all(&blocks), "");
    }

    #[test]
    fn table_rows_join_their_cells() {
        let row = block(
            "table_row",
            json!({ "cells": [text("Owner"), text("Ada"), []] }),
        );
        assert_eq!(render(&row, 0).as_deref(), Some("Owner | Ada | "));
    }

    #[test]
    fn nested_children_are_read_and_indented_to_a_depth() {
        let mut toggle = with_text("toggle", "Details");
        toggle["has_children"] = json!(true);
        toggle["id"] = json!("toggle-1");
        let mut item = with_text("bulleted_list_item", "inner");
        item["has_children"] = json!(true);
        item["id"] = json!("item-1");
        let mut child_page = block("child_page", json!({ "title": "Sub" }));
        child_page["has_children"] = json!(true);
        let mut asked = Vec::new();
        let mut fetch = |id: &str| -> Result<Option<Vec<Value>>, String> {
            asked.push(id.to_owned());
            Ok(match id {
                "page" => Some(vec![
                    toggle.clone(),
                    child_page.clone(),
                    with_text("paragraph", "after"),
                ]),
                "toggle-1" => Some(vec![item.clone()]),
                "item-1" => Some(vec![with_text("paragraph", "deepest")]),
                _ => None,
            })
        };
        let text = walk("page", 1, &mut fetch).unwrap().unwrap();
        assert_eq!(text, "Details\n  - inner\nafter");
        let text = walk("page", 3, &mut fetch).unwrap().unwrap();
        assert_eq!(text, "Details\n  - inner\n    deepest\nafter");
        assert_eq!(walk("missing", 3, &mut fetch).unwrap(), None);
        assert!(
            !asked.iter().any(|id| id == "child_page-id"),
            "child pages are other items: {asked:?}"
        );
    }
}
