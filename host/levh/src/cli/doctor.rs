//! `levh doctor`: a ✓/✗ checklist of the store, its index and the embedder.

use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

use crate::context::Context;
use crate::output;

struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
    /// Works, but something better is available: shown with `!`, not a failure.
    warning: Option<String>,
}

pub fn run(context: &Context, json: bool) -> Result<ExitCode> {
    let health = context.levh.health()?;
    let embedder = context.levh.embedder();
    let checks = [
        Check {
            name: "store",
            ok: true,
            detail: health.path.clone(),
            warning: None,
        },
        Check {
            name: "schema",
            ok: health.schema_version == health.latest_schema_version,
            detail: format!(
                "version {} (this levh writes {})",
                health.schema_version, health.latest_schema_version
            ),
            warning: None,
        },
        Check {
            name: "wal",
            ok: health.journal_mode.eq_ignore_ascii_case("wal"),
            detail: format!("journal mode {}", health.journal_mode),
            warning: None,
        },
        Check {
            name: "fts5",
            ok: health.fts5 && health.fts_in_step,
            detail: if !health.fts5 {
                "full-text index unavailable".into()
            } else if health.fts_in_step {
                "full-text index in step with memories".into()
            } else {
                "full-text index out of step with memories".into()
            },
            warning: None,
        },
        Check {
            name: "embedder",
            ok: true,
            detail: format!(
                "{} mode{}: {} ({}, {})",
                context.embedder.mode.name(),
                if context.embedder.automatic {
                    " (default)"
                } else {
                    ""
                },
                embedder.model_id(),
                match embedder.dimension() {
                    0 => "dimension known after the first embed".to_owned(),
                    dimension => format!("{dimension}-d"),
                },
                if embedder.is_semantic() {
                    "semantic"
                } else {
                    "lexical fallback, not semantic"
                }
            ),
            // Loading the model is not checked here (`levh models status` does): doctor
            // stays fast and never loads a runtime into the process just to report.
            warning: context.embedder.warning.clone(),
        },
        Check {
            name: "counts",
            ok: true,
            detail: format!(
                "{} memories, {} forgotten, {} events",
                health.memories, health.forgotten, health.events
            ),
            warning: None,
        },
    ];
    let healthy = checks.iter().all(|c| c.ok);
    if json {
        let items: Vec<_> = checks
            .iter()
            .map(|c| json!({ "check": c.name, "ok": c.ok, "detail": c.detail, "warning": c.warning }))
            .collect();
        output::json(
            &json!({ "ok": healthy, "home": context.home, "checks": items, "health": health }),
        )?;
    } else {
        for c in &checks {
            let mark = match (c.ok, &c.warning) {
                (false, _) => "✗",
                (true, Some(_)) => "!",
                (true, None) => "✓",
            };
            output::line(format!("{mark} {:<9} {}", c.name, c.detail));
            if let Some(warning) = &c.warning {
                output::line(format!("  {:<9} {warning}", ""));
            }
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
