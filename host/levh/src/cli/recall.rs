//! `levh recall QUERY`: hybrid recall, ranked by H-score (or the active scorer);
//! reinforces what it returns.

use std::process::ExitCode;

use anyhow::Result;
use levh_core::{Kind, PREVIEW_CHARS, RecallRequest, Timestamp, text};
use serde_json::json;

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
    #[arg(long, short, value_parser = |s: &str| Kind::new(s).map_err(|e| e.to_string()))]
    kind: Option<Kind>,
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
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let request = RecallRequest {
        limit: args.limit,
        project: args.project,
        kind: args.kind,
        source: args.source,
        since: args.since,
        until: args.until,
        as_of: args.as_of,
        known_at: args.known_at,
        max_tokens: args.max_tokens,
        compact: args.compact,
        reinforce: !args.no_reinforce,
        min_similarity: args.min_similarity,
        ..RecallRequest::new(args.query)
    };
    let (levh, load_warning) = context.levh_for_recall();
    let result = levh.recall(&context.scope, &request)?;
    for warning in load_warning.iter().chain(&result.warnings) {
        output::warn(warning);
    }

    if json {
        let hits: Vec<serde_json::Value> = result
            .hits
            .iter()
            .map(|hit| {
                let m = &hit.memory;
                if args.compact {
                    return json!({
                        "id": m.id,
                        "preview": text::preview(&m.content, PREVIEW_CHARS),
                        "score": hit.policy_score.unwrap_or(hit.score.score),
                    });
                }
                // The hit as REST and MCP return it (levh-api's view), plus the terms.
                let mut value = serde_json::to_value(levh_api::views::HitView::new(
                    hit,
                    &result.ranked_by,
                    &levh,
                ))
                .unwrap_or_default();
                if args.explain {
                    let mut explain = serde_json::to_value(hit.score.terms).unwrap_or_default();
                    explain["relevance_parts"] =
                        serde_json::to_value(hit.relevance).unwrap_or_default();
                    value["explain"] = explain;
                }
                value
            })
            .collect();
        output::json(&hits)?;
        return Ok(ExitCode::SUCCESS);
    }

    if result.hits.is_empty() {
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
    let mut table = output::table(&header);
    for (rank, hit) in result.hits.iter().enumerate() {
        let m = &hit.memory;
        let mut row = vec![
            (rank + 1).to_string(),
            format!("{:.3}", hit.policy_score.unwrap_or(hit.score.score)),
            format!("{:.2}", hit.score.relevance),
            if m.state.pinned {
                "pinned".into()
            } else {
                output::percent(hit.score.retention)
            },
            m.id.to_string(),
            m.project.clone().unwrap_or_else(|| "-".into()),
            output::preview(&m.content),
        ];
        if args.explain {
            let t = hit.score.terms;
            let r = hit.relevance;
            let mut parts: Vec<String> = [t.relevance, t.retention, t.importance, t.frequency]
                .map(|x| format!("{x:.3}"))
                .to_vec();
            parts.push(r.bm25.map_or_else(|| "-".into(), |b| format!("{b:.2}")));
            parts.push(format!("{:.2}", r.lexical));
            parts.push(format!("{:.2}", r.semantic));
            row.splice(2..2, parts);
        }
        table.add_row(row);
    }
    output::print_table(&table);
    let mut footer = format!("{} of {} candidates", result.hits.len(), result.candidates);
    if result.ranked_by != levh_core::H_SCORE {
        footer.push_str(&format!(", ranked by scorer `{}`", result.ranked_by));
    }
    if !result.reinforced.is_empty() {
        footer.push_str(&format!(", {} reinforced", result.reinforced.len()));
    }
    if result.omitted_by_budget > 0 {
        footer.push_str(&format!(
            ", {} left out to fit {} tokens",
            result.omitted_by_budget,
            args.max_tokens.unwrap_or(0)
        ));
    }
    output::line(footer);
    Ok(ExitCode::SUCCESS)
}
