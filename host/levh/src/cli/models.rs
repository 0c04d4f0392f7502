//! `levh models install|status`: the local embedding model and ONNX Runtime under
//! `$LEVH_HOME/models`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_embed::install::{self, Progress, Sources};
use levh_embed::{LocalEmbedder, LocalModel, Mode};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Download all-MiniLM-L6-v2 and ONNX Runtime (checksums verified), or copy them from
    /// a directory. Sources: LEVH_MODEL_URL + LEVH_MODEL_SHA256, LEVH_RUNTIME_URL +
    /// LEVH_RUNTIME_SHA256 override the defaults.
    Install(InstallArgs),
    /// What is installed, its model id, and whether the runtime and model load.
    Status,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Install from this directory (holding model.onnx, tokenizer.json, config.json)
    /// instead of downloading.
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// With --from: the ONNX Runtime library to install (default: a libonnxruntime file
    /// in DIR, if any).
    #[arg(long, value_name = "FILE", requires = "from")]
    runtime: Option<PathBuf>,
    /// With --from: the name the model's vectors are stored under (e.g.
    /// all-MiniLM-L6-v2). Default: the id in DIR's levh-model.toml, the installed
    /// model's if DIR holds the same model.onnx, else one made from the file's sha256
    /// (never the folder's name).
    #[arg(long, value_name = "NAME", requires = "from")]
    id: Option<String>,
}

/// A progress bar on stderr (drawn only on a terminal).
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new() -> Self {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        Self(bar)
    }
}

impl Progress for Bar {
    fn start(&self, what: &str, total: Option<u64>) {
        self.0.reset();
        self.0.set_length(total.unwrap_or(0));
        let style = match total {
            Some(_) => indicatif::ProgressStyle::with_template(
                "{msg:>14} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            ),
            None => indicatif::ProgressStyle::with_template("{msg:>14} {bytes} {bytes_per_sec}"),
        };
        if let Ok(style) = style {
            self.0.set_style(style.progress_chars("=> "));
        }
        self.0.set_message(what.to_owned());
    }
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    match command {
        Command::Install(args) => install(context, args, json),
        Command::Status => status(context, json),
    }
}

fn install(context: &Context, args: InstallArgs, json: bool) -> Result<ExitCode> {
    let installed = match &args.from {
        Some(dir) => install::install_from_dir(
            &context.home,
            dir,
            args.runtime.as_deref(),
            args.id.as_deref(),
        )
        .with_context(|| format!("installing the model from {}", dir.display()))?,
        None => {
            let sources = Sources::from_lookup(&|key| context.setting(key))?;
            install::install_download(&context.home, &sources, &Bar::new())
                .context("downloading the model")?
        }
    };
    if json {
        output::json(&json!({
            "model_dir": installed.model_dir,
            "model_id": installed.model_id,
            "runtime": installed.runtime,
        }))?;
    } else {
        output::line(format!(
            "installed {} in {}",
            installed.model_id,
            installed.model_dir.display()
        ));
        match &installed.runtime {
            Some(runtime) => output::line(format!("ONNX Runtime: {}", runtime.display())),
            None => output::warn(
                "no ONNX Runtime library was given (--runtime FILE); the model needs one to run",
            ),
        }
        output::line(
            "levh now embeds with it by default; `levh reembed` backfills stored memories",
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn status(context: &Context, json: bool) -> Result<ExitCode> {
    let (dir, runtime) =
        levh_embed::select::local_paths(&|key| context.setting(key), &context.home);
    let located = runtime
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("no ONNX Runtime library (run `levh models install`)"))
        .and_then(|runtime| Ok(LocalModel::locate(&dir, runtime)?));
    // Loading is the only honest check that the runtime and the model work; it is done
    // here and never at start-up.
    let loads = located
        .as_ref()
        .map_err(|e| format!("{e:#}"))
        .and_then(|model| {
            LocalEmbedder::new(model.clone())
                .load()
                .map_err(|e| e.to_string())
        });
    let active = context.embedder_in_use();
    // Not installed is a state, not a failure; installed but not loading is.
    let ok = located.is_err() || loads.is_ok();
    if json {
        output::json(&json!({
            "model_dir": dir,
            "runtime": runtime,
            "installed": located.is_ok(),
            "model_id": located.as_ref().ok().map(|m| m.id.clone()),
            "dimension": located.as_ref().ok().map(|m| m.dimension),
            "loads": loads.is_ok(),
            "error": match (&located, &loads) {
                (Err(e), _) => Some(format!("{e:#}")),
                (Ok(_), Err(e)) => Some(e.clone()),
                _ => None,
            },
            "active": { "mode": context.embedder.mode.name(), "model_id": active.model_id() },
        }))?;
    } else {
        match &located {
            Ok(model) => {
                output::line(format!(
                    "model     {} ({}-d) in {}",
                    model.id,
                    model.dimension,
                    dir.display()
                ));
                output::line(format!("runtime   {}", model.runtime.display()));
                match &loads {
                    Ok(()) => output::line("loads     ✓ runtime and model load"),
                    Err(e) => output::line(format!("loads     ✗ {e}")),
                }
            }
            Err(e) => output::line(format!("model     not installed: {e:#}")),
        }
        output::line(format!(
            "active    {} ({})",
            active.model_id(),
            context.embedder.mode.name()
        ));
        if context.embedder.mode != Mode::Local
            && let Some(warning) = &context.embedder.warning
        {
            output::warn(warning);
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
