//! `levh feedback ID --helpful|--unhelpful`.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;

use crate::context::Context;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("verdict").required(true).args(["helpful", "unhelpful"])))]
pub struct Args {
    /// The memory's id.
    id: super::MemoryIdArg,
    /// It helped: reinforce it.
    #[arg(long)]
    helpful: bool,
    /// It was wrong or useless: weaken it (its decay clock is not reset).
    #[arg(long)]
    unhelpful: bool,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::MemoryFeedback, |levh, scope| {
        levh_api::memories::feedback(levh, scope, &args.id.0.to_string(), args.helpful)
    })?;
    let what = if args.helpful {
        "reinforced (helpful)"
    } else {
        "weakened (unhelpful)"
    };
    super::pin::report(&view, what, json)
}
