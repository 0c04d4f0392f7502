//! `levh pull FILE`: memories a peer shared with this instance (`levh share`), checked
//! (who signed it, that no byte changed, that it is for this instance) and then stored
//! through this instance's own gate, each keeping where it came from.

use std::io::Read as _;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;
use levh_api::share::{PullArgs, PullOutcome, PulledView, ShareHome};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A bundle file (`-` reads standard input), or a peer's name: its `levh serve` (the
    /// `--url` and `--token` given to `levh peer add`) is asked for a bundle.
    from: String,
    /// From a peer: the project to pull, of those it granted (may be left out when it
    /// granted one).
    #[arg(long, value_name = "PROJECT")]
    shared: Option<String>,
    /// Put every memory in this project (instead of the one each had at the peer).
    #[arg(long, short)]
    project: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let home = ShareHome::new(&context.home);
    let from_file = args.from == "-" || std::path::Path::new(&args.from).exists();
    let bytes = if from_file {
        if args.shared.is_some() {
            bail!(
                "--shared names a project to ask a peer for; {} is a file",
                args.from
            );
        }
        read_bundle(&args.from)?
    } else {
        let peers = home.peers()?;
        let peer = peers
            .named(&args.from)
            .with_context(|| format!("{} is neither a file nor a peer", args.from))?;
        fetch(peer, args.shared.as_deref())?
    };
    let identity = home.identity(&super::peer::default_name(), context.now())?;
    let pull = PullArgs {
        project: args.project,
    };
    let view = context
        .run(Operation::StoreMemories, |levh, scope| {
            levh_api::share::pull(levh, scope, &home, &identity, &bytes, &pull)
        })
        .with_context(|| format!("pulling {}", args.from))?;
    if json {
        output::json(&view)?;
    } else {
        print(&view, &args.from);
    }
    Ok(ExitCode::SUCCESS)
}

/// A bundle from the peer's `levh serve`, asked with the token it granted this instance.
fn fetch(peer: &levh_api::share::Peer, project: Option<&str>) -> Result<Vec<u8>> {
    let (Some(url), Some(token)) = (&peer.url, &peer.token) else {
        bail!(
            "peer {} has no --url and --token to pull from: `levh peer remove {0}` and add it again with them (its owner's `levh peer grant` gives the token)",
            peer.name
        );
    };
    let address = format!("{}/api/share/bundle", url.trim_end_matches('/'));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(300)))
        .build()
        .into();
    let mut request = agent
        .get(&address)
        .header("Authorization", &format!("Bearer {token}"));
    if let Some(project) = project {
        request = request.query("project", project);
    }
    let mut response = request
        .call()
        .with_context(|| format!("asking peer {} at {address}", peer.name))?;
    let status = response.status();
    let body = response
        .body_mut()
        .with_config()
        .limit(levh_api::share::MAX_BUNDLE_BYTES as u64)
        .read_to_vec()
        .with_context(|| format!("reading the bundle from peer {} at {address}", peer.name))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let message = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| text.chars().take(300).collect());
        bail!(
            "peer {} at {address} refused: {} {message} (nothing was imported)",
            peer.name,
            status.as_u16()
        );
    }
    Ok(body)
}

/// The bundle's bytes, refused past the largest a bundle may be before it is all read.
fn read_bundle(from: &str) -> Result<Vec<u8>> {
    let limit = levh_api::share::MAX_BUNDLE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if from == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .context("reading the bundle from standard input")?;
    } else {
        let file = std::fs::File::open(from).with_context(|| format!("reading {from}"))?;
        file.take(limit)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {from}"))?;
    }
    if bytes.len() as u64 >= limit {
        bail!(
            "{from} is larger than a bundle may be ({} MiB): nothing was imported",
            levh_api::share::MAX_BUNDLE_BYTES >> 20
        );
    }
    Ok(bytes)
}

fn print(view: &PulledView, from: &str) {
    output::line(format!(
        "{} memories from peer {} ({}, shared {}{}) in {from}: {} imported, {} redacted, {} held for review, {} duplicate, {} already pulled, {} refused",
        view.count,
        view.from,
        view.from_name,
        output::human_time_text(&view.shared_at),
        if view.encrypted {
            ", encrypted"
        } else {
            ", not encrypted"
        },
        view.imported,
        view.redacted,
        view.held,
        view.duplicate,
        view.already_pulled,
        view.refused,
    ));
    for item in &view.items {
        let fate = match item.outcome {
            PullOutcome::Imported => continue,
            PullOutcome::Redacted => "redacted",
            PullOutcome::Held => "held",
            PullOutcome::Duplicate => "duplicate",
            PullOutcome::AlreadyPulled => "already pulled",
            PullOutcome::Refused => "refused",
        };
        output::line(format!(
            "  {} {fate}: {}{}",
            item.memory_id,
            item.reason.as_deref().unwrap_or(""),
            item.id
                .as_deref()
                .map(|id| format!(" ({id})"))
                .unwrap_or_default()
        ));
    }
    if view.held > 0 {
        output::line("  a person decides what was held: `levh held list`");
    }
}
