//! Talking to the Notion API: requests with the version header, redirects followed as new
//! requests (which the host checks again), short rate-limit waits, and every answer
//! sorted into "go on", "this database or page failed" and "the run failed".
//!
//! The network itself is behind [`Transport`], so all of this runs natively in tests.

use std::time::Duration;

use levh_connector_sdk::Error;
use levh_connector_sdk::http::{HttpError, Response};
use serde_json::Value;

/// The API version this connector speaks.
pub const NOTION_VERSION: &str = "2022-06-28";
/// Redirects followed for one request.
pub const MAX_REDIRECTS: usize = 3;
/// The longest `Retry-After` waited out inside a call; longer ones end the run.
pub const MAX_WAIT: Duration = Duration::from_secs(5);
/// Rate-limit waits per request.
const MAX_RETRIES: usize = 3;
/// How much of a Notion error message is kept.
const MESSAGE_CHARS: usize = 300;

/// The network and the clock, as one `sync` call sees them.
pub trait Transport {
    /// Sends one request; redirects are not followed.
    fn send(
        &mut self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Response, HttpError>;
    /// Time since the call began.
    fn elapsed(&self) -> Duration;
    /// Waits.
    fn sleep(&mut self, how_long: Duration);
    /// A log line through the host.
    fn log(&mut self, message: &str);
    /// Tells the host an item is gone from Notion (its memory is retired).
    fn removed(&mut self, source_id: &str, reason: &str);
    /// Tells the host this call began (`started`) or ended (`complete`) a full listing.
    fn listing(&mut self, started: bool, complete: bool);
    /// Tells the host a page is still there, not edited since the last run.
    fn unchanged(&mut self, source_id: &str);
    /// Unix seconds now (wall clock).
    fn now(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

/// Why a request did not give an answer to use.
#[derive(Debug, Clone)]
pub enum Failure {
    /// The whole call fails (token refused, rate limit, Notion down, host not granted).
    Run(Error),
    /// Only the object asked about: not found, not shared, or refused (400/403/404).
    Object(String),
}

impl Failure {
    #[cfg(test)]
    pub fn run_message(&self) -> String {
        match self {
            Failure::Run(
                Error::Denied(m)
                | Error::Unavailable(m)
                | Error::Failed(m)
                | Error::InvalidConfig(m),
            ) => m.clone(),
            Failure::Object(m) => m.clone(),
        }
    }
}

/// The Notion API at a base URL, over a transport.
pub struct Client<'t, T: Transport + ?Sized> {
    pub transport: &'t mut T,
    /// `https://api.notion.com`, no trailing slash.
    pub base: String,
    /// Calls may stop early past this (the host's deadline is later).
    pub budget: Duration,
}

impl<T: Transport + ?Sized> Client<'_, T> {
    /// `POST` a JSON body to a path under the base (`/v1/...`).
    pub fn post(&mut self, path: &str, body: &Value) -> Result<Value, Failure> {
        let url = format!("{}{path}", self.base);
        self.call("POST", &url, Some(body.to_string().into_bytes()))
    }

    /// `GET` a path under the base.
    pub fn get(&mut self, path: &str) -> Result<Value, Failure> {
        let url = format!("{}{path}", self.base);
        self.call("GET", &url, None)
    }

    /// Past the time budget of this call.
    pub fn out_of_time(&self) -> bool {
        self.transport.elapsed() >= self.budget
    }

    /// One request and its JSON answer, rate-limit waits included.
    fn call(&mut self, method: &str, url: &str, body: Option<Vec<u8>>) -> Result<Value, Failure> {
        let mut retries = 0;
        loop {
            let response = self.follow(method, url, body.as_deref())?;
            if response.status == 429 {
                let wait = retry_after(&response);
                let fits = wait
                    .is_some_and(|w| w <= MAX_WAIT && self.transport.elapsed() + w < self.budget);
                if fits && retries < MAX_RETRIES {
                    let wait = wait.unwrap_or_default();
                    retries += 1;
                    self.transport.log(&format!(
                        "notion rate limit: waiting {} s before retrying",
                        wait.as_secs()
                    ));
                    self.transport.sleep(wait);
                    continue;
                }
            }
            return answer(&response);
        }
    }

    /// Sends a request and follows up to [`MAX_REDIRECTS`] redirects, each as a new
    /// request the host checks again.
    fn follow(
        &mut self,
        method: &str,
        url: &str,
        body: Option<&[u8]>,
    ) -> Result<Response, Failure> {
        let mut method = method.to_owned();
        let mut url = url.to_owned();
        let mut body = body.map(<[u8]>::to_vec);
        for hop in 0..=MAX_REDIRECTS {
            let mut headers = vec![("Notion-Version", NOTION_VERSION)];
            if body.is_some() {
                headers.push(("Content-Type", "application/json"));
            }
            let response = self
                .transport
                .send(&method, &url, &headers, body.as_deref())
                .map_err(|e| transport_failure(&url, e))?;
            if !matches!(response.status, 301 | 302 | 303 | 307 | 308) {
                return Ok(response);
            }
            let Some(location) = response.header("location").filter(|l| !l.trim().is_empty())
            else {
                return Err(Failure::Run(Error::Failed(format!(
                    "notion answered {} without a Location to follow ({})",
                    response.status,
                    redact_query(&url)
                ))));
            };
            if hop == MAX_REDIRECTS {
                break;
            }
            let next = resolve(&url, location.trim());
            self.transport.log(&format!(
                "notion redirected {} ({}) to {}",
                redact_query(&url),
                response.status,
                redact_query(&next)
            ));
            if response.status == 303 {
                method = "GET".into();
                body = None;
            }
            url = next;
        }
        Err(Failure::Run(Error::Failed(format!(
            "notion redirected more than {MAX_REDIRECTS} times (last from {})",
            redact_query(&url)
        ))))
    }
}

/// A URL without its query (which may carry cursors), for messages.
fn redact_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// The host part of a URL (`host:port`), for messages.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

fn transport_failure(url: &str, error: HttpError) -> Failure {
    Failure::Run(match error {
        HttpError::Denied(host) => Error::Denied(format!(
            "connect to {host} refused by levh (not granted; `levh connector grant notion --host {}` allows it)",
            if host.is_empty() {
                authority(url)
            } else {
                host.as_str()
            }
        )),
        HttpError::BadUrl(what) => Error::Failed(format!("bad URL: {what}")),
        HttpError::Failed(what) => Error::Unavailable(format!(
            "notion at {} could not be reached: {what}",
            authority(url)
        )),
    })
}

/// Resolves a redirect's `Location` against the URL that answered it.
pub fn resolve(from: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let (scheme, rest) = from.split_once("://").unwrap_or(("https", from));
    if let Some(net) = location.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    if location.starts_with('/') {
        return format!("{scheme}://{host}{location}");
    }
    let path = rest[host.len()..].split(['?', '#']).next().unwrap_or("");
    let dir = path.rfind('/').map_or("/", |at| &path[..=at]);
    format!("{scheme}://{host}{dir}{location}")
}

/// `Retry-After` in seconds (Notion sends whole seconds).
pub fn retry_after(response: &Response) -> Option<Duration> {
    let text = response.header("retry-after")?.trim();
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs(s.ceil() as u64))
}

/// Notion's error code and message from an error body, if it has them.
fn notion_error(response: &Response) -> String {
    let parsed: Option<Value> = serde_json::from_slice(&response.body).ok();
    let code = parsed
        .as_ref()
        .and_then(|v| v.get("code"))
        .and_then(Value::as_str);
    let message = parsed
        .as_ref()
        .and_then(|v| v.get("message"))
        .and_then(Value::as_str);
    let text = match (code, message) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (Some(code), None) => code.to_owned(),
        (None, None) => String::from_utf8_lossy(&response.body).trim().to_owned(),
    };
    let mut short: String = text.chars().take(MESSAGE_CHARS).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

/// Sorts a final (non-redirect) answer.
pub fn answer(response: &Response) -> Result<Value, Failure> {
    let status = response.status;
    match status {
        200..=299 => serde_json::from_slice(&response.body).map_err(|e| {
            Failure::Run(Error::Failed(format!(
                "notion answered {status} with a body that is not JSON: {e}"
            )))
        }),
        401 => Err(Failure::Run(Error::Unavailable(format!(
            "notion refused the token (401 {}): store an integration token with \
             `levh connector secret set notion`",
            notion_error(response)
        )))),
        429 => Err(Failure::Run(Error::Unavailable(match retry_after(response) {
            Some(wait) => format!(
                "notion rate limited the sync (429); retry after {} s (the next `levh sync notion` resumes where this one stopped)",
                wait.as_secs()
            ),
            None => "notion rate limited the sync (429); retry in a minute (the next `levh sync notion` resumes where this one stopped)".into(),
        }))),
        400 | 403 | 404 => Err(Failure::Object(format!(
            "notion answered {status} ({})",
            notion_error(response)
        ))),
        500..=599 => Err(Failure::Run(Error::Unavailable(format!(
            "notion answered {status} ({}); try again later",
            notion_error(response)
        )))),
        _ => Err(Failure::Run(Error::Failed(format!(
            "notion answered {status} ({})",
            notion_error(response)
        )))),
    }
}

/// Percent-encodes a query value or path segment (all but unreserved characters).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
pub mod fake {
    //! A scripted transport for tests.

    use std::collections::VecDeque;

    use super::*;

    /// A request as the fake saw it.
    #[derive(Debug, Clone)]
    pub struct Sent {
        pub method: String,
        pub url: String,
        pub headers: Vec<(String, String)>,
        pub body: Option<String>,
    }

    /// How the fake answers a request.
    pub type Handler = Box<dyn FnMut(&Sent) -> Result<Response, HttpError>>;

    /// Answers from a handler; records requests, sleeps and logs; a clock tests move.
    pub struct Fake {
        pub handler: Handler,
        pub sent: Vec<Sent>,
        pub slept: Vec<Duration>,
        pub logs: Vec<String>,
        /// What the connector reported gone, with why.
        pub removed: Vec<(String, String)>,
        /// What it told of full listings (began, ended), and pages named unchanged.
        pub listing: Vec<(bool, bool)>,
        pub unchanged: Vec<String>,
        /// The wall clock, Unix seconds.
        pub wall: u64,
        pub now: Duration,
        /// Added to the clock per request.
        pub per_request: Duration,
        pub queue: VecDeque<Response>,
    }

    impl Fake {
        pub fn new(handler: impl FnMut(&Sent) -> Result<Response, HttpError> + 'static) -> Self {
            Self {
                handler: Box::new(handler),
                sent: Vec::new(),
                slept: Vec::new(),
                logs: Vec::new(),
                removed: Vec::new(),
                listing: Vec::new(),
                unchanged: Vec::new(),
                wall: 1_772_445_600,
                now: Duration::ZERO,
                per_request: Duration::ZERO,
                queue: VecDeque::new(),
            }
        }
    }

    pub fn reply(status: u16, body: Value) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn with_header(mut response: Response, name: &str, value: &str) -> Response {
        response
            .headers
            .push((name.to_ascii_lowercase(), value.into()));
        response
    }

    impl Transport for Fake {
        fn send(
            &mut self,
            method: &str,
            url: &str,
            headers: &[(&str, &str)],
            body: Option<&[u8]>,
        ) -> Result<Response, HttpError> {
            let sent = Sent {
                method: method.into(),
                url: url.into(),
                headers: headers
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                body: body.map(|b| String::from_utf8_lossy(b).into_owned()),
            };
            self.now += self.per_request;
            self.sent.push(sent.clone());
            if let Some(next) = self.queue.pop_front() {
                return Ok(next);
            }
            (self.handler)(&sent)
        }

        fn elapsed(&self) -> Duration {
            self.now
        }

        fn sleep(&mut self, how_long: Duration) {
            self.slept.push(how_long);
            self.now += how_long;
        }

        fn log(&mut self, message: &str) {
            self.logs.push(message.into());
        }

        fn removed(&mut self, source_id: &str, reason: &str) {
            self.removed.push((source_id.into(), reason.into()));
        }

        fn listing(&mut self, started: bool, complete: bool) {
            self.listing.push((started, complete));
        }

        fn unchanged(&mut self, source_id: &str) {
            self.unchanged.push(source_id.into());
        }

        fn now(&self) -> u64 {
            self.wall
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::fake::{Fake, reply, with_header};
    use super::*;

    fn client(fake: &mut Fake) -> Client<'_, Fake> {
        Client {
            transport: fake,
            base: "https://api.notion.com".into(),
            budget: Duration::from_secs(20),
        }
    }

    #[test]
    fn every_request_carries_the_version_and_json_bodies_their_type() {
        let mut fake = Fake::new(|_| Ok(reply(200, json!({ "object": "list" }))));
        client(&mut fake)
            .post("/v1/databases/d/query", &json!({ "page_size": 100 }))
            .unwrap();
        client(&mut fake)
            .get("/v1/blocks/p/children?page_size=100")
            .unwrap();
        let header = |i: usize, name: &str| {
            fake.sent[i]
                .headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header(0, "Notion-Version").as_deref(), Some("2022-06-28"));
        assert_eq!(
            header(0, "Content-Type").as_deref(),
            Some("application/json")
        );
        assert_eq!(fake.sent[0].body.as_deref(), Some(r#"{"page_size":100}"#));
        assert_eq!(header(1, "Notion-Version").as_deref(), Some("2022-06-28"));
        assert_eq!(header(1, "Content-Type"), None);
        assert!(
            fake.sent
                .iter()
                .all(|s| s.headers.iter().all(|(k, _)| k != "Authorization"))
        );
    }

    #[test]
    fn answers_are_sorted_into_object_and_run_failures() {
        let body = json!({ "object": "error", "status": 0, "code": "c", "message": "m" });
        let failure = |status: u16| answer(&reply(status, body.clone())).unwrap_err();
        assert!(matches!(failure(404), Failure::Object(m) if m == "notion answered 404 (c: m)"));
        assert!(matches!(failure(403), Failure::Object(_)));
        assert!(matches!(failure(400), Failure::Object(_)));
        let unauthorized = failure(401);
        assert!(
            matches!(&unauthorized, Failure::Run(Error::Unavailable(m)) if m.contains("refused the token (401")
                && m.contains("levh connector secret set notion")),
            "{unauthorized:?}"
        );
        assert!(matches!(failure(502), Failure::Run(Error::Unavailable(m)) if m.contains("502")));
        assert!(matches!(failure(418), Failure::Run(Error::Failed(_))));
        let limited =
            answer(&with_header(reply(429, body.clone()), "Retry-After", "7")).unwrap_err();
        assert!(
            matches!(&limited, Failure::Run(Error::Unavailable(m)) if m.contains("rate limited") && m.contains("retry after 7 s")),
            "{limited:?}"
        );
        let not_json = Response {
            status: 200,
            headers: Vec::new(),
            body: b"<html>".to_vec(),
        };
        assert!(matches!(
            answer(&not_json),
            Err(Failure::Run(Error::Failed(_)))
        ));
        let long = reply(404, json!({ "message": "x".repeat(1000) }));
        assert!(answer(&long).unwrap_err().run_message().chars().count() < 400);
    }

    #[test]
    fn redirects_are_followed_three_times_as_new_requests() {
        let mut fake = Fake::new(|sent| {
            Ok(match sent.url.as_str() {
                "https://api.notion.com/v1/a" => {
                    with_header(reply(307, json!({})), "Location", "/v1/b")
                }
                "https://api.notion.com/v1/b" => with_header(
                    reply(308, json!({})),
                    "Location",
                    "https://mirror.notion.com/v1/c",
                ),
                "https://mirror.notion.com/v1/c" => {
                    with_header(reply(303, json!({})), "Location", "d?x=1")
                }
                "https://mirror.notion.com/v1/d?x=1" => reply(200, json!({ "ok": true })),
                _ => reply(404, json!({})),
            })
        });
        let value = client(&mut fake).post("/v1/a", &json!({})).unwrap();
        assert_eq!(value, json!({ "ok": true }));
        let methods: Vec<&str> = fake.sent.iter().map(|s| s.method.as_str()).collect();
        assert_eq!(
            methods,
            ["POST", "POST", "POST", "GET"],
            "303 turns into GET"
        );
        assert!(fake.sent[1].body.is_some() && fake.sent[3].body.is_none());

        let mut looping =
            Fake::new(|_| Ok(with_header(reply(302, json!({})), "Location", "/v1/loop")));
        let error = client(&mut looping).get("/v1/loop").unwrap_err();
        assert!(
            error.run_message().contains("more than 3 times"),
            "{error:?}"
        );
        assert_eq!(
            looping.sent.len(),
            4,
            "the first request and three redirects"
        );
    }

    #[test]
    fn a_redirect_to_a_host_that_was_not_granted_is_denied() {
        let mut fake = Fake::new(|sent| {
            if sent.url.starts_with("http://127.0.0.2") {
                Err(HttpError::Denied("127.0.0.2:9".into()))
            } else {
                Ok(with_header(
                    reply(307, json!({})),
                    "Location",
                    "http://127.0.0.2:9/v1/x",
                ))
            }
        });
        let error = client(&mut fake).get("/v1/x").unwrap_err();
        assert!(
            matches!(&error, Failure::Run(Error::Denied(m)) if m.contains("127.0.0.2:9")),
            "{error:?}"
        );
    }

    #[test]
    fn short_rate_limits_are_waited_out_long_ones_end_the_run() {
        let mut fake = Fake::new(|_| Ok(reply(200, json!({ "ok": 1 }))));
        fake.queue
            .push_back(with_header(reply(429, json!({})), "Retry-After", "2"));
        assert_eq!(client(&mut fake).get("/v1/x").unwrap(), json!({ "ok": 1 }));
        assert_eq!(fake.slept, [Duration::from_secs(2)]);

        let mut fake = Fake::new(|_| Ok(with_header(reply(429, json!({})), "Retry-After", "7")));
        let error = client(&mut fake).get("/v1/x").unwrap_err();
        assert!(error.run_message().contains("retry after 7 s"));
        assert!(fake.slept.is_empty());

        let mut fake = Fake::new(|_| Ok(with_header(reply(429, json!({})), "Retry-After", "1")));
        let error = client(&mut fake).get("/v1/x").unwrap_err();
        assert!(error.run_message().contains("retry after 1 s"));
        assert_eq!(fake.slept.len(), MAX_RETRIES);
    }

    #[test]
    fn network_failures_and_refusals_say_which_host() {
        let mut fake = Fake::new(|_| Err(HttpError::Failed("connection refused".into())));
        let error = client(&mut fake).get("/v1/x").unwrap_err();
        assert!(
            matches!(&error, Failure::Run(Error::Unavailable(m)) if m.contains("api.notion.com") && m.contains("connection refused")),
            "{error:?}"
        );
        let mut fake = Fake::new(|_| Err(HttpError::Denied("api.notion.com".into())));
        let error = client(&mut fake).get("/v1/x").unwrap_err();
        assert!(
            matches!(&error, Failure::Run(Error::Denied(m)) if m.contains("levh connector grant notion --host api.notion.com")),
            "{error:?}"
        );
    }

    #[test]
    fn locations_resolve_against_the_answering_url() {
        let from = "http://127.0.0.1:8080/v1/blocks/p/children?page_size=100";
        assert_eq!(resolve(from, "https://x.test/a"), "https://x.test/a");
        assert_eq!(resolve(from, "//y.test/b"), "http://y.test/b");
        assert_eq!(resolve(from, "/v2/c?q=1"), "http://127.0.0.1:8080/v2/c?q=1");
        assert_eq!(
            resolve(from, "more"),
            "http://127.0.0.1:8080/v1/blocks/p/more"
        );
        assert_eq!(resolve("http://h", "z"), "http://h/z");
    }

    #[test]
    fn values_are_percent_encoded() {
        assert_eq!(encode("a-b_c.d~e"), "a-b_c.d~e");
        assert_eq!(encode("x y/z?&="), "x%20y%2Fz%3F%26%3D");
    }
}
