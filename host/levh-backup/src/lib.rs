//! levh-backup: a home's backup in one file, and its restore.
//!
//! A backup is a tar archive of what a home cannot rebuild: a consistent copy of the
//! store (`levh.db`, taken while servers and agents keep writing), `config.toml`, the
//! installed connectors with their grants (`plugins/`) and scorers (`scorers/`), and last
//! a `manifest.json` with the store's size, SHA-256 and counts. Models and caches are
//! left out: they are downloaded or rebuilt. With a passphrase the archive is an age file
//! (scrypt, ChaCha20-Poly1305), which the `age` tool also opens.
//!
//! A restore unpacks into a staging folder beside the home, checks everything (checksum,
//! SQLite's structural check, a schema this build can open, migrating an older one) and
//! only then swaps it in, with the store held exclusively; what it replaces is moved to
//! `backups/replaced-<time>/`, never deleted.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod archive;
mod home;

use std::path::{Path, PathBuf};

pub use age::secrecy::SecretString;
use serde::{Deserialize, Serialize};

pub use archive::is_encrypted;
pub use home::{
    BackupFile, Created, Restored, backups_dir, create, default_file_name, list, restore, verify,
};

/// The archive layout this build writes; a newer one is refused.
pub const FORMAT: u32 = 1;

/// The manifest, the archive's last entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The archive layout ([`FORMAT`]).
    pub format: u32,
    /// The levh that wrote it.
    pub levh_version: String,
    /// When the store's copy was taken.
    pub created_at: jiff::Timestamp,
    /// The store's schema version.
    pub schema_version: i64,
    /// Memory rows in the store, every workspace.
    pub memories: u64,
    /// Held candidate rows, every workspace, decided ones included.
    pub held: u64,
    /// Of the memory rows, the forgotten ones (kept for history); absent in backups
    /// written before levh counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgotten: Option<u64>,
    /// Of the held candidates, those still waiting for a person; absent in older backups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u64>,
    /// The store file's size.
    pub database_bytes: u64,
    /// The store file's SHA-256, hex.
    pub database_sha256: String,
    /// The other files in the archive (settings, connectors, scorers), relative to the home.
    pub files: Vec<String>,
    /// Files of the home a plain (unencrypted) backup leaves out because they hold a
    /// secret: connectors' tokens.
    #[serde(default)]
    pub left_out: Vec<String>,
}

impl Manifest {
    /// What the archive holds, counted as `levh doctor` and `levh stats` count: live
    /// memories, forgotten ones, candidates waiting for review.
    pub fn contents(&self) -> String {
        match (self.forgotten, self.waiting) {
            (Some(forgotten), Some(waiting)) => format!(
                "{} memories, {forgotten} forgotten, {waiting} held for review",
                self.memories.saturating_sub(forgotten)
            ),
            // Written by a levh that counted rows only.
            _ => format!(
                "{} memory rows (forgotten included), {} held candidates",
                self.memories, self.held
            ),
        }
    }
}

/// The passphrase a backup is encrypted with.
#[derive(Debug, Clone)]
pub struct Passphrase {
    secret: SecretString,
    work_factor: Option<u8>,
}

impl Passphrase {
    /// A passphrase; encrypting costs about a second (scrypt's work factor is chosen for
    /// this machine), which is what makes guessing it slow.
    pub fn new(secret: SecretString) -> Self {
        Self {
            secret,
            work_factor: None,
        }
    }

    /// The same with scrypt's cost fixed at `2^log_n` (tests use a small one; opening a
    /// file needs no setting, the file says its cost).
    pub fn with_work_factor(secret: SecretString, log_n: u8) -> Self {
        Self {
            secret,
            work_factor: Some(log_n.clamp(1, 30)),
        }
    }
}

/// What can go wrong making, checking or restoring a backup. Each message names the file.
///
/// The causes are fields, not `source`s: each message already carries its cause's text,
/// which an error chain (`{:#}`) would print a second time.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackupError {
    /// Reading or writing a file failed.
    #[error("{what} {}: {cause}", path.display())]
    Io {
        /// What was being done ("writing", "reading the backup", ...).
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// The store refused (copying it, checking the copy, opening it).
    #[error("{}: {cause}", path.display())]
    Store {
        /// The database file.
        path: PathBuf,
        /// The cause.
        cause: levh_store::SqliteStoreError,
    },
    /// The home's store is open in another process.
    #[error("cannot replace {}: {cause}", path.display())]
    InUse {
        /// The home's database file.
        path: PathBuf,
        /// Why it could not be held.
        cause: levh_store::HoldError,
    },
    /// The backup is encrypted and no passphrase was given.
    #[error("{} is encrypted: a passphrase is needed to open it", path.display())]
    PassphraseNeeded {
        /// The backup.
        path: PathBuf,
    },
    /// The passphrase does not open the backup.
    #[error("the passphrase does not open {}", path.display())]
    WrongPassphrase {
        /// The backup.
        path: PathBuf,
    },
    /// The file is not a backup this build can read, or is damaged.
    #[error("{} is not a usable levh backup: {why}", path.display())]
    NotABackup {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

impl BackupError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self + use<> {
        let path = path.to_path_buf();
        move |cause| Self::Io { what, path, cause }
    }

    fn store(path: &Path) -> impl FnOnce(levh_store::SqliteStoreError) -> Self + use<> {
        let path = path.to_path_buf();
        move |cause| Self::Store { path, cause }
    }

    fn not_a_backup(path: &Path, why: impl Into<String>) -> Self {
        Self::NotABackup {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }
}
