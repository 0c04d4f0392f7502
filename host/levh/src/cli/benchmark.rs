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
    /// recall.json); a conversational set — `conversational` (long dated conversations),
    /// `chat` (ordinary chat) or `worknotes` (a team's notes, meetings and mail), each in
    /// fixtures/benchmark/NAME/; a file of recall.json's format, or a directory of the
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
    /// Rank each conversational set again with each fusion weight (the semantic share of
    /// relevance, 0.1 to 0.9) after storing it once, beside BM25; then the weight each set
    /// gets when it is chosen on the other sets only. With `--dataset NAME|DIR` that set,
    /// otherwise every shipped one.
    #[arg(long)]
    sweep_fusion: bool,
    /// Measure on throwaway databases of this PostgreSQL server (`postgres://…`; its role
    /// needs CREATEDB; each is dropped after) instead of throwaway SQLite files: the
    /// team server's ranking (PostgreSQL's full text, pgvector's index) on the same sets.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    if let Some(url) = &args.postgres {
        levh_eval::measure_on_postgres(url)?;
    }
    if args.sweep_fusion {
        return sweep_fusion(context, &args, json);
    }
    let builtin = args
        .dataset
        .as_deref()
        .and_then(|name| name.to_str())
        .and_then(conversational::Dataset::builtin_named);
    if let Some(dataset) = builtin {
        return run_conversational(context, &dataset?, &args, json);
    }
    match args.dataset.as_deref() {
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
        let mut table = output::table(&[
            "evidence",
            "questions",
            "hit@1",
            "hit@10",
            "MRR",
            "BM25 hit@10",
            "BM25 MRR",
            "Δ hit@10",
            "Δ MRR",
        ]);
        for (levh, bm25) in report.levh_by_length.iter().zip(&report.bm25_by_length) {
            table.add_row(vec![
                levh.kind.clone(),
                levh.questions.to_string(),
                format!("{:.3}", levh.hit_at_1),
                format!("{:.3}", levh.hit_at_10),
                format!("{:.3}", levh.mrr),
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

/// `levh benchmark --sweep-fusion`.
fn sweep_fusion(context: &Context, args: &Args, json: bool) -> Result<ExitCode> {
    let datasets: Vec<conversational::Dataset> = match args.dataset.as_deref() {
        Some(dir) if dir.is_dir() => vec![conversational::Dataset::load_dir(dir)?],
        Some(name) => vec![
            name.to_str()
                .and_then(conversational::Dataset::builtin_named)
                .with_context(|| format!("no conversational set called {}", name.display()))??,
        ],
        None => conversational::builtin_names()
            .into_iter()
            .filter_map(conversational::Dataset::builtin_named)
            .collect::<Result<_>>()?,
    };
    let weights: Vec<f64> = (1..=9).map(|k| f64::from(k) / 10.0).collect();
    let embedder = context.embedder.embedder.clone();
    let mut sweeps = Vec::new();
    for dataset in &datasets {
        sweeps.push(conversational::sweep_fusion(
            dataset,
            embedder.clone(),
            context.config(),
            &weights,
        )?);
    }
    let held_out = conversational::leave_one_out(&sweeps);
    if json {
        output::json(&json!({ "sweeps": sweeps, "held_out": held_out }))?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(format!(
        "hit@10 / MRR per fusion weight (semantic share of relevance), embedder {}",
        embedder.model_id()
    ));
    let mut header = vec!["weight".to_owned()];
    header.extend(sweeps.iter().map(|s| s.dataset.clone()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = output::table(&header);
    let mut bm25 = vec!["BM25".to_owned()];
    bm25.extend(
        sweeps
            .iter()
            .map(|s| format!("{:.3} / {:.3}", s.bm25.hit_at_10, s.bm25.mrr)),
    );
    table.add_row(bm25);
    for (k, weight) in weights.iter().enumerate() {
        let mut row = vec![format!("{weight:.1}")];
        row.extend(sweeps.iter().map(|s| {
            let w = &s.weights[k].levh;
            format!("{:.3} / {:.3}", w.hit_at_10, w.mrr)
        }));
        table.add_row(row);
    }
    output::print_table(&table);
    // With one set there is nothing to choose on but itself.
    for (dataset, weight, score) in held_out.iter().filter(|_| sweeps.len() > 1) {
        output::line(format!(
            "  held out {dataset}: weight {weight:.1} chosen on the others → hit@10 {:.3}, MRR {:.3}",
            score.hit_at_10, score.mrr
        ));
    }
    for s in &sweeps {
        if s.evidence_not_stored > 0 {
            output::line(format!(
                "  {}: {} evidence turns not stored by the gate",
                s.dataset, s.evidence_not_stored
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
