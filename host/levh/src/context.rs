//! Everything a command needs, built from the global options: the home directory, the
//! configuration (CLI > `LEVH_*` environment > `$LEVH_HOME/config.toml` > defaults), the
//! clock (`LEVH_NOW` fixes it), the embedder (`LEVH_EMBEDDER`, see `levh_embed::select`)
//! and the engine on the store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use levh_core::sync::{
    ConnectorCatalog, ConnectorError, ConnectorHelp, Connectors, FetchError, FetchFailure,
    SyncRequest,
};
use levh_core::{Clock, Config, FixedClock, Levh, Parts, Scope, SystemClock, Timestamp, Workspace};
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

/// The opened engine and the caller's scope. Commands reach the engine only through
/// [`Context::run`] (a levh-api operation); the few that are the CLI's own tooling
/// (doctor, models, reembed, benchmark, eval, and the servers' launchers) use the named
/// methods below, never the engine or the store themselves.
pub struct Context {
    levh: Levh,
    /// The store under the engine (tokens and the event log are read from it directly).
    store: Arc<SqliteStore>,
    /// The engine's vector index (kept up to date between requests by `levh serve`).
    index: Arc<AnnIndex>,
    pub scope: Scope,
    pub home: PathBuf,
    /// `LEVH_NOW`, when set: plugins see the same instant as the engine.
    pub fixed_now: Option<Timestamp>,
    /// The embedder chosen, and why not a better one.
    pub embedder: levh_embed::Selection,
    /// The settings as read (environment over `config.toml`), for commands that look
    /// up more of them.
    settings: HashMap<String, String>,
    /// The process's one plugin engine, started by the first command that runs a plugin.
    plugin_host: std::sync::OnceLock<Arc<levh_plugins::PluginHost>>,
}

impl Drop for Context {
    /// The events the store buffers (each recall's) are written before the command ends:
    /// the store itself writes them when it is dropped, but a background job (a graph
    /// build a query started) may still hold it when the process exits.
    fn drop(&mut self) {
        if let Err(error) = self.store.flush_events() {
            tracing::warn!(%error, "buffered events not written");
        }
    }
}

impl Context {
    /// Runs one levh-api operation for this command, inside a span named as every surface
    /// names it: the CLI is an adapter like REST and MCP, and its commands reach the
    /// engine only through here.
    pub fn run<T>(
        &self,
        operation: levh_api::Operation,
        work: impl FnOnce(&Levh, &Scope) -> levh_api::Result<T>,
    ) -> Result<T> {
        let _span = tracing::info_span!("operation", name = operation.name()).entered();
        Ok(work(&self.levh, &self.scope)?)
    }

    /// [`Context::run`] with the active scorer attached (what recall ranks with), and the
    /// warning when the scorer could not be loaded.
    pub fn run_ranked<T>(
        &self,
        operation: levh_api::Operation,
        work: impl FnOnce(&Levh, &Scope) -> levh_api::Result<T>,
    ) -> Result<(T, Option<String>)> {
        let _span = tracing::info_span!("operation", name = operation.name()).entered();
        let (levh, warning) = self.engine_for_server();
        Ok((work(&levh, &self.scope)?, warning))
    }

    /// The retention below which a memory counts as fading (for people's tables).
    pub fn fading_threshold(&self) -> f64 {
        self.levh.config().model.fading_threshold
    }

    /// The person's time zone, as levh-api reads it (`LEVH_TZ`, else the system's).
    pub fn user_time_zone(&self) -> Result<jiff::tz::TimeZone> {
        Ok(levh_api::knowledge::user_time_zone(&self.levh)?)
    }

    /// The clock every command reads (`LEVH_NOW` fixes it).
    pub fn now(&self) -> Timestamp {
        self.levh.now()
    }

    /// The store as the server sees it (tokens and the event log), for the operator's
    /// token commands.
    pub fn server_store(&self) -> &dyn levh_core::ServerStore {
        self.store.as_ref()
    }

    /// The same, shared, for `levh serve` to hand to the REST server.
    pub fn shared_server_store(&self) -> Arc<dyn levh_core::ServerStore> {
        self.store.clone()
    }

    /// Brings the search indexes up to date in the background (the full-text ranking,
    /// and the vector index of the embedder in use): what `levh serve` does every few
    /// seconds, so a bulk import — by this process or another — is being indexed before
    /// the next search asks, not after.
    pub fn keep_indexes_up(&self) -> Result<()> {
        // Reads are faster from the file than through a long write-ahead log.
        self.store.keep_log_short()?;
        self.store.keep_text_ranking_up()?;
        let embedder = &self.embedder.embedder;
        // A remote embedder learns its dimension from its first answer.
        if embedder.dimension() > 0 {
            self.index
                .keep_up(embedder.model_id(), embedder.dimension())?;
        }
        Ok(())
    }

    // CLI tooling: what only the CLI's own commands read (doctor, models, reembed, the
    // benchmarks), named for what they need rather than handing out the engine.

    /// The model settings in force (the benchmarks run a fresh engine with them).
    pub fn config(&self) -> Config {
        *self.levh.config()
    }

    /// The embedder in use (`levh doctor`, `levh models status`).
    pub fn embedder_in_use(&self) -> &dyn levh_core::Embedder {
        self.levh.embedder()
    }

    /// The store's own checks (`levh doctor`).
    pub fn store_health(&self) -> Result<levh_core::StoreHealth> {
        Ok(self.levh.health()?)
    }

    /// How many memories lack a vector of the embedder in use (`levh reembed`).
    pub fn reembed_pending(&self) -> Result<u64> {
        Ok(self.levh.reembed_pending()?)
    }

    /// Embeds up to `batch` memories that lack a vector of the embedder in use, in one
    /// committed step; how many it took (`levh reembed`).
    pub fn reembed_step(&self, batch: usize) -> Result<usize> {
        Ok(self.levh.reembed_step(batch)?)
    }

    /// The plugin runtime: one engine per process, started only by the first command
    /// that runs a plugin (wasmtime is never started for plain memory commands) and
    /// shared by every MCP session and REST request after it.
    pub fn plugin_host(&self) -> Result<Arc<levh_plugins::PluginHost>> {
        if let Some(host) = self.plugin_host.get() {
            return Ok(host.clone());
        }
        let host = levh_plugins::PluginHost::new(Some(self.home.join("cache").join("plugins")))?;
        let host = Arc::new(match self.fixed_now {
            Some(now) => host.with_fixed_clock(std::time::SystemTime::from(now)),
            None => host,
        });
        // Two threads racing here both built an engine; the first one set is kept.
        Ok(self.plugin_host.get_or_init(|| host).clone())
    }

    /// The connector runtime on the process's plugin engine.
    pub fn connectors(&self) -> Result<levh_plugins::ConnectorRuntime> {
        Ok(levh_plugins::ConnectorRuntime::new(
            self.plugin_host()?,
            self.registry(),
            levh_builtins::CONNECTORS,
        ))
    }

    /// Installed scorers and the active one.
    pub fn scorers(&self) -> levh_plugins::ScorerRegistry {
        levh_plugins::ScorerRegistry::new(self.home.join("scorers"))
    }

    /// A scorer's component bytes: built-in first, then installed.
    pub fn scorer_component(&self, id: &str) -> Result<Vec<u8>> {
        self.scorers()
            .resolve(id, levh_builtins::SCORERS)
            .map_err(|message| anyhow!(message))
    }

    /// The engine recall ranks with and a server surface (REST, MCP) is built on: with the
    /// active scorer attached, if one is chosen. A scorer that cannot be loaded does not stop
    /// recall: the H-score ranks, and the warning says why.
    pub fn engine_for_server(&self) -> (Levh, Option<String>) {
        let Some(id) = self.scorers().active() else {
            return (self.levh.clone(), None);
        };
        let loaded = self.scorer_component(&id).and_then(|bytes| {
            let host = self.plugin_host()?;
            let scorer = host.load_scorer(&id, &bytes)?;
            Ok(levh_plugins::ScorerPolicy::new(host, scorer))
        });
        match loaded {
            Ok(policy) => (self.levh.clone().with_scorer(Arc::new(policy)), None),
            Err(e) => (
                self.levh.clone(),
                Some(format!(
                    "scorer `{id}` could not be loaded ({e:#}); ranked by the built-in H-score instead"
                )),
            ),
        }
    }

    /// Installed connectors and grants.
    pub fn registry(&self) -> levh_plugins::Registry {
        levh_plugins::Registry::new(self.home.join("plugins"))
    }
}

/// The home to use (`--home`, `LEVH_HOME`, else the platform's), created private if new,
/// after checking the environment holds no misspelt `LEVH_*` setting.
pub(crate) fn resolve_home(home: Option<PathBuf>) -> Result<PathBuf> {
    let home = match home {
        Some(home) => home,
        None => default_home()?,
    };
    create_private_dir(&home)?;
    check_environment()?;
    Ok(home)
}

/// The default home: the platform data directory, e.g. `~/.local/share/levh`.
pub(crate) fn default_home() -> Result<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("levh")).ok_or_else(|| {
        anyhow!("cannot find a data directory for this user; pass --home DIR or set LEVH_HOME")
    })
}

/// Every `LEVH_*` setting levh reads: the engine's, the embedder's, the server's and the
/// CLI's. Any other `LEVH_*` variable, or `config.toml` key, is a typo: refused, naming the
/// nearest of these, rather than silently ignored.
const SETTINGS: &[&str] = &[
    "LEVH_HOME",
    "LEVH_WORKSPACE",
    "LEVH_BACKUP_PASSPHRASE",
    "LEVH_NOW",
    "LEVH_TZ",
    "LEVH_PERSONAL_DOMAINS",
    "LEVH_ME",
    "LEVH_AUTO_SUMMARIZE",
    "LEVH_LOG",
    "LEVH_TOKEN",
    "LEVH_CORS_ORIGINS",
    "LEVH_ALLOWED_HOSTS",
    "LEVH_MCP_PROFILE",
    "LEVH_MCP_MAX_SESSIONS",
    "LEVH_MCP_SESSION_IDLE_SECONDS",
    "LEVH_EMBEDDER",
    "LEVH_EMBED_DIMENSION",
    "LEVH_MODEL_DIR",
    "LEVH_MODEL_ID",
    "LEVH_MODEL_URL",
    "LEVH_MODEL_SHA256",
    "LEVH_RUNTIME_URL",
    "LEVH_RUNTIME_SHA256",
    "LEVH_OLLAMA_URL",
    "LEVH_OLLAMA_MODEL",
    "LEVH_OPENAI_URL",
    "LEVH_OPENAI_MODEL",
    "LEVH_OPENAI_API_KEY",
    "LEVH_LLM_URL",
    "LEVH_LLM_MODEL",
    "LEVH_LLM_API_KEY",
    "LEVH_STABILITY_HOURS",
    "LEVH_GAIN",
    "LEVH_MAX_STABILITY_HOURS",
    "LEVH_MIN_STABILITY_HOURS",
    "LEVH_WEAKEN_FACTOR",
    "LEVH_INTERFERENCE_THRESHOLD",
    "LEVH_INTERFERENCE_LEXICAL_THRESHOLD",
    "LEVH_INTERFERENCE_FACTOR",
    "LEVH_FADING_THRESHOLD",
    "LEVH_WORKING_STABILITY_HOURS",
    "LEVH_PROMOTE_IMPORTANCE",
    "LEVH_CONSOLIDATE_AFTER_DAYS",
    "LEVH_CONSOLIDATE_EVERY_HOURS",
    "LEVH_CONSOLIDATE_SIMILARITY",
    "LEVH_CONSOLIDATE_LEXICAL_SIMILARITY",
    "LEVH_HSCORE_ALPHA",
    "LEVH_HSCORE_BETA",
    "LEVH_HSCORE_GAMMA",
    "LEVH_HSCORE_DELTA",
    "LEVH_RECALL_CANDIDATES",
    "LEVH_RECALL_MIN_SIMILARITY",
    "LEVH_LOG_QUERIES",
    "LEVH_FUSION",
    "LEVH_FUSION_SEMANTIC_WEIGHT",
    "LEVH_FUSION_HASH_WEIGHT",
    "LEVH_FUSION_RRF_K",
    "LEVH_FUSION_TEMPORAL_BOOST",
    "LEVH_GATE_MIN_CHARS",
    "LEVH_GATE_MAX_CHARS",
    "LEVH_GATE_REJECT_SIMILARITY",
    "LEVH_GATE_REVIEW_SIMILARITY",
    "LEVH_GATE_LEXICAL_REJECT",
    "LEVH_GATE_LEXICAL_REVIEW",
    "LEVH_GATE_LEXICAL_AGREEMENT",
    "LEVH_GATE_HELD_EXPIRY_HOURS",
];

/// Variables of levh's own test and benchmark harnesses: not settings, but not typos.
/// (`LEVH_POSTGRES_BIN`: where the PostgreSQL tests find their server, exported by
/// `scripts/fetch-postgres.sh` into the environment every `levh` a test's git or client
/// hook starts inherits.)
const HARNESS_VARIABLES: &[&str] = &[
    "LEVH_REQUIRE_TEST_ASSETS",
    "LEVH_BENCH_PYTHON",
    "LEVH_POSTGRES_BIN",
];

/// The setting nearest to a name that is not one, if any is near.
fn nearest_setting(name: &str) -> Option<&'static str> {
    SETTINGS
        .iter()
        .map(|known| (strsim::levenshtein(known, name), *known))
        .filter(|(distance, _)| *distance <= 4)
        .min()
        .map(|(_, known)| known)
}

/// Refuses `LEVH_*` variables levh does not read (a typo would otherwise be ignored).
fn check_environment() -> Result<()> {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if !key.starts_with("LEVH_") || SETTINGS.contains(&key) || HARNESS_VARIABLES.contains(&key)
        {
            continue;
        }
        let hint = nearest_setting(key)
            .map(|known| format!(" (did you mean {known}?)"))
            .unwrap_or_default();
        bail!(
            "unknown setting {key} in the environment{hint}; unset it (the README's settings \
             table lists what levh reads)"
        );
    }
    Ok(())
}

/// Settings read from the environment only, each with why. Credentials: `config.toml`
/// travels inside every backup, a plain one included.
const ENVIRONMENT_ONLY: &[(&str, &str)] = &[
    (
        "LEVH_BACKUP_PASSPHRASE",
        "config.toml goes into every backup",
    ),
    (
        "LEVH_TOKEN",
        "config.toml goes into every backup, a plain one too",
    ),
    (
        "LEVH_OPENAI_API_KEY",
        "config.toml goes into every backup, a plain one too",
    ),
    (
        "LEVH_LLM_API_KEY",
        "config.toml goes into every backup, a plain one too",
    ),
    (
        "LEVH_HOME",
        "config.toml is read from the home, so it cannot choose it",
    ),
    ("LEVH_LOG", "logging starts before config.toml is read"),
];

/// Reads `$LEVH_HOME/config.toml`: flat keys named like the variables without the prefix,
/// in lowercase (`gain = 0.6` for `LEVH_GAIN`). An unknown key or a value that is not a
/// string, number or boolean is an error naming it and the file.
fn read_config_file(home: &Path) -> Result<HashMap<String, String>> {
    let path = home.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("parsing {}", path.display()))?;
    let mut settings = HashMap::new();
    for (key, value) in table {
        let name = format!("LEVH_{}", key.to_uppercase());
        if let Some((_, why)) = ENVIRONMENT_ONLY.iter().find(|(only, _)| *only == name) {
            bail!(
                "{}: `{key}` cannot be set here: {why}; set {name} in the environment",
                path.display()
            );
        }
        if !SETTINGS.contains(&name.as_str()) {
            let hint = nearest_setting(&name)
                .map(|known| {
                    format!(
                        " (did you mean `{}`?)",
                        known["LEVH_".len()..].to_lowercase()
                    )
                })
                .unwrap_or_default();
            bail!("{}: unknown key `{key}`{hint}", path.display());
        }
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => bail!(
                "{}: `{key}` must be a string, a number or a boolean, not {} ({other})",
                path.display(),
                other.type_str()
            ),
        };
        settings.insert(name, value);
    }
    Ok(settings)
}

/// Parses a time given on the command line: RFC 3339 (`2026-11-30T09:00:00Z`), or a plain
/// date taken as midnight UTC.
pub fn parse_time(text: &str) -> Result<Timestamp, String> {
    levh_core::parse_instant(text).ok_or_else(|| format!(
        "'{text}' is not a time: use RFC 3339 like 2026-11-30T09:00:00Z, or a date like 2026-11-30"
    ))
}

impl Context {
    /// Opens the store under `home` (created if missing) for `workspace`.
    pub fn open(home: Option<PathBuf>, workspace: &str) -> Result<Self> {
        Self::open_with_embedder(home, workspace, None)
    }

    /// A setting: environment first, then `config.toml`.
    pub fn setting(&self, key: &str) -> Option<String> {
        std::env::var(key)
            .ok()
            .or_else(|| self.settings.get(key).cloned())
    }

    /// A setting read as a `T`: `given` (a command-line flag, which clap also fills from
    /// the environment) first, then [`Context::setting`]; an unreadable value is an error
    /// naming the setting.
    pub fn setting_or<T>(&self, given: Option<T>, key: &str) -> Result<Option<T>>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        if given.is_some() {
            return Ok(given);
        }
        self.setting(key)
            .map(|raw| {
                raw.trim()
                    .parse::<T>()
                    .map_err(|e| anyhow!("{key} = {raw:?} (config.toml): {e}"))
            })
            .transpose()
    }

    /// Opens the store like [`Context::open`], with `embedder` (a `LEVH_EMBEDDER` value)
    /// instead of the configured embedder when given.
    pub fn open_with_embedder(
        home: Option<PathBuf>,
        workspace: &str,
        embedder: Option<&str>,
    ) -> Result<Self> {
        let home = resolve_home(home)?;
        let file_config = read_config_file(&home)?;
        let lookup = |key: &str| {
            if key == "LEVH_EMBEDDER"
                && let Some(embedder) = embedder
            {
                return Some(embedder.to_owned());
            }
            std::env::var(key)
                .ok()
                .or_else(|| file_config.get(key).cloned())
        };
        let config = Config::from_lookup(&lookup).context("reading the configuration")?;
        let fixed_now = lookup("LEVH_NOW")
            .map(|now| parse_time(&now).map_err(|e| anyhow!("LEVH_NOW: {e}")))
            .transpose()?;
        let clock: Arc<dyn Clock> = match fixed_now {
            Some(now) => Arc::new(FixedClock(now)),
            None => Arc::new(SystemClock),
        };
        let workspace = Workspace::new(workspace)?;
        let path = home.join("levh.db");
        let store = Arc::new(
            SqliteStore::open(&path).with_context(|| format!("opening {}", path.display()))?,
        );
        // Builds the embedder only: a local model loads on its first embed, so start-up
        // (an MCP client waiting for `initialize`) never pays for it.
        let selection = levh_embed::select(&lookup, &home).context("choosing the embedder")?;
        // Exact scans while a model has few vectors; an HNSW snapshot (saved under
        // cache/index, so a restart does not rebuild it) once it has many.
        let index = Arc::new(AnnIndex::new(
            store.clone(),
            Some(home.join("cache").join("index")),
            AnnConfig::default(),
        ));
        let levh = Levh::new(Parts {
            store: store.clone(),
            index: index.clone(),
            embedder: selection.embedder.clone(),
            clock,
            config,
        })
        .with_personal_domains(match lookup("LEVH_PERSONAL_DOMAINS") {
            // Organizations come from e-mail domains except these personal providers.
            Some(path) => levh_core::entities::PersonalDomains::parse(
                &std::fs::read_to_string(&path)
                    .with_context(|| format!("reading LEVH_PERSONAL_DOMAINS={path}"))?,
            ),
            None => Default::default(),
        })
        .with_person(levh_core::PersonSettings {
            time_zone: lookup("LEVH_TZ"),
            me: lookup("LEVH_ME"),
            auto_summarize: lookup("LEVH_AUTO_SUMMARIZE"),
        });
        let mut scope = Scope::cli(workspace);
        // Decisions record who took them: at a terminal, the OS user.
        scope.actor.principal = ["USER", "USERNAME", "LOGNAME"]
            .iter()
            .find_map(|key| std::env::var(key).ok())
            .or_else(|| Some("local".to_owned()));
        Ok(Self {
            levh,
            store,
            index,
            scope,
            home,
            fixed_now,
            embedder: selection,
            settings: file_config,
            plugin_host: std::sync::OnceLock::new(),
        })
    }
}

fn create_private_dir(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if path.exists() {
        bail!("{} exists and is not a directory", path.display());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(path)
        .with_context(|| format!("creating {}", path.display()))
}

/// The connector runtime as `levh serve` offers it: started on the first request that
/// needs it (a server that never syncs never starts wasmtime), then on the process's one
/// plugin engine.
pub struct OnDemandConnectors(pub Arc<Context>);

impl std::fmt::Debug for OnDemandConnectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDemandConnectors")
            .field("home", &self.0.home)
            .finish()
    }
}

impl OnDemandConnectors {
    fn runtime(&self) -> Result<levh_plugins::ConnectorRuntime, ConnectorError> {
        self.0.connectors().map_err(|e| {
            ConnectorError::Fetch(FetchError::new(
                FetchFailure::Failed,
                format!("starting the plugin runtime: {e:#}"),
            ))
        })
    }
}

impl Connectors for OnDemandConnectors {
    fn list(&self, workspace: &Workspace) -> Result<ConnectorCatalog, ConnectorError> {
        self.runtime()?.list(workspace)
    }

    fn help(&self, id: &str, workspace: &Workspace) -> Result<ConnectorHelp, ConnectorError> {
        self.runtime()?.help(id, workspace)
    }

    fn grant(
        &self,
        id: &str,
        workspace: &Workspace,
        grant: &levh_core::sync::Grant,
    ) -> Result<ConnectorHelp, ConnectorError> {
        self.runtime()?.grant(id, workspace, grant)
    }

    fn revoke(
        &self,
        id: &str,
        workspace: &Workspace,
        grant: &levh_core::sync::Grant,
    ) -> Result<bool, ConnectorError> {
        self.runtime()?.revoke(id, workspace, grant)
    }

    fn sync(
        &self,
        levh: &Levh,
        scope: &Scope,
        request: SyncRequest,
    ) -> Result<levh_core::sync::SyncReport, ConnectorError> {
        self.runtime()?.sync(levh, scope, request)
    }
}
