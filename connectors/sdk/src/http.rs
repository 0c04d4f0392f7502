//! Blocking HTTP for connectors, over `wasi:http` (enable the `http` feature).
//!
//! The host decides where a request may go (the hosts the manifest asks for that the
//! user granted) and attaches the user's token itself: a connector never handles
//! credentials, and cannot set `Authorization`. A refused request comes back as
//! [`HttpError::Denied`]; return it as the `denied` error so the user sees which host.

use std::io::{Read, Write};

use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

/// A response, its body read in full (the host caps its size).
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, names lowercase, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpError {
    /// The host refused it: the URL's host was not granted.
    Denied(String),
    /// The URL could not be understood.
    BadUrl(String),
    /// Anything on the way: connection, timeout, a body over the host's cap.
    Failed(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Denied(what) => write!(f, "request to {what} refused by levh (not granted)"),
            Self::BadUrl(what) => write!(f, "bad URL: {what}"),
            Self::Failed(what) => write!(f, "{what}"),
        }
    }
}

/// `GET url` with extra headers.
pub fn get(url: &str, headers: &[(&str, &str)]) -> Result<Response, HttpError> {
    send("GET", url, headers, None)
}

/// `POST url` with a body (e.g. JSON) and extra headers.
pub fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Response, HttpError> {
    send("POST", url, headers, Some(body))
}

/// Splits `scheme://authority/path?query`.
fn split_url(url: &str) -> Result<(Scheme, &str, &str), HttpError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| HttpError::BadUrl(format!("{url}: no scheme")))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => return Err(HttpError::BadUrl(format!("{url}: scheme {other}"))),
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(HttpError::BadUrl(format!("{url}: no host")));
    }
    Ok((scheme, authority, path))
}

fn failed(what: &str, code: ErrorCode) -> HttpError {
    match code {
        ErrorCode::HttpRequestDenied => HttpError::Denied(what.to_owned()),
        other => HttpError::Failed(format!("{what}: {other:?}")),
    }
}

/// Sends one request and reads the whole response. Redirects are not followed here: a
/// connector that follows one sends a new request, which the host checks again.
pub fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Response, HttpError> {
    let (scheme, authority, path) = split_url(url)?;
    let fields = Fields::new();
    for (name, value) in headers {
        fields
            .append(name, value.as_bytes())
            .map_err(|e| HttpError::BadUrl(format!("header {name}: {e:?}")))?;
    }
    let request = OutgoingRequest::new(fields);
    let method = match method {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        other => Method::Other(other.to_owned()),
    };
    let set = |ok: Result<(), ()>, what: &str| {
        ok.map_err(|()| HttpError::BadUrl(format!("{url}: bad {what}")))
    };
    set(request.set_method(&method), "method")?;
    set(request.set_scheme(Some(&scheme)), "scheme")?;
    set(request.set_authority(Some(authority)), "host")?;
    set(request.set_path_with_query(Some(path)), "path")?;
    let outgoing = request
        .body()
        .map_err(|()| HttpError::Failed("request body unavailable".into()))?;
    if let Some(bytes) = body {
        let mut stream = outgoing
            .write()
            .map_err(|()| HttpError::Failed("request body stream unavailable".into()))?;
        stream
            .write_all(bytes)
            .and_then(|()| Write::flush(&mut stream))
            .map_err(|e| HttpError::Failed(format!("sending the body: {e}")))?;
    }
    let future = outgoing_handler::handle(request, None).map_err(|e| failed(authority, e))?;
    OutgoingBody::finish(outgoing, None).map_err(|e| failed(authority, e))?;
    future.subscribe().block();
    let response = future
        .get()
        .ok_or_else(|| HttpError::Failed(format!("{authority}: no response")))?
        .map_err(|()| HttpError::Failed(format!("{authority}: response already taken")))?
        .map_err(|e| failed(authority, e))?;
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                String::from_utf8_lossy(&v).into_owned(),
            )
        })
        .collect();
    let incoming = response
        .consume()
        .map_err(|()| HttpError::Failed("response body unavailable".into()))?;
    let mut body = Vec::new();
    {
        let mut stream = incoming
            .stream()
            .map_err(|()| HttpError::Failed("response body stream unavailable".into()))?;
        stream
            .read_to_end(&mut body)
            .map_err(|e| HttpError::Failed(format!("{authority}: reading the response: {e}")))?;
    }
    drop(incoming);
    Ok(Response {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_scheme_host_and_path() {
        let (scheme, host, path) = split_url("https://api.github.com/repos/a/b?page=2").unwrap();
        assert!(matches!(scheme, Scheme::Https));
        assert_eq!((host, path), ("api.github.com", "/repos/a/b?page=2"));
        let (scheme, host, path) = split_url("http://127.0.0.1:8080").unwrap();
        assert!(matches!(scheme, Scheme::Http));
        assert_eq!((host, path), ("127.0.0.1:8080", "/"));
        assert!(split_url("ftp://x/y").is_err());
        assert!(split_url("https:///y").is_err());
        assert!(split_url("api.github.com").is_err());
    }
}
