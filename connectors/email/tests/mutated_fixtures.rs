//! Property test: the email parser on damaged copies of every fixture (bytes flipped,
//! the file cut short, ranges duplicated or deleted, MIME-ish pieces inserted) never
//! panics, and every message it cannot read is an item error with a message.
//!
//! It goes through the entry points the component calls: [`sync::fetch`] on a file (the
//! mbox splitter and the .eml reader) and [`parse::parse_message_at`] on each message.

use std::path::{Path, PathBuf};

use levh_connector_email::mbox::MboxReader;
use levh_connector_email::parse::{Rejection, Rules, parse_message_at};
use levh_connector_email::sync::{self, Settings};
use levh_connector_sdk::mutations::mutation;
use proptest::prelude::*;
use proptest::sample::Index;

/// 2026-03-20T12:00:00Z, the clock of the other tests.
const NOW: i64 = 1_774_008_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/email")
}

/// Every fixture file: (is it an mbox, its bytes).
fn fixture_files() -> Vec<(bool, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![fixtures()];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                dirs.push(path);
            } else {
                let mbox = path.extension().is_some_and(|e| e == "mbox");
                files.push((mbox, std::fs::read(&path).unwrap()));
            }
        }
    }
    assert!(files.len() >= 8, "fixtures missing: {}", files.len());
    files
}

/// Pieces of mail syntax to insert, so that mutations reach the MIME and charset paths
/// and not only the "no headers" one.
const PIECES: &[&str] = &[
    "\n",
    "\r\n",
    "\n\n",
    " \n",
    "--",
    "Content-Type: multipart/mixed; boundary=\"m\"\n\n--m\n",
    "Content-Type: text/html; charset=gb2312\n",
    "Content-Transfer-Encoding: base64\n",
    "Content-Transfer-Encoding: quoted-printable\n",
    "Content-Type: message/rfc822\n\n",
    "=?GB2312?B?xOO6w8rAvec=?=",
    "=?Shift_JIS?Q?=83n?=",
    "=\n",
    "=E9",
    "<head><title>",
    "<style>",
    "From a@b.c Mon Mar  2 08:15:00 2026\n",
];

fn check_message(raw: &[u8], postmark: Option<i64>) -> Result<(), TestCaseError> {
    let rules = Rules {
        exclude_senders: vec!["no-reply".into()],
    };
    match parse_message_at(raw, &rules, postmark) {
        Ok(email) => {
            let _ = email.content(200);
            let _ = email.metadata();
        }
        Err(Rejection::Excluded { reason, .. }) => {
            prop_assert!(!reason.trim().is_empty(), "a skip without a reason");
        }
        Err(Rejection::Invalid(message)) => {
            prop_assert!(!message.trim().is_empty(), "an error without a message");
        }
    }
    Ok(())
}

proptest! {
    // Bounded so that it runs in CI in seconds.
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn damaged_fixtures_give_items_or_item_errors_never_a_panic(
        file in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..8),
    ) {
        let files = fixture_files();
        let (is_mbox, original) = &files[file.index(files.len())];
        let mut bytes = original.clone();
        for mutation in &mutations {
            mutation.apply(&mut bytes, PIECES);
        }

        // What the component does: read the file through `fetch`.
        let dir = tempfile::tempdir().unwrap();
        let (key, name) = if *is_mbox { ("mbox_path", "damaged.mbox") } else { ("eml_path", "damaged.eml") };
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let config = vec![(key.to_owned(), path.display().to_string())];
        let mut settings = Settings::from_config(&config, NOW).unwrap();
        settings.page_size = 4;
        let mut cursor = None;
        for _ in 0..1_000 {
            let page = sync::fetch(&settings, cursor.as_deref());
            prop_assert!(page.is_ok(), "{page:?}");
            let page = page.unwrap();
            for error in &page.errors {
                prop_assert!(!error.message.trim().is_empty(), "{error:?}");
                prop_assert!(!error.location.is_empty(), "{error:?}");
            }
            for item in &page.items {
                prop_assert!(!item.source_id.is_empty() && !item.content.is_empty(), "{item:?}");
            }
            if page.done || page.next_cursor.is_none() {
                break;
            }
            cursor = page.next_cursor;
        }

        // And each message on its own, as `fetch` hands it to the parser.
        if *is_mbox {
            let mut reader = MboxReader::new(&bytes[..], 0);
            while let Ok(Some(message)) = reader.next_message() {
                check_message(&message.bytes, message.postmark_date)?;
            }
        } else {
            check_message(&bytes, None)?;
        }
    }
}
