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
    /// The labelled conflict pairs through the gate, each pair on a fresh store (the older
    /// stored, an hour later the newer): per kind, how many the gate held or rejected, how
    /// many it admitted and flagged as conflict candidates, and how many it let in unflagged.
    ConflictsGate,
    /// Consolidation's clustering on the labelled sets in fixtures/consolidation (project
    /// notes, meetings, a person's life in English and Turkish): pair precision, recall
    /// and F0.5 per set over a sweep of thresholds, with the lexical measure and (when the
    /// configured embedder is a model) the semantic one, and the threshold each set gets
    /// when it is chosen on the other sets only.
    Consolidation,
    /// `levh ask` (deterministic: no model) on labelled questions over the memories of this
    /// store: how often the right memory is among the answer's citations, per kind and
    /// language, beside the top recall hit (and recall's top k) as baselines.
    Ask(AskEvalArgs),
}

#[derive(Debug, clap::Args)]
pub struct AskEvalArgs {
    /// The questions, one JSON object per line: `question`, `source_id` (of the item
    /// whose memory answers it), `kind`, `lang` (e.g.
    /// fixtures/knowledge/world/questions.jsonl, after syncing that world).
    #[arg(long, value_name = "FILE")]
    questions: PathBuf,
    /// Exit 1 when fewer than this share of the answers cite the right memory.
    #[arg(long, value_name = "SHARE")]
    check: Option<f64>,
    /// Evidence memories per answer (ask's `--limit`), to compare with the default.
    #[arg(long, default_value_t = levh_api::ask::DEFAULT_LIMIT)]
    limit: usize,
    /// Evidence tokens per answer (ask's `--max-tokens`), to compare with the default.
    #[arg(long, default_value_t = levh_api::ask::DEFAULT_MAX_TOKENS)]
    max_tokens: usize,
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
            Self::Report(_)
            | Self::Detectors(_)
            | Self::Ask(_)
            | Self::ConflictsGate
            | Self::Consolidation => None,
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
        Command::Ask(args) => ask(context, args, json),
        Command::ConflictsGate => conflicts_gate(context, json),
        Command::Consolidation => consolidation(context, json),
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

/// What the gate made of the newer memory of each kind of pair.
#[derive(Debug, Default, serde::Serialize)]
struct GateSlice {
    name: String,
    pairs: usize,
    /// Held for a person (review).
    held: usize,
    /// Rejected as a duplicate.
    rejected: usize,
    /// Admitted, and flagged as a conflict candidate at admission.
    flagged: usize,
    /// Admitted without a flag.
    admitted: usize,
}

fn conflicts_gate(context: &Context, json: bool) -> Result<ExitCode> {
    let pairs = levh_eval::detectors::conflict_pairs().map_err(anyhow::Error::msg)?;
    let mut slices: std::collections::BTreeMap<String, GateSlice> = Default::default();
    for (set, case) in pairs {
        let sandbox = levh_eval::Sandbox::new(context.embedder.embedder.clone(), context.config())?;
        let store = |text: &str| -> Result<levh_api::views::CaptureView> {
            let args = serde_json::from_value(serde_json::json!({ "content": text }))?;
            Ok(levh_api::memories::store(
                &sandbox.levh,
                &sandbox.scope,
                args,
                "eval".into(),
            )?)
        };
        store(&case.a)?;
        sandbox.advance_hours(1.0)?;
        let newer = store(&case.b)?;
        let verdict = serde_json::to_value(newer.verdict)?;
        for name in [format!("{set}/all"), format!("{set}/{}", case.kind)] {
            let slice = slices.entry(name.clone()).or_insert_with(|| GateSlice {
                name,
                ..GateSlice::default()
            });
            slice.pairs += 1;
            match verdict.as_str() {
                Some("review") => slice.held += 1,
                Some("reject") => slice.rejected += 1,
                _ if !newer.conflicts.is_empty() => slice.flagged += 1,
                _ => slice.admitted += 1,
            }
        }
    }
    if json {
        output::json(&slices.values().collect::<Vec<_>>())?;
    } else {
        let mut table = output::table(&[
            "set/kind", "pairs", "held", "rejected", "flagged", "admitted",
        ]);
        for s in slices.values() {
            table.add_row(vec![
                s.name.clone(),
                s.pairs.to_string(),
                s.held.to_string(),
                s.rejected.to_string(),
                s.flagged.to_string(),
                s.admitted.to_string(),
            ]);
        }
        output::print_table(&table);
    }
    Ok(ExitCode::SUCCESS)
}

/// One labelled question of `levh eval ask`.
#[derive(Debug, serde::Deserialize)]
struct Question {
    question: String,
    source_id: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    lang: String,
}

/// A slice of `levh eval ask`: questions, and how many each method got right.
#[derive(Debug, Default, serde::Serialize)]
struct AskSlice {
    name: String,
    questions: usize,
    /// The right memory among the answer's citations.
    ask: usize,
    /// Recall's first result is the right memory (the baseline).
    recall_top1: usize,
    /// The right memory among recall's first k (k = the answer's citation limit).
    recall_top_k: usize,
    /// Citations per answer, summed.
    citations: usize,
}

fn ask(context: &Context, args: AskEvalArgs, json: bool) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.questions)
        .with_context(|| format!("reading {}", args.questions.display()))?;
    let mut questions = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let q: Question = serde_json::from_str(line).with_context(|| {
            format!(
                "{} line {}: not a question",
                args.questions.display(),
                n + 1
            )
        })?;
        questions.push(q);
    }
    let k = args.limit;
    let mut slices: std::collections::BTreeMap<String, AskSlice> = Default::default();
    let mut misses = Vec::new();
    for q in &questions {
        let source_of = |id: &str| -> Result<Option<String>> {
            let memory = context.run(levh_api::Operation::GetMemory, |levh, scope| {
                levh_api::memories::get(levh, scope, id)
            })?;
            Ok(memory.metadata["source_id"].as_str().map(str::to_owned))
        };
        let answer = context.run(levh_api::Operation::Ask, |levh, scope| {
            levh_api::ask::ask(
                levh,
                scope,
                levh_api::requests::AskArgs {
                    question: q.question.clone(),
                    limit: Some(args.limit),
                    max_tokens: Some(args.max_tokens),
                    ..Default::default()
                },
                None,
            )
        })?;
        let mut cited = false;
        for c in &answer.citations {
            cited |= source_of(&c.memory_id)?.as_deref() == Some(q.source_id.as_str());
        }
        let found = context.run(levh_api::Operation::SearchMemory, |levh, scope| {
            let request = levh_core::RecallRequest {
                limit: k,
                reinforce: false,
                ..levh_core::RecallRequest::new(q.question.clone())
            };
            Ok(levh.recall(scope, &request)?)
        })?;
        let ranks: Vec<Option<String>> = found
            .hits
            .iter()
            .map(|h| h.memory.metadata["source_id"].as_str().map(str::to_owned))
            .collect();
        let top1 = ranks
            .first()
            .is_some_and(|s| s.as_deref() == Some(q.source_id.as_str()));
        let top_k = ranks
            .iter()
            .any(|s| s.as_deref() == Some(q.source_id.as_str()));
        if !cited {
            misses.push(format!("{} ({}): {}", q.question, q.kind, q.source_id));
        }
        for name in [
            "all".to_owned(),
            format!("kind/{}", q.kind),
            format!("lang/{}", q.lang),
        ] {
            let slice = slices.entry(name.clone()).or_insert_with(|| AskSlice {
                name,
                ..AskSlice::default()
            });
            slice.questions += 1;
            slice.ask += usize::from(cited);
            slice.recall_top1 += usize::from(top1);
            slice.recall_top_k += usize::from(top_k);
            slice.citations += answer.citations.len();
        }
    }
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let all = slices.get("all").map_or(0.0, |s| share(s.ask, s.questions));
    if json {
        output::json(&serde_json::json!({
            "questions": questions.len(),
            "k": k,
            "slices": slices.values().collect::<Vec<_>>(),
            "misses": misses,
        }))?;
    } else {
        let mut table = output::table(&[
            "slice",
            "questions",
            "ask: cited",
            "recall top 1",
            &format!("recall top {k}"),
            "citations/answer",
        ]);
        for s in slices.values() {
            table.add_row(vec![
                s.name.clone(),
                s.questions.to_string(),
                format!("{:.3}", share(s.ask, s.questions)),
                format!("{:.3}", share(s.recall_top1, s.questions)),
                format!("{:.3}", share(s.recall_top_k, s.questions)),
                format!("{:.1}", share(s.citations, s.questions)),
            ]);
        }
        output::print_table(&table);
        for miss in &misses {
            output::line(format!("not cited: {miss}"));
        }
    }
    Ok(match args.check {
        Some(at_least) if all < at_least => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
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

fn consolidation(context: &Context, json: bool) -> Result<ExitCode> {
    use levh_eval::consolidation as eval;
    let sets = eval::sets().map_err(anyhow::Error::msg)?;
    let thresholds = eval::thresholds();
    let mut sweeps = vec![eval::sweep("lexical", &sets, None, &thresholds)];
    let embedder = context.embedder.embedder.clone();
    if embedder.is_semantic() {
        let vectors = eval::embed_sets(&sets, embedder.as_ref()).map_err(anyhow::Error::msg)?;
        let name = format!("semantic ({})", embedder.model_id());
        sweeps.push(eval::sweep(&name, &sets, Some(&vectors), &thresholds));
    }
    if json {
        output::json(&sweeps)?;
        return Ok(ExitCode::SUCCESS);
    }
    for sweep in &sweeps {
        output::line(format!(
            "{}: F0.5 (precision, recall) per set",
            sweep.measure
        ));
        let mut header = vec!["threshold".to_owned()];
        header.extend(sets.iter().map(|s| s.name.clone()));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut table = output::table(&header);
        for t in &thresholds {
            let mut row = vec![format!("{t:.3}")];
            for set in &sets {
                let s = sweep
                    .scores
                    .iter()
                    .find(|s| s.set == set.name && s.threshold == *t)
                    .expect("scored");
                row.push(format!(
                    "{:.2} ({:.2}, {:.2}) {}",
                    s.f_half, s.precision, s.recall, s.clusters
                ));
            }
            table.add_row(row);
        }
        output::print_table(&table);
        for s in &sweep.held_out {
            output::line(format!(
                "  held out {}: threshold {:.3} chosen on the others → F0.5 {:.2} (precision {:.2}, recall {:.2}, {} loners merged)",
                s.set, s.threshold, s.f_half, s.precision, s.recall, s.singletons_merged
            ));
        }
        output::line(format!("  best on all sets: {:.3}", sweep.best_on_all));
    }
    Ok(ExitCode::SUCCESS)
}
