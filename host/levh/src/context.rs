//! Everything a command needs, built from the global options: the home directory, the
//! configuration (CLI > `LEVH_*` environment > `$LEVH_HOME/config.toml` > defaults), the
//! clock (`LEVH_NOW` fixes it), the embedder (`LEVH_EMBEDDER`, see `levh_embed::select`)
//! and the engine on the store: the home's SQLite file, or the PostgreSQL database
//! `LEVH_DATABASE_URL` names (see [`Database`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use levh_core::sync::{
    ConnectorCatalog, ConnectorError, ConnectorHelp, Connectors, FetchError, FetchFailure,
    SyncRequest,
};
use levh_core::{
    Backend, Clock, Config, FixedClock, Levh, Parts, Scope, SystemClock, Timestamp, Workspace,
};
use levh_postgres::PostgresStore;
use levh_store::{AnnConfig, AnnIndex, SqliteStore};

/// The opened engine and the caller's scope. Commands reach the engine only through
/// [`Context::run`] (a levh-api operation); the few that are the CLI's own tooling
/// (doctor, models, reembed, benchmark, eval, and the servers' launchers) use the named
/// methods below, never the engine or the store themselves.
pub struct Context {
    levh: Levh,
    /// The store under the engine (tokens and the event log are read from it directly).
    store: Backing,
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

/// The store under the engine, as [`Database`] chose it.
enum Backing {
    /// The home's SQLite file, and the vector index beside it that levh keeps itself.
    Sqlite {
        store: Arc<SqliteStore>,
        /// Kept up to date between requests by `levh serve`.
        index: Arc<AnnIndex>,
    },
    /// A PostgreSQL database: its pgvector HNSW indexes are the vector index, and the
    /// database keeps them (and the full text, a generated column) up to date itself.
    Postgres(Arc<PostgresStore>),
}

impl Backing {
    /// Opens the store `database` names: the home's file (created if missing) with its
    /// vector index, or the PostgreSQL database (migrated if behind).
    fn open(database: Database, home: &Path) -> Result<Self> {
        match database {
            Database::Sqlite => {
                let path = home.join("levh.db");
                let store = Arc::new(
                    SqliteStore::open(&path)
                        .with_context(|| format!("opening {}", path.display()))?,
                );
                // Exact scans while a model has few vectors; an HNSW snapshot (saved under
                // cache/index, so a restart does not rebuild it) once it has many.
                let index = Arc::new(AnnIndex::new(
                    store.clone(),
                    Some(home.join("cache").join("index")),
                    AnnConfig::default(),
                ));
                Ok(Self::Sqlite { store, index })
            }
            Database::Postgres(url) => Ok(Self::Postgres(Arc::new(
                PostgresStore::open(url.secret())
                    .with_context(|| format!("opening the PostgreSQL database {url}"))?,
            ))),
        }
    }

    /// The store and the vector index the engine is built on.
    fn engine_parts(&self) -> (Arc<dyn levh_core::Store>, Arc<dyn levh_core::VectorIndex>) {
        match self {
            Self::Sqlite { store, index } => (store.clone(), index.clone()),
            Self::Postgres(store) => (store.clone(), store.clone()),
        }
    }
}

impl Drop for Context {
    /// The events the SQLite store buffers (each recall's) are written before the command
    /// ends: the store itself writes them when it is dropped, but a background job (a graph
    /// build a query started) may still hold it when the process exits. PostgreSQL buffers
    /// none: each event is written in its change's transaction.
    fn drop(&mut self) {
        if let Backing::Sqlite { store, .. } = &self.store
            && let Err(error) = store.flush_events()
        {
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
        match &self.store {
            Backing::Sqlite { store, .. } => store.as_ref(),
            Backing::Postgres(store) => store.as_ref(),
        }
    }

    /// The same, shared, for `levh serve` to hand to the REST server.
    pub fn shared_server_store(&self) -> Arc<dyn levh_core::ServerStore> {
        match &self.store {
            Backing::Sqlite { store, .. } => store.clone(),
            Backing::Postgres(store) => store.clone(),
        }
    }

    /// The database the memories are in.
    pub fn backend(&self) -> Backend {
        match &self.store {
            Backing::Sqlite { .. } => Backend::Sqlite,
            Backing::Postgres(_) => Backend::Postgres,
        }
    }

    /// The PostgreSQL server's version and its pgvector's (`levh doctor`); `None` on
    /// SQLite.
    pub fn postgres_facts(&self) -> Option<Result<levh_postgres::DatabaseFacts>> {
        match &self.store {
            Backing::Sqlite { .. } => None,
            Backing::Postgres(store) => Some(
                store
                    .database_facts()
                    .context("reading the PostgreSQL server's version and extensions"),
            ),
        }
    }

    /// Brings the search indexes up to date in the background (the full-text ranking,
    /// and the vector index of the embedder in use): what `levh serve` does every few
    /// seconds, so a bulk import — by this process or another — is being indexed before
    /// the next search asks, not after.
    ///
    /// On PostgreSQL there is nothing to do: the database maintains its own indexes, its
    /// log and its full-text column as each write commits.
    pub fn keep_indexes_up(&self) -> Result<()> {
        let Backing::Sqlite { store, index } = &self.store else {
            return Ok(());
        };
        // Reads are faster from the file than through a long write-ahead log.
        store.keep_log_short()?;
        store.keep_text_ranking_up()?;
        let embedder = &self.embedder.embedder;
        // A remote embedder learns its dimension from its first answer.
        if embedder.dimension() > 0 {
            index.keep_up(embedder.model_id(), embedder.dimension())?;
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
    "LEVH_DATABASE_URL",
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
    "LEVH_IT_BACKEND",
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
        Self::open_in(home, workspace, embedder, Where::Configured)
    }

    /// A context on a new SQLite store in `home` (a temporary directory), whatever
    /// `LEVH_DATABASE_URL` says: what `levh connector run` tries a connector against,
    /// so that a trial run never writes into a team's database.
    pub fn open_throwaway(home: PathBuf) -> Result<Self> {
        Self::open_in(Some(home), "default", None, Where::HomeFile)
    }

    fn open_in(
        home: Option<PathBuf>,
        workspace: &str,
        embedder: Option<&str>,
        place: Where,
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
        let database = match place {
            Where::Configured => Database::from_lookup(&lookup)?,
            Where::HomeFile => Database::Sqlite,
        };
        let store = Backing::open(database, &home)?;
        // Builds the embedder only: a local model loads on its first embed, so start-up
        // (an MCP client waiting for `initialize`) never pays for it.
        let selection = levh_embed::select(&lookup, &home).context("choosing the embedder")?;
        let (engine_store, engine_index) = store.engine_parts();
        let levh = Levh::new(Parts {
            store: engine_store,
            index: engine_index,
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
            scope,
            home,
            fixed_now,
            embedder: selection,
            settings: file_config,
            plugin_host: std::sync::OnceLock::new(),
        })
    }
}

/// Which store [`Context::open_in`] opens.
enum Where {
    /// The one the settings name (`LEVH_DATABASE_URL`, else the home's file).
    Configured,
    /// The home's SQLite file, whatever the settings name.
    HomeFile,
}

/// Where the memories are: `LEVH_DATABASE_URL` (or `database_url` in config.toml) unset
/// means the home's SQLite file, as levh always did; a `postgres://` URL means a team
/// server's PostgreSQL database.
#[derive(Debug)]
pub enum Database {
    /// `levh.db` in the home.
    Sqlite,
    /// A PostgreSQL database with pgvector.
    Postgres(DatabaseUrl),
}

impl Database {
    /// Reads `LEVH_DATABASE_URL` through `lookup` (environment, then config.toml). A
    /// blank value is unset; a value of another scheme is refused, naming the setting and
    /// what it takes, without echoing what might be a password.
    fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let Some(value) = lookup("LEVH_DATABASE_URL") else {
            return Ok(Self::Sqlite);
        };
        let value = value.trim();
        if value.is_empty() {
            return Ok(Self::Sqlite);
        }
        if !(value.starts_with("postgres://") || value.starts_with("postgresql://")) {
            let shown = match value.split_once("://") {
                Some((scheme, _)) => format!("a {scheme}:// URL"),
                None => "not a URL".to_owned(),
            };
            bail!(
                "LEVH_DATABASE_URL (or `database_url` in config.toml) is {shown}: it takes a \
                 PostgreSQL URL, postgres://user:password@host:port/database (or \
                 postgresql://…); unset it to keep the memories in the home's SQLite file"
            );
        }
        Ok(Self::Postgres(DatabaseUrl::new(value)))
    }

    /// The database the settings under `home` name, for the commands that act on the
    /// store without opening it (backup, restore).
    pub fn configured(home: &Path) -> Result<Self> {
        let file_config = read_config_file(home)?;
        Self::from_lookup(&|key: &str| {
            std::env::var(key)
                .ok()
                .or_else(|| file_config.get(key).cloned())
        })
    }

    /// Fails, saying what to use instead, when the memories are on PostgreSQL: `what`
    /// (e.g. "`levh backup create`") acts on the home's SQLite file, and on a team server
    /// that file is not where the memories are.
    pub fn require_sqlite(&self, what: &str, instead: &str) -> Result<()> {
        match self {
            Self::Sqlite => Ok(()),
            Self::Postgres(url) => bail!(
                "{what} works on the SQLite store in the home; the memories are on PostgreSQL \
                 ({url}, from LEVH_DATABASE_URL or `database_url`): {instead}"
            ),
        }
    }
}

/// What `levh setup` and `levh mcp config` warn of when this shell names a database that
/// the client's levh will not see: a client starts levh with the home's `config.toml` and
/// the embedder's variables, never `LEVH_DATABASE_URL` (a password would then sit in the
/// client's configuration file), so that levh would quietly use the home's SQLite file.
pub(crate) fn database_only_in_environment(home: Option<&Path>) -> Option<String> {
    let set = std::env::var("LEVH_DATABASE_URL").is_ok_and(|url| !url.trim().is_empty());
    if !set {
        return None;
    }
    let home = match home {
        Some(home) => home.to_path_buf(),
        None => default_home().ok()?,
    };
    let in_file = read_config_file(&home)
        .map(|settings| settings.contains_key("LEVH_DATABASE_URL"))
        .unwrap_or(false);
    (!in_file).then(|| {
        format!(
            "LEVH_DATABASE_URL is set in this shell only: the levh this client starts will not \
             see it and will use {}; put `database_url = \"postgres://…\"` in {} for it to use \
             the database",
            home.join("levh.db").display(),
            home.join("config.toml").display()
        )
    })
}

/// A PostgreSQL URL, shown everywhere with its password masked.
pub struct DatabaseUrl {
    url: String,
}

impl DatabaseUrl {
    fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
        }
    }

    /// The URL as given, password included: only for connecting.
    pub(crate) fn secret(&self) -> &str {
        &self.url
    }

    /// A PostgreSQL URL given as `what` (a flag, say `--to`), or an error naming `what` and
    /// what it takes, without echoing what might be a password.
    pub(crate) fn parse(value: &str, what: &str) -> Result<Self> {
        let value = value.trim();
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(Self::new(value));
        }
        let shown = match value.split_once("://") {
            Some((scheme, _)) => format!("a {scheme}:// URL ({})", mask_password(value)),
            None => "not a URL".to_owned(),
        };
        bail!(
            "{what} is {shown}: it takes a PostgreSQL URL, \
             postgres://user:password@host:port/database (or postgresql://…)"
        )
    }
}

/// The model id and dimension of the embedder the settings under `home` choose (what a
/// `levh serve` with the same settings would embed with), built without loading a model.
pub(crate) fn configured_embedder(home: &Path) -> Result<(String, usize)> {
    let file_config = read_config_file(home)?;
    let lookup = |key: &str| {
        std::env::var(key)
            .ok()
            .or_else(|| file_config.get(key).cloned())
    };
    let selection = levh_embed::select(&lookup, home).context("choosing the embedder")?;
    Ok((
        selection.embedder.model_id().to_owned(),
        selection.embedder.dimension(),
    ))
}

/// `postgres://user:***@host:port/database`: the password masked wherever it is given
/// (after the user, or as a `password=` parameter), everything else as typed so the
/// person recognises it.
impl std::fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&mask_password(&self.url))
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

/// Masks the password of a connection URL. Written by hand rather than with a URL parser:
/// a parser normalises (and may reject) what libpq accepts, and a URL it fails to read must
/// still never be shown with its password.
fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(a value that is not a URL)".to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{user_info}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn database(value: Option<&str>) -> Result<Database> {
        Database::from_lookup(&|key: &str| {
            assert_eq!(key, "LEVH_DATABASE_URL");
            value.map(str::to_owned)
        })
    }

    #[test]
    fn unset_or_blank_database_url_keeps_the_home_sqlite_file() {
        assert!(matches!(database(None), Ok(Database::Sqlite)));
        assert!(matches!(database(Some("  ")), Ok(Database::Sqlite)));
    }

    #[test]
    fn postgres_urls_of_either_scheme_are_taken_and_others_refused_without_their_password() {
        for url in ["postgres://levh@db/levh", "postgresql://levh@db/levh"] {
            assert!(
                matches!(database(Some(url)), Ok(Database::Postgres(_))),
                "{url}"
            );
        }
        for wrong in [
            "mysql://root:hunter2@db/levh",
            "host=db password=hunter2",
            "levh.db",
        ] {
            let error = database(Some(wrong)).unwrap_err().to_string();
            assert!(
                error.contains("LEVH_DATABASE_URL") && error.contains("postgres://"),
                "{error}"
            );
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn a_database_url_is_shown_with_its_password_masked_wherever_it_is() {
        for (url, shown) in [
            (
                "postgres://levh:hunter2@db.internal:5432/levh",
                "postgres://levh:***@db.internal:5432/levh",
            ),
            // A password holding `@` and `:`; the host is after the last `@`.
            (
                "postgresql://bob:pa:ss@w0rd@127.0.0.1/db",
                "postgresql://bob:***@127.0.0.1/db",
            ),
            (
                "postgres://levh@db/levh?sslmode=require&password=hunter2",
                "postgres://levh@db/levh?sslmode=require&password=***",
            ),
            ("postgres://db/levh", "postgres://db/levh"),
        ] {
            assert_eq!(DatabaseUrl::new(url).to_string(), shown);
            assert_eq!(
                format!("{:?}", DatabaseUrl::new(url)),
                format!("DatabaseUrl({shown})")
            );
        }
    }
}
