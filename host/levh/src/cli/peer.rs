//! `levh peer id|add|list|remove`: this instance's public identity, and the instances it
//! trusts to share with (see `levh share` and `levh pull`). Opens no store.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use levh_api::share::ShareHome;
use serde::Serialize;

use crate::output;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Print this instance's public identity (created on first use): one string to give
    /// a colleague for their `levh peer add`. Its private keys are never printed.
    Id,
    /// Trust another instance: bundles it signs can be pulled here, and `levh share --to
    /// NAME` writes bundles only it can open.
    Add {
        /// What to call it here (letters, digits, `-`, `_`, `.`); its memories arrive with
        /// source `peer:NAME`.
        name: String,
        /// Its identity, as its `levh peer id` printed it (`levh-peer1:…`).
        identity: String,
        /// Where its `levh serve` answers, for `levh pull NAME`.
        #[arg(long)]
        url: Option<String>,
        /// The token it issued for this instance, for `levh pull NAME`.
        #[arg(long)]
        token: Option<String>,
    },
    /// Let a peer pull bundles of these projects from this instance's `levh serve`
    /// (`levh pull NAME` there): prints the token to give it, once. The token fetches
    /// bundles of these projects, encrypted to that peer, and nothing else: it cannot
    /// write, list or read anything of this instance. Granting again replaces the token.
    Grant {
        /// The peer's name here.
        name: String,
        /// A project it may pull (repeat for more).
        #[arg(long, short, required = true)]
        project: Vec<String>,
    },
    /// The instances trusted here (never their tokens).
    List,
    /// Stop trusting an instance: its bundles are refused from now on.
    Remove {
        /// Its name here.
        name: String,
    },
}

/// A peer as listed: never its token.
#[derive(Debug, Serialize)]
struct PeerView {
    name: String,
    /// The projects it may pull from this instance (`levh peer grant`).
    granted: Vec<String>,
    key: String,
    identity: String,
    url: Option<String>,
    has_token: bool,
    added_at: String,
}

impl PeerView {
    fn of(peer: &levh_api::share::Peer) -> Result<Self> {
        Ok(Self {
            name: peer.name.clone(),
            granted: peer
                .grant
                .as_ref()
                .map(|g| g.projects.clone())
                .unwrap_or_default(),
            key: peer.public()?.key_text(),
            identity: peer.identity.clone(),
            url: peer.url.clone(),
            has_token: peer.token.is_some(),
            added_at: peer.added_at.clone(),
        })
    }
}

/// The name a new identity gives itself in what it shares: the user's login, which a
/// colleague recognises; they still choose their own name for it with `peer add`.
pub fn default_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "levh".to_owned())
}

pub fn run(home: &Path, workspace: &str, command: Command, json: bool) -> Result<ExitCode> {
    let share = ShareHome::new(home);
    let now = jiff::Timestamp::now();
    match command {
        Command::Id => {
            let identity = share.identity(&default_name(), now)?;
            let public = identity.public();
            if json {
                output::json(&serde_json::json!({
                    "identity": public.to_string(),
                    "name": identity.name(),
                    "key": public.key_text(),
                    "age_recipient": public.recipient.to_string(),
                }))?;
            } else {
                output::line(public);
            }
        }
        Command::Add {
            name,
            identity,
            url,
            token,
        } => {
            let mut peers = share.peers()?;
            let added = peers.add(levh_api::share::Peer {
                name,
                identity,
                url,
                token,
                added_at: now.to_string(),
                grant: None,
            })?;
            let view = PeerView::of(added)?;
            if json {
                output::json(&view)?;
            } else {
                output::line(format!("peer {} added ({})", view.name, view.key));
            }
        }
        Command::Grant { name, project } => {
            // The token is checked against this identity's peers by `levh serve`: make sure
            // the identity that signs the bundles exists.
            share.identity(&default_name(), now)?;
            let mut peers = share.peers()?;
            let token = peers.grant(&name, workspace, project.clone(), &now.to_string())?;
            if json {
                output::json(&serde_json::json!({
                    "peer": name,
                    "workspace": workspace,
                    "projects": project,
                    "token": token,
                }))?;
            } else {
                output::line(format!(
                    "peer {name} may pull {} from this instance's `levh serve`; give it this token (shown once):",
                    project.join(", ")
                ));
                output::line(&token);
                output::line(format!(
                    "  there: levh peer add NAME-FOR-THIS-INSTANCE IDENTITY --url http://THIS-HOST:PORT --token {token}"
                ));
            }
        }
        Command::List => {
            let peers = share.peers()?;
            let views = peers
                .peers()
                .iter()
                .map(PeerView::of)
                .collect::<Result<Vec<_>>>()?;
            if json {
                output::json(&serde_json::json!({ "peers": views }))?;
            } else if views.is_empty() {
                output::line("no peers yet: `levh peer add NAME IDENTITY`");
            } else {
                let mut table =
                    output::table(&["name", "key", "url", "token", "may pull", "added"]);
                for view in &views {
                    table.add_row(vec![
                        view.name.clone(),
                        view.key.clone(),
                        view.url.clone().unwrap_or_default(),
                        if view.has_token { "yes" } else { "" }.to_owned(),
                        view.granted.join(", "),
                        output::human_time_text(&view.added_at),
                    ]);
                }
                output::print_table(&table);
            }
        }
        Command::Remove { name } => {
            let mut peers = share.peers()?;
            let removed = peers.remove(&name)?;
            if json {
                output::json(&PeerView::of(&removed)?)?;
            } else {
                output::line(format!(
                    "peer {} removed: its bundles are refused from now on",
                    removed.name
                ));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
