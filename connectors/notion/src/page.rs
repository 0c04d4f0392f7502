//! A Notion page (a database row) to a levh item: its title, its properties as
//! `Name: value` lines, its block text, the people on it and simplified metadata.

use levh_connector_sdk::{Item, Person};
use serde_json::{Map, Value, json};

use crate::blocks::rich_text;

/// A database page, checked: what an item needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NotionPage {
    pub id: String,
    pub url: Option<String>,
    pub created_time: Option<String>,
    pub last_edited_time: String,
    /// The title property's plain text (may be empty).
    pub title: String,
    /// Name of the title property.
    pub title_property: Option<String>,
    /// Properties as Notion sent them.
    pub properties: Map<String, Value>,
    pub created_by: Option<Value>,
    pub last_edited_by: Option<Value>,
}

/// The page id of a query result, when it has one (for error reports).
pub fn page_id(value: &Value) -> Option<&str> {
    value
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.trim().is_empty())
}

/// The `last_edited_time` of a query result, when it has one.
pub fn edited(value: &Value) -> Option<&str> {
    value.get("last_edited_time").and_then(Value::as_str)
}

/// Why a query result is a page no longer in its database: archived or in the trash.
pub fn gone(value: &Value) -> Option<&'static str> {
    let flag = |key: &str| value.get(key).and_then(Value::as_bool) == Some(true);
    if flag("in_trash") {
        Some("moved to the trash in Notion")
    } else if flag("archived") {
        Some("archived in Notion")
    } else {
        None
    }
}

/// Checks a query result. A result without an id, properties or an edit time is not a
/// page this connector can store; the error says what is missing.
pub fn parse(value: &Value) -> Result<NotionPage, String> {
    if !value.is_object() {
        return Err("a query result that is not an object".into());
    }
    let id = page_id(value).ok_or("a page without an id")?;
    if let Some(object) = value.get("object").and_then(Value::as_str)
        && object != "page"
    {
        return Err(format!("a {object:?} object where a page was expected"));
    }
    let last_edited_time = edited(value).ok_or("the page has no last_edited_time")?;
    if !looks_like_rfc3339(last_edited_time) {
        return Err(format!(
            "last_edited_time {last_edited_time:?} is not an RFC 3339 time"
        ));
    }
    let properties = value
        .get("properties")
        .and_then(Value::as_object)
        .ok_or("the page has no properties object")?
        .clone();
    let title_property = properties
        .iter()
        .find(|(_, p)| p.get("type").and_then(Value::as_str) == Some("title"))
        .map(|(name, _)| name.clone());
    let title = title_property
        .as_ref()
        .and_then(|name| properties.get(name))
        .map(|p| {
            rich_text(p.get("title").unwrap_or(&Value::Null))
                .trim()
                .to_owned()
        })
        .unwrap_or_default();
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(NotionPage {
        id: id.to_owned(),
        url: text("url"),
        created_time: text("created_time"),
        last_edited_time: last_edited_time.to_owned(),
        title,
        title_property,
        properties,
        created_by: value.get("created_by").cloned(),
        last_edited_by: value.get("last_edited_by").cloned(),
    })
}

/// `YYYY-MM-DDTHH:MM...` with a zone: enough to catch a field that is not a time at all
/// (the host parses it properly).
fn looks_like_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 20
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10].eq_ignore_ascii_case(&b'T')
        && b[13] == b':'
        && (text.ends_with('Z') || text.ends_with('z') || text[19..].contains(['+', '-']))
}

/// A user object's display name (or email), if it carries one: query results often hold
/// only `{"object": "user", "id": ...}`.
fn user_name(user: &Value) -> (Option<String>, Option<String>) {
    let name = user
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    let email = user
        .pointer("/person/email")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned);
    (name, email)
}

/// The type of a property value.
fn property_type(property: &Value) -> &str {
    property.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Formats a number the way a person writes it (`3`, not `3.0`).
fn number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

fn date(value: &Value) -> Option<String> {
    let start = value.get("start").and_then(Value::as_str)?;
    Some(match value.get("end").and_then(Value::as_str) {
        Some(end) => format!("{start} → {end}"),
        None => start.to_owned(),
    })
}

fn names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn people_names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|users| {
            users
                .iter()
                .filter_map(|u| {
                    let (name, email) = user_name(u);
                    name.or(email)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A property's value as text for the content (`None` when empty or unsupported).
pub fn property_text(property: &Value) -> Option<String> {
    let kind = property_type(property);
    let value = property.get(kind)?;
    let text = match kind {
        "title" | "rich_text" => rich_text(value).trim().to_owned(),
        "select" | "status" => value.get("name").and_then(Value::as_str)?.to_owned(),
        "multi_select" => names(Some(value)).join(", "),
        "date" => date(value)?,
        "people" => people_names(Some(value)).join(", "),
        "checkbox" => match value.as_bool()? {
            true => "Yes".into(),
            false => "No".into(),
        },
        "number" => number(value.as_number()?),
        "url" | "email" | "phone_number" => value.as_str()?.trim().to_owned(),
        "formula" => match property_value(property)? {
            Value::String(s) => s,
            Value::Bool(b) => if b { "Yes" } else { "No" }.to_owned(),
            Value::Number(n) => number(&n),
            Value::Object(o) => date(&Value::Object(o))?,
            _ => return None,
        },
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// A property's value, simplified for the metadata (`None` when unsupported).
pub fn property_value(property: &Value) -> Option<Value> {
    let kind = property_type(property);
    let value = property.get(kind)?;
    Some(match kind {
        "title" | "rich_text" => Value::String(rich_text(value).trim().to_owned()),
        "select" | "status" => value.get("name").cloned().unwrap_or(Value::Null),
        "multi_select" => json!(names(Some(value))),
        "date" => match value.get("start") {
            Some(start) if !start.is_null() => json!({
                "start": start,
                "end": value.get("end").cloned().unwrap_or(Value::Null),
            }),
            _ => Value::Null,
        },
        "people" => json!(people_names(Some(value))),
        "checkbox" => Value::Bool(value.as_bool()?),
        "number" | "url" | "email" | "phone_number" => value.clone(),
        "formula" => {
            let inner = property_type(value);
            match value.get(inner)? {
                Value::Object(date) => json!({
                    "start": date.get("start").cloned().unwrap_or(Value::Null),
                    "end": date.get("end").cloned().unwrap_or(Value::Null),
                }),
                other => other.clone(),
            }
        }
        _ => return None,
    })
}

/// The people on a page: its creator and last editor when their names are known, and
/// every user of a `people` property (role: the property's name, lowercase).
pub fn people(page: &NotionPage) -> Vec<Person> {
    let mut people: Vec<Person> = Vec::new();
    let mut add = |user: &Value, role: &str, need_name: bool| {
        let (name, email) = user_name(user);
        if name.is_none() && (need_name || email.is_none()) {
            return;
        }
        let person = Person {
            name,
            email,
            role: role.to_owned(),
        };
        let same =
            |p: &Person| p.name == person.name && p.email == person.email && p.role == person.role;
        if !people.iter().any(same) {
            people.push(person);
        }
    };
    if let Some(user) = &page.created_by {
        add(user, "author", true);
    }
    if let Some(user) = &page.last_edited_by {
        add(user, "editor", true);
    }
    for (name, property) in sorted(&page.properties) {
        if property_type(property) != "people" {
            continue;
        }
        let role = name.trim().to_lowercase();
        let role = if role.is_empty() {
            "assignee".to_owned()
        } else {
            role
        };
        for user in property
            .get("people")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            add(user, &role, false);
        }
    }
    people
}

/// Properties in name order, whatever order the map keeps (stable content, stable hash).
fn sorted(properties: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut all: Vec<(&String, &Value)> = properties.iter().collect();
    all.sort_by(|a, b| a.0.cmp(b.0));
    all
}

/// The item for a page: `body` is its block text.
pub fn item(page: &NotionPage, database_id: &str, body: &str) -> Item {
    let title = if page.title.is_empty() {
        "Untitled".to_owned()
    } else {
        page.title.clone()
    };
    let mut content = title.clone();
    let mut simplified = Map::new();
    for (name, property) in sorted(&page.properties) {
        if let Some(value) = property_value(property) {
            simplified.insert(name.clone(), value);
        }
        if Some(name) == page.title_property.as_ref() {
            continue;
        }
        if let Some(text) = property_text(property) {
            content.push('\n');
            content.push_str(&format!("{name}: {text}"));
        }
    }
    let body = body.trim();
    if !body.is_empty() {
        content.push_str("\n\n");
        content.push_str(body);
    }
    let metadata = json!({
        "database_id": database_id,
        "properties": simplified,
        "created_time": page.created_time,
        "last_edited_time": page.last_edited_time,
    });
    Item {
        source_id: page.id.clone(),
        title,
        content,
        kind: "document".into(),
        occurred_at: Some(page.last_edited_time.clone()),
        people: people(page),
        source_uri: page.url.clone(),
        metadata: metadata.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(s: &str) -> Value {
        json!([{ "type": "text", "text": { "content": s, "link": null }, "plain_text": s, "href": null }])
    }

    /// A database page in the shape `POST /v1/databases/{id}/query` returns it.
    fn recorded_page() -> Value {
        json!({
            "object": "page",
            "id": "59833787-2cf9-4fdf-8782-e53db20768a5",
            "created_time": "2026-03-01T09:00:00.000Z",
            "last_edited_time": "2026-03-02T10:15:00.000Z",
            "created_by": { "object": "user", "id": "ee5f0f84-409a-440f-983a-a5315961c6e4" },
            "last_edited_by": { "object": "user", "id": "0c3e9826-b8f7-4f73-927d-2caaf86f1103",
                                "name": "Grace Hopper", "type": "person",
                                "person": { "email": "grace@example.com" } },
            "cover": null,
            "icon": { "type": "emoji", "emoji": "🚀" },
            "parent": { "type": "database_id", "database_id": "d9824bdc-8445-4327-be8b-5b47500af6ce" },
            "archived": false,
            "in_trash": false,
            "properties": {
                "Name": { "id": "title", "type": "title", "title": text("Atlas launch plan") },
                "Notes": { "id": "a%3Ab", "type": "rich_text", "rich_text": text("Ship behind a flag") },
                "Stage": { "id": "s1", "type": "select", "select": { "id": "1", "name": "Beta", "color": "blue" } },
                "Tags": { "id": "t1", "type": "multi_select", "multi_select": [
                    { "id": "a", "name": "launch", "color": "red" },
                    { "id": "b", "name": "q2", "color": "gray" } ] },
                "Status": { "id": "st", "type": "status", "status": { "id": "x", "name": "In progress", "color": "blue" } },
                "Due": { "id": "d", "type": "date", "date": { "start": "2026-03-20", "end": null, "time_zone": null } },
                "Window": { "id": "w", "type": "date", "date": { "start": "2026-03-20", "end": "2026-03-22", "time_zone": null } },
                "Assignee": { "id": "p", "type": "people", "people": [
                    { "object": "user", "id": "u1", "name": "Ada Lovelace", "avatar_url": null,
                      "type": "person", "person": { "email": "ada@example.com" } },
                    { "object": "user", "id": "u2" } ] },
                "Done": { "id": "c", "type": "checkbox", "checkbox": false },
                "Budget": { "id": "n", "type": "number", "number": 1500 },
                "Ratio": { "id": "r", "type": "number", "number": 0.25 },
                "Spec": { "id": "u", "type": "url", "url": "https://example.com/spec" },
                "Contact": { "id": "e", "type": "email", "email": "team@example.com" },
                "Empty": { "id": "x", "type": "rich_text", "rich_text": [] },
                "Nothing": { "id": "y", "type": "select", "select": null },
                "Related": { "id": "z", "type": "relation", "relation": [{ "id": "abc" }], "has_more": false }
            },
            "url": "https://www.notion.so/Atlas-launch-plan-598337872cf94fdf8782e53db20768a5",
            "public_url": null
        })
    }

    #[test]
    fn a_recorded_page_becomes_one_document_item() {
        let page = parse(&recorded_page()).unwrap();
        let item = item(&page, "db-1", "## Plan\n- docs");
        assert_eq!(item.source_id, "59833787-2cf9-4fdf-8782-e53db20768a5");
        assert_eq!(item.title, "Atlas launch plan");
        assert_eq!(item.kind, "document");
        assert_eq!(
            item.occurred_at.as_deref(),
            Some("2026-03-02T10:15:00.000Z")
        );
        assert_eq!(
            item.source_uri.as_deref(),
            Some("https://www.notion.so/Atlas-launch-plan-598337872cf94fdf8782e53db20768a5")
        );
        assert_eq!(
            item.content,
            "Atlas launch plan\n\
             Assignee: Ada Lovelace\n\
             Budget: 1500\n\
             Contact: team@example.com\n\
             Done: No\n\
             Due: 2026-03-20\n\
             Notes: Ship behind a flag\n\
             Ratio: 0.25\n\
             Spec: https://example.com/spec\n\
             Stage: Beta\n\
             Status: In progress\n\
             Tags: launch, q2\n\
             Window: 2026-03-20 → 2026-03-22\n\
             \n\
             ## Plan\n- docs"
        );
        let people: Vec<(Option<&str>, Option<&str>, &str)> = item
            .people
            .iter()
            .map(|p| (p.name.as_deref(), p.email.as_deref(), p.role.as_str()))
            .collect();
        assert_eq!(
            people,
            vec![
                (Some("Grace Hopper"), Some("grace@example.com"), "editor"),
                (Some("Ada Lovelace"), Some("ada@example.com"), "assignee"),
            ],
            "the creator carries no name and is left out"
        );
        let metadata: Value = serde_json::from_str(&item.metadata).unwrap();
        assert_eq!(metadata["database_id"], "db-1");
        assert_eq!(metadata["created_time"], "2026-03-01T09:00:00.000Z");
        assert_eq!(metadata["last_edited_time"], "2026-03-02T10:15:00.000Z");
        let properties = &metadata["properties"];
        assert_eq!(properties["Name"], "Atlas launch plan");
        assert_eq!(properties["Tags"], json!(["launch", "q2"]));
        assert_eq!(
            properties["Due"],
            json!({ "start": "2026-03-20", "end": null })
        );
        assert_eq!(properties["Assignee"], json!(["Ada Lovelace"]));
        assert_eq!(properties["Done"], false);
        assert_eq!(properties["Budget"], 1500);
        assert_eq!(properties["Nothing"], Value::Null);
        assert!(properties.get("Related").is_none(), "{properties}");
    }

    #[test]
    fn an_untitled_page_without_blocks_still_reads() {
        let mut value = recorded_page();
        value["properties"] = json!({ "Name": { "id": "title", "type": "title", "title": [] } });
        let page = parse(&value).unwrap();
        let item = item(&page, "db", "");
        assert_eq!(
            (item.title.as_str(), item.content.as_str()),
            ("Untitled", "Untitled")
        );
    }

    #[test]
    fn formulas_and_phone_numbers_render() {
        let f = |inner: Value| json!({ "type": "formula", "formula": inner });
        assert_eq!(
            property_text(&f(json!({ "type": "string", "string": "ok" }))).as_deref(),
            Some("ok")
        );
        assert_eq!(
            property_text(&f(json!({ "type": "number", "number": 3.0 }))).as_deref(),
            Some("3")
        );
        assert_eq!(
            property_text(&f(json!({ "type": "boolean", "boolean": true }))).as_deref(),
            Some("Yes")
        );
        assert_eq!(
            property_text(&f(
                json!({ "type": "date", "date": { "start": "2026-01-02", "end": null } })
            ))
            .as_deref(),
            Some("2026-01-02")
        );
        assert_eq!(
            property_text(&json!({ "type": "phone_number", "phone_number": "+1 555" })).as_deref(),
            Some("+1 555")
        );
        assert_eq!(
            property_text(&json!({ "type": "number", "number": null })),
            None
        );
        assert_eq!(
            property_text(&json!({ "type": "rollup", "rollup": {} })),
            None
        );
        assert_eq!(property_text(&json!({})), None);
    }

    #[test]
    fn malformed_pages_are_errors_not_panics() {
        let cases = [
            (json!("page"), "not an object"),
            (json!({ "object": "page" }), "without an id"),
            (
                json!({ "object": "page", "id": "p1", "properties": {} }),
                "no last_edited_time",
            ),
            (
                json!({ "object": "page", "id": "p1", "last_edited_time": "yesterday", "properties": {} }),
                "not an RFC 3339 time",
            ),
            (
                json!({ "object": "page", "id": "p1", "last_edited_time": "2026-03-02T10:15:00.000Z", "properties": [] }),
                "no properties object",
            ),
            (
                json!({ "object": "database", "id": "p1", "last_edited_time": "2026-03-02T10:15:00.000Z", "properties": {} }),
                "\"database\" object",
            ),
        ];
        for (value, words) in cases {
            let error = parse(&value).unwrap_err();
            assert!(error.contains(words), "{value}: {error}");
        }
        // Odd property values are skipped, never a panic.
        let mut value = recorded_page();
        value["properties"]["Odd"] = json!({ "type": "select", "select": 3 });
        value["properties"]["Odder"] = json!({ "type": "people", "people": "nobody" });
        value["properties"]["Oddest"] = json!(null);
        value["created_by"] = json!("someone");
        let page = parse(&value).unwrap();
        let item = item(&page, "db", "");
        assert!(item.content.starts_with("Atlas launch plan\n"));
        assert!(!item.content.contains("Odd"), "{}", item.content);
    }
}
