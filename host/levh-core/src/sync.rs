//! Connector sync (SPEC §6): pages from a source go through the gate one item at a time.
//!
//! A bad item is recorded and skipped, never the run. Each item's fate is remembered by
//! its stable source id, so a re-sync stores nothing twice, updates a changed item in
//! place, and skips what it has seen. The cursor is saved only after its page is stored.

use serde::{Deserialize, Serialize};

mod catalog;
pub use catalog::{
    BrokenConnector, Capability, CatalogEntry, ConfigKey, ConnectorCatalog, ConnectorHelp,
    ConnectorOrigin, ConnectorSummary, Manifest,
};

use crate::{HeldId, MemoryId, Timestamp};

/// A person an item is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemPerson {
    /// Name.
    pub name: Option<String>,
    /// E-mail.
    pub email: Option<String>,
    /// Organizer, attendee, sender, recipient, speaker, author...
    pub role: String,
}

/// One item a source produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceItem {
    /// Stable within the connector.
    pub source_id: String,
    /// Title.
    pub title: String,
    /// Text.
    pub content: String,
    /// Kind (event, email, transcript, document, note).
    pub kind: String,
    /// When it happened: the memory's world time.
    pub occurred_at: Option<Timestamp>,
    /// People involved.
    pub people: Vec<ItemPerson>,
    /// Where it lives.
    pub source_uri: Option<String>,
    /// A JSON object.
    pub metadata: serde_json::Value,
}

/// An item the source could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceItemError {
    /// The item, when known.
    pub source_id: Option<String>,
    /// File, line or item.
    pub location: String,
    /// What was wrong.
    pub message: String,
}

/// An item a source passed over on purpose (a no-reply sender, older than the window).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSkip {
    /// The item.
    pub source_id: String,
    /// Why, in the source's words.
    pub reason: String,
}

/// An item the source no longer holds (deleted, archived, cancelled, moved away).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRemoval {
    /// The item.
    pub source_id: String,
    /// Why, in the source's words.
    pub reason: String,
}

/// One page from a source.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SourcePage {
    /// Items.
    pub items: Vec<SourceItem>,
    /// Items that could not be read.
    pub errors: Vec<SourceItemError>,
    /// Items the source passed over on purpose, each with its reason.
    pub skipped: Vec<SourceSkip>,
    /// Items the source no longer holds: their memories are retired.
    pub removed: Vec<SourceRemoval>,
    /// Items the source still holds, unchanged since the cursor: named in a full listing
    /// without their text (so an API connector lists cheaply what it already sent).
    pub unchanged: Vec<String>,
    /// The page named more items (skipped, unchanged) than the host keeps for one call:
    /// a listing it belongs to is not complete.
    pub names_overflowed: bool,
    /// A full listing of the source begins with this page: whatever it and the pages up to
    /// the one marked `listing_complete` name is all the source holds.
    pub listing_started: bool,
    /// The full listing begun in this run ends with this page: what it did not name is
    /// gone, and its memories are retired.
    pub listing_complete: bool,
    /// Where the next page starts.
    pub next_cursor: Option<String>,
    /// Nothing more for now.
    pub done: bool,
}

/// Something that produces pages: a connector plugin, in practice.
pub trait Source {
    /// The connector's id (`calendar`).
    fn connector(&self) -> &str;
    /// Where the sync cursor is kept. One cursor per connector *and* configuration, so
    /// syncing two mailboxes (or repositories) in turn does not reset each other's place.
    /// Items are still recognised per connector, whatever the configuration.
    fn cursor_key(&self) -> String {
        self.connector().to_owned()
    }
    /// The next page after `cursor`. An error fails the run (an item's error does not).
    fn fetch(&mut self, cursor: Option<String>) -> Result<SourcePage, FetchError>;
}

/// Why a whole page could not be fetched: what a surface needs to answer rightly (a
/// refused capability is the person's to grant, not a broken connector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FetchFailure {
    /// The host refused a capability the connector needs (a path or host not granted).
    Denied,
    /// The connector's settings are wrong.
    InvalidConfig,
    /// What the connector reads is not there or not answering.
    Unavailable,
    /// The connector trapped, panicked, ran out of time or memory.
    Trapped,
    /// Anything else.
    Failed,
}

/// A failed fetch: its kind and the words to show (which say how to fix it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FetchError {
    /// What kind of failure.
    pub kind: FetchFailure,
    /// What happened, and how to fix it.
    pub message: String,
}

impl FetchError {
    /// A failure of `kind`.
    pub fn new(kind: FetchFailure, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// What is remembered of one synced item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedItem {
    /// Hash of the content as the source gave it.
    pub content_hash: String,
    /// The memory it became, if stored.
    pub memory_id: Option<MemoryId>,
    /// The held candidate it became, if held.
    pub held_id: Option<HeldId>,
    /// What became of it.
    pub verdict: ItemOutcome,
}

/// What became of one item of a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemOutcome {
    /// Stored as given.
    Admit,
    /// Stored with secrets replaced.
    Redact,
    /// Held for a person.
    Review,
    /// Not stored.
    Reject,
    /// Changed since the last sync; its memory updated in place.
    Update,
    /// Seen before and unchanged.
    Unchanged,
}

impl ItemOutcome {
    /// The name stored with the item.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admit => "admit",
            Self::Redact => "redact",
            Self::Review => "review",
            Self::Reject => "reject",
            Self::Update => "update",
            Self::Unchanged => "unchanged",
        }
    }

    /// The outcome of this stored name.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Admit,
            Self::Redact,
            Self::Review,
            Self::Reject,
            Self::Update,
            Self::Unchanged,
        ]
        .into_iter()
        .find(|outcome| outcome.as_str() == text)
    }

    /// The outcome of a gate verdict.
    pub fn of(verdict: &crate::Verdict) -> Self {
        match verdict {
            crate::Verdict::Admit => Self::Admit,
            crate::Verdict::Redact => Self::Redact,
            crate::Verdict::Review { .. } => Self::Review,
            _ => Self::Reject,
        }
    }
}

/// Where a sync run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SyncStatus {
    /// Started, not finished (or the process died).
    #[default]
    Running,
    /// Finished; every page was fetched (items may still have failed).
    Ok,
    /// A page could not be fetched; the report says why.
    Failed,
    /// Left `running` by a process that died (killed, crashed): no page was recorded for
    /// [`STALE_RUN_MINUTES`]. The counts say what it stored up to its last page.
    Interrupted,
    /// Nothing was stored: the gate was only asked.
    DryRun,
}

impl SyncStatus {
    /// Its name in reports and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
            Self::DryRun => "dry-run",
        }
    }
}

impl std::fmt::Display for SyncStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sync run's tally; also what `levh sync status` shows.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SyncReport {
    /// The run's id.
    pub run_id: String,
    /// The connector.
    pub connector: String,
    /// Where the run stands.
    pub status: SyncStatus,
    /// When it started.
    pub started_at: Option<Timestamp>,
    /// When it ended.
    pub finished_at: Option<Timestamp>,
    /// When its record was last written (after each page).
    #[serde(default)]
    pub updated_at: Option<Timestamp>,
    /// Pages fetched.
    pub pages: u64,
    /// Items fetched.
    pub fetched: u64,
    /// Stored as given.
    pub admitted: u64,
    /// Stored with secrets replaced.
    pub redacted: u64,
    /// Held for a person.
    pub held: u64,
    /// Not stored (duplicate, empty...).
    pub rejected: u64,
    /// Changed since the last sync and updated in place.
    pub updated: u64,
    /// Seen before and unchanged.
    pub unchanged: u64,
    /// Could not be read or stored.
    pub failed: u64,
    /// Passed over by the connector on purpose (reported by connectors of API 0.1.1).
    #[serde(default)]
    pub skipped: u64,
    /// Gone from the source (removed, or missing from a complete listing): memories
    /// retired, kept in their history and for `--as-of` (connectors of API 0.1.2).
    #[serde(default)]
    pub retired: u64,
    /// Conflict candidates found with the memories the run stored or changed (`levh
    /// conflicts` lists them for a person to resolve).
    #[serde(default)]
    pub conflicts: u64,
    /// One line per failure: where, and why.
    pub errors: Vec<String>,
    /// Every item that was not stored (held, rejected, failed, skipped), with why — up to
    /// [`MAX_NOT_STORED`]; the counts above stay exact.
    #[serde(default)]
    pub not_stored: Vec<NotStoredItem>,
    /// Every item retired by this run, with why — up to [`MAX_NOT_STORED`]; the count
    /// above stays exact.
    #[serde(default)]
    pub retirements: Vec<Retirement>,
    /// Why the run failed, when a page could not be fetched (not kept with the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FetchFailure>,
}

/// Options of a sync run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncOptions {
    /// Evaluate every item through the gate but store nothing.
    pub dry_run: bool,
}

/// A run still `running` whose record has not been written for this long is shown as
/// interrupted: a page (one fetch, bounded by the plugin time limit, and its items through
/// the gate) never takes this long.
pub const STALE_RUN_MINUTES: i64 = 15;

/// At most this many error lines are kept in a run record (the counts stay exact).
pub const MAX_ERROR_LINES: usize = 200;

/// At most this many items not stored are named in a run record (the counts stay exact).
pub const MAX_NOT_STORED: usize = 5_000;

impl NotStoredItem {
    /// An item that could not be read or stored.
    pub fn failed(source_id: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            source_id: source_id.into(),
            fate: ItemFate::Failed,
            reason: reason.into(),
            nearest: None,
            held_id: None,
        }
    }
}

/// What became of an item that a sync did not store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ItemFate {
    /// Waits for a person in the held queue.
    Held,
    /// Refused by the gate (a duplicate, empty, too long...).
    Rejected,
    /// Could not be read or stored.
    Failed,
    /// Passed over by the connector on purpose (a no-reply sender, too old).
    Skipped,
}

impl ItemFate {
    /// Its name in reports and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Rejected => "rejected",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// An item of a sync run that did not become (or change) a memory, and why. Never
/// carries content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NotStoredItem {
    /// The item's id at its source (a file path, a message id, an event UID).
    pub source_id: String,
    /// Held, rejected or failed.
    pub fate: ItemFate,
    /// Why, in the gate's or the connector's words.
    pub reason: String,
    /// The stored memory it collided with, when the gate named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<crate::MemoryId>,
    /// The held candidate waiting for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_id: Option<crate::HeldId>,
}

/// An item a sync found gone from its source, and what became of its memory. Never
/// carries content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Retirement {
    /// The item's id at its source.
    pub source_id: String,
    /// Why: the source's words (`cancelled`, `archived in Notion`), or `not in the
    /// source's complete listing`.
    pub reason: String,
    /// The memory retired (forgotten, kept in its history): absent when the item had no
    /// live memory (held, rejected, already forgotten) or when its memory is pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_id: Option<crate::MemoryId>,
    /// A pinned memory is kept as it is: a person pinned it, so the source's deletion
    /// does not retire it (it is no longer linked to the source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_pinned: Option<crate::MemoryId>,
    /// The held candidate it was waiting as, discarded: nobody need decide on an item its
    /// source deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_id: Option<crate::HeldId>,
}

/// The reason of an item missing from a complete listing of its source.
pub const NOT_LISTED: &str = "no longer at its source (not in the complete listing)";

/// A sync asked for through a network surface (REST, MCP). It carries settings only:
/// the runtime uses the grants a person stored, and a path named in `config` grants
/// nothing.
#[derive(Debug, Clone, Default)]
pub struct SyncRequest {
    /// The connector.
    pub id: String,
    /// Its settings (never grants).
    pub config: Vec<(String, String)>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    pub dry_run: bool,
}

/// Why the connector runtime could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectorError {
    /// No built-in or installed connector has this id.
    #[error("no connector `{id}` (available: {available})")]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids there are, comma-separated.
        available: String,
    },
    /// Loading, configuring or running the connector failed; the kind says how.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The engine failed while storing the items.
    #[error(transparent)]
    Engine(#[from] crate::Error),
}

/// A person's grant to a connector: a directory it may read (and everything under it), or
/// a host it may connect to (if its manifest asks for one too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// An existing directory, absolute.
    Directory(std::path::PathBuf),
    /// `host`, `host:port` or a URL.
    Host(String),
}

/// The connector runtime as the surfaces see it. levh-plugins implements it over one
/// wasmtime engine per process; REST and MCP reach connectors only through it.
pub trait Connectors: Send + Sync + std::fmt::Debug {
    /// Built-in and installed connectors with their manifests and the grants stored for
    /// `workspace` (grants belong to a workspace: another's syncs cannot use them).
    fn list(&self, workspace: &crate::Workspace) -> Result<ConnectorCatalog, ConnectorError>;
    /// One connector's settings, requested capabilities and the grants stored for
    /// `workspace`.
    fn help(&self, id: &str, workspace: &crate::Workspace)
    -> Result<ConnectorHelp, ConnectorError>;
    /// Stores a grant for `workspace` (idempotent); the connector's help, as
    /// [`Connectors::help`], after.
    fn grant(
        &self,
        id: &str,
        workspace: &crate::Workspace,
        grant: &Grant,
    ) -> Result<ConnectorHelp, ConnectorError>;
    /// Takes a grant of `workspace` back; false when it had no such grant.
    fn revoke(
        &self,
        id: &str,
        workspace: &crate::Workspace,
        grant: &Grant,
    ) -> Result<bool, ConnectorError>;
    /// Runs a sync with the grants stored for the scope's workspace only, through
    /// `levh`'s gate.
    fn sync(
        &self,
        levh: &crate::Levh,
        scope: &crate::Scope,
        request: SyncRequest,
    ) -> Result<SyncReport, ConnectorError>;
}
