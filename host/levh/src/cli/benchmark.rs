//! `levh benchmark [--check] [--dataset recall|conversational|FILE|DIR]`: recall quality
//! on a labelled set, on a throwaway store with the configured embedder (the user's
//! memories are never touched). The conversational set is reported beside a BM25
//! baseline computed in the same run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_eval::benchmark::{self, Dataset, ThresholdCheck};
use levh_eval::conversational;
use serde_json::json;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which labelled set: `recall` (the default: short memories, fixtures/benchmark/
    /// recall.json), `conversational` (long dated conversations, fixtures/benchmark/
    /// conversational/), a file of recall.json's format, or a directory of the
    /// conversational format.
    #[arg(long, value_name = "NAME|PATH")]
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
    match args.dataset.as_deref() {
        Some(name) if name == std::path::Path::new(conversational::BUILTIN_NAME) => {
            let dataset = conversational::Dataset::builtin()?;
            return run_conversational(context, &dataset, &args, json);
        }
        Some(dir) if dir.is_dir() => {
            let dataset = conversational::Dataset::load_dir(dir)?;
            return run_conversational(context, &dataset, &args, json);
        }
        _ => {}
    }
    let dataset = match &args.dataset {
        Some(path) if path == std::path::Path::new("recall") => Dataset::builtin()?,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Dataset::parse(&text, &path.display().to_string())?
        }
        None => Dataset::builtin()?,
    };
    let embedder = context.embedder.embedder.clone();
    let report = benchmark::run(&dataset, embedder, context.config())
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
            print_checks(checks, &report.measure);
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_checks(checks: &[ThresholdCheck], measure: &str) {
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
            "check passed: {} {measure} thresholds met",
            checks.len()
        ));
    } else {
        output::line(format!(
            "check failed: {failed} of {} {measure} thresholds not met",
            checks.len()
        ));
    }
}

fn run_conversational(
    context: &Context,
    dataset: &conversational::Dataset,
    args: &Args,
    json: bool,
) -> Result<ExitCode> {
    let embedder = context.embedder.embedder.clone();
    let report = conversational::run(dataset, embedder, context.config())
        .context("running the conversational benchmark")?;
    let checks = if args.check {
        Some(conversational::check(dataset, &report)?)
    } else {
        None
    };
    let passed = checks.iter().flatten().all(|c| c.passed);
    if json {
        output::json(&json!({ "report": report, "checks": checks, "passed": passed }))?;
    } else {
        output::line(format!(
            "{} v{}: {} conversations, {} turns ({} stored), {} questions, embedder {} ({})",
            report.dataset,
            report.dataset_version,
            dataset.conversations.len(),
            report.turns,
            report.stored,
            report.questions.len(),
            report.embedder,
            report.measure
        ));
        let mut table = output::table(&[
            "kind",
            "questions",
            "hit@1",
            "hit@5",
            "hit@10",
            "MRR",
            "BM25 hit@1",
            "BM25 hit@5",
            "BM25 hit@10",
            "BM25 MRR",
            "Δ hit@10",
            "Δ MRR",
        ]);
        for (levh, bm25) in report.levh.iter().zip(&report.bm25) {
            table.add_row(vec![
                levh.kind.clone(),
                levh.questions.to_string(),
                format!("{:.3}", levh.hit_at_1),
                format!("{:.3}", levh.hit_at_5),
                format!("{:.3}", levh.hit_at_10),
                format!("{:.3}", levh.mrr),
                format!("{:.3}", bm25.hit_at_1),
                format!("{:.3}", bm25.hit_at_5),
                format!("{:.3}", bm25.hit_at_10),
                format!("{:.3}", bm25.mrr),
                format!("{:+.3}", levh.hit_at_10 - bm25.hit_at_10),
                format!("{:+.3}", levh.mrr - bm25.mrr),
            ]);
        }
        output::print_table(&table);
        output::line(format!(
            "stored the turns through the gate in {:.0} ms ({} held, {} rejected; {} of them \
             evidence); recall p50 {:.1} ms, p99 {:.1} ms",
            report.ingest_ms,
            report
                .not_stored
                .iter()
                .filter(|n| n.verdict == "review")
                .count(),
            report
                .not_stored
                .iter()
                .filter(|n| n.verdict == "reject")
                .count(),
            report.evidence_not_stored().count(),
            report.search_p50_ms,
            report.search_p99_ms
        ));
        for lost in report.evidence_not_stored() {
            output::line(format!(
                "  evidence not stored: {} ({}: {})",
                lost.turn, lost.verdict, lost.reason
            ));
        }
        if args.misses {
            for q in report.questions.iter().filter(|q| q.rank != Some(1)) {
                let rank = |r: Option<usize>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
                output::line(format!(
                    "  [{}] {}/{} {:?}: wanted {} — rank {} (BM25 {}); top: {}",
                    q.kind,
                    q.conversation,
                    q.id,
                    q.question,
                    q.evidence.join(" | "),
                    rank(q.rank),
                    rank(q.bm25_rank),
                    q.top.join(", ")
                ));
            }
        }
        if let Some(checks) = &checks {
            print_checks(checks, &report.measure);
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
