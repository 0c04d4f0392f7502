//! The `github` connector: issues and pull requests (with their comments) and releases
//! of the repositories you list, one item each, incrementally.
//!
//! Everything but the HTTP calls is plain Rust over a [`Fetch`] trait, so the paging,
//! cursor, error handling and item building run natively in tests with canned
//! responses; inside the component, [`Fetch`] is the SDK's `wasi:http` client, and the
//! host decides which hosts it reaches and attaches the user's token.

pub mod api;
pub mod cursor;

use levh_connector_sdk::http::{HttpError, Response};
use levh_connector_sdk::{Error, Page};

pub use cursor::Cursor;

/// Sends a GET, and tells the host about a full listing. The component's are
/// `levh_connector_sdk::http::get` and the SDK's listing imports.
pub trait Fetch {
    /// GETs `url` with these headers.
    fn get(&mut self, url: &str, headers: &[(&str, &str)]) -> Result<Response, HttpError>;

    /// This call began (`started`) or ended (`complete`) a full listing of every
    /// configured repository.
    fn listing(&mut self, _started: bool, _complete: bool) {}

    /// An issue the full listing found unchanged since the last run (named, not fetched).
    fn unchanged(&mut self, _source_id: &str) {}

    /// Unix seconds now.
    fn now(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

/// Settings of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `owner/name`, in order.
    pub repos: Vec<String>,
    /// The API root, without a trailing slash.
    pub base_url: String,
    /// Hours between full listings (every issue named, so what was deleted or transferred
    /// is retired); 0: every run. Runs in between ask only for what changed.
    pub full_listing_hours: u64,
}

/// A day: deletions and transfers are rare, and a full listing costs one request per 100
/// issues (unchanged ones are named, not fetched with their comments).
pub const DEFAULT_FULL_LISTING_HOURS: u64 = 24;

/// The public API; GitHub Enterprise and tests set another.
pub const DEFAULT_BASE_URL: &str = "https://api.github.com";

impl Settings {
    /// Reads and checks the config.
    pub fn from_config(config: &levh_connector_sdk::Config) -> Result<Self, Error> {
        let repos: Vec<String> = levh_connector_sdk::required(config, "repos")?
            .split(',')
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        for repo in &repos {
            let mut parts = repo.split('/');
            let ok = matches!((parts.next(), parts.next(), parts.next()), (Some(o), Some(n), None) if !o.is_empty() && !n.is_empty());
            if !ok {
                return Err(Error::InvalidConfig(format!(
                    "`repos`: {repo:?} is not owner/name"
                )));
            }
        }
        if repos.is_empty() {
            return Err(Error::InvalidConfig("`repos` lists no repository".into()));
        }
        let base_url = levh_connector_sdk::config_value(config, "base_url")
            .unwrap_or(DEFAULT_BASE_URL)
            .trim()
            .trim_end_matches('/')
            .to_owned();
        if !base_url.starts_with("https://") && !base_url.starts_with("http://") {
            return Err(Error::InvalidConfig(format!(
                "`base_url`: {base_url:?} is not an http(s) URL"
            )));
        }
        let full_listing_hours =
            levh_connector_sdk::integer(config, "full_listing_hours", DEFAULT_FULL_LISTING_HOURS)?;
        Ok(Self {
            repos,
            base_url,
            full_listing_hours,
        })
    }
}

/// One `sync` call: fetches one API page of the current repository and stage (plus the
/// comments of the issues on it) and says where the next call continues.
pub fn step(
    settings: &Settings,
    cursor: Option<&str>,
    fetch: &mut dyn Fetch,
) -> Result<Page, Error> {
    let cursor = match cursor {
        Some(text) => Cursor::decode(text).map_err(|e| {
            Error::Failed(format!(
                "the saved cursor is unreadable ({e}); run `levh sync github` with a fresh state"
            ))
        })?,
        None => Cursor::default(),
    };
    api::step(settings, cursor, fetch)
}

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_connector_sdk::http::{HttpError, Response};
    use levh_connector_sdk::{Capability, Config, ConfigType, Error, Guest, Manifest, Page};

    struct GitHub;

    struct Wasi;

    impl super::Fetch for Wasi {
        fn get(&mut self, url: &str, headers: &[(&str, &str)]) -> Result<Response, HttpError> {
            levh_connector_sdk::http::get(url, headers)
        }

        fn listing(&mut self, started: bool, complete: bool) {
            levh_connector_sdk::full_listing(started, complete);
        }

        fn unchanged(&mut self, source_id: &str) {
            levh_connector_sdk::unchanged(source_id);
        }
    }

    use levh_connector_sdk::setting as key;

    impl Guest for GitHub {
        fn manifest() -> Manifest {
            Manifest {
                id: "github".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description:
                    "Issues, pull requests (with comments) and releases of GitHub repositories"
                        .into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![
                    key(
                        "repos",
                        ConfigType::TextList,
                        true,
                        None,
                        "Repositories as owner/name, comma-separated.",
                    ),
                    key(
                        "base_url",
                        ConfigType::Text,
                        false,
                        Some(super::DEFAULT_BASE_URL),
                        "The API root (GitHub Enterprise: https://HOST/api/v3).",
                    ),
                    key(
                        "full_listing_hours",
                        ConfigType::Integer,
                        false,
                        Some("24"),
                        "Hours between full listings, which retire deleted and transferred issues (0: every run).",
                    ),
                ],
                // The host of `base_url`: api.github.com unless set otherwise.
                capabilities: vec![Capability::HttpHost("base_url".into())],
            }
        }

        fn sync(config: Config, cursor: Option<String>) -> Result<Page, Error> {
            let settings = super::Settings::from_config(&config)?;
            super::step(&settings, cursor.as_deref(), &mut Wasi)
        }
    }

    levh_connector_sdk::export_connector!(GitHub);
}
