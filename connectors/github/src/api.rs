//! GitHub's REST API: which URLs to fetch, how to read the answers, and how they become
//! items. Everything here runs natively against canned responses in the tests.

use levh_connector_sdk::http::{HttpError, Response};
use levh_connector_sdk::{Error, Item, ItemError, Page, Person};
use serde::Deserialize;

use crate::cursor::{Cursor, Stage};
use crate::{Fetch, Settings};

/// Headers GitHub asks every client to send (it refuses requests without a User-Agent).
const HEADERS: &[(&str, &str)] = &[
    ("Accept", "application/vnd.github+json"),
    ("X-GitHub-Api-Version", "2022-11-28"),
    ("User-Agent", "levh-github-connector"),
];
/// Redirects followed per request; each is a new request the host checks again.
const MAX_REDIRECTS: usize = 3;
/// Comment pages read per issue (100 comments each).
const MAX_COMMENT_PAGES: usize = 10;
/// Characters kept of an issue or release body, and of each comment.
const BODY_CHARS: usize = 6000;
const COMMENT_CHARS: usize = 1000;

#[derive(Debug, Deserialize)]
struct User {
    login: String,
}

#[derive(Debug, Deserialize)]
struct Label {
    name: String,
}

#[derive(Debug, Deserialize)]
struct PullRequestLink {
    merged_at: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Issue {
    number: u64,
    title: String,
    body: Option<String>,
    state: String,
    user: Option<User>,
    #[serde(default)]
    assignees: Vec<User>,
    #[serde(default)]
    labels: Vec<Label>,
    #[serde(default)]
    comments: u64,
    created_at: String,
    updated_at: String,
    closed_at: Option<String>,
    html_url: Option<String>,
    pull_request: Option<PullRequestLink>,
}

#[derive(Debug, Deserialize)]
struct Comment {
    user: Option<User>,
    body: Option<String>,
    created_at: String,
}

#[derive(Debug, Deserialize)]
struct Release {
    id: u64,
    tag_name: String,
    name: Option<String>,
    body: Option<String>,
    author: Option<User>,
    published_at: Option<String>,
    html_url: Option<String>,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    prerelease: bool,
}

/// Why a request did not give a usable answer.
enum Failure {
    /// 404: the repository (or the token's view of it) does not exist. Skip it.
    NotFound(String),
    /// The whole call fails; the cursor stays put, so the next run resumes here.
    Call(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Self::Call(e)
    }
}

fn http_error(error: HttpError) -> Error {
    match error {
        HttpError::Denied(host) => Error::Denied(format!("connect to {host}")),
        HttpError::BadUrl(what) => Error::Failed(what),
        HttpError::Failed(what) => Error::Unavailable(what),
    }
}

/// Resolves a `Location` against the URL it came from.
fn resolve(from: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin_end = from
        .find("://")
        .and_then(|at| from[at + 3..].find('/').map(|p| at + 3 + p))
        .unwrap_or(from.len());
    format!(
        "{}/{}",
        &from[..origin_end],
        location.trim_start_matches('/')
    )
}

/// Seconds until a rate limit lifts: `Retry-After`, else `X-RateLimit-Reset` (epoch).
fn retry_after(response: &Response) -> Option<u64> {
    if let Some(seconds) = response
        .header("retry-after")
        .and_then(|v| v.trim().parse().ok())
    {
        return Some(seconds);
    }
    if response.header("x-ratelimit-remaining").map(str::trim) == Some("0") {
        let reset: u64 = response.header("x-ratelimit-reset")?.trim().parse().ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        return Some(reset.saturating_sub(now));
    }
    None
}

/// The API's own words for a failure (`{"message": "..."}`), if any.
fn message(response: &Response) -> String {
    serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

/// GETs a JSON array, following redirects and turning HTTP failures into clear errors.
fn get_list(
    fetch: &mut dyn Fetch,
    url: &str,
) -> Result<(Vec<serde_json::Value>, Option<String>), Failure> {
    let mut url = url.to_owned();
    let mut response = fetch.get(&url, HEADERS).map_err(http_error)?;
    for _ in 0..MAX_REDIRECTS {
        if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
            break;
        }
        let Some(location) = response.header("location") else {
            break;
        };
        url = resolve(&url, location);
        response = fetch.get(&url, HEADERS).map_err(http_error)?;
    }
    match response.status {
        200 => {}
        301 | 302 | 303 | 307 | 308 => {
            return Err(
                Error::Failed(format!("{url}: more than {MAX_REDIRECTS} redirects")).into(),
            );
        }
        401 => {
            return Err(Error::Unavailable(format!(
                "GitHub refused the token (401 {}); store one with `levh connector secret set github`",
                message(&response)
            ))
            .into());
        }
        403 | 429 => {
            return Err(Error::Unavailable(match retry_after(&response) {
                Some(seconds) => format!(
                    "rate limited by GitHub ({}): retry after {seconds} s; the next `levh sync github` resumes here",
                    response.status
                ),
                None => format!("GitHub refused the request (403 {})", message(&response)),
            })
            .into());
        }
        404 => return Err(Failure::NotFound(message(&response))),
        status => {
            return Err(Error::Unavailable(format!(
                "{url}: GitHub answered {status} {}",
                message(&response)
            ))
            .into());
        }
    }
    let list: Vec<serde_json::Value> = serde_json::from_slice(&response.body).map_err(|e| {
        Failure::Call(Error::Failed(format!(
            "{url}: the answer is not a JSON list: {e}"
        )))
    })?;
    Ok((list, link_next(response.header("link"))))
}

/// The `rel="next"` URL of a `Link` header.
pub fn link_next(link: Option<&str>) -> Option<String> {
    link?.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_owned()
            })
    })
}

fn clip(text: &str, chars: usize) -> String {
    let mut clipped: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        clipped.push('…');
    }
    clipped
}

/// The first URL of a stage.
fn first_url(settings: &Settings, repo: &str, stage: Stage, cursor: &Cursor) -> String {
    match stage {
        Stage::Issues => {
            let mut url = format!(
                "{}/repos/{repo}/issues?state=all&sort=updated&direction=asc&per_page=100",
                settings.base_url
            );
            if cursor.full.is_none()
                && let Some(since) = cursor.since.get(repo)
            {
                url.push_str(&format!("&since={since}"));
            }
            url
        }
        Stage::Releases => format!("{}/repos/{repo}/releases?per_page=100", settings.base_url),
    }
}

/// One call's worth of work (see [`crate::step`]).
pub fn step(settings: &Settings, cursor: Cursor, fetch: &mut dyn Fetch) -> Result<Page, Error> {
    let mut cursor = cursor.for_repos(&settings.repos);
    let mut items = Vec::new();
    let mut errors = Vec::new();
    // A pass begins: a full listing when the last one is old enough (or there was none).
    let mut begins_listing = false;
    if cursor.at_start() && cursor.full.is_none() {
        let now = fetch.now();
        let due = cursor
            .last_full
            .is_none_or(|last| now.saturating_sub(last) >= settings.full_listing_hours * 3600);
        if due {
            cursor.full = Some(now);
            begins_listing = true;
        }
    }
    let Some(repo) = settings.repos.get(cursor.repo).cloned() else {
        return Ok(Page {
            items,
            errors,
            next_cursor: Some(cursor.finished().encode()),
            done: true,
        });
    };
    let url = cursor
        .next
        .clone()
        .unwrap_or_else(|| first_url(settings, &repo, cursor.stage, &cursor));
    let mut next = None;
    match get_list(fetch, &url) {
        Ok((list, next_page)) => {
            next = next_page;
            for value in list {
                if cursor.stage == Stage::Issues
                    && let Some(id) = unchanged_issue(&repo, &value, &cursor)
                {
                    fetch.unchanged(&id);
                    continue;
                }
                let converted = match cursor.stage {
                    Stage::Issues => issue_item(settings, &repo, value, fetch, &mut cursor),
                    Stage::Releases => release_item(&repo, value),
                };
                match converted {
                    Ok(Some(item)) => items.push(item),
                    Ok(None) => {}
                    Err(Failure::NotFound(m)) => errors.push(ItemError {
                        source_id: None,
                        location: repo.clone(),
                        message: format!("not found: {m}"),
                    }),
                    Err(Failure::Call(Error::Failed(message))) => errors.push(ItemError {
                        source_id: None,
                        location: repo.clone(),
                        message,
                    }),
                    Err(Failure::Call(e)) => return Err(e),
                }
            }
        }
        Err(Failure::NotFound(m)) => {
            errors.push(ItemError {
                source_id: None,
                location: repo.clone(),
                message: format!(
                    "repository not found, or the token cannot see it ({})",
                    if m.is_empty() { "404" } else { &m }
                ),
            });
            // Skip the rest of this repository.
            cursor.stage = Stage::Releases;
        }
        Err(Failure::Call(e)) => return Err(e),
    }
    match next {
        Some(url) => cursor.next = Some(url),
        None => {
            cursor.next = None;
            match cursor.stage {
                Stage::Issues => cursor.stage = Stage::Releases,
                Stage::Releases => {
                    cursor.stage = Stage::Issues;
                    cursor.repo += 1;
                }
            }
        }
    }
    let done = cursor.repo >= settings.repos.len();
    let ends_listing = done && cursor.full.is_some();
    if begins_listing || ends_listing {
        fetch.listing(begins_listing, ends_listing);
    }
    cursor.repo_name = settings.repos.get(cursor.repo).cloned();
    let next_cursor = if done { cursor.finished() } else { cursor };
    Ok(Page {
        items,
        errors,
        next_cursor: Some(next_cursor.encode()),
        done,
    })
}

/// During a full listing, the id of an issue not updated since the last run's mark: it is
/// named to the host, not fetched again with its comments.
fn unchanged_issue(repo: &str, value: &serde_json::Value, cursor: &Cursor) -> Option<String> {
    cursor.full?;
    let since = cursor.since.get(repo)?;
    let updated = value.get("updated_at")?.as_str()?;
    let number = value.get("number")?.as_u64()?;
    (updated < since.as_str()).then(|| format!("{repo}#{number}"))
}

/// An issue or pull request with its comments; a malformed entry is an item error.
fn issue_item(
    settings: &Settings,
    repo: &str,
    value: serde_json::Value,
    fetch: &mut dyn Fetch,
    cursor: &mut Cursor,
) -> Result<Option<Item>, Failure> {
    let issue: Issue = serde_json::from_value(value)
        .map_err(|e| Failure::Call(Error::Failed(format!("a malformed issue: {e}"))))?;
    cursor.saw(repo, &issue.updated_at);
    let mut comments = Vec::new();
    if issue.comments > 0 {
        let mut url = Some(format!(
            "{}/repos/{repo}/issues/{}/comments?per_page=100",
            settings.base_url, issue.number
        ));
        for _ in 0..MAX_COMMENT_PAGES {
            let Some(page_url) = url.take() else { break };
            let (list, next) = get_list(fetch, &page_url)?;
            comments.extend(
                list.into_iter()
                    .filter_map(|v| serde_json::from_value::<Comment>(v).ok()),
            );
            url = next;
        }
    }
    Ok(Some(build_issue(repo, &issue, &comments)))
}

fn build_issue(repo: &str, issue: &Issue, comments: &[Comment]) -> Item {
    let (kind, noun) = if issue.pull_request.is_some() {
        ("pull_request", "Pull request")
    } else {
        ("issue", "Issue")
    };
    let merged = issue
        .pull_request
        .as_ref()
        .and_then(|p| p.merged_at.as_deref())
        .is_some();
    let state = if merged {
        "merged".to_owned()
    } else {
        issue.state.clone()
    };
    let author = issue.user.as_ref().map(|u| u.login.clone());
    let assignees: Vec<&str> = issue.assignees.iter().map(|u| u.login.as_str()).collect();
    let labels: Vec<&str> = issue.labels.iter().map(|l| l.name.as_str()).collect();

    let mut content = format!(
        "{noun} #{} in {repo}: {}\nState: {state}",
        issue.number, issue.title
    );
    if let Some(author) = &author {
        content.push_str(&format!("\nAuthor: {author}"));
    }
    if !assignees.is_empty() {
        content.push_str(&format!("\nAssignees: {}", assignees.join(", ")));
    }
    if !labels.is_empty() {
        content.push_str(&format!("\nLabels: {}", labels.join(", ")));
    }
    let body = issue.body.as_deref().unwrap_or("").trim();
    if !body.is_empty() {
        content.push_str(&format!("\n\n{}", clip(body, BODY_CHARS)));
    }
    if !comments.is_empty() {
        content.push_str("\n\nComments:");
        for c in comments {
            let who = c.user.as_ref().map_or("someone", |u| u.login.as_str());
            let date = c.created_at.get(..10).unwrap_or(&c.created_at);
            let text = clip(c.body.as_deref().unwrap_or("").trim(), COMMENT_CHARS);
            content.push_str(&format!("\n- {who} ({date}): {text}"));
        }
    }

    let mut people: Vec<Person> = Vec::new();
    let mut add = |login: &str, role: &str| {
        if !people
            .iter()
            .any(|p| p.name.as_deref() == Some(login) && p.role == role)
        {
            people.push(Person {
                name: Some(login.to_owned()),
                email: None,
                role: role.into(),
            });
        }
    };
    if let Some(author) = &author {
        add(author, "author");
    }
    for a in &assignees {
        add(a, "assignee");
    }
    for c in comments {
        if let Some(u) = &c.user {
            add(&u.login, "commenter");
        }
    }
    Item {
        source_id: format!("{repo}#{}", issue.number),
        title: format!("{repo}#{} {}", issue.number, issue.title),
        content,
        kind: kind.into(),
        occurred_at: Some(issue.created_at.clone()),
        people,
        source_uri: issue.html_url.clone(),
        metadata: serde_json::json!({
            "repo": repo, "number": issue.number, "state": state, "labels": labels,
            "created_at": issue.created_at, "updated_at": issue.updated_at,
            "closed_at": issue.closed_at, "comments": comments.len(),
        })
        .to_string(),
    }
}

/// A published release; drafts are skipped (they are not news yet).
fn release_item(repo: &str, value: serde_json::Value) -> Result<Option<Item>, Failure> {
    let release: Release = serde_json::from_value(value)
        .map_err(|e| Failure::Call(Error::Failed(format!("a malformed release: {e}"))))?;
    if release.draft {
        return Ok(None);
    }
    let name = release
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| release.tag_name.clone());
    let author = release.author.as_ref().map(|u| u.login.clone());
    let mut content = format!("Release {name} ({}) of {repo}", release.tag_name);
    if release.prerelease {
        content.push_str(", a pre-release");
    }
    if let Some(at) = &release.published_at {
        content.push_str(&format!(", published {}", at.get(..10).unwrap_or(at)));
    }
    if let Some(author) = &author {
        content.push_str(&format!(" by {author}"));
    }
    let body = release.body.as_deref().unwrap_or("").trim();
    if !body.is_empty() {
        content.push_str(&format!("\n\n{}", clip(body, BODY_CHARS)));
    }
    Ok(Some(Item {
        source_id: format!("{repo}@release/{}", release.id),
        title: format!("{repo} {name}"),
        content,
        kind: "release".into(),
        occurred_at: release.published_at.clone(),
        people: author
            .into_iter()
            .map(|a| Person {
                name: Some(a),
                email: None,
                role: "author".into(),
            })
            .collect(),
        source_uri: release.html_url.clone(),
        metadata: serde_json::json!({
            "repo": repo, "tag": release.tag_name, "prerelease": release.prerelease,
        })
        .to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// A scripted answer: status, headers, body.
    type Answer = (u16, Vec<(String, String)>, String);
    /// An answer as written in a test.
    type Written<'a> = (u16, &'a [(&'a str, &'a str)], serde_json::Value);

    /// Answers from a script, in order, and records the URLs asked for and what it told
    /// the host of a listing.
    struct Script {
        answers: VecDeque<Answer>,
        asked: Vec<String>,
        now: u64,
        listing: Vec<(bool, bool)>,
        unchanged: Vec<String>,
    }

    impl Script {
        fn new(answers: Vec<Written<'_>>) -> Self {
            Self {
                answers: answers
                    .into_iter()
                    .map(|(s, h, b)| {
                        (
                            s,
                            h.iter()
                                .map(|(k, v)| (k.to_ascii_lowercase(), (*v).to_owned()))
                                .collect(),
                            b.to_string(),
                        )
                    })
                    .collect(),
                asked: Vec::new(),
                now: 1_772_445_600,
                listing: Vec::new(),
                unchanged: Vec::new(),
            }
        }
    }

    impl Fetch for Script {
        fn get(&mut self, url: &str, _headers: &[(&str, &str)]) -> Result<Response, HttpError> {
            self.asked.push(url.to_owned());
            let (status, headers, body) = self
                .answers
                .pop_front()
                .expect("an answer for every request");
            Ok(Response {
                status,
                headers,
                body: body.into_bytes(),
            })
        }

        fn listing(&mut self, started: bool, complete: bool) {
            self.listing.push((started, complete));
        }

        fn unchanged(&mut self, source_id: &str) {
            self.unchanged.push(source_id.to_owned());
        }

        fn now(&self) -> u64 {
            self.now
        }
    }

    fn settings() -> Settings {
        Settings {
            repos: vec!["acme/rocket".into()],
            base_url: "https://api.example".into(),
            full_listing_hours: 24,
        }
    }

    fn issue(number: u64, updated: &str, comments: u64, pr: bool) -> serde_json::Value {
        let mut v = serde_json::json!({
            "number": number, "title": format!("Issue {number}"), "body": "Something broke",
            "state": "open", "user": {"login": "ada"}, "assignees": [{"login": "grace"}],
            "labels": [{"name": "bug"}], "comments": comments,
            "created_at": "2026-03-01T09:00:00Z", "updated_at": updated,
            "html_url": format!("https://github.example/acme/rocket/issues/{number}"),
        });
        if pr {
            v["pull_request"] = serde_json::json!({"merged_at": "2026-03-02T09:00:00Z"});
        }
        v
    }

    #[test]
    fn link_headers_give_the_next_page() {
        let link = r#"<https://api.example/x?page=2>; rel="next", <https://api.example/x?page=5>; rel="last""#;
        assert_eq!(
            link_next(Some(link)).as_deref(),
            Some("https://api.example/x?page=2")
        );
        assert_eq!(
            link_next(Some(r#"<https://api.example/x?page=1>; rel="prev""#)),
            None
        );
        assert_eq!(link_next(None), None);
    }

    #[test]
    fn pages_of_issues_then_releases_then_done_with_a_since_for_next_time() {
        let mut script = Script::new(vec![
            (
                200,
                &[(
                    "Link",
                    r#"<https://api.example/repos/acme/rocket/issues?page=2>; rel="next""#,
                )],
                serde_json::json!([issue(1, "2026-03-03T10:00:00Z", 1, false)]),
            ),
            (
                200,
                &[],
                serde_json::json!([{"user": {"login": "linus"}, "body": "Same here", "created_at": "2026-03-02T00:00:00Z"}]),
            ),
            (
                200,
                &[],
                serde_json::json!([issue(2, "2026-03-04T10:00:00Z", 0, true), {"title": "no number"}]),
            ),
            (
                200,
                &[],
                serde_json::json!([
                    {"id": 7, "tag_name": "v1.0", "name": "One", "body": "First!", "author": {"login": "ada"}, "published_at": "2026-03-05T00:00:00Z"},
                    {"id": 8, "tag_name": "v1.1", "draft": true}
                ]),
            ),
        ]);
        let s = settings();
        let first = crate::step(&s, None, &mut script).unwrap();
        assert!(!first.done);
        assert_eq!(first.items.len(), 1);
        let one = &first.items[0];
        assert_eq!(one.source_id, "acme/rocket#1");
        assert_eq!(one.kind, "issue");
        assert!(
            one.content
                .contains("Comments:\n- linus (2026-03-02): Same here"),
            "{}",
            one.content
        );
        let roles: Vec<(&str, &str)> = one
            .people
            .iter()
            .map(|p| (p.name.as_deref().unwrap(), p.role.as_str()))
            .collect();
        assert_eq!(
            roles,
            [
                ("ada", "author"),
                ("grace", "assignee"),
                ("linus", "commenter")
            ]
        );

        let second = crate::step(&s, first.next_cursor.as_deref(), &mut script).unwrap();
        assert_eq!(second.items.len(), 1);
        assert_eq!(second.items[0].kind, "pull_request");
        assert!(second.items[0].content.contains("State: merged"));
        assert_eq!(second.errors.len(), 1, "the malformed entry is one error");
        assert!(second.errors[0].message.contains("malformed issue"));

        let third = crate::step(&s, second.next_cursor.as_deref(), &mut script).unwrap();
        assert!(third.done);
        assert_eq!(third.items.len(), 1, "the draft is skipped");
        assert_eq!(third.items[0].source_id, "acme/rocket@release/7");
        let saved = Cursor::decode(third.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(saved.since["acme/rocket"], "2026-03-04T10:00:00Z");
        assert_eq!(
            script.asked[0],
            "https://api.example/repos/acme/rocket/issues?state=all&sort=updated&direction=asc&per_page=100"
        );

        // The next run asks only for what changed since.
        let mut again = Script::new(vec![(200, &[], serde_json::json!([]))]);
        let page = crate::step(&s, third.next_cursor.as_deref(), &mut again).unwrap();
        assert!(page.items.is_empty());
        assert!(
            again.asked[0].ends_with("&since=2026-03-04T10:00:00Z"),
            "{:?}",
            again.asked
        );
    }

    #[test]
    fn a_full_listing_a_day_names_unchanged_issues_without_fetching_them() {
        let s = settings();
        // The first run lists everything: it begins and ends a full listing.
        let mut first = Script::new(vec![
            (
                200,
                &[],
                serde_json::json!([
                    issue(1, "2026-03-03T10:00:00Z", 0, false),
                    issue(2, "2026-03-04T10:00:00Z", 0, false)
                ]),
            ),
            (200, &[], serde_json::json!([])),
        ]);
        let page = crate::step(&s, None, &mut first).unwrap();
        assert_eq!(page.items.len(), 2);
        let page = crate::step(&s, page.next_cursor.as_deref(), &mut first).unwrap();
        assert!(page.done);
        assert_eq!(first.listing, [(true, false), (false, true)]);
        let saved = page.next_cursor.unwrap();

        // An hour later: only what changed, and no listing (nothing can be retired).
        let mut soon = Script::new(vec![
            (200, &[], serde_json::json!([])),
            (200, &[], serde_json::json!([])),
        ]);
        soon.now = first.now + 3600;
        let page = crate::step(&s, Some(&saved), &mut soon).unwrap();
        let page = crate::step(&s, page.next_cursor.as_deref(), &mut soon).unwrap();
        assert!(soon.asked[0].contains("&since=2026-03-04T10:00:00Z"));
        assert!(soon.listing.is_empty());
        assert_eq!(page.next_cursor.as_deref(), Some(saved.as_str()));

        // A day later: every issue again, without `since`; issue 1 (unchanged) is named,
        // not fetched; issue 2 was deleted (absent); issue 3 is new, issue 4 edited.
        let mut later = Script::new(vec![
            (
                200,
                &[],
                serde_json::json!([
                    issue(1, "2026-03-03T10:00:00Z", 3, false),
                    issue(3, "2026-03-06T10:00:00Z", 0, false),
                    issue(4, "2026-03-05T10:00:00Z", 0, false)
                ]),
            ),
            (200, &[], serde_json::json!([])),
        ]);
        later.now = first.now + 24 * 3600;
        let page = crate::step(&s, Some(&saved), &mut later).unwrap();
        assert!(
            !later.asked[0].contains("since="),
            "a full listing asks for every issue: {}",
            later.asked[0]
        );
        assert_eq!(later.unchanged, ["acme/rocket#1"]);
        let ids: Vec<&str> = page.items.iter().map(|i| i.source_id.as_str()).collect();
        assert_eq!(ids, ["acme/rocket#3", "acme/rocket#4"]);
        assert_eq!(later.asked.len(), 1, "no comments fetched for issue 1");
        let page = crate::step(&s, page.next_cursor.as_deref(), &mut later).unwrap();
        assert!(page.done);
        assert_eq!(later.listing, [(true, false), (false, true)]);
        let next = Cursor::decode(page.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(next.last_full, Some(later.now));
        assert_eq!(next.since["acme/rocket"], "2026-03-06T10:00:00Z");

        // 0 hours: every run is a full listing.
        let every = Settings {
            full_listing_hours: 0,
            ..settings()
        };
        let mut again = Script::new(vec![(200, &[], serde_json::json!([]))]);
        again.now = later.now + 1;
        crate::step(&every, page.next_cursor.as_deref(), &mut again).unwrap();
        assert_eq!(again.listing, [(true, false)]);
    }

    #[test]
    fn rate_limits_and_bad_tokens_fail_the_call_and_a_missing_repo_is_one_error() {
        let s = settings();
        let mut limited = Script::new(vec![(429, &[("Retry-After", "30")], serde_json::json!({}))]);
        match crate::step(&s, None, &mut limited) {
            Err(Error::Unavailable(m)) => assert!(m.contains("retry after 30 s"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut exhausted = Script::new(vec![(
            403,
            &[("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "0")],
            serde_json::json!({"message": "API rate limit exceeded"}),
        )]);
        assert!(
            matches!(crate::step(&s, None, &mut exhausted), Err(Error::Unavailable(m)) if m.contains("rate limited"))
        );
        let mut refused = Script::new(vec![(
            401,
            &[],
            serde_json::json!({"message": "Bad credentials"}),
        )]);
        assert!(
            matches!(crate::step(&s, None, &mut refused), Err(Error::Unavailable(m)) if m.contains("401 Bad credentials") && m.contains("secret set github"))
        );
        let mut missing = Script::new(vec![(
            404,
            &[],
            serde_json::json!({"message": "Not Found"}),
        )]);
        let page = crate::step(&s, None, &mut missing).unwrap();
        assert_eq!(page.errors.len(), 1);
        assert_eq!(page.errors[0].location, "acme/rocket");
        assert!(page.errors[0].message.contains("not found"));
        assert_eq!(
            missing.asked.len(),
            1,
            "the repository's releases are skipped too"
        );
    }

    #[test]
    fn redirects_are_followed_as_new_requests_and_denials_name_the_host() {
        let s = settings();
        let mut moved = Script::new(vec![
            (
                301,
                &[("Location", "/repositories/42/issues")],
                serde_json::json!({}),
            ),
            (200, &[], serde_json::json!([])),
        ]);
        crate::step(&s, None, &mut moved).unwrap();
        assert_eq!(moved.asked[1], "https://api.example/repositories/42/issues");

        struct Denied;
        impl Fetch for Denied {
            fn get(&mut self, url: &str, _: &[(&str, &str)]) -> Result<Response, HttpError> {
                Err(HttpError::Denied(url.split('/').nth(2).unwrap().to_owned()))
            }
        }
        assert!(
            matches!(crate::step(&s, None, &mut Denied), Err(Error::Denied(m)) if m == "connect to api.example")
        );
    }

    #[test]
    fn a_cursor_saved_for_other_repositories_starts_the_pass_over() {
        let mut script = Script::new(vec![(
            200,
            &[(
                "Link",
                r#"<https://api.example/repos/acme/rocket/issues?page=2>; rel="next""#,
            )],
            serde_json::json!([]),
        )]);
        let s = settings();
        let page = crate::step(&s, None, &mut script).unwrap();
        let saved = page.next_cursor.unwrap();
        assert!(saved.contains("acme/rocket"), "{saved}");
        // Same index, another repository: page 2 of acme/rocket must not be read as it.
        let other = Settings {
            repos: vec!["acme/comet".into()],
            ..s
        };
        let mut fresh = Script::new(vec![(200, &[], serde_json::json!([]))]);
        crate::step(&other, Some(&saved), &mut fresh).unwrap();
        assert!(
            fresh.asked[0].starts_with("https://api.example/repos/acme/comet/issues?"),
            "{:?}",
            fresh.asked
        );
    }

    #[test]
    fn bad_settings_and_cursors_are_clear_errors() {
        let config = |pairs: &[(&str, &str)]| -> levh_connector_sdk::Config {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert!(
            matches!(Settings::from_config(&config(&[])), Err(Error::InvalidConfig(m)) if m.contains("repos"))
        );
        assert!(
            matches!(Settings::from_config(&config(&[("repos", "just-a-name")])), Err(Error::InvalidConfig(m)) if m.contains("owner/name"))
        );
        assert!(matches!(
            Settings::from_config(&config(&[("repos", "a/b"), ("base_url", "ftp://x")])),
            Err(Error::InvalidConfig(_))
        ));
        let ok = Settings::from_config(&config(&[
            ("repos", "a/b, c/d"),
            ("base_url", "http://127.0.0.1:9/"),
        ]))
        .unwrap();
        assert_eq!(ok.repos, ["a/b", "c/d"]);
        assert_eq!(ok.base_url, "http://127.0.0.1:9");
        assert!(
            matches!(crate::step(&ok, Some("{broken"), &mut Script::new(vec![])), Err(Error::Failed(m)) if m.contains("cursor"))
        );
    }
}
