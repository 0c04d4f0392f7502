//! `levh recall QUERY`: hybrid recall, ranked by H-score (or the active scorer);
//! reinforces what it returns.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::requests::RecallArgs;
use levh_api::views::HitEntry;
use levh_api::{Operation, recall};
use levh_core::Timestamp;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for.
    query: String,
    /// At most this many results.
    #[arg(long, short = 'n', default_value_t = 10)]
    limit: usize,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this kind.
    #[arg(long, short)]
    kind: Option<String>,
    /// Only this source.
    #[arg(long, short)]
    source: Option<String>,
    /// Only memories recorded at or after this time.
    #[arg(long, value_parser = super::time_arg)]
    since: Option<Timestamp>,
    /// Only memories recorded before this time.
    #[arg(long, value_parser = super::time_arg)]
    until: Option<Timestamp>,
    /// World time: what was true at T (does not reinforce).
    #[arg(long, value_parser = super::time_arg, value_name = "T")]
    as_of: Option<Timestamp>,
    /// Record time: what levh knew at T (does not reinforce).
    #[arg(long, value_parser = super::time_arg, value_name = "T")]
    known_at: Option<Timestamp>,
    /// Show the four H-score terms of each result.
    #[arg(long)]
    explain: bool,
    /// Only id, preview and score: thrifty with an agent's tokens.
    #[arg(long)]
    compact: bool,
    /// Pack results, best first, into about this many tokens.
    #[arg(long)]
    max_tokens: Option<usize>,
    /// Look without reinforcing anything.
    #[arg(long)]
    no_reinforce: bool,
    /// The least cosine (0..1) a result sharing no word with the query needs; default:
    /// the embedder's floor. Raise it to prefer no answer to a loose one.
    #[arg(long, value_name = "X")]
    min_similarity: Option<f64>,
    /// Recall as this session: its working memory (stored in it, not yet promoted) is
    /// found too.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let request = RecallArgs {
        query: args.query,
        limit: Some(args.limit),
        project: args.project,
        kind: args.kind,
        source: args.source,
        as_of: args.as_of.map(|t| t.to_string()),
        known_at: args.known_at.map(|t| t.to_string()),
        max_tokens: args.max_tokens,
        min_similarity: args.min_similarity,
        since: args.since.map(|t| t.to_string()),
        until: args.until.map(|t| t.to_string()),
        compact: Some(args.compact),
        explain: Some(args.explain),
        session_id: args.session,
    };
    let (operation, reinforce) = if args.no_reinforce {
        (Operation::SearchMemory, false)
    } else {
        (Operation::RecallMemory, true)
    };
    let (view, load_warning) = context.run_ranked(operation, |levh, scope| {
        recall::recall(levh, scope, request, reinforce)
    })?;
    for warning in load_warning.iter().chain(&view.warnings) {
        output::warn(warning);
    }
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    if view.results.is_empty() {
        output::line("no memories match");
        return Ok(ExitCode::SUCCESS);
    }
    let mut header = vec!["#", "score", "rel", "retention", "id", "project", "memory"];
    if args.explain {
        header.splice(
            2..2,
            [
                "α·(1−rel)",
                "β·(1−ret)",
                "γ·(1−imp)",
                "δ·(1−freq)",
                "bm25",
                "lex",
                "cos",
            ],
        );
    }
    if args.compact {
        header = vec!["#", "score", "id", "memory"];
    }
    let mut table = output::table(&header);
    for (rank, entry) in view.results.iter().enumerate() {
        let hit = match entry {
            HitEntry::Compact(hit) => {
                table.add_row(vec![
                    (rank + 1).to_string(),
                    format!("{:.3}", hit.score),
                    hit.id.clone(),
                    hit.preview.clone(),
                ]);
                continue;
            }
            HitEntry::Full(hit) => hit,
        };
        let m = &hit.memory;
        let mut row = vec![
            (rank + 1).to_string(),
            format!("{:.3}", hit.score),
            format!("{:.2}", hit.relevance),
            output::retention(m),
            m.id.clone(),
            m.project.clone().unwrap_or_else(|| "-".into()),
            output::preview(&m.content),
        ];
        if let Some(explain) = &hit.explain {
            let mut parts: Vec<String> = [
                explain.relevance_term,
                explain.retention_term,
                explain.importance_term,
                explain.frequency_term,
            ]
            .map(|x| format!("{x:.3}"))
            .to_vec();
            parts.push(
                explain
                    .bm25
                    .map_or_else(|| "-".into(), |b| format!("{b:.2}")),
            );
            parts.push(format!("{:.2}", hit.lexical));
            parts.push(format!("{:.2}", hit.similarity));
            row.splice(2..2, parts);
        }
        table.add_row(row);
    }
    output::print_table(&table);
    let mut footer = format!("{} of {} candidates", view.results.len(), view.candidates);
    if view.ranked_by != levh_core::H_SCORE {
        footer.push_str(&format!(", ranked by scorer `{}`", view.ranked_by));
    }
    if !view.reinforced.is_empty() {
        footer.push_str(&format!(", {} reinforced", view.reinforced.len()));
    }
    if view.omitted_by_budget > 0 {
        footer.push_str(&format!(
            ", {} left out to fit {} tokens",
            view.omitted_by_budget,
            args.max_tokens.unwrap_or(0)
        ));
    }
    output::line(footer);
    Ok(ExitCode::SUCCESS)
}
