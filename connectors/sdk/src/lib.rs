//! levh-connector-sdk: everything a connector needs to be a levh plugin.
//!
//! A connector implements [`Guest`] (two functions: `manifest` and `sync`) and exports
//! itself with [`export_connector!`]. It parses; the host stores, embeds, redacts and
//! decides. Files come through read-only directories the user granted (the host passes
//! their guest paths in the config), and nothing else is reachable.
//!
//! ```text
//! struct Notes;
//! impl levh_connector_sdk::Guest for Notes { /* manifest(), sync() */ }
//! levh_connector_sdk::export_connector!(Notes);
//! ```

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "mutations")]
pub mod mutations;

/// The generated bindings of the `connector` world.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "connector",
        path: "../../wit/levh-plugin@0.1.2",
        default_bindings_module: "levh_connector_sdk::bindings",
        pub_export_macro: true,
        export_macro_name: "export_connector",
    });
}

pub use bindings::levh::plugin::host::{
    Level, listing_complete, listing_started, log, removed, skipped, unchanged,
};
pub use bindings::levh::plugin::types::{
    Capability, Config, ConfigKey, ConfigType, Error, Item, ItemError, Manifest, Page, Person,
};
pub use bindings::{Guest, export_connector};

/// The plugin API version this SDK implements; stamped into every manifest.
pub const API_VERSION: &str = "0.1.2";

/// A setting for a manifest's `config` list.
pub fn setting(
    name: &str,
    value_type: ConfigType,
    required: bool,
    default: Option<&str>,
    help: &str,
) -> ConfigKey {
    ConfigKey {
        name: name.into(),
        value_type,
        help: help.into(),
        required,
        default_value: default.map(str::to_owned),
    }
}

/// Looks up a config value.
pub fn config_value<'a>(config: &'a Config, key: &str) -> Option<&'a str> {
    config
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A required config value, or the `invalid-config` error naming it.
pub fn required<'a>(config: &'a Config, key: &str) -> Result<&'a str, Error> {
    config_value(config, key)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| Error::InvalidConfig(format!("`{key}` is required")))
}

/// An optional integer config value, or the `invalid-config` error naming it.
pub fn integer(config: &Config, key: &str, default: u64) -> Result<u64, Error> {
    match config_value(config, key) {
        None => Ok(default),
        Some(text) => text.trim().parse().map_err(|_| {
            Error::InvalidConfig(format!("`{key}` must be a whole number, got {text:?}"))
        }),
    }
}

/// Marks a page of a full listing: `first` when this call began walking the whole source
/// (no cursor), `last` when the walk ended (`done`). The host then retires whatever it
/// stored from this connector and configuration that the walk did not name — as an
/// item, an item error, a skipped item or an [`unchanged`] one (an API connector names
/// what has not changed since its cursor that way, without fetching it again). A
/// connector whose pages are only what changed since a cursor does not call this; it
/// reports what it knows is gone with [`removed`].
pub fn full_listing(first: bool, last: bool) {
    if first {
        listing_started();
    }
    if last {
        listing_complete();
    }
}

/// A stable source id from the parts that name an item at its source, joined with `/`
/// (a `/` or `%` inside a part is escaped, so two lists of parts never give the same id).
///
/// Re-syncing an item with the same id updates its memory in place; an id the source no
/// longer lists retires it. So an id must name the item, not its text or its place:
/// - the source's own id when it has one (a calendar UID with the occurrence's
///   RECURRENCE-ID, a Notion page id, a GitHub issue's node id, a message's Message-ID);
/// - a path relative to the configured root for files (a rename is then a removal and a
///   new item, which the host recognises when the text is the same);
/// - never a hash of the content (an edit would leave the old memory behind) nor a
///   position (an inserted line would shift other items' text onto the wrong memories);
/// - for items the source gives no id, the parts that do not change when the item is
///   edited (a file and a heading, an event's start and organiser).
pub fn stable_id(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|part| part.replace('%', "%25").replace('/', "%2F"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Reads a file in a directory the host granted. A path outside every granted directory
/// (absolute elsewhere, `..` past the grant, a link out of it) is the typed `denied`
/// error naming the path, as the host reports a refused host — not the sandbox's errno
/// text; anything else is `failed` with the path.
pub fn read_file(path: impl AsRef<std::path::Path>) -> Result<Vec<u8>, Error> {
    let path = path.as_ref();
    std::fs::read(path).map_err(|e| file_error(path, &e))
}

/// The connector error for a failed file operation on `path` (see [`read_file`]).
pub fn file_error(path: &std::path::Path, error: &std::io::Error) -> Error {
    if outside_the_grant(path, error) {
        Error::Denied(format!(
            "read {}: outside the directories levh granted to this connector (`levh connector grant ID DIR` grants another)",
            path.display()
        ))
    } else {
        Error::Failed(format!("{}: {error}", path.display()))
    }
}

/// Whether the sandbox refused `path`. WASI says "not permitted" (a `..` or a link past a
/// granted directory) or "capabilities insufficient"; for a path under no granted
/// directory at all it says only "no such file" — told apart from a file missing inside a
/// grant by whether any folder above the path (`..` resolved as written) can be seen.
fn outside_the_grant(path: &std::path::Path, error: &std::io::Error) -> bool {
    /// WASI's `ENOTCAPABLE` and `EPERM` (wasi-libc's numbering).
    const NOT_CAPABLE: i32 = 76;
    const NOT_PERMITTED: i32 = 63;
    if error.kind() == std::io::ErrorKind::PermissionDenied {
        return true;
    }
    if !cfg!(target_os = "wasi") {
        return false;
    }
    if matches!(error.raw_os_error(), Some(NOT_CAPABLE | NOT_PERMITTED)) {
        return true;
    }
    if error.kind() != std::io::ErrorKind::NotFound {
        return false;
    }
    let mut written = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                written.pop();
            }
            std::path::Component::CurDir => {}
            other => written.push(other),
        }
    }
    !written
        .ancestors()
        .skip(1)
        .filter(|folder| folder.parent().is_some())
        .any(|folder| folder.is_dir())
}

/// Logs through the host, which tags the line with the plugin's id.
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// Unix seconds → `2026-03-18T09:30:00Z`, the form `Item::occurred_at` takes.
pub fn rfc3339_utc(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let rest = unix_seconds.rem_euclid(86_400);
    // Days → civil date, proleptic Gregorian (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`,
/// the inverse of the civil date [`rfc3339_utc`] computes): `days_from_civil(y, m, d) *
/// 86_400` plus the time of day is the Unix time a parsed date needs.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A file's modification time as RFC 3339 UTC: the world time of an item whose file says
/// no date of its own.
pub fn modified_at(path: &std::path::Path) -> Option<String> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let seconds = modified
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(rfc3339_utc(i64::try_from(seconds).ok()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn stable_ids_of_different_parts_never_collide() {
        assert_eq!(super::stable_id(&["notes", "a.md"]), "notes/a.md");
        assert_ne!(
            super::stable_id(&["a/b", "c"]),
            super::stable_id(&["a", "b/c"])
        );
        assert_ne!(super::stable_id(&["a%2Fb"]), super::stable_id(&["a/b"]));
    }

    #[test]
    fn days_from_civil_is_the_inverse_of_rfc3339_utc() {
        for days in (-800_000..800_000).step_by(997) {
            let text = super::rfc3339_utc(days * 86_400);
            let (year, rest) = text[..text.len() - 10].rsplit_once('-').unwrap();
            let (year, month) = year.rsplit_once('-').unwrap();
            let (year, month, day): (i64, u32, u32) = (
                year.parse().unwrap(),
                month.parse().unwrap(),
                rest.parse().unwrap(),
            );
            assert_eq!(super::days_from_civil(year, month, day), days, "{text}");
        }
    }

    #[test]
    fn unix_seconds_become_rfc3339_utc() {
        assert_eq!(super::rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339_utc(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(super::rfc3339_utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(super::rfc3339_utc(1_772_445_600), "2026-03-02T10:00:00Z");
    }
}
