//! `levh serve`: the REST API, the live feed and MCP over streamable HTTP on one port.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use levh_http::{AppState, AuthConfig};
use levh_mcp::Profile;

use crate::context::{Context, OnDemandConnectors};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on. Anything but loopback needs LEVH_TOKEN.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port (0 picks a free one; the address is printed on start).
    #[arg(long, short, default_value_t = 7777)]
    port: u16,
    /// The MCP tool band /mcp serves: minimal, work, admin or full (default:
    /// `mcp_profile` in config.toml, else work).
    #[arg(long, env = "LEVH_MCP_PROFILE")]
    mcp_profile: Option<Profile>,
    /// Most MCP sessions over HTTP at once (~77 KB each); past it a new `initialize` gets
    /// 503 until one ends (default: config.toml's `mcp_max_sessions`, else 1000).
    #[arg(long, env = "LEVH_MCP_MAX_SESSIONS", value_parser = clap::value_parser!(u32).range(1..))]
    mcp_max_sessions: Option<u32>,
    /// Seconds an MCP session over HTTP lives without a request; its client then starts
    /// a new one (default: config.toml's `mcp_session_idle_seconds`, else 300).
    #[arg(long, env = "LEVH_MCP_SESSION_IDLE_SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    mcp_session_idle_seconds: Option<u64>,
}

pub fn run(home: Option<PathBuf>, workspace: &str, args: Args) -> Result<ExitCode> {
    let ip: IpAddr = match args.host.as_str() {
        "localhost" => IpAddr::from([127, 0, 0, 1]),
        host => host.parse().map_err(|_| {
            anyhow!("--host {host:?} is not an IP address (use 127.0.0.1, ::1 or 0.0.0.0)")
        })?,
    };
    let operator_token = std::env::var("LEVH_TOKEN")
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let public = !ip.is_loopback();
    if public && operator_token.is_none() {
        bail!(
            "refusing to listen on {ip}: a non-loopback address needs LEVH_TOKEN set, so that \
             every request must present a token (set LEVH_TOKEN to a long random secret, or \
             serve on 127.0.0.1)"
        );
    }
    if let Some(token) = &operator_token
        && token.len() < 16
    {
        bail!(
            "LEVH_TOKEN is too short ({} characters): use at least 16 random characters",
            token.len()
        );
    }
    // The settings below are read from the environment or config.toml, like every other.
    let context = Arc::new(Context::open(home.clone(), workspace)?);
    let cors_origins = comma_list(context.setting("LEVH_CORS_ORIGINS"));
    // Names a browser may use to reach this server besides loopback ones (a reverse proxy,
    // a LAN name): every other Host is refused, against DNS rebinding.
    let allowed_hosts = comma_list(context.setting("LEVH_ALLOWED_HOSTS"));
    let mcp_profile = context
        .setting_or(args.mcp_profile, "LEVH_MCP_PROFILE")?
        .unwrap_or(Profile::Work);
    let limits = levh_mcp::sessions::SessionLimits::default();
    let max_sessions = context
        .setting_or(args.mcp_max_sessions, "LEVH_MCP_MAX_SESSIONS")?
        .map_or(limits.max_sessions, |n| n as usize);
    let idle = context
        .setting_or(
            args.mcp_session_idle_seconds,
            "LEVH_MCP_SESSION_IDLE_SECONDS",
        )?
        .map_or(limits.idle, std::time::Duration::from_secs);
    if max_sessions == 0 || idle.is_zero() {
        bail!("LEVH_MCP_MAX_SESSIONS and LEVH_MCP_SESSION_IDLE_SECONDS must be at least 1");
    }

    let (levh, scorer_warning) = context.engine_for_server();
    if let Some(warning) = &scorer_warning {
        tracing::warn!("{warning}");
    }
    let facts = levh_api::settings::ServerFacts {
        home: home.map(|home| home.canonicalize().unwrap_or(home)),
        binary: crate::cli::mcp::this_binary()?,
        embedder_mode: context.embedder.mode.name().into(),
        embedder_automatic: context.embedder.automatic,
        embedder_warning: context.embedder.warning.clone(),
        scorer: context.scorers().active(),
        scorer_warning,
        mcp_profile: mcp_profile.as_str().into(),
        embedder_env: levh_api::settings::embedder_env(|name| std::env::var(name).ok()),
    };
    let connectors = Arc::new(OnDemandConnectors(context.clone()));
    let state = AppState::new(
        levh.clone(),
        context.shared_server_store(),
        AuthConfig {
            operator_token,
            cors_origins,
            public,
            allowed_hosts,
        },
    )
    .with_connectors(connectors.clone())
    .with_facts(facts)
    // Bundles for the peers granted some projects (`levh peer grant`); a peer's token
    // reaches nothing else.
    .with_share(levh_api::share::ShareHome::new(&context.home));
    // MCP over streamable HTTP at /mcp, behind the same authentication as /api.
    let mcp = levh_mcp::http_service(
        levh,
        mcp_profile,
        Some(connectors),
        Some(context.shared_server_store()),
        state.mcp_allowed_hosts(),
        levh_mcp::sessions::SessionLimits { max_sessions, idle },
        state.shutdown_token().child_token(),
    );
    let state = state.with_mcp(mcp).with_pages(levh_dashboard::router());
    consolidate_on_schedule(context.clone());
    keep_indexes_up(context.clone());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, args.port))
            .await
            .with_context(|| format!("listening on {ip}:{}", args.port))?;
        let address = listener.local_addr()?;
        // One line on stdout that scripts (and tests) can read the port from.
        crate::output::line(format!(
            "levh serve: listening on http://{address} (dashboard /, REST /api, feed /api/ws, MCP /mcp)"
        ));
        offer_to_open(address);
        levh_http::serve(listener, state, shutdown_signal())
            .await
            .context("serving")?;
        tracing::info!("levh serve: stopped");
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Consolidates the served workspace every `LEVH_CONSOLIDATE_EVERY_HOURS` (0: never),
/// first one period after start: a store that runs for months stays small and current
/// without anyone remembering to. Each run is logged; a failed run waits for the next.
fn consolidate_on_schedule(context: Arc<Context>) {
    let hours = context.config().consolidation.every_hours;
    if hours <= 0.0 {
        return;
    }
    let period = std::time::Duration::from_secs_f64((hours * 3600.0).min(1e9));
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(period);
            let model = levh_embed::chat::ChatModel::from_env().ok().flatten();
            let run = context.run(levh_api::Operation::Consolidate, |levh, scope| {
                levh_api::consolidation::consolidate(
                    levh,
                    scope,
                    levh_api::requests::ConsolidateArgs::default(),
                    model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
                )
            });
            match run {
                Ok(view) => tracing::info!(
                    clusters = view.clusters.len(),
                    retired = view.retired,
                    considered = view.considered,
                    "scheduled consolidation"
                ),
                Err(error) => tracing::warn!("scheduled consolidation failed: {error:#}"),
            }
        }
    });
}

/// How often the server looks for writes its search indexes lack.
const INDEXES_CHECKED_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Keeps the search indexes up to date between requests, from start-up on: after a bulk
/// import (`levh import` beside the server, a sync, a batch over REST) their builds start
/// within seconds, not at the first search — which then took 45–53 ms scoped to one
/// project of a 100k store, reading vectors out of SQLite, instead of comparing a
/// build's staged points (`cargo bench -p levh-http --bench rest_load`). A check with
/// nothing new costs two indexed counts.
fn keep_indexes_up(context: Arc<Context>) {
    std::thread::Builder::new()
        .name("levh-indexes".into())
        .spawn(move || {
            loop {
                if let Err(error) = context.keep_indexes_up() {
                    tracing::warn!("keeping the search indexes up to date: {error:#}");
                }
                std::thread::sleep(INDEXES_CHECKED_EVERY);
            }
        })
        .map(drop)
        .unwrap_or_else(|error| tracing::warn!(%error, "could not start the index thread"));
}

/// On a terminal, offers to open the dashboard: Enter opens it in the default browser
/// (`$BROWSER` when set). Not on a pipe, a service manager or a test harness, where nobody
/// would press it and stdin may be something else's.
fn offer_to_open(address: SocketAddr) {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return;
    }
    // A server on every interface is still this machine's at the loopback address.
    let ip = if address.ip().is_unspecified() {
        IpAddr::from([127, 0, 0, 1])
    } else {
        address.ip()
    };
    let url = format!("http://{}/", SocketAddr::new(ip, address.port()));
    crate::output::line(format!(
        "Dashboard: {url} — press Enter to open it in your browser (Ctrl-C stops levh)."
    ));
    std::thread::spawn(move || {
        let mut line = String::new();
        // End of input (Ctrl-D) or an error: the offer lapses, the server runs on.
        if std::io::stdin().read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        match webbrowser::open(&url) {
            Ok(()) => crate::output::line(format!("opened {url}")),
            Err(error) => {
                crate::output::line(format!("could not open a browser ({error}); open {url}"))
            }
        }
    });
}

/// Ctrl-C, or SIGTERM on Unix (what service managers send).
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

/// A comma-separated list (a setting's value), blanks dropped.
fn comma_list(value: Option<String>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}
