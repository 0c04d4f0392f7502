//! Host bindings for `levh:plugin@0.1.x` (the newest 0.1 package, 0.1.2). The generated types never leave this module:
//! they are converted to the crate's own types at the boundary, so a future API version
//! gets its own module and `From` conversions, and nothing else changes.

pub(crate) mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../../wit/levh-plugin@0.1.2",
        world: "connector",
        exports: { default: async },
    });

    /// The scorer world shares the connector world's types and host interface.
    pub(crate) mod scorer {
        wasmtime::component::bindgen!({
            path: "../../wit/levh-plugin@0.1.2",
            world: "scorer",
            exports: { default: async },
            with: {
                "levh:plugin/types": super::levh::plugin::types,
                "levh:plugin/host": super::levh::plugin::host,
            },
        });
    }
}

use v0_1::levh::plugin::types as wit;

use crate::{Capability, ConfigKey, ItemError, Manifest, Person, SyncItem, SyncPage};

/// The plugin API versions this host has bindings for. A guest states the version it was
/// built against (the SDK stamps it into the manifest); each binding accepts a semver
/// range, as Zed's extension host does: below 1.0 a patch release only adds host imports
/// (marked `@since`), so a guest built against any 0.1.x runs on the 0.1 bindings.
/// Breaking changes get a new WIT folder, a new bindings module and a new variant here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApiVersion {
    /// `levh:plugin@0.1.x` (bindings from `wit/levh-plugin@0.1.2`).
    V0_1,
}

impl ApiVersion {
    /// Every version this host runs, newest first.
    pub const ALL: &[ApiVersion] = &[ApiVersion::V0_1];

    /// The newest plugin API this host has bindings for: a guest built against a later
    /// patch runs only if it uses nothing that patch added.
    pub const NEWEST: &'static str = "0.1.2";

    /// What this levh serves, for messages: `0.1.0–0.1.2`.
    pub fn served_range() -> String {
        format!("0.1.0–{}", Self::NEWEST)
    }

    /// Whether `version` is one this host has every import of (not newer than
    /// [`ApiVersion::NEWEST`], within a range the bindings accept).
    pub fn serves(version: &str) -> bool {
        let (Ok(version), Ok(newest)) = (
            semver::Version::parse(version.trim()),
            semver::Version::parse(Self::NEWEST),
        ) else {
            return false;
        };
        version <= newest && Self::for_guest(&version.to_string()).is_ok()
    }

    /// The guest versions these bindings accept.
    pub fn accepts(self) -> &'static str {
        match self {
            Self::V0_1 => ">=0.1.0, <0.2.0",
        }
    }

    /// The bindings a guest built against `version` runs on, or why none.
    pub fn for_guest(version: &str) -> Result<Self, String> {
        let parsed = semver::Version::parse(version.trim()).map_err(|e| {
            format!("its plugin API version {version:?} is not a semantic version ({e})")
        })?;
        Self::ALL
            .iter()
            .copied()
            .find(|api| {
                semver::VersionReq::parse(api.accepts()).is_ok_and(|range| range.matches(&parsed))
            })
            .ok_or_else(|| {
                format!(
                    "it targets plugin API {version}; this levh serves {}",
                    Self::served_range()
                )
            })
    }
}

impl From<wit::Manifest> for Manifest {
    fn from(m: wit::Manifest) -> Self {
        Self {
            id: m.id,
            version: m.version,
            description: m.description,
            api_version: m.api_version,
            config: m
                .config
                .into_iter()
                .map(|k| ConfigKey {
                    name: k.name,
                    value_type: match k.value_type {
                        wit::ConfigType::Path => "path",
                        wit::ConfigType::Text => "text",
                        wit::ConfigType::Integer => "integer",
                        wit::ConfigType::Boolean => "boolean",
                        wit::ConfigType::TextList => "text-list",
                    }
                    .to_owned(),
                    help: k.help,
                    required: k.required,
                    default_value: k.default_value,
                })
                .collect(),
            capabilities: m
                .capabilities
                .into_iter()
                .map(|c| match c {
                    wit::Capability::ReadPath(key) => Capability::ReadPath(key),
                    wit::Capability::HttpHost(host) => Capability::HttpHost(host),
                })
                .collect(),
        }
    }
}

impl From<wit::Page> for SyncPage {
    fn from(p: wit::Page) -> Self {
        Self {
            items: p
                .items
                .into_iter()
                .map(|i| SyncItem {
                    source_id: i.source_id,
                    title: i.title,
                    content: i.content,
                    kind: i.kind,
                    occurred_at: i.occurred_at,
                    people: i
                        .people
                        .into_iter()
                        .map(|p| Person {
                            name: p.name,
                            email: p.email,
                            role: p.role,
                        })
                        .collect(),
                    source_uri: i.source_uri,
                    metadata: i.metadata,
                })
                .collect(),
            skipped: Vec::new(),
            removed: Vec::new(),
            unchanged: Vec::new(),
            names_overflowed: false,
            listing_started: false,
            listing_complete: false,
            errors: p
                .errors
                .into_iter()
                .map(|e| ItemError {
                    source_id: e.source_id,
                    location: e.location,
                    message: e.message,
                })
                .collect(),
            next_cursor: p.next_cursor,
            done: p.done,
        }
    }
}

/// A guest's whole-call error, as text with its kind.
pub(crate) fn describe(error: wit::Error) -> (crate::GuestErrorKind, String) {
    use crate::GuestErrorKind as Kind;
    match error {
        wit::Error::Denied(what) => (Kind::Denied, what),
        wit::Error::InvalidConfig(what) => (Kind::InvalidConfig, what),
        wit::Error::Unavailable(what) => (Kind::Unavailable, what),
        wit::Error::Failed(what) => (Kind::Failed, what),
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::ApiVersion;

    #[test]
    fn a_guest_built_against_an_additive_patch_release_loads() {
        for version in ["0.1.0", "0.1.1", "0.1.2", "0.1.17"] {
            assert_eq!(
                ApiVersion::for_guest(version),
                Ok(ApiVersion::V0_1),
                "{version}"
            );
        }
        for version in ["0.2.0", "1.0.0", "0.0.9"] {
            let refused = ApiVersion::for_guest(version).unwrap_err();
            assert!(
                refused.contains("this levh serves 0.1.0–0.1.2"),
                "{refused}"
            );
        }
        // Served in full: no later than the newest bindings.
        assert!(ApiVersion::serves("0.1.0") && ApiVersion::serves("0.1.2"));
        assert!(!ApiVersion::serves("0.1.3") && !ApiVersion::serves("0.2.0"));
        let garbled = ApiVersion::for_guest("one").unwrap_err();
        assert!(garbled.contains("not a semantic version"), "{garbled}");
    }

    /// A released WIT folder is frozen: plugins built against it must keep working. An
    /// edit belongs in a new versioned folder (and a new bindings module here).
    #[test]
    fn the_released_wit_folders_are_unchanged() {
        let released = [
            (
                "0.1.0",
                "32ea2470955af9f233270596026d6ce32d89156f966ac93feed1e016d7a94382",
            ),
            (
                "0.1.1",
                "d4a0876ce060af16171f3b8a433585f757f797214dc68272054b6aa357a142c8",
            ),
        ];
        for (version, expected) in released {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../../wit/levh-plugin@{version}"));
            let mut names: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            let mut hasher = Sha256::new();
            for name in names {
                hasher.update(name.to_string_lossy().as_bytes());
                hasher.update(b"\n");
                hasher.update(std::fs::read(dir.join(&name)).unwrap());
            }
            let digest: String = hasher
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, expected, "wit/levh-plugin@{version} was edited");
        }
    }
}
