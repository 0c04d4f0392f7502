//! `levh tune --dataset NAME|DIR [--folds N] [--write]`: recall's fusion settings fitted
//! to labelled conversations (the benchmark's conversational format), cross-validated;
//! saved to `config.toml` only with `--write` and only when they gain on held-out
//! questions. See `levh_eval::tune`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_eval::conversational;
use levh_eval::tune::{self, TuneReport};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The labelled conversations: a directory of the conversational benchmark's format
    /// (dataset.json and conversations), or a shipped set's name (`conversational`,
    /// `chat`, `worknotes`).
    #[arg(long, value_name = "NAME|DIR")]
    dataset: PathBuf,
    /// Folds of the cross-validation (conversations are kept whole when there are enough).
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Save the chosen settings to `$LEVH_HOME/config.toml` (only when they gain on
    /// held-out questions; other keys and comments are kept).
    #[arg(long)]
    write: bool,
    /// Tune for this embedder instead of the configured one: local, ollama, openai or hash.
    #[arg(long, value_name = "M")]
    pub embedder: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let dataset = load(&args.dataset)?;
    let embedder = context.embedder.embedder.clone();
    let report = tune::tune(&dataset, embedder.clone(), context.config(), args.folds)
        .with_context(|| format!("tuning on {}", args.dataset.display()))?;
    let written = if args.write && report.worth_saving() {
        Some(save(&context.home, &report)?)
    } else {
        None
    };
    if json {
        output::json(&json!({
            "report": report,
            "written": written.as_ref().map(|p| p.display().to_string()),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let setting = |s: &tune::Setting| {
        format!(
            "fusion weight {:.1}, temporal boost {:.2}",
            s.fusion_weight, s.temporal_boost
        )
    };
    output::line(format!(
        "{}: {} questions, embedder {} ({}), {} folds by {}",
        report.dataset,
        report.questions,
        embedder.model_id(),
        report.measure,
        report.folds,
        report.split_by
    ));
    let mut table = output::table(&["settings", "hit@1", "hit@10", "MRR"]);
    for (name, score) in [
        (
            format!("current: {}", setting(&report.current)),
            &report.current_score,
        ),
        (
            "tuned, each fold chosen on the others (held out)".to_owned(),
            &report.held_out_tuned,
        ),
        (
            format!("chosen on every question: {}", setting(&report.chosen)),
            &report.chosen_score,
        ),
    ] {
        table.add_row(vec![
            name,
            format!("{:.3}", score.hit_at_1),
            format!("{:.3}", score.hit_at_10),
            format!("{:.3}", score.mrr),
        ]);
    }
    output::print_table(&table);
    let choices: Vec<String> = report.fold_choices.iter().map(setting).collect();
    output::line(format!("each fold's choice: {}", choices.join("; ")));
    if report.evidence_not_stored > 0 {
        output::line(format!(
            "{} evidence turns were not stored by the gate: no setting can find them",
            report.evidence_not_stored
        ));
    }
    output::line(format!("held-out MRR gain: {:+.3}", report.held_out_gain));
    match (&written, report.worth_saving(), args.write) {
        (Some(path), _, _) => {
            output::line(format!("saved to {}", path.display()));
            // The environment wins over config.toml: say so rather than let the saved
            // settings look applied when they are not.
            for key in written_keys(&report) {
                let variable = format!("LEVH_{}", key.to_uppercase());
                if std::env::var_os(&variable).is_some() {
                    output::line(format!(
                        "note: {variable} is set in the environment and overrides `{key}` in config.toml"
                    ));
                }
            }
        }
        (None, false, _) => output::line(
            "keeping the current settings: the tuned ones do not gain on held-out questions",
        ),
        (None, true, _) => output::line(format!(
            "run again with --write to save {} to config.toml",
            setting(&report.chosen)
        )),
    }
    Ok(ExitCode::SUCCESS)
}

fn load(dataset: &Path) -> Result<conversational::Dataset> {
    if dataset.is_dir() {
        return conversational::Dataset::load_dir(dataset);
    }
    dataset
        .to_str()
        .and_then(conversational::Dataset::builtin_named)
        .with_context(|| {
            format!(
                "--dataset {}: neither a directory of the conversational format nor a shipped set ({})",
                dataset.display(),
                conversational::builtin_names().join(", ")
            )
        })?
}

/// Writes the chosen settings into `config.toml`, keeping its other keys and comments.
fn save(home: &Path, report: &TuneReport) -> Result<PathBuf> {
    let path = home.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("parsing {}", path.display()))?;
    let [weight_key, boost_key] = written_keys(report);
    document[weight_key] = toml_edit::value(report.chosen.fusion_weight);
    document[boost_key] = toml_edit::value(report.chosen.temporal_boost);
    std::fs::create_dir_all(home).with_context(|| format!("creating {}", home.display()))?;
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, document.to_string())
        .with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, &path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(path)
}

/// The config.toml keys `--write` sets: the fusion weight of this embedder's kind and
/// the temporal boost.
fn written_keys(report: &TuneReport) -> [&'static str; 2] {
    let weight = if report.measure == "semantic" {
        "fusion_semantic_weight"
    } else {
        "fusion_hash_weight"
    };
    [weight, "fusion_temporal_boost"]
}
