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
}

pub fn run(context: &Context, json: bool) -> Result<ExitCode> {
    let health = context.levh.health()?;
    let embedder = context.levh.embedder();
    let checks = [
        Check {
            name: "store",
            ok: true,
            detail: health.path.clone(),
        },
        Check {
            name: "schema",
            ok: health.schema_version == health.latest_schema_version,
            detail: format!(
                "version {} (this levh writes {})",
                health.schema_version, health.latest_schema_version
            ),
        },
        Check {
            name: "wal",
            ok: health.journal_mode.eq_ignore_ascii_case("wal"),
            detail: format!("journal mode {}", health.journal_mode),
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
        },
        Check {
            name: "embedder",
            ok: true,
            detail: format!(
                "{} ({}-d, {})",
                embedder.model_id(),
                embedder.dimension(),
                if embedder.is_semantic() {
                    "semantic"
                } else {
                    "lexical fallback, not semantic"
                }
            ),
        },
        Check {
            name: "counts",
            ok: true,
            detail: format!(
                "{} memories, {} forgotten, {} events",
                health.memories, health.forgotten, health.events
            ),
        },
    ];
    let healthy = checks.iter().all(|c| c.ok);
    if json {
        let items: Vec<_> = checks
            .iter()
            .map(|c| json!({ "check": c.name, "ok": c.ok, "detail": c.detail }))
            .collect();
        output::json(
            &json!({ "ok": healthy, "home": context.home, "checks": items, "health": health }),
        )?;
    } else {
        for c in &checks {
            output::line(format!(
                "{} {:<9} {}",
                if c.ok { "✓" } else { "✗" },
                c.name,
                c.detail
            ));
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
