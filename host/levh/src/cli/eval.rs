//! `levh eval run|report`: golden scenarios through the real gate → store → recall
//! pipeline on throwaway stores, and the JSON report they leave.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Subcommand;
use levh_eval::scenario::{self, EvalReport, Status};

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the golden scenarios (expected verdicts, expected and forbidden recall results,
    /// decay) on throwaway stores with the configured embedder; exit 1 if any fails.
    Run(RunArgs),
    /// Print a report written by `levh eval run`.
    Report(ReportArgs),
    /// Precision and recall of the text detectors (decisions, commitments and their due
    /// dates, people) on the labelled sentence sets shipped with levh, per language.
    Detectors(DetectorArgs),
}

#[derive(Debug, clap::Args)]
pub struct DetectorArgs {
    /// Exit 1 when a slice falls below its threshold (kept with the sets).
    #[arg(long)]
    check: bool,
    /// Also list every sentence a detector got wrong.
    #[arg(long)]
    misses: bool,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A directory of scenario files (*.json) instead of the ones shipped with levh.
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// Where to write the JSON report [default: $LEVH_HOME/eval/report.json].
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Embed with this embedder instead of the configured one: local, ollama, openai or hash.
    #[arg(long, value_name = "M")]
    pub embedder: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The report [default: $LEVH_HOME/eval/report.json, the last run's].
    file: Option<PathBuf>,
}

impl Command {
    /// The embedder asked for on the command line, if any.
    pub fn embedder(&self) -> Option<&str> {
        match self {
            Self::Run(args) => args.embedder.as_deref(),
            Self::Report(_) | Self::Detectors(_) => None,
        }
    }
}

fn default_report(context: &Context) -> PathBuf {
    context.home.join("eval").join("report.json")
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    match command {
        Command::Run(args) => run_scenarios(context, args, json),
        Command::Detectors(args) => detectors(args, json),
        Command::Report(args) => {
            let path = args.file.unwrap_or_else(|| default_report(context));
            let text = std::fs::read_to_string(&path).with_context(|| {
                format!(
                    "reading {} (write one with `levh eval run`)",
                    path.display()
                )
            })?;
            let report = EvalReport::parse(&text, &path.display().to_string())?;
            if json {
                output::json(&report)?;
            } else {
                print_report(&report, &path);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn detectors(args: DetectorArgs, json: bool) -> Result<ExitCode> {
    let report = levh_eval::detectors::run().map_err(anyhow::Error::msg)?;
    if json {
        output::json(&report)?;
    } else {
        let mut table = output::table(&["slice", "precision", "recall", "tp", "fp", "fn", "tn"]);
        for slice in &report.slices {
            table.add_row(vec![
                slice.name.clone(),
                format!("{:.3}", slice.precision()),
                format!("{:.3}", slice.recall()),
                slice.true_positives.to_string(),
                slice.false_positives.to_string(),
                slice.false_negatives.to_string(),
                slice.true_negatives.to_string(),
            ]);
        }
        output::print_table(&table);
        if args.misses {
            for miss in &report.misses {
                output::line(format!(
                    "{}: expected {}, found {} — {}",
                    miss.detector, miss.expected, miss.found, miss.text
                ));
            }
        }
        for failure in &report.failures {
            output::line(format!("below threshold: {failure}"));
        }
    }
    Ok(if args.check && !report.failures.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn run_scenarios(context: &Context, args: RunArgs, json: bool) -> Result<ExitCode> {
    let (scenarios, fixtures) = match &args.fixtures {
        Some(dir) => (scenario::load_dir(dir)?, dir.display().to_string()),
        None => (scenario::builtin()?, "built-in".to_owned()),
    };
    let report = scenario::run(
        &scenarios,
        &fixtures,
        context.embedder.embedder.clone(),
        context.config(),
    );
    let path = args.output.unwrap_or_else(|| default_report(context));
    write_report(&report, &path)?;
    if json {
        output::json(&report)?;
    } else {
        print_report(&report, &path);
    }
    Ok(if report.summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn write_report(report: &EvalReport, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(report)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

fn print_report(report: &EvalReport, path: &Path) {
    output::line(format!(
        "evaluation v{} of levh {}: embedder {} ({}), scenarios from {}, run {}",
        report.evaluation_version,
        report.levh_version,
        report.embedder,
        report.measure,
        report.fixtures,
        output::human_time(report.ran_at)
    ));
    let mut table = output::table(&["scenario", "result", "checks"]);
    for s in &report.scenarios {
        let failed = s.checks.iter().filter(|c| !c.passed).count();
        table.add_row(vec![
            s.name.clone(),
            match s.status {
                Status::Passed => "passed".to_owned(),
                Status::Failed => "FAILED".to_owned(),
                Status::Skipped => "skipped".to_owned(),
            },
            if failed == 0 {
                s.checks.len().to_string()
            } else {
                format!("{failed} of {} failed", s.checks.len())
            },
        ]);
    }
    output::print_table(&table);
    for s in &report.scenarios {
        for c in s.checks.iter().filter(|c| !c.passed) {
            output::line(format!(
                "{} step {} ({}): expected {}; got {}",
                s.name, c.step, c.action, c.expected, c.actual
            ));
        }
        if let Some(note) = &s.note {
            output::line(format!("{}: {note}", s.name));
        }
    }
    let m = &report.summary;
    output::line(format!(
        "{} passed, {} failed, {} skipped of {} scenarios ({} checks, {} failed) in {:.1} s; report: {}",
        m.passed,
        m.failed,
        m.skipped,
        m.scenarios,
        m.checks,
        m.checks_failed,
        report.seconds,
        path.display()
    ));
}
