//! Outgoing HTTP for plugins, policed by the host.
//!
//! A plugin reaches the network only through `wasi:http`, and only when its manifest asks
//! for a host *and* the user granted it; then every request passes [`HttpPolicy`]: the
//! URL's scheme, host and port are parsed and normalised and checked against the allowed
//! origins (so a redirect the plugin follows is checked again, as a new request); plain
//! `http` is allowed to loopback only; each request has a deadline and its response body
//! a size cap. The user's credential for the plugin is attached here, on allowed requests
//! only: the plugin never sees it, and cannot set `Authorization` itself.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderName, HeaderValue, PROXY_AUTHORIZATION};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{
    DEFAULT_FORBIDDEN_HEADERS, Error as HttpError, ForbiddenHeaderFilter, RequestOptions, WasiBody,
    WasiHttpHooks, default_send_request,
};

use crate::{Capability, Manifest};

/// A host and port a plugin may connect to, normalised (lowercase host, explicit port).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// Host name or IP address, lowercase, without brackets or a trailing dot.
    pub host: String,
    /// Port (443 when none was given and the scheme is not `http`).
    pub port: u16,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl serde::Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Origin {
    /// Parses `host`, `host:port`, `[v6]:port` or a URL (`https://host[:port]/...`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let with_scheme = if text.contains("://") {
            text.to_owned()
        } else {
            format!("https://{text}")
        };
        let uri: http::Uri = with_scheme
            .parse()
            .map_err(|e| format!("{text:?} is not a host or URL: {e}"))?;
        let default_port = match uri.scheme_str() {
            Some("https") => 443,
            Some("http") => 80,
            other => {
                return Err(format!(
                    "{text:?}: scheme {} is not http or https",
                    other.unwrap_or("(none)")
                ));
            }
        };
        let host = uri
            .host()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("{text:?} has no host"))?;
        Ok(Self {
            host: normalise_host(host),
            port: uri.port_u16().unwrap_or(default_port),
        })
    }

    /// Loopback: the only place plain `http` may go (local test servers, local tools).
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

fn normalise_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// The hosts a manifest asks for. An `http-host` naming one of the plugin's own config
/// keys means the host of the URL in that key (its default when unset), so a connector
/// with a `base_url` setting can point at GitHub Enterprise or a test server; any other
/// value is a host itself.
pub fn requested_origins(
    manifest: &Manifest,
    config: &[(String, String)],
) -> Result<Vec<Origin>, String> {
    let mut origins = Vec::new();
    for capability in &manifest.capabilities {
        let Capability::HttpHost(target) = capability else {
            continue;
        };
        let from_key = manifest.config.iter().find(|k| &k.name == target);
        let text = match from_key {
            Some(key) => config
                .iter()
                .find(|(k, _)| k == target)
                .map(|(_, v)| v.clone())
                .or_else(|| key.default_value.clone())
                .ok_or_else(|| format!("`{target}` is not set"))?,
            None => target.clone(),
        };
        let origin = Origin::parse(&text).map_err(|e| format!("`{target}`: {e}"))?;
        if !origins.contains(&origin) {
            origins.push(origin);
        }
    }
    Ok(origins)
}

/// A credential the host attaches for a plugin. Never printed, never serialised.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential(String);

impl Credential {
    /// Wraps a token (surrounding whitespace and newlines dropped).
    pub fn new(token: &str) -> Self {
        Self(token.trim().to_owned())
    }

    /// The token, for the one place that sends it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(***)")
    }
}

/// Per-request limits.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest response body a plugin may read.
pub const RESPONSE_BYTES: u64 = 16 << 20;

/// The `wasi:http` hooks of one call's store.
pub(crate) struct HttpPolicy {
    allowed: Vec<Origin>,
    credential: Option<Credential>,
    /// Refused requests, for the error the host reports after the call.
    pub(crate) denied: Arc<Mutex<Vec<String>>>,
}

impl HttpPolicy {
    pub(crate) fn new(allowed: Vec<Origin>, credential: Option<Credential>) -> Self {
        Self {
            allowed,
            credential,
            denied: Arc::default(),
        }
    }

    fn deny(&self, what: String) -> Box<dyn Future<Output = Result<Sent, HttpError>> + Send> {
        tracing::warn!("plugin HTTP request refused: {what}");
        if let Ok(mut denied) = self.denied.lock() {
            denied.push(what);
        }
        Box::new(async { Err(HttpError::HttpRequestDenied) })
    }
}

type Sent = (
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), HttpError>> + Send>,
);

fn forbidden(name: &HeaderName) -> bool {
    name == AUTHORIZATION || name == PROXY_AUTHORIZATION || DEFAULT_FORBIDDEN_HEADERS.contains(name)
}

impl WasiHttpHooks for HttpPolicy {
    fn is_forbidden_header(&mut self, name: &HeaderName) -> bool {
        forbidden(name)
    }

    fn forbidden_header_filter(&mut self) -> ForbiddenHeaderFilter {
        Arc::new(forbidden)
    }

    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> Box<dyn Future<Output = Result<Sent, HttpError>> + Send> {
        drop(fut);
        let uri = request.uri().clone();
        let origin = match Origin::parse(&uri.to_string()) {
            Ok(origin) => origin,
            Err(e) => return self.deny(e),
        };
        if !self.allowed.contains(&origin) {
            return self.deny(format!("connect to {origin} (not granted)"));
        }
        if uri.scheme_str() != Some("https") && !origin.is_loopback() {
            return self.deny(format!(
                "plain http to {origin} (only https leaves this machine)"
            ));
        }
        if let Some(credential) = &self.credential
            && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", credential.expose()))
        {
            value.set_sensitive(true);
            request.headers_mut().insert(AUTHORIZATION, value);
        }
        let shorter =
            |asked: Option<Duration>, cap: Duration| Some(asked.map_or(cap, |a| a.min(cap)));
        let options = RequestOptions {
            connect_timeout: shorter(options.and_then(|o| o.connect_timeout), CONNECT_TIMEOUT),
            first_byte_timeout: shorter(
                options.and_then(|o| o.first_byte_timeout),
                RESPONSE_TIMEOUT,
            ),
            between_bytes_timeout: shorter(
                options.and_then(|o| o.between_bytes_timeout),
                RESPONSE_TIMEOUT,
            ),
        };
        Box::new(async move {
            let (response, io) = default_send_request(request, Some(options)).await?;
            let response = response.map(|body| {
                Capped {
                    inner: body.boxed_unsync(),
                    left: RESPONSE_BYTES,
                }
                .boxed_unsync()
            });
            Ok((
                response,
                Box::new(io) as Box<dyn Future<Output = Result<(), HttpError>> + Send>,
            ))
        })
    }
}

/// A response body that fails once it passes its size cap.
struct Capped {
    inner: WasiBody,
    left: u64,
}

impl Body for Capped {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            let len = data.len() as u64;
            if len > self.left {
                return Poll::Ready(Some(Err(HttpError::HttpResponseBodySize(Some(
                    RESPONSE_BYTES,
                )))));
            }
            self.left -= len;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalised() {
        let o = |t: &str| Origin::parse(t).unwrap().to_string();
        assert_eq!(o("api.github.com"), "api.github.com:443");
        assert_eq!(o("HTTPS://API.GitHub.com./repos?x=1"), "api.github.com:443");
        assert_eq!(o("http://127.0.0.1:8080/v1"), "127.0.0.1:8080");
        assert_eq!(o("http://example.com"), "example.com:80");
        assert_eq!(o("[::1]:9000"), "[::1]:9000");
        assert!(Origin::parse("ftp://example.com").is_err());
        assert!(Origin::parse("https://").is_err());
        assert!(Origin::parse("http://127.0.0.1:1").unwrap().is_loopback());
        assert!(Origin::parse("localhost:3000").unwrap().is_loopback());
        assert!(!Origin::parse("10.0.0.1").unwrap().is_loopback());
    }

    #[test]
    fn a_credential_never_prints() {
        let c = Credential::new("ghp_secret\n");
        assert_eq!(format!("{c:?}"), "Credential(***)");
        assert_eq!(c.expose(), "ghp_secret");
    }
}
