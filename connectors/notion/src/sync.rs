//! One `sync` call: at most one query page of one database, its pages' blocks read, one
//! item per page. The cursor says which database and query page come next, and keeps each
//! database's `last_edited_time` high-water mark for the next run.

use std::time::Duration;

use levh_connector_sdk::{
    Capability, Config, ConfigKey, ConfigType, Error, Item, ItemError, Manifest, Page,
};
use serde_json::{Value, json};

use crate::api::{Client, Failure, Transport, encode};
use crate::cursor::{Cursor, Pass};
use crate::{blocks, page};

/// Where Notion's API lives.
pub const DEFAULT_BASE_URL: &str = "https://api.notion.com";
/// Results per query page and blocks per children page (Notion's maximum).
pub const PAGE_SIZE: u32 = 100;
/// A call stops starting new pages after this long (the host stops a call at 60 s).
pub const TIME_BUDGET: Duration = Duration::from_secs(20);
/// Nested blocks read below a page's top level.
pub const MAX_DEPTH: usize = 3;
/// Children requests per page: a very long page is cut there.
pub const MAX_BLOCK_REQUESTS: usize = 30;
/// A day between full listings: one query request per 100 pages (pages not edited since
/// are named, not read), so deleted pages leave within a day.
pub const DEFAULT_FULL_LISTING_HOURS: u64 = 24;

/// The manifest: the config keys and the one host it asks for (the host of `base_url`).
pub fn manifest() -> Manifest {
    Manifest {
        id: "notion".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        description: "One memory per page of the Notion databases you name: properties and text."
            .into(),
        api_version: levh_connector_sdk::API_VERSION.into(),
        config: vec![
            ConfigKey {
                name: "database_ids".into(),
                value_type: ConfigType::TextList,
                help: "Notion database ids (or their URLs), comma-separated; share each database \
                       with your integration."
                    .into(),
                required: true,
                default_value: None,
            },
            ConfigKey {
                name: "base_url".into(),
                value_type: ConfigType::Text,
                help: "The Notion API's address.".into(),
                required: false,
                default_value: Some(DEFAULT_BASE_URL.into()),
            },
            ConfigKey {
                name: "full_listing_hours".into(),
                value_type: ConfigType::Integer,
                help: "Hours between full listings, which retire pages deleted from a database \
                       (0: every run); runs in between read only what was edited."
                    .into(),
                required: false,
                default_value: Some(DEFAULT_FULL_LISTING_HOURS.to_string()),
            },
        ],
        capabilities: vec![Capability::HttpHost("base_url".into())],
    }
}

/// The config, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// No trailing slash.
    pub base: String,
    /// Database ids, in order, each once.
    pub databases: Vec<String>,
    /// Hours between full listings; 0: every run.
    pub full_listing_hours: u64,
}

/// A database id from what a person pasted: an id (with or without dashes) or a Notion
/// URL whose last path segment ends in one.
fn database_id(text: &str) -> Result<String, Error> {
    let text = text.trim();
    let is_url =
        text.contains("://") || text.contains("notion.so/") || text.contains("notion.site/");
    let candidate = if is_url {
        let path = text.split(['?', '#']).next().unwrap_or(text);
        let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let hex: String = last
            .chars()
            .rev()
            .take_while(char::is_ascii_hexdigit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if hex.len() >= 32 {
            hex[hex.len() - 32..].to_owned()
        } else {
            last.to_owned()
        }
    } else {
        text.to_owned()
    };
    if candidate.is_empty()
        || !candidate
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Error::InvalidConfig(format!(
            "`database_ids`: {text:?} is not a Notion database id"
        )));
    }
    Ok(candidate)
}

/// Reads `database_ids` and `base_url`.
pub fn settings(config: &Config) -> Result<Settings, Error> {
    let listed = levh_connector_sdk::required(config, "database_ids")?;
    let mut databases: Vec<String> = Vec::new();
    for part in listed.split(',').filter(|p| !p.trim().is_empty()) {
        let id = database_id(part)?;
        if !databases.contains(&id) {
            databases.push(id);
        }
    }
    if databases.is_empty() {
        return Err(Error::InvalidConfig(
            "`database_ids` names no database".into(),
        ));
    }
    let base = levh_connector_sdk::config_value(config, "base_url")
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .unwrap_or(DEFAULT_BASE_URL)
        .trim_end_matches('/')
        .to_owned();
    let scheme = base.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("https" | "http")) {
        return Err(Error::InvalidConfig(format!(
            "`base_url` {base:?} is not an http(s) URL"
        )));
    }
    let full_listing_hours =
        levh_connector_sdk::integer(config, "full_listing_hours", DEFAULT_FULL_LISTING_HOURS)?;
    Ok(Settings {
        base,
        databases,
        full_listing_hours,
    })
}

/// The body of a database query.
pub fn query_body(pass: &Pass) -> Value {
    let mut body = json!({
        "page_size": PAGE_SIZE,
        "sorts": [{ "timestamp": "last_edited_time", "direction": "ascending" }],
    });
    if pass.full.is_none()
        && let Some(since) = &pass.since
    {
        body["filter"] = json!({
            "timestamp": "last_edited_time",
            "last_edited_time": { "on_or_after": since },
        });
    }
    if let Some(start) = &pass.start {
        body["start_cursor"] = json!(start);
    }
    body
}

/// The text of a page's blocks: `Ok(None)` when the page's own children cannot be read
/// (the page is then one item error); nested lists that fail are skipped.
fn page_text<T: Transport + ?Sized>(
    client: &mut Client<'_, T>,
    page_id: &str,
) -> Result<String, Failure> {
    let mut requests = 0;
    let mut cut = false;
    let mut object_failure: Option<String> = None;
    let mut fetch = |block_id: &str| -> Result<Option<Vec<Value>>, Failure> {
        let mut blocks = Vec::new();
        let mut start: Option<String> = None;
        loop {
            if requests >= MAX_BLOCK_REQUESTS {
                cut = true;
                break;
            }
            requests += 1;
            let mut path = format!(
                "/v1/blocks/{}/children?page_size={PAGE_SIZE}",
                encode(block_id)
            );
            if let Some(start) = &start {
                path.push_str(&format!("&start_cursor={}", encode(start)));
            }
            let list = match client.get(&path) {
                Ok(list) => list,
                Err(Failure::Object(message)) if block_id == page_id => {
                    object_failure = Some(message);
                    return Ok(None);
                }
                Err(Failure::Object(_)) => return Ok(None),
                Err(run) => return Err(run),
            };
            if let Some(results) = list.get("results").and_then(Value::as_array) {
                blocks.extend(results.iter().cloned());
            }
            match list.get("next_cursor").and_then(Value::as_str) {
                Some(next) if list.get("has_more").and_then(Value::as_bool) == Some(true) => {
                    start = Some(next.to_owned());
                }
                _ => break,
            }
        }
        Ok(Some(blocks))
    };
    let text = blocks::walk(page_id, MAX_DEPTH, &mut fetch)?;
    if cut {
        client.transport.log(&format!(
            "page {page_id}: read the first {MAX_BLOCK_REQUESTS} lists of blocks only"
        ));
    }
    match text {
        Some(text) => Ok(text),
        None => Err(Failure::Object(format!(
            "its blocks could not be read: {}",
            object_failure.unwrap_or_else(|| "no answer".into())
        ))),
    }
}

/// One `sync` call.
pub fn run<T: Transport + ?Sized>(
    transport: &mut T,
    settings: &Settings,
    cursor: Option<&str>,
) -> Result<Page, Error> {
    let mut state = match cursor.map(Cursor::decode) {
        None => Cursor::default(),
        Some(Ok(state)) => state,
        Some(Err(why)) => {
            transport.log(&format!(
                "the saved cursor is {why}; reading every database from the start (pages already stored stay unchanged)"
            ));
            Cursor::default()
        }
    };
    let mut pass = state.current_pass(&settings.databases);
    // A run begins: a full listing when the last one is old enough (or there was none).
    if state.pass.is_none() {
        let now = transport.now();
        let due = state.last_full.is_none_or(|last| {
            now.saturating_sub(last) >= settings.full_listing_hours.saturating_mul(3600)
        });
        if due {
            pass.full = Some(now);
            transport.listing(true, false);
        }
    }
    let db = pass.db.clone();
    let mut client = Client {
        transport,
        base: settings.base.clone(),
        budget: TIME_BUDGET,
    };
    let mut items: Vec<Item> = Vec::new();
    let mut errors: Vec<ItemError> = Vec::new();

    let list = match client.post(
        &format!("/v1/databases/{}/query", encode(&db)),
        &query_body(&pass),
    ) {
        Ok(list) => list,
        Err(Failure::Run(error)) => return Err(error),
        Err(Failure::Object(message)) => {
            errors.push(ItemError {
                source_id: None,
                location: db.clone(),
                message: format!("cannot query this database: {message}"),
            });
            return Ok(next_database(
                client.transport,
                state,
                &pass,
                settings,
                items,
                errors,
            ));
        }
    };
    let Some(results) = list.get("results").and_then(Value::as_array) else {
        return Err(Error::Failed(format!(
            "notion's answer to the query of database {db} has no results list"
        )));
    };

    let mut done_here: Vec<String> = Vec::new();
    for (n, result) in results.iter().enumerate() {
        let id = page::page_id(result).map(str::to_owned);
        if id.as_ref().is_some_and(|id| pass.skip.contains(id)) {
            continue;
        }
        if !done_here.is_empty() && client.out_of_time() {
            client.transport.log(&format!(
                "database {db}: {} pages read in this call; the next call goes on",
                done_here.len()
            ));
            return Ok(partial(state, pass, done_here, items, errors));
        }
        let location = id
            .clone()
            .unwrap_or_else(|| format!("{db} result {}", n + 1));
        // In a full listing, a page not edited since the last run is named, not read.
        if let (Some(id), Some(since), Some(_)) = (id.as_deref(), &pass.since, pass.full)
            && page::gone(result).is_none()
            && page::edited(result).is_some_and(|edited| edited < since.as_str())
        {
            client.transport.unchanged(id);
            done_here.push(id.to_owned());
            continue;
        }
        // An archived (or trashed) page is gone from the database: its memory is retired.
        if let (Some(id), Some(why)) = (id.as_deref(), page::gone(result)) {
            client.transport.removed(id, why);
            if let Some(time) = page::edited(result) {
                state.raise_mark(&db, time);
            }
            done_here.push(id.to_owned());
            continue;
        }
        match page::parse(result) {
            Err(message) => errors.push(ItemError {
                source_id: id.clone(),
                location,
                message: format!("malformed page: {message}"),
            }),
            Ok(notion_page) => match page_text(&mut client, &notion_page.id) {
                Ok(text) => items.push(page::item(&notion_page, &db, &text)),
                Err(Failure::Object(message)) => errors.push(ItemError {
                    source_id: id.clone(),
                    location,
                    message,
                }),
                Err(Failure::Run(error)) => {
                    if done_here.is_empty() {
                        return Err(error);
                    }
                    // Keep what was read; the next call meets the error again and ends
                    // the run there, with these pages stored.
                    return Ok(partial(state, pass, done_here, items, errors));
                }
            },
        }
        if let Some(time) = page::edited(result).filter(|_| id.is_some()) {
            // Stored, or reported: a page that cannot be read is reported once, not again
            // on every run (until it is edited).
            state.raise_mark(&db, time);
        }
        if let Some(id) = id {
            done_here.push(id);
        }
    }

    let more = list.get("has_more").and_then(Value::as_bool) == Some(true);
    match list.get("next_cursor").and_then(Value::as_str) {
        Some(next) if more && !next.is_empty() => {
            pass.start = Some(next.to_owned());
            pass.skip.clear();
            state.pass = Some(pass);
            Ok(Page {
                items,
                errors,
                next_cursor: Some(state.encode()),
                done: false,
            })
        }
        _ => Ok(next_database(
            client.transport,
            state,
            &pass,
            settings,
            items,
            errors,
        )),
    }
}

/// A page that stops inside a query page: the same query page again next, these skipped.
fn partial(
    mut state: Cursor,
    mut pass: Pass,
    done_here: Vec<String>,
    items: Vec<Item>,
    errors: Vec<ItemError>,
) -> Page {
    pass.skip.extend(done_here);
    state.pass = Some(pass);
    Page {
        items,
        errors,
        next_cursor: Some(state.encode()),
        done: false,
    }
}

/// A page that ends a database: the next one next, or the run is done (and a full
/// listing with it).
fn next_database<T: Transport + ?Sized>(
    transport: &mut T,
    mut state: Cursor,
    pass: &Pass,
    settings: &Settings,
    items: Vec<Item>,
    errors: Vec<ItemError>,
) -> Page {
    let next = pass.index + 1;
    let done = next >= settings.databases.len();
    state.pass = (!done).then(|| Pass {
        full: pass.full,
        ..Pass::begin(next, &settings.databases[next], &state.marks)
    });
    if done && let Some(began) = pass.full {
        transport.listing(false, true);
        state.last_full = Some(began);
    }
    Page {
        items,
        errors,
        next_cursor: Some(state.encode()),
        done,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use levh_connector_sdk::http::HttpError;
    use serde_json::json;

    use super::*;
    use crate::api::fake::{Fake, Sent, reply, with_header};

    fn config(pairs: &[(&str, &str)]) -> Config {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn rich(s: &str) -> Value {
        json!([{ "type": "text", "text": { "content": s, "link": null }, "plain_text": s, "href": null }])
    }

    fn notion_page(id: &str, title: &str, edited: &str) -> Value {
        json!({
            "object": "page",
            "id": id,
            "created_time": "2026-03-01T09:00:00.000Z",
            "last_edited_time": edited,
            "created_by": { "object": "user", "id": "u1" },
            "last_edited_by": { "object": "user", "id": "u1" },
            "parent": { "type": "database_id", "database_id": "db1" },
            "archived": false,
            "properties": { "Name": { "id": "title", "type": "title", "title": rich(title) } },
            "url": format!("https://www.notion.so/{id}")
        })
    }

    fn list(results: Vec<Value>, next: Option<&str>) -> Value {
        json!({
            "object": "list",
            "results": results,
            "next_cursor": next,
            "has_more": next.is_some(),
            "type": "page_or_database",
            "page_or_database": {}
        })
    }

    fn paragraph(s: &str) -> Value {
        json!({ "object": "block", "id": format!("b-{s}"), "has_children": false,
                "type": "paragraph", "paragraph": { "rich_text": rich(s), "color": "default" } })
    }

    fn body(sent: &Sent) -> Value {
        serde_json::from_str(sent.body.as_deref().unwrap_or("null")).unwrap()
    }

    /// db1: pages a, b then (start_cursor c2) c; db2: 404. Blocks: one paragraph each.
    fn notion(sent: &Sent) -> Result<levh_connector_sdk::http::Response, HttpError> {
        let path = sent.url.trim_start_matches("https://api.notion.com");
        Ok(if path == "/v1/databases/db1/query" {
            let start = body(sent)["start_cursor"].as_str().map(str::to_owned);
            match start.as_deref() {
                None => reply(
                    200,
                    list(
                        vec![
                            notion_page("a", "Alpha", "2026-03-01T10:00:00.000Z"),
                            notion_page("b", "Beta", "2026-03-02T10:00:00.000Z"),
                        ],
                        Some("c2"),
                    ),
                ),
                Some("c2") => reply(
                    200,
                    list(
                        vec![notion_page("c", "Gamma", "2026-03-03T10:00:00.000Z")],
                        None,
                    ),
                ),
                _ => reply(
                    400,
                    json!({ "code": "validation_error", "message": "bad cursor" }),
                ),
            }
        } else if path == "/v1/databases/db2/query" {
            reply(
                404,
                json!({ "object": "error", "status": 404, "code": "object_not_found",
                        "message": "Could not find database with ID: db2." }),
            )
        } else if let Some(rest) = path.strip_prefix("/v1/blocks/") {
            let id = rest.split('/').next().unwrap();
            reply(200, list(vec![paragraph(&format!("text of {id}"))], None))
        } else {
            reply(404, json!({}))
        })
    }

    fn settings_for(ids: &str) -> Settings {
        settings(&config(&[("database_ids", ids)])).unwrap()
    }

    /// Runs calls as the host does until `done`; returns the pages.
    fn drain(fake: &mut Fake, settings: &Settings, cursor: Option<String>) -> Vec<Page> {
        let mut cursor = cursor;
        let mut pages = Vec::new();
        for _ in 0..20 {
            let page = run(fake, settings, cursor.as_deref()).unwrap();
            let done = page.done;
            cursor = page.next_cursor.clone();
            pages.push(page);
            if done {
                return pages;
            }
        }
        panic!("no end");
    }

    #[test]
    fn the_manifest_asks_for_the_host_of_base_url() {
        let m = manifest();
        assert_eq!(m.id, "notion");
        assert!(matches!(&m.capabilities[..], [Capability::HttpHost(k)] if k == "base_url"));
        let base = m.config.iter().find(|k| k.name == "base_url").unwrap();
        assert_eq!(
            base.default_value.as_deref(),
            Some("https://api.notion.com")
        );
        let ids = m.config.iter().find(|k| k.name == "database_ids").unwrap();
        assert!(ids.required && matches!(ids.value_type, ConfigType::TextList));
    }

    #[test]
    fn settings_take_ids_urls_and_a_base() {
        let s = settings(&config(&[
            (
                "database_ids",
                " db1, https://www.notion.so/team/a8aec43384f447ed84390e8e42c2e089?v=1 ,db1,",
            ),
            ("base_url", "http://127.0.0.1:9/"),
        ]))
        .unwrap();
        assert_eq!(s.databases, ["db1", "a8aec43384f447ed84390e8e42c2e089"]);
        assert_eq!(s.base, "http://127.0.0.1:9");
        assert_eq!(settings_for("db1").base, "https://api.notion.com");
        for bad in [
            vec![],
            vec![("database_ids", " , ")],
            vec![("database_ids", "../x")],
            vec![("database_ids", "a b")],
        ] {
            assert!(
                matches!(settings(&config(&bad)), Err(Error::InvalidConfig(_))),
                "{bad:?}"
            );
        }
        let bad_base = config(&[("database_ids", "d"), ("base_url", "ftp://x")]);
        assert!(matches!(settings(&bad_base), Err(Error::InvalidConfig(_))));
    }

    #[test]
    fn an_archived_or_trashed_page_is_reported_removed_not_stored() {
        let mut fake = Fake::new(|sent: &Sent| {
            let path = sent.url.trim_start_matches("https://api.notion.com");
            Ok(if path == "/v1/databases/db1/query" {
                let mut archived = notion_page("old", "Old plan", "2026-03-04T10:00:00.000Z");
                archived["archived"] = json!(true);
                let mut trashed = notion_page("bin", "Draft", "2026-03-05T10:00:00.000Z");
                trashed["in_trash"] = json!(true);
                reply(
                    200,
                    list(
                        vec![
                            notion_page("a", "Alpha", "2026-03-01T10:00:00.000Z"),
                            archived,
                            trashed,
                        ],
                        None,
                    ),
                )
            } else {
                reply(200, list(vec![paragraph("text")], None))
            })
        });
        let pages = drain(&mut fake, &settings_for("db1"), None);
        let ids: Vec<&str> = pages
            .iter()
            .flat_map(|p| p.items.iter().map(|i| i.source_id.as_str()))
            .collect();
        assert_eq!(ids, ["a"]);
        assert!(pages.iter().all(|p| p.errors.is_empty()));
        assert_eq!(
            fake.removed,
            [
                ("old".to_owned(), "archived in Notion".to_owned()),
                ("bin".to_owned(), "moved to the trash in Notion".to_owned())
            ]
        );
        // The mark moves past them: the next run does not report them again.
        let last = Cursor::decode(pages.last().unwrap().next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(last.marks["db1"], "2026-03-05T10:00:00.000Z");
    }

    #[test]
    fn a_full_listing_a_day_names_unedited_pages_without_reading_them() {
        use std::cell::RefCell;
        use std::rc::Rc;
        let database = Rc::new(RefCell::new(vec![
            notion_page("a", "Alpha", "2026-03-01T10:00:00.000Z"),
            notion_page("b", "Beta", "2026-03-02T10:00:00.000Z"),
        ]));
        let served = Rc::clone(&database);
        let mut fake = Fake::new(move |sent: &Sent| {
            Ok(if sent.url.ends_with("/query") {
                reply(200, list(served.borrow().clone(), None))
            } else {
                reply(200, list(vec![paragraph("text")], None))
            })
        });
        let s = settings_for("db1");
        let first = drain(&mut fake, &s, None);
        assert_eq!(
            fake.listing,
            [(true, false), (false, true)],
            "a first run lists all"
        );
        let saved = first.last().unwrap().next_cursor.clone();

        // Page b deleted outright (not archived), c added.
        *database.borrow_mut() = vec![
            notion_page("a", "Alpha", "2026-03-01T10:00:00.000Z"),
            notion_page("c", "Gamma", "2026-03-03T10:00:00.000Z"),
        ];
        // An hour later: only edits, no listing.
        fake.listing.clear();
        fake.sent.clear();
        fake.wall += 3600;
        let soon = drain(&mut fake, &s, saved.clone());
        assert!(fake.listing.is_empty());
        assert!(body(&fake.sent[0])["filter"].is_object());
        assert_eq!(
            soon[0].items.len(),
            2,
            "a and c come back through the filter here"
        );

        // A day after the first: every page, unedited ones named without their blocks.
        fake.listing.clear();
        fake.sent.clear();
        fake.wall += 24 * 3600;
        let cursor = soon.last().unwrap().next_cursor.clone();
        let mut marked = Cursor::decode(cursor.as_deref().unwrap()).unwrap();
        marked.raise_mark("db1", "2026-03-02T12:00:00.000Z");
        let later = drain(&mut fake, &s, Some(marked.encode()));
        assert_eq!(fake.listing, [(true, false), (false, true)]);
        assert!(body(&fake.sent[0]).get("filter").is_none(), "no filter");
        assert_eq!(fake.unchanged, ["a"]);
        let ids: Vec<&str> = later[0]
            .items
            .iter()
            .map(|i| i.source_id.as_str())
            .collect();
        assert_eq!(ids, ["c"]);
        assert!(
            !fake.sent.iter().any(|s| s.url.contains("/blocks/a/")),
            "page a's blocks are not read again"
        );
        let next = Cursor::decode(later[0].next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(next.last_full, Some(fake.wall));
        assert!(next.pass.is_none());
    }

    #[test]
    fn a_run_pages_through_each_database_and_a_missing_one_is_one_error() {
        let mut fake = Fake::new(notion);
        let pages = drain(&mut fake, &settings_for("db1,db2"), None);
        assert_eq!(pages.len(), 3, "two query pages of db1, one 404 of db2");
        let ids: Vec<&str> = pages
            .iter()
            .flat_map(|p| p.items.iter().map(|i| i.source_id.as_str()))
            .collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(pages[0].items[0].content, "Alpha\n\ntext of a");
        assert_eq!(
            pages[0].items[0].occurred_at.as_deref(),
            Some("2026-03-01T10:00:00.000Z")
        );
        assert!(pages[0].errors.is_empty() && pages[1].errors.is_empty());
        let errors = &pages[2].errors;
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].location, "db2");
        assert!(errors[0].message.contains("404") && errors[0].message.contains("Could not find"));
        assert!(!pages[0].done && !pages[1].done && pages[2].done);

        let queries: Vec<Value> = fake
            .sent
            .iter()
            .filter(|s| s.url.ends_with("/query"))
            .map(body)
            .collect();
        assert_eq!(
            queries[0],
            json!({ "page_size": 100, "sorts": [{ "timestamp": "last_edited_time", "direction": "ascending" }] })
        );
        assert_eq!(queries[1]["start_cursor"], "c2");
        assert!(
            fake.sent
                .iter()
                .any(|s| s.url == "https://api.notion.com/v1/blocks/a/children?page_size=100")
        );

        // The last cursor holds the marks; the next run asks only for newer pages.
        let last = Cursor::decode(pages[2].next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(
            last.marks,
            BTreeMap::from([("db1".to_owned(), "2026-03-03T10:00:00.000Z".to_owned())])
        );
        assert_eq!(last.pass, None);
        let mut again = Fake::new(notion);
        let _ = drain(
            &mut again,
            &settings_for("db1,db2"),
            pages[2].next_cursor.clone(),
        );
        let first = body(&again.sent[0]);
        assert_eq!(
            first["filter"],
            json!({ "timestamp": "last_edited_time", "last_edited_time": { "on_or_after": "2026-03-03T10:00:00.000Z" } })
        );
    }

    #[test]
    fn a_malformed_page_is_one_error_and_the_rest_are_stored() {
        let mut fake = Fake::new(|sent: &Sent| {
            Ok(if sent.url.ends_with("/query") {
                reply(
                    200,
                    list(
                        vec![
                            json!({ "object": "page", "id": "broken", "last_edited_time": "2026-03-05T00:00:00.000Z" }),
                            json!({ "object": "page" }),
                            json!(42),
                            notion_page("ok", "Fine", "2026-03-01T00:00:00.000Z"),
                        ],
                        None,
                    ),
                )
            } else {
                reply(200, list(vec![], None))
            })
        });
        let page = run(&mut fake, &settings_for("db1"), None).unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.items[0].content, "Fine");
        let errors: Vec<(&Option<String>, &str)> = page
            .errors
            .iter()
            .map(|e| (&e.source_id, e.location.as_str()))
            .collect();
        assert_eq!(
            errors,
            vec![
                (&Some("broken".to_owned()), "broken"),
                (&None, "db1 result 2"),
                (&None, "db1 result 3"),
            ]
        );
        assert!(page.errors[0].message.contains("no properties object"));
        assert!(page.done);
        let cursor = Cursor::decode(page.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(cursor.marks["db1"], "2026-03-05T00:00:00.000Z");
    }

    #[test]
    fn a_page_whose_blocks_are_gone_is_one_error() {
        let mut fake = Fake::new(|sent: &Sent| {
            Ok(if sent.url.ends_with("/query") {
                reply(
                    200,
                    list(
                        vec![
                            notion_page("gone", "Gone", "2026-03-01T00:00:00.000Z"),
                            notion_page("here", "Here", "2026-03-01T00:00:00.000Z"),
                        ],
                        None,
                    ),
                )
            } else if sent.url.contains("/gone/") {
                reply(
                    404,
                    json!({ "code": "object_not_found", "message": "Could not find block" }),
                )
            } else {
                reply(200, list(vec![paragraph("hello")], None))
            })
        });
        let page = run(&mut fake, &settings_for("db1"), None).unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.errors.len(), 1);
        assert_eq!(page.errors[0].location, "gone");
        assert!(page.errors[0].message.contains("blocks could not be read"));
    }

    #[test]
    fn block_lists_are_paged_and_nested_blocks_read() {
        let mut fake = Fake::new(|sent: &Sent| {
            let url = sent.url.as_str();
            Ok(if url.ends_with("/query") {
                reply(
                    200,
                    list(
                        vec![notion_page("p", "Page", "2026-03-01T00:00:00.000Z")],
                        None,
                    ),
                )
            } else if url.ends_with("/blocks/p/children?page_size=100") {
                let mut toggle = json!({ "object": "block", "id": "t1", "has_children": true,
                    "type": "toggle", "toggle": { "rich_text": rich("More") } });
                toggle["has_children"] = json!(true);
                reply(200, list(vec![paragraph("one"), toggle], Some("n2")))
            } else if url.ends_with("/blocks/p/children?page_size=100&start_cursor=n2") {
                reply(200, list(vec![paragraph("two")], None))
            } else if url.contains("/blocks/t1/children") {
                reply(200, list(vec![paragraph("inside")], None))
            } else {
                reply(404, json!({}))
            })
        });
        let page = run(&mut fake, &settings_for("db1"), None).unwrap();
        assert_eq!(page.items[0].content, "Page\n\none\nMore\n  inside\ntwo");
    }

    #[test]
    fn a_rate_limit_ends_the_call_and_the_cursor_stays() {
        let mut limited = true;
        let mut fake = Fake::new(move |sent: &Sent| {
            if sent.url.ends_with("/query") && body(sent)["start_cursor"] == "c2" && limited {
                limited = false;
                return Ok(with_header(
                    reply(
                        429,
                        json!({ "code": "rate_limited", "message": "slow down" }),
                    ),
                    "Retry-After",
                    "7",
                ));
            }
            notion(sent)
        });
        let settings = settings_for("db1");
        let first = run(&mut fake, &settings, None).unwrap();
        let error = run(&mut fake, &settings, first.next_cursor.as_deref()).unwrap_err();
        assert!(
            matches!(&error, Error::Unavailable(m) if m.contains("rate limited") && m.contains("7 s")),
            "{error:?}"
        );
        // The host kept the first page's cursor: the retry asks for the second page.
        let again = run(&mut fake, &settings, first.next_cursor.as_deref()).unwrap();
        assert_eq!(again.items[0].source_id, "c");
        assert!(again.done);
    }

    #[test]
    fn a_call_out_of_time_returns_what_it_read_and_the_next_skips_it() {
        let mut fake = Fake::new(notion);
        fake.per_request = Duration::from_secs(15);
        let settings = settings_for("db1");
        let first = run(&mut fake, &settings, None).unwrap();
        let ids: Vec<&str> = first.items.iter().map(|i| i.source_id.as_str()).collect();
        assert_eq!(ids, ["a"], "the time ran out after one page");
        assert!(!first.done);
        let cursor = Cursor::decode(first.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(cursor.pass.as_ref().unwrap().skip, ["a"]);
        assert_eq!(cursor.pass.as_ref().unwrap().start, None);

        fake.now = Duration::ZERO;
        let second = run(&mut fake, &settings, first.next_cursor.as_deref()).unwrap();
        let ids: Vec<&str> = second.items.iter().map(|i| i.source_id.as_str()).collect();
        assert_eq!(ids, ["b"]);
        let cursor = Cursor::decode(second.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(cursor.pass.as_ref().unwrap().start.as_deref(), Some("c2"));
        assert!(cursor.pass.as_ref().unwrap().skip.is_empty());
    }

    #[test]
    fn a_run_failure_after_some_pages_keeps_them() {
        let mut fake = Fake::new(|sent: &Sent| {
            if sent.url.contains("/blocks/b/") {
                return Ok(reply(502, json!({ "message": "bad gateway" })));
            }
            notion(sent)
        });
        let settings = settings_for("db1");
        let page = run(&mut fake, &settings, None).unwrap();
        assert_eq!(page.items.len(), 1, "page a is kept");
        let error = run(&mut fake, &settings, page.next_cursor.as_deref()).unwrap_err();
        assert!(
            matches!(&error, Error::Unavailable(m) if m.contains("502")),
            "{error:?}"
        );
    }

    #[test]
    fn unauthorized_and_denied_end_the_call() {
        let mut fake = Fake::new(|_: &Sent| {
            Ok(reply(
                401,
                json!({ "code": "unauthorized", "message": "API token is invalid." }),
            ))
        });
        let error = run(&mut fake, &settings_for("db1"), None).unwrap_err();
        assert!(
            matches!(&error, Error::Unavailable(m) if m.contains("401") && m.contains("levh connector secret set notion")),
            "{error:?}"
        );
        let mut fake = Fake::new(|_: &Sent| Err(HttpError::Denied("api.notion.com".into())));
        assert!(matches!(
            run(&mut fake, &settings_for("db1"), None),
            Err(Error::Denied(_))
        ));
    }

    #[test]
    fn a_bad_saved_cursor_starts_over() {
        let mut fake = Fake::new(notion);
        let page = run(&mut fake, &settings_for("db1"), Some("not json")).unwrap();
        assert_eq!(page.items.len(), 2);
        assert!(fake.logs.iter().any(|l| l.contains("from the start")));
    }
}
