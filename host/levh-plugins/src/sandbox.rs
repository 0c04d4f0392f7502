//! The per-call store: an empty WASI context plus granted preopens, limits, and the
//! plugin's log and stderr.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use wasmtime::component::{HasSelf, ResourceTable};
use wasmtime::{Engine, Store, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::wit::v0_1::levh::plugin::host;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::http::{Credential, HttpPolicy, Origin};
use crate::{Capability, Grants, Limits, Manifest, PluginError, grant_root};

/// Everything a call's store is built from.
pub(crate) struct Prepared {
    pub(crate) plugin: String,
    pub(crate) version: String,
    /// (host directory, guest path), read-only.
    pub(crate) grants: Vec<(PathBuf, String)>,
    pub(crate) limits: Limits,
    pub(crate) fixed_now: Option<SystemTime>,
    /// Hosts this call may reach (empty: no network), and the credential to attach.
    pub(crate) http: Option<(Vec<Origin>, Option<Credential>)>,
}

/// A wall clock stopped at one instant.
struct FixedWallClock(Duration);

impl HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        self.0
    }
}

/// Log lines a plugin may emit per call, so a chatty plugin cannot flood the host's log.
const LOG_LINES: usize = 1000;
/// Bytes of a plugin's stderr kept to explain a crash (a panic message lands there).
const STDERR_BYTES: usize = 16 * 1024;

/// A store's data.
pub(crate) struct PluginState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: StoreLimits,
    plugin: String,
    stderr: MemoryOutputPipe,
    log_lines: usize,
    /// What the guest reported through `skipped` during this call.
    pub(crate) skipped: Vec<crate::SkippedItem>,
    /// What the guest reported through `removed` during this call.
    pub(crate) removed: Vec<crate::SkippedItem>,
    /// What the guest reported through `unchanged` during this call.
    pub(crate) unchanged: Vec<String>,
    /// The guest named more skipped or unchanged items than are kept.
    pub(crate) names_overflowed: bool,
    /// Whether the guest called `listing-started` / `listing-complete` during this call.
    pub(crate) listing_started: bool,
    pub(crate) listing_complete: bool,
    http_ctx: WasiHttpCtx,
    pub(crate) http: HttpPolicy,
}

/// Makes the host interface use the store's data directly.
pub(crate) type HasState = HasSelf<PluginState>;

impl PluginState {
    pub(crate) fn new(prepared: &Prepared) -> Result<Self, PluginError> {
        let stderr = MemoryOutputPipe::new(STDERR_BYTES);
        let mut builder = WasiCtxBuilder::new();
        // Must come before the preopens: lets file reads run on this thread (4× faster
        // for many small files), which is safe because each call has its own store.
        builder.allow_blocking_current_thread(true);
        builder.stderr(stderr.clone());
        if let Some(now) = prepared.fixed_now {
            let since_epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
            builder.wall_clock(FixedWallClock(since_epoch));
        }
        for (host_dir, guest_path) in &prepared.grants {
            builder
                .preopened_dir(host_dir, guest_path, FsPerms::ReadOnly)
                .map_err(|e| {
                    PluginError::Host(format!(
                        "opening {} for {}: {e}",
                        host_dir.display(),
                        prepared.plugin
                    ))
                })?;
        }
        Ok(Self {
            wasi: builder.build(),
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(prepared.limits.memory_bytes)
                .trap_on_grow_failure(true)
                .instances(16)
                .build(),
            plugin: prepared.plugin.clone(),
            stderr,
            log_lines: 0,
            skipped: Vec::new(),
            removed: Vec::new(),
            unchanged: Vec::new(),
            names_overflowed: false,
            listing_started: false,
            listing_complete: false,
            http_ctx: WasiHttpCtx::new(),
            http: match &prepared.http {
                Some((allowed, credential)) => HttpPolicy::new(allowed.clone(), credential.clone()),
                None => HttpPolicy::new(Vec::new(), None),
            },
        })
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for PluginState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

/// Skipped (and removed) items kept per call; a connector that passes over more is
/// summarised by its own counts.
const SKIPPED_PER_CALL: usize = 10_000;

impl host::Host for PluginState {
    fn skipped(&mut self, source_id: String, reason: String) {
        if self.skipped.len() < SKIPPED_PER_CALL {
            self.skipped.push(crate::SkippedItem {
                source_id: source_id.chars().take(1_000).collect(),
                reason: reason.chars().take(2_000).collect(),
            });
        } else {
            self.names_overflowed = true;
        }
    }

    fn unchanged(&mut self, source_id: String) {
        if self.unchanged.len() < SKIPPED_PER_CALL {
            self.unchanged.push(source_id.chars().take(1_000).collect());
        } else {
            self.names_overflowed = true;
        }
    }

    fn removed(&mut self, source_id: String, reason: String) {
        if self.removed.len() < SKIPPED_PER_CALL {
            self.removed.push(crate::SkippedItem {
                source_id: source_id.chars().take(1_000).collect(),
                reason: reason.chars().take(2_000).collect(),
            });
        }
    }

    fn listing_started(&mut self) {
        self.listing_started = true;
    }

    fn listing_complete(&mut self) {
        self.listing_complete = true;
    }

    fn log(&mut self, level: host::Level, message: String) {
        self.log_lines += 1;
        if self.log_lines > LOG_LINES {
            return;
        }
        let plugin = self.plugin.as_str();
        let message: String = message.chars().take(2000).collect();
        match level {
            host::Level::Trace => tracing::trace!(plugin, "{message}"),
            host::Level::Debug => tracing::debug!(plugin, "{message}"),
            host::Level::Info => tracing::info!(plugin, "{message}"),
            host::Level::Warn => tracing::warn!(plugin, "{message}"),
            host::Level::Error => tracing::error!(plugin, "{message}"),
        }
    }
}

/// Turns a wasmtime failure into a [`PluginError`] that says what happened in words.
pub(crate) fn trapped(
    prepared: &Prepared,
    store: &Store<PluginState>,
    error: wasmtime::Error,
) -> PluginError {
    let text = format!("{error:#}");
    let reason = if matches!(
        error.downcast_ref::<wasmtime::Trap>(),
        Some(wasmtime::Trap::Interrupt)
    ) {
        format!(
            "ran past its time limit of {} s",
            prepared.limits.call_timeout.as_secs_f64()
        )
    } else if text.contains("growing memory")
        || text.contains("memory limit")
        || text.contains("grow") && text.contains("memory")
    {
        format!(
            "ran past its memory limit of {} MiB",
            prepared.limits.memory_bytes >> 20
        )
    } else {
        // A Rust guest's panic hook writes `thread '…' panicked at FILE:LINE:COL:` and then
        // the message on the next line.
        let stderr = String::from_utf8_lossy(&store.data().stderr.contents())
            .trim()
            .to_owned();
        let lines: Vec<&str> = stderr.lines().collect();
        match lines.iter().position(|l| l.contains("panicked at")) {
            Some(at) => {
                let location = lines[at]
                    .rsplit("panicked at ")
                    .next()
                    .unwrap_or("")
                    .trim_end_matches(':');
                let message = lines.get(at + 1).copied().unwrap_or("").trim();
                format!("panicked: {message} (at {location})")
            }
            None => text.lines().next().unwrap_or("trapped").to_owned(),
        }
    };
    PluginError::Trapped {
        plugin: prepared.plugin.clone(),
        version: prepared.version.clone(),
        reason,
    }
}

/// Checks every `read-path` capability against the grants, and returns the config with
/// those paths rewritten to guest paths plus the directories to preopen.
#[allow(clippy::type_complexity)]
pub(crate) fn map_paths(
    manifest: &Manifest,
    config: &[(String, String)],
    grants: &Grants,
) -> Result<(Vec<(String, String)>, Vec<(PathBuf, String)>), PluginError> {
    let granted: Vec<PathBuf> = grants
        .read_paths
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut guest_config = Vec::with_capacity(config.len());
    let mut preopens = Vec::new();
    for (key, value) in config {
        let requested = manifest
            .capabilities
            .iter()
            .any(|c| matches!(c, Capability::ReadPath(k) if k == key));
        if !requested {
            guest_config.push((key.clone(), value.clone()));
            continue;
        }
        let invalid = |message: String| PluginError::Guest {
            plugin: manifest.id.clone(),
            version: manifest.version.clone(),
            kind: crate::GuestErrorKind::InvalidConfig,
            message,
        };
        let host_path = PathBuf::from(value)
            .canonicalize()
            .map_err(|e| invalid(format!("`{key}`: {value}: {e}")))?;
        let root = grant_root(&host_path);
        if !granted.iter().any(|g| root.starts_with(g)) {
            return Err(PluginError::Denied {
                plugin: manifest.id.clone(),
                version: manifest.version.clone(),
                capability: format!(
                    "read-path `{key}` = {}: {} is not granted (`levh connector grant {} {}`, or grant it on the dashboard's Connectors page)",
                    host_path.display(),
                    root.display(),
                    manifest.id,
                    root.display()
                ),
            });
        }
        let guest_dir = format!("/grant/{key}");
        let guest_value = if host_path.is_dir() {
            guest_dir.clone()
        } else {
            let name = host_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{guest_dir}/{name}")
        };
        preopens.push((root, guest_dir));
        guest_config.push((key.clone(), guest_value));
    }
    Ok((guest_config, preopens))
}

/// Advances the engine's epoch on a background thread; call deadlines count its ticks.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: Engine, tick: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("levh-plugin-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    engine.increment_epoch();
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!(%e, "cannot start the plugin deadline thread"));
        Self { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
