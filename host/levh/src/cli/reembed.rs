//! `levh reembed [--model M]`: gives every stored memory a vector of the active embedder
//! (or of M), so recall compares like with like after installing or switching models.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Embed with this embedder instead of the configured one: local, ollama, openai or
    /// hash (set LEVH_EMBEDDER to the same afterwards, so recall uses these vectors).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Memories per embedding call (and per committed step).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=1024))]
    batch: u16,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let model = context.embedder_in_use().model_id().to_owned();
    let pending = context.reembed_pending()?;
    let bar = indicatif::ProgressBar::hidden();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_length(pending);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {per_sec} {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("embedding with {model}"));
    let started = Instant::now();
    let mut done: u64 = 0;
    // Each step commits on its own and the next one asks the store again for what still
    // lacks a vector: an interrupted run loses at most one batch of work.
    loop {
        let taken = context
            .reembed_step(usize::from(args.batch))
            .with_context(|| format!("embedding stored memories with {model} ({done} done)"))?;
        if taken == 0 {
            break;
        }
        done += taken as u64;
        bar.set_position(done.min(pending));
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let switched = args.model.is_some()
        && context.setting("LEVH_EMBEDDER").as_deref() != args.model.as_deref();
    if json {
        output::json(&json!({
            "model": model,
            "embedded": done,
            "seconds": seconds,
        }))?;
    } else {
        output::line(format!(
            "{done} memories embedded with {model} in {seconds:.1} s; every memory now has a {model} vector"
        ));
    }
    if switched && let Some(mode) = &args.model {
        output::warn(format!(
            "recall uses the configured embedder: set LEVH_EMBEDDER={mode} (environment or config.toml) to use these vectors"
        ));
    }
    Ok(ExitCode::SUCCESS)
}
