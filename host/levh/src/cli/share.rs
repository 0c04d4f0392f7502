//! `levh share --to PEER [filter] -o FILE`: a bundle of memories for one peer — signed by
//! this instance, encrypted so only that peer can open it — for its `levh pull FILE`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;
use levh_api::share::{ShareArgs, ShareFilter, ShareHome};

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The peer it is for (`levh peer list`).
    #[arg(long)]
    to: String,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this kind (note, decision, event, …).
    #[arg(long, short)]
    kind: Option<String>,
    /// Only from this source.
    #[arg(long, short)]
    source: Option<String>,
    /// Only pinned memories.
    #[arg(long)]
    pinned: bool,
    /// Write a bundle that is signed but not encrypted: anyone who gets the file can read
    /// the memories. By default only the peer can open it.
    #[arg(long)]
    no_encrypt: bool,
    /// The bundle file to write (refused if it exists).
    #[arg(long, short)]
    output: PathBuf,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if args.output.exists() {
        bail!(
            "{} exists: a bundle never overwrites a file (choose another name)",
            args.output.display()
        );
    }
    let home = ShareHome::new(&context.home);
    let identity = home.identity(&super::peer::default_name(), context.now())?;
    let share = ShareArgs {
        to: args.to,
        filter: ShareFilter {
            project: args.project,
            kind: args.kind,
            source: args.source,
            pinned: args.pinned.then_some(true),
        },
        encrypt: !args.no_encrypt,
    };
    let (bytes, view) = context.run(Operation::ExportMemories, |levh, scope| {
        levh_api::share::share(levh, scope, &home, &identity, &share)
    })?;
    let mut file = std::fs::File::create_new(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", args.output.display()))?;
    if json {
        output::json(&view)?;
    } else {
        output::line(format!(
            "{} memories shared with {} in {} ({}, signed by {})",
            view.count,
            view.to,
            args.output.display(),
            if view.encrypted {
                "encrypted: only that peer can open it"
            } else {
                "NOT encrypted: anyone with the file can read it"
            },
            view.from_key
        ));
    }
    Ok(ExitCode::SUCCESS)
}
