//! `levh benchmark [--check]`: recall quality on a labelled query set, on a throwaway
//! store with the configured embedder (the user's memories are never touched).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_eval::benchmark::{self, Dataset};
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A dataset instead of the one shipped with levh (the format of
    /// fixtures/benchmark/recall.json).
    #[arg(long, value_name = "FILE")]
    dataset: Option<PathBuf>,
    /// Exit 1 unless every threshold the dataset sets for this embedder's measure
    /// (semantic or lexical) is met.
    #[arg(long)]
    check: bool,
    /// List every query whose answer was not ranked first.
    #[arg(long)]
    misses: bool,
    /// Embed with this embedder instead of the configured one: local, ollama, openai or hash.
    #[arg(long, value_name = "M")]
    pub embedder: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let dataset = match &args.dataset {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Dataset::parse(&text, &path.display().to_string())?
        }
        None => Dataset::builtin()?,
    };
    let embedder = context.embedder.embedder.clone();
    let report = benchmark::run(&dataset, embedder, *context.levh.config())
        .context("running the recall benchmark")?;
    let checks = if args.check {
        Some(benchmark::check(&dataset, &report)?)
    } else {
        None
    };
    let passed = checks.iter().flatten().all(|c| c.passed);

    if json {
        output::json(&json!({ "report": report, "checks": checks, "passed": passed }))?;
    } else {
        output::line(format!(
            "{} v{}: {} memories, {} queries, embedder {} ({})",
            report.dataset,
            report.dataset_version,
            report.memories,
            report.queries.len(),
            report.embedder,
            report.measure
        ));
        let mut table = output::table(&["slice", "queries", "hit@1", "hit@3", "hit@5", "MRR@10"]);
        for s in &report.scores {
            table.add_row(vec![
                s.slice.clone(),
                s.queries.to_string(),
                format!("{:.3}", s.hit_at_1),
                format!("{:.3}", s.hit_at_3),
                format!("{:.3}", s.hit_at_5),
                format!("{:.3}", s.mrr),
            ]);
        }
        output::print_table(&table);
        output::line(format!(
            "stored the corpus through the gate in {:.0} ms; search p50 {:.1} ms, p99 {:.1} ms",
            report.ingest_ms, report.search_p50_ms, report.search_p99_ms
        ));
        if args.misses {
            for q in report.queries.iter().filter(|q| q.rank != Some(1)) {
                let rank = q
                    .rank
                    .map_or_else(|| "not in the first 10".to_owned(), |r| format!("rank {r}"));
                output::line(format!(
                    "  [{}] {:?}: wanted {} — {rank}; top: {}",
                    q.slice,
                    q.query,
                    q.expect.join(" | "),
                    q.top.join(", ")
                ));
            }
        }
        if let Some(checks) = &checks {
            let mut table = output::table(&["slice", "metric", "minimum", "measured", ""]);
            for c in checks {
                table.add_row(vec![
                    c.slice.clone(),
                    c.metric.clone(),
                    format!("{:.3}", c.minimum),
                    format!("{:.3}", c.actual),
                    if c.passed { "ok" } else { "BELOW" }.to_owned(),
                ]);
            }
            output::print_table(&table);
            let failed = checks.iter().filter(|c| !c.passed).count();
            if failed == 0 {
                output::line(format!(
                    "check passed: {} {} thresholds met",
                    checks.len(),
                    report.measure
                ));
            } else {
                output::line(format!(
                    "check failed: {failed} of {} {} thresholds not met",
                    checks.len(),
                    report.measure
                ));
            }
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
