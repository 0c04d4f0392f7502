//! The `email` connector: one item per message of an mbox file, one .eml file, or a
//! directory of .eml files.
//!
//! Each message becomes an `email` item: the subject as title, the headers a person reads
//! and a body excerpt as content (the text/plain part when there is one, HTML turned into
//! text otherwise), sender / recipients / cc as people, the Date header as world time,
//! the Message-ID as source id. Mail from automated senders (`exclude_senders`) and mail
//! older than `past_days` is skipped and counted, not reported as errors; a message that
//! cannot be read is one error line (`inbox.mbox#7: no Date header`). A message cut off
//! before its closing MIME boundary is kept as far as it goes, with
//! `"incomplete": "multipart boundary \"b\" never closes"` in its metadata.
//!
//! Charsets: UTF-8/7/16, the ISO-8859 and windows-125x families, KOI8-R/U and the other
//! single-byte ones, and GB2312/GBK/GB18030, Big5, Shift_JIS, EUC-JP, ISO-2022-JP and
//! EUC-KR, in bodies and in RFC 2047 encoded-word headers alike.
//!
//! Large mailboxes are read a page at a time ([`sync::PAGE_SIZE`] messages), with a cursor
//! at the byte offset of the next message, so memory stays bounded and a sync that was
//! stopped resumes where it was. `max_messages` caps one run; the next run goes on from
//! there, and the run after the end of the mailbox starts again from the top (everything
//! already stored is then `unchanged`).
//!
//! The parsing is plain Rust ([`parse`], [`mbox`], [`sync`]), tested natively; the
//! component glue only maps its types to the plugin WIT.

pub mod mbox;
pub mod parse;
pub mod sync;

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_connector_sdk::{
        Capability, Config, ConfigKey, ConfigType, Error, Guest, Item, ItemError, Manifest, Page,
        Person,
    };

    use crate::sync::{self, Failure, Settings};

    struct Email;

    fn key(name: &str, value_type: ConfigType, default: Option<&str>, help: &str) -> ConfigKey {
        ConfigKey {
            name: name.into(),
            value_type,
            help: help.into(),
            required: false,
            default_value: default.map(str::to_owned),
        }
    }

    /// Now as Unix seconds: the host's clock (`LEVH_NOW` when it fixes it).
    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    impl Guest for Email {
        fn manifest() -> Manifest {
            let max = sync::DEFAULT_MAX_MESSAGES.to_string();
            let body = sync::DEFAULT_BODY_CHARS.to_string();
            let past = sync::DEFAULT_PAST_DAYS.to_string();
            Manifest {
                id: "email".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                description: "One memory per e-mail message (mbox, .eml)".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: vec![
                    key(
                        "mbox_path",
                        ConfigType::Path,
                        None,
                        "An mbox file (set one of mbox_path, eml_path, eml_dir).",
                    ),
                    key("eml_path", ConfigType::Path, None, "One .eml message file."),
                    key(
                        "eml_dir",
                        ConfigType::Path,
                        None,
                        "A directory of .eml files (sub-directories included).",
                    ),
                    key(
                        "past_days",
                        ConfigType::Integer,
                        Some(&past),
                        "Skip messages older than this many days (0: no limit).",
                    ),
                    key(
                        "max_messages",
                        ConfigType::Integer,
                        Some(&max),
                        "Read at most this many messages per sync; the next sync goes on from there (0: no cap).",
                    ),
                    key(
                        "body_chars",
                        ConfigType::Integer,
                        Some(&body),
                        "Longest body excerpt kept per message, in characters.",
                    ),
                    key(
                        "exclude_senders",
                        ConfigType::TextList,
                        Some(sync::DEFAULT_EXCLUDE_SENDERS),
                        "Skip mail whose sender address contains one of these (comma-separated, case-insensitive).",
                    ),
                ],
                capabilities: sync::PATH_KEYS
                    .iter()
                    .map(|k| Capability::ReadPath((*k).into()))
                    .collect(),
            }
        }

        fn sync(config: Config, cursor: Option<String>) -> Result<Page, Error> {
            let settings = Settings::from_config(&config, now()).map_err(Error::InvalidConfig)?;
            let page = sync::fetch(&settings, cursor.as_deref()).map_err(|e| match e {
                Failure::InvalidConfig(message) => Error::InvalidConfig(message),
            })?;
            if page.restarted {
                levh_connector_sdk::info(
                    "the saved cursor does not fit this mailbox: reading it from the top",
                );
            }
            if page.excluded > 0 {
                levh_connector_sdk::info(&format!(
                    "skipped {} messages from excluded senders",
                    page.excluded
                ));
            }
            if page.too_old > 0 {
                levh_connector_sdk::info(&format!(
                    "skipped {} messages older than {} days",
                    page.too_old, settings.past_days
                ));
            }
            // A walk of the whole mailbox (from its first message to its end, over the
            // pages of one run) names every message: one it does not name was deleted.
            levh_connector_sdk::full_listing(page.listing_started, page.listing_complete);
            // Each one named in the sync report, not only counted here.
            for (source_id, reason) in &page.skipped {
                levh_connector_sdk::skipped(source_id, reason);
            }
            Ok(Page {
                items: page
                    .items
                    .into_iter()
                    .map(|i| Item {
                        source_id: i.source_id,
                        title: i.title,
                        content: i.content,
                        kind: "email".into(),
                        occurred_at: Some(i.occurred_at),
                        people: i
                            .people
                            .into_iter()
                            .map(|p| Person {
                                name: p.name,
                                email: p.email,
                                role: p.role.into(),
                            })
                            .collect(),
                        source_uri: Some(i.source_uri),
                        metadata: i.metadata,
                    })
                    .collect(),
                errors: page
                    .errors
                    .into_iter()
                    .map(|e| ItemError {
                        source_id: e.source_id,
                        location: e.location,
                        message: e.message,
                    })
                    .collect(),
                next_cursor: page.next_cursor,
                done: page.done,
            })
        }
    }

    levh_connector_sdk::export_connector!(Email);
}
