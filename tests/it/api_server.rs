//! A loopback HTTP server (127.0.0.1 only) that answers with scripted responses and
//! records every request it got, headers included, for the network connector tests.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub url: String,
    /// Header names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.url.split('?').next().unwrap_or("")
    }

    /// A query parameter.
    pub fn query(&self, key: &str) -> Option<String> {
        let query = self.url.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then(|| v.replace("%3A", ":").replace("%2B", "+"))
        })
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// A binary body (a served file), as `application/octet-stream`.
    pub fn bytes(bytes: Vec<u8>) -> Self {
        // The harness sends bodies as strings; a file goes through latin-1, one char per
        // byte, and is turned back into the same bytes when sent (see `start`).
        Self {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "application/octet-stream".into()),
                ("X-Levh-Test-Binary".into(), "latin1".into()),
            ],
            body: bytes.into_iter().map(char::from).collect(),
        }
    }

    pub fn json(body: serde_json::Value) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn status(status: u16, body: serde_json::Value) -> Self {
        Self {
            status,
            ..Self::json(body)
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// The running server; stops when dropped.
pub struct ApiServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// `127.0.0.1:PORT`, as granted.
    pub authority: String,
    server: Arc<tiny_http::Server>,
    seen: Arc<Mutex<Vec<Seen>>>,
    thread: Option<JoinHandle<()>>,
}

impl ApiServer {
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let thread = {
            let server = server.clone();
            let seen = seen.clone();
            std::thread::spawn(move || {
                for mut request in server.incoming_requests() {
                    let mut body = String::new();
                    let _ = std::io::Read::read_to_string(request.as_reader(), &mut body);
                    let request_seen = Seen {
                        method: request.method().to_string(),
                        url: request.url().to_owned(),
                        headers: request
                            .headers()
                            .iter()
                            .map(|h| {
                                (
                                    h.field.as_str().as_str().to_ascii_lowercase(),
                                    h.value.as_str().to_owned(),
                                )
                            })
                            .collect(),
                        body,
                    };
                    let reply = handler(&request_seen);
                    seen.lock().unwrap().push(request_seen);
                    let binary = reply.headers.iter().any(|(k, _)| k == "X-Levh-Test-Binary");
                    let mut response = if binary {
                        let bytes: Vec<u8> = reply.body.chars().map(|c| c as u8).collect();
                        tiny_http::Response::from_data(bytes)
                    } else {
                        tiny_http::Response::from_string(reply.body)
                    }
                    .with_status_code(reply.status);
                    for (name, value) in reply.headers {
                        response.add_header(
                            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
                                .unwrap(),
                        );
                    }
                    let _ = request.respond(response);
                }
            })
        };
        Self {
            base: format!("http://127.0.0.1:{port}"),
            authority: format!("127.0.0.1:{port}"),
            server,
            seen,
            thread: Some(thread),
        }
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
