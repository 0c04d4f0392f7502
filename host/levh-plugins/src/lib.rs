//! levh-plugins: the sandbox connectors and scorers run in.
//!
//! One wasmtime engine per process. Every call gets a fresh store that starts empty: no
//! environment, no arguments, no stdin or stdout, no sockets, no clock beyond WASI's; only
//! the directories the manifest asked for *and* the user granted, preopened read-only.
//! Each call has a CPU deadline (epoch interruption), a memory cap and an output cap; a
//! trap, a panic or a timeout becomes a [`PluginError`] naming the plugin and version,
//! never a host crash. Compiled components are cached on disk, keyed by the component's
//! content hash and the engine's compatibility hash.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod cache;
pub mod http;
mod imports;
mod registry;
pub mod runtime;
mod sandbox;
mod scorer;
mod source;
mod wit;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

pub use cache::sha256_hex;
pub use http::{Credential, Origin};
pub use registry::{Registry, ScorerRegistry};
pub use runtime::{ConnectorOrigin, ConnectorRuntime, check_config, check_grant};
pub use scorer::{SCORE_TIMEOUT, Scorer, ScorerPolicy};
pub use source::ConnectorSource;
pub use wit::ApiVersion;
// The manifest types are the catalog's, in levh-core: the surfaces send them as they are.
pub use levh_core::sync::{Capability, ConfigKey, Manifest};

use crate::sandbox::{PluginState, Prepared};

/// A person an item is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Person {
    /// Name.
    pub name: Option<String>,
    /// E-mail.
    pub email: Option<String>,
    /// Role (organizer, attendee, sender, ...).
    pub role: String,
}

/// One item a connector found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncItem {
    /// Stable id within the connector.
    pub source_id: String,
    /// Title.
    pub title: String,
    /// Text.
    pub content: String,
    /// Kind (event, email, ...).
    pub kind: String,
    /// When it happened (RFC 3339).
    pub occurred_at: Option<String>,
    /// People involved.
    pub people: Vec<Person>,
    /// Where it lives.
    pub source_uri: Option<String>,
    /// A JSON object.
    pub metadata: String,
}

/// An item a connector could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemError {
    /// The item, when known.
    pub source_id: Option<String>,
    /// File, line or item.
    pub location: String,
    /// What was wrong.
    pub message: String,
}

/// An item a connector named with a reason in its own words: passed over on purpose
/// (`from no-reply@example.com, excluded by exclude_senders`) or gone from the source
/// (`cancelled`, `archived in Notion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedItem {
    pub source_id: String,
    pub reason: String,
}

/// One page of a sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncPage {
    /// Items.
    pub items: Vec<SyncItem>,
    /// Items that could not be read.
    pub errors: Vec<ItemError>,
    /// Items the connector passed over on purpose (reported through the host's
    /// `skipped` import, API 0.1.1).
    pub skipped: Vec<SkippedItem>,
    /// Items the source no longer holds (the host's `removed` import, API 0.1.2).
    pub removed: Vec<SkippedItem>,
    /// Items still at the source, unchanged (the host's `unchanged` import, API 0.1.2).
    pub unchanged: Vec<String>,
    /// The call named more skipped or unchanged items than the host keeps.
    pub names_overflowed: bool,
    /// The connector began a full listing of its source on this page (API 0.1.2).
    pub listing_started: bool,
    /// The full listing the connector began in this run ended on this page (API 0.1.2).
    pub listing_complete: bool,
    /// Where the next call continues.
    pub next_cursor: Option<String>,
    /// Nothing more to fetch now.
    pub done: bool,
}

impl SyncPage {
    /// Roughly how many bytes the page holds, for the output cap.
    fn size(&self) -> usize {
        let items: usize = self
            .items
            .iter()
            .map(|i| {
                i.source_id.len()
                    + i.title.len()
                    + i.content.len()
                    + i.kind.len()
                    + i.metadata.len()
                    + i.source_uri.as_ref().map_or(0, String::len)
                    + i.people.len() * 64
            })
            .sum();
        items
            + self
                .errors
                .iter()
                .map(|e| e.location.len() + e.message.len())
                .sum::<usize>()
    }
}

/// What a plugin may touch, beyond what every plugin gets (nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// Directories (and everything under them) the plugin may read.
    pub read_paths: Vec<PathBuf>,
    /// Hosts the plugin may connect to (when its manifest asks for them too).
    pub http_hosts: Vec<Origin>,
    /// The user's token for this plugin, attached by the host to allowed requests.
    #[serde(skip)]
    pub credential: Option<Credential>,
}

/// Per-call limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Linear memory a plugin may grow to.
    pub memory_bytes: usize,
    /// Wall-clock CPU budget of one call.
    pub call_timeout: Duration,
    /// Largest page a plugin may return.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 128 << 20,
            call_timeout: Duration::from_secs(60),
            output_bytes: 32 << 20,
        }
    }
}

/// Why a plugin call failed. Every variant names the plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The bytes are not a component levh can run.
    #[error("{what} is not a levh {kind}: {reason}")]
    Invalid {
        /// File or plugin.
        what: String,
        /// `connector` or `scorer`.
        kind: &'static str,
        /// Why.
        reason: String,
    },
    /// A capability was refused by the host.
    #[error("{plugin} {version}: denied: {capability}")]
    Denied {
        /// Plugin id.
        plugin: String,
        /// Its version.
        version: String,
        /// What was refused and how to allow it.
        capability: String,
    },
    /// A component that is a levh plugin but cannot be installed or run here: built for
    /// a plugin API this levh does not serve, importing what levh does not offer, at odds
    /// with its own manifest, or not the file that was expected.
    #[error("{what} cannot be installed as a {kind}: {reason}")]
    Refused {
        /// File or plugin.
        what: String,
        /// `connector` or `scorer`.
        kind: &'static str,
        /// Why, as a sentence its author can act on.
        reason: String,
    },
    /// The plugin trapped, panicked, ran out of time or memory.
    #[error("{plugin} {version} stopped: {reason}")]
    Trapped {
        /// Plugin id.
        plugin: String,
        /// Its version.
        version: String,
        /// What happened.
        reason: String,
    },
    /// The plugin reported an error for the whole call.
    #[error("{plugin} {version}: {kind}: {message}")]
    Guest {
        /// Plugin id.
        plugin: String,
        /// Its version.
        version: String,
        /// What kind of failure the guest reported.
        kind: GuestErrorKind,
        /// Its words.
        message: String,
    },
    /// The host could not set the call up.
    #[error("plugin host: {0}")]
    Host(String),
}

/// The kinds of error a guest reports for a whole call (the WIT `error` variant's cases,
/// as the host sees them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GuestErrorKind {
    /// It was refused something it needs.
    Denied,
    /// Its settings are wrong.
    InvalidConfig,
    /// What it reads is not there or not answering.
    Unavailable,
    /// Anything else.
    Failed,
}

impl GuestErrorKind {
    /// The name in messages (the WIT case's name).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Denied => "denied",
            Self::InvalidConfig => "invalid-config",
            Self::Unavailable => "unavailable",
            Self::Failed => "failed",
        }
    }
}

impl std::fmt::Display for GuestErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connector ready to run: compiled, its manifest read and checked.
#[derive(Clone)]
pub struct Connector {
    component: Component,
    /// What it declared.
    pub manifest: Manifest,
    /// sha256 of its bytes.
    pub sha256: String,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("manifest", &self.manifest)
            .field("sha256", &self.sha256)
            .finish()
    }
}

/// The plugin runtime: one per process.
pub struct PluginHost {
    engine: Engine,
    linker: Linker<PluginState>,
    /// The same plus `wasi:http`, for calls that were granted a host.
    http_linker: Linker<PluginState>,
    runtime: tokio::runtime::Runtime,
    cache_dir: Option<PathBuf>,
    limits: Limits,
    /// The time plugins see, when fixed (tests, `LEVH_NOW`); else the system clock.
    fixed_now: Option<SystemTime>,
    _ticker: Arc<sandbox::EpochTicker>,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost")
            .field("cache_dir", &self.cache_dir)
            .field("limits", &self.limits)
            .finish()
    }
}

/// Plugin engines started by this process (one is the goal; each costs an engine, a
/// runtime and an epoch thread).
static ENGINES_STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many plugin engines this process has started.
pub fn engines_started() -> usize {
    ENGINES_STARTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The kinds of plugin, as error messages name them.
const CONNECTOR: &str = "connector";
const SCORER: &str = "scorer";

/// How often the engine's epoch advances: the granularity of call deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

impl PluginHost {
    /// A host with default limits; `cache_dir` keeps compiled components between runs.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Self, PluginError> {
        Self::with_limits(cache_dir, Limits::default())
    }

    /// A host with chosen limits.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn with_limits(cache_dir: Option<PathBuf>, limits: Limits) -> Result<Self, PluginError> {
        ENGINES_STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Tests count this line: one engine per process, however many calls.
        tracing::debug!("starting the plugin engine");
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true).epoch_interruption(true);
        let engine = Engine::new(&config)
            .map_err(|e| PluginError::Host(format!("creating the engine: {e}")))?;
        let mut linker = Linker::new(&engine);
        // WASI is linked for every plugin; what it can reach is decided per store by the
        // WasiCtx (empty but for granted preopens). HTTP is never linked here.
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| PluginError::Host(format!("linking WASI: {e}")))?;
        wit::v0_1::levh::plugin::host::add_to_linker::<PluginState, sandbox::HasState>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| PluginError::Host(format!("linking the host interface: {e}")))?;
        let mut http_linker = linker.clone();
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut http_linker)
            .map_err(|e| PluginError::Host(format!("linking wasi:http: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PluginError::Host(format!("starting the runtime: {e}")))?;
        let ticker = Arc::new(sandbox::EpochTicker::start(engine.clone(), EPOCH_TICK));
        Ok(Self {
            engine,
            linker,
            http_linker,
            runtime,
            cache_dir,
            limits,
            fixed_now: None,
            _ticker: ticker,
        })
    }

    /// Plugins see this instant as the wall clock (a connector's "last 30 days" is then
    /// reproducible); the monotonic clock keeps running.
    pub fn with_fixed_clock(mut self, now: SystemTime) -> Self {
        self.fixed_now = Some(now);
        self
    }

    /// Compiles (or loads from the cache) a connector component and reads its manifest.
    /// Refuses anything that is not a levh connector of a supported API version.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn load_connector(&self, what: &str, bytes: &[u8]) -> Result<Connector, PluginError> {
        let (component, sha256) = self.compile(CONNECTOR, what, bytes)?;
        let refused = |reason: String| PluginError::Refused {
            what: what.to_owned(),
            kind: CONNECTOR,
            reason,
        };
        let interfaces = imports::interface_names(&component, &self.engine);
        imports::check_api_versions(&interfaces).map_err(refused)?;
        let prepared = self.prepared_for_manifest(what);
        let manifest: Manifest = self.runtime.block_on(async {
            let (mut store, instance) = self
                // A network connector imports wasi:http even to say who it is; reading
                // its manifest allows no host at all.
                .instantiate(&component, &prepared, &self.http_linker)
                .await
                .map_err(|e| {
                    match imports::why_unlinkable(&component, &self.http_linker, &interfaces) {
                        Some(reason) => refused(reason),
                        None => not_a(CONNECTOR, what, e),
                    }
                })?;
            let manifest = instance
                .call_manifest(&mut store)
                .await
                .map_err(|e| sandbox::trapped(&prepared, &store, e))?;
            Ok::<_, PluginError>(manifest.into())
        })?;
        check_manifest(CONNECTOR, what, &manifest)?;
        imports::check_against_manifest(&interfaces, &manifest).map_err(refused)?;
        Ok(Connector {
            component,
            manifest,
            sha256,
        })
    }

    /// Checks that the bytes are a component and compiles them (or loads them from the
    /// cache). Returns the component and the sha256 of the bytes.
    fn compile(
        &self,
        kind: &'static str,
        what: &str,
        bytes: &[u8],
    ) -> Result<(Component, String), PluginError> {
        let invalid = |reason: String| PluginError::Invalid {
            what: what.to_owned(),
            kind,
            reason,
        };
        if !bytes.starts_with(b"\0asm") {
            return Err(invalid("not a WebAssembly file".into()));
        }
        if bytes.get(4..8) != Some(&[0x0d, 0x00, 0x01, 0x00]) {
            return Err(invalid(
                "a core WebAssembly module, not a component (build for wasm32-wasip2)".into(),
            ));
        }
        let sha256 = sha256_hex(bytes);
        let component = cache::compile(&self.engine, self.cache_dir.as_deref(), &sha256, bytes)
            .map_err(|e| invalid(format!("does not compile: {e:#}")))?;
        Ok((component, sha256))
    }

    /// The store setup for reading a manifest: no grants, default limits.
    fn prepared_for_manifest(&self, what: &str) -> Prepared {
        Prepared {
            plugin: what.to_owned(),
            version: "?".into(),
            grants: Vec::new(),
            limits: self.limits,
            fixed_now: self.fixed_now,
            http: None,
        }
    }

    /// A fresh store for one call: its WASI context, memory cap and deadline.
    fn new_store(&self, prepared: &Prepared) -> Result<Store<PluginState>, PluginError> {
        let mut store = Store::new(&self.engine, PluginState::new(prepared)?);
        store.limiter(|state| &mut state.limits);
        store.set_epoch_deadline(deadline_ticks(prepared.limits.call_timeout));
        Ok(store)
    }

    async fn instantiate(
        &self,
        component: &Component,
        prepared: &Prepared,
        linker: &Linker<PluginState>,
    ) -> Result<(Store<PluginState>, wit::v0_1::Connector), PluginError> {
        let mut store = self.new_store(prepared)?;
        let instance = wit::v0_1::Connector::instantiate_async(&mut store, component, linker)
            .await
            .map_err(|e| sandbox::trapped(prepared, &store, e))?;
        Ok((store, instance))
    }

    /// Runs one `sync` call. Paths named by `read-path` capabilities must lie inside a
    /// granted directory; they are preopened read-only and the config is rewritten to
    /// their guest paths. Anything else the plugin tries to reach does not exist for it.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn sync(
        &self,
        connector: &Connector,
        config: &[(String, String)],
        cursor: Option<String>,
        grants: &Grants,
    ) -> Result<SyncPage, PluginError> {
        let m = &connector.manifest;
        let (guest_config, preopens) = sandbox::map_paths(m, config, grants)?;
        let allowed = allowed_origins(m, config, grants)?;
        let prepared = Prepared {
            plugin: m.id.clone(),
            version: m.version.clone(),
            grants: preopens,
            limits: self.limits,
            fixed_now: self.fixed_now,
            http: Some((allowed, grants.credential.clone())),
        };
        let page: SyncPage = self.runtime.block_on(async {
            // wasi:http is linked only for calls that were granted a host.
            let linker = if prepared
                .http
                .as_ref()
                .is_some_and(|(allowed, _)| !allowed.is_empty())
            {
                &self.http_linker
            } else {
                &self.linker
            };
            let (mut store, instance) = self
                .instantiate(&connector.component, &prepared, linker)
                .await?;
            let result = instance
                .call_sync(&mut store, &guest_config, cursor.as_deref())
                .await
                .map_err(|e| sandbox::trapped(&prepared, &store, e))?;
            let denied = store
                .data()
                .http
                .denied
                .lock()
                .map(|d| d.clone())
                .unwrap_or_default();
            match result {
                Ok(page) => {
                    let mut page: SyncPage = page.into();
                    let state = store.data_mut();
                    page.skipped = std::mem::take(&mut state.skipped);
                    page.removed = std::mem::take(&mut state.removed);
                    page.unchanged = std::mem::take(&mut state.unchanged);
                    page.names_overflowed = state.names_overflowed;
                    page.listing_started = state.listing_started;
                    page.listing_complete = state.listing_complete;
                    Ok(page)
                }
                // Whatever the plugin made of a refused request, the host says what it was.
                Err(_) if !denied.is_empty() => Err(PluginError::Denied {
                    plugin: m.id.clone(),
                    version: m.version.clone(),
                    capability: format!(
                        "{} (`levh connector grant {} --host HOST` allows a host it asks for)",
                        denied.join("; "),
                        m.id
                    ),
                }),
                Err(error) => {
                    let (kind, message) = wit::describe(error);
                    Err(PluginError::Guest {
                        plugin: m.id.clone(),
                        version: m.version.clone(),
                        kind,
                        message,
                    })
                }
            }
        })?;
        if page.size() > self.limits.output_bytes {
            return Err(PluginError::Trapped {
                plugin: m.id.clone(),
                version: m.version.clone(),
                reason: format!(
                    "returned a page of about {} MiB, over the {} MiB limit",
                    page.size() >> 20,
                    self.limits.output_bytes >> 20
                ),
            });
        }
        Ok(page)
    }
}

/// The hosts a call may reach: those the manifest asks for that the user granted. A
/// manifest that asks for hosts none of which is granted is refused before it runs.
fn allowed_origins(
    manifest: &Manifest,
    config: &[(String, String)],
    grants: &Grants,
) -> Result<Vec<Origin>, PluginError> {
    let requested =
        http::requested_origins(manifest, config).map_err(|message| PluginError::Guest {
            plugin: manifest.id.clone(),
            version: manifest.version.clone(),
            kind: GuestErrorKind::InvalidConfig,
            message,
        })?;
    let allowed: Vec<Origin> = requested
        .iter()
        .filter(|o| grants.http_hosts.contains(o))
        .cloned()
        .collect();
    if allowed.is_empty()
        && let Some(first) = requested.first()
    {
        return Err(PluginError::Denied {
            plugin: manifest.id.clone(),
            version: manifest.version.clone(),
            capability: format!(
                "connect to {first}: not granted (`levh connector grant {} --host {first}`)",
                manifest.id
            ),
        });
    }
    Ok(allowed)
}

/// Refuses a manifest of an unsupported API version or with an id that is not a plain
/// name (ids become directory names).
fn check_manifest(kind: &'static str, what: &str, manifest: &Manifest) -> Result<(), PluginError> {
    let invalid = |reason: String| PluginError::Invalid {
        what: what.to_owned(),
        kind,
        reason,
    };
    // A version this levh does not serve is a levh plugin all the same: refused as such.
    ApiVersion::for_guest(&manifest.api_version).map_err(|reason| PluginError::Refused {
        what: what.to_owned(),
        kind,
        reason,
    })?;
    if manifest.id.is_empty()
        || !manifest
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(invalid(format!(
            "its id {:?} is not a plain name",
            manifest.id
        )));
    }
    Ok(())
}

/// A failure to instantiate while reading a manifest: most often the component is of
/// another kind (a scorer given as a connector) or needs something levh does not offer.
fn not_a(kind: &'static str, what: &str, error: PluginError) -> PluginError {
    match error {
        PluginError::Trapped { reason, .. } => PluginError::Invalid {
            what: what.to_owned(),
            kind,
            reason,
        },
        other => other,
    }
}

fn deadline_ticks(timeout: Duration) -> u64 {
    (timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

/// The directory a path's grant is checked against: itself when a directory, its parent
/// when a file (WASI preopens directories).
pub fn grant_root(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}
