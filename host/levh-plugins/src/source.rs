//! A connector plugin as a levh-core sync [`Source`].

use levh_core::Timestamp;
use levh_core::sync::{
    FetchError, FetchFailure, ItemPerson, Source, SourceItem, SourceItemError, SourcePage,
    SourceRemoval, SourceSkip,
};
use sha2::{Digest, Sha256};

use crate::{Connector, Grants, GuestErrorKind, PluginError, PluginHost, SyncPage};

/// Runs a connector page by page for `Levh::sync`.
#[derive(Debug)]
pub struct ConnectorSource<'a> {
    host: &'a PluginHost,
    connector: &'a Connector,
    config: Vec<(String, String)>,
    grants: Grants,
    /// The sandbox folder each path setting is seen under (`/grant/KEY`) and the folder
    /// on this machine it stands for.
    guest_paths: Vec<(String, std::path::PathBuf)>,
}

impl<'a> ConnectorSource<'a> {
    /// A source over `connector` with this config and these grants.
    pub fn new(
        host: &'a PluginHost,
        connector: &'a Connector,
        config: Vec<(String, String)>,
        grants: Grants,
    ) -> Self {
        let guest_paths = config
            .iter()
            .filter(|(key, _)| {
                connector
                    .manifest
                    .capabilities
                    .iter()
                    .any(|c| matches!(c, crate::Capability::ReadPath(k) if k == key))
            })
            .filter_map(|(key, value)| {
                let path = std::path::Path::new(value).canonicalize().ok()?;
                Some((format!("/grant/{key}"), crate::grant_root(&path)))
            })
            .collect();
        Self {
            host,
            connector,
            config,
            grants,
            guest_paths,
        }
    }

    /// A `file:` address the connector wrote with its sandbox path, as the path the
    /// person gave (`file:/grant/transcript_dir/a.vtt` → `file:/home/ana/calls/a.vtt`):
    /// the memory's page links to the file on this machine, not into the sandbox.
    fn host_uri(&self, uri: String) -> String {
        let Some(path) = uri.strip_prefix("file:") else {
            return uri;
        };
        for (guest, host) in &self.guest_paths {
            if let Some(rest) = path.strip_prefix(guest.as_str())
                && (rest.is_empty() || rest.starts_with('/') || rest.starts_with('#'))
            {
                return format!("file:{}{rest}", host.display());
            }
        }
        uri
    }
}

impl Source for ConnectorSource<'_> {
    fn connector(&self) -> &str {
        &self.connector.manifest.id
    }

    /// `id@` and a fingerprint of the configuration (keys and values, in key order):
    /// another mailbox, vault or repository list keeps a cursor of its own.
    fn cursor_key(&self) -> String {
        format!(
            "{}@{}",
            self.connector.manifest.id,
            config_fingerprint(&self.config)
        )
    }

    fn fetch(&mut self, cursor: Option<String>) -> Result<SourcePage, FetchError> {
        let page = self
            .host
            .sync(self.connector, &self.config, cursor, &self.grants)
            .map_err(|e| FetchError::new(failure_of(&e), e.to_string()))?;
        let mut page = convert(page);
        for item in &mut page.items {
            item.source_uri = item.source_uri.take().map(|uri| self.host_uri(uri));
        }
        Ok(page)
    }
}

/// The kind of a plugin failure, kept typed up to the surfaces.
pub(crate) fn failure_of(error: &PluginError) -> FetchFailure {
    match error {
        PluginError::Denied { .. } => FetchFailure::Denied,
        PluginError::Trapped { .. } => FetchFailure::Trapped,
        PluginError::Guest { kind, .. } => match kind {
            GuestErrorKind::Denied => FetchFailure::Denied,
            GuestErrorKind::InvalidConfig => FetchFailure::InvalidConfig,
            GuestErrorKind::Unavailable => FetchFailure::Unavailable,
            _ => FetchFailure::Failed,
        },
        _ => FetchFailure::Failed,
    }
}

/// Checks what the guest returned: an item with an unreadable time or metadata becomes an
/// item error (skipped and reported), never a failed page.
pub(crate) fn convert(page: SyncPage) -> SourcePage {
    let mut errors: Vec<SourceItemError> = page
        .errors
        .into_iter()
        .map(|e| SourceItemError {
            source_id: e.source_id,
            location: e.location,
            message: e.message,
        })
        .collect();
    let mut items = Vec::with_capacity(page.items.len());
    for item in page.items {
        let bad = |message: String| SourceItemError {
            source_id: Some(item.source_id.clone()),
            location: item.source_id.clone(),
            message,
        };
        if item.source_id.trim().is_empty() {
            errors.push(bad("the connector gave an item without a source id".into()));
            continue;
        }
        let occurred_at = match item.occurred_at.as_deref().map(str::parse::<Timestamp>) {
            None => None,
            Some(Ok(at)) => Some(at),
            Some(Err(_)) => {
                errors.push(bad(format!(
                    "occurred-at {:?} is not an RFC 3339 time",
                    item.occurred_at.unwrap_or_default()
                )));
                continue;
            }
        };
        let metadata = match serde_json::from_str::<serde_json::Value>(&item.metadata) {
            Ok(value @ serde_json::Value::Object(_)) => value,
            Ok(_) | Err(_) if item.metadata.trim().is_empty() => serde_json::json!({}),
            _ => {
                errors.push(bad("metadata is not a JSON object".into()));
                continue;
            }
        };
        items.push(SourceItem {
            source_id: item.source_id,
            title: item.title,
            content: item.content,
            kind: item.kind,
            occurred_at,
            people: item
                .people
                .into_iter()
                .map(|p| ItemPerson {
                    name: p.name,
                    email: p.email,
                    role: p.role,
                })
                .collect(),
            source_uri: item.source_uri,
            metadata,
        });
    }
    SourcePage {
        items,
        errors,
        skipped: page
            .skipped
            .into_iter()
            .map(|s| SourceSkip {
                source_id: s.source_id,
                reason: s.reason,
            })
            .collect(),
        removed: page
            .removed
            .into_iter()
            .map(|r| SourceRemoval {
                source_id: r.source_id,
                reason: r.reason,
            })
            .collect(),
        unchanged: page.unchanged,
        names_overflowed: page.names_overflowed,
        listing_started: page.listing_started,
        listing_complete: page.listing_complete,
        next_cursor: page.next_cursor,
        done: page.done,
    }
}

/// 16 hex digits of a SHA-256 over the configuration's keys and values in key order,
/// each length-prefixed so `a=bc` and `ab=c` differ.
fn config_fingerprint(config: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = config.iter().collect();
    sorted.sort();
    let mut hasher = Sha256::new();
    for (key, value) in sorted {
        for part in [key, value] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SyncItem;

    fn item(id: &str, at: Option<&str>, metadata: &str) -> SyncItem {
        SyncItem {
            source_id: id.into(),
            title: "t".into(),
            content: "c".into(),
            kind: "note".into(),
            occurred_at: at.map(str::to_owned),
            people: Vec::new(),
            source_uri: None,
            metadata: metadata.into(),
        }
    }

    #[test]
    fn bad_items_become_item_errors_and_good_ones_pass() {
        let page = SyncPage {
            items: vec![
                item("good", Some("2026-03-02T09:00:00Z"), "{\"a\":1}"),
                item("bad-time", Some("tuesday"), "{}"),
                item("bad-metadata", None, "[1]"),
                item("", None, "{}"),
                item("no-metadata", None, ""),
            ],
            errors: Vec::new(),
            skipped: Vec::new(),
            removed: Vec::new(),
            unchanged: Vec::new(),
            names_overflowed: false,
            listing_started: false,
            listing_complete: false,
            next_cursor: None,
            done: true,
        };
        let converted = convert(page);
        let ids: Vec<&str> = converted
            .items
            .iter()
            .map(|i| i.source_id.as_str())
            .collect();
        assert_eq!(ids, ["good", "no-metadata"]);
        assert_eq!(converted.errors.len(), 3);
        assert!(
            converted.errors[0]
                .message
                .contains("\"tuesday\" is not an RFC 3339 time")
        );
    }

    fn config(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_fingerprint_depends_on_the_configuration_not_its_order() {
        let a = config_fingerprint(&config(&[("mbox_path", "/a"), ("max_messages", "2")]));
        let same = config_fingerprint(&config(&[("max_messages", "2"), ("mbox_path", "/a")]));
        let other = config_fingerprint(&config(&[("mbox_path", "/b"), ("max_messages", "2")]));
        let shifted = config_fingerprint(&config(&[("mbox_pat", "h/a"), ("max_messages", "2")]));
        assert_eq!(a, same);
        assert_ne!(a, other);
        assert_ne!(a, shifted);
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
