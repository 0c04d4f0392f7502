//! `levh doctor`: a ✓/✗ checklist of the store, its index and the embedder. On SQLite it
//! checks the home's file (journal mode, FTS5); on PostgreSQL the connection, the schema
//! and the pgvector extension.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

use crate::context::{Context, Database};
use crate::output;

struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
    /// Works, but something better is available: shown with `!`, not a failure.
    warning: Option<String>,
}

pub fn run(context: &Context, json: bool) -> Result<ExitCode> {
    let health = context.store_health()?;
    let embedder = context.embedder_in_use();
    let backend = context.backend();
    let mut checks = vec![backend_check(backend)];
    let schema = Check {
        name: "schema",
        ok: health.schema_version == health.latest_schema_version,
        detail: format!(
            "version {} (this levh writes {})",
            health.schema_version, health.latest_schema_version
        ),
        warning: None,
    };
    match context.postgres_facts() {
        None => checks.extend([
            Check {
                name: "store",
                ok: true,
                detail: health.path.clone(),
                warning: None,
            },
            schema,
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
        ]),
        Some(facts) => checks.extend(postgres_checks(facts, schema, health.fts5)),
    }
    checks.extend([
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
            name: "vectors",
            ok: true,
            detail: format!("vectors per model: {}", vector_counts(&health.embeddings)),
            warning: other_vectors(&health.embeddings, embedder.model_id(), health.memories),
        },
        Check {
            name: "times",
            ok: health.times_out_of_range == 0,
            detail: if health.times_out_of_range == 0 {
                format!(
                    "every stored time is within range (up to {})",
                    levh_core::latest()
                )
            } else {
                format!(
                    "{} memories or held candidates carry a time past {} or before {} (written by an older levh); they read as the nearest time levh can show",
                    health.times_out_of_range,
                    levh_core::latest(),
                    levh_core::earliest()
                )
            },
            warning: None,
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
    ]);
    report(&checks, &context.home, backend, json!(health), json)
}

fn backend_check(backend: levh_core::Backend) -> Check {
    Check {
        name: "backend",
        ok: true,
        detail: match backend {
            levh_core::Backend::Sqlite => "sqlite (the home's levh.db)".to_owned(),
            levh_core::Backend::Postgres => {
                "postgres (LEVH_DATABASE_URL or database_url)".to_owned()
            }
        },
        warning: None,
    }
}

/// The PostgreSQL store's own checks, in place of the file's: the connection answered
/// (and with which server), the schema, pgvector, and the full-text search.
fn postgres_checks(
    facts: Result<levh_postgres::DatabaseFacts>,
    schema: Check,
    full_text: bool,
) -> Vec<Check> {
    let facts = match facts {
        Ok(facts) => facts,
        Err(error) => {
            return vec![
                Check {
                    name: "database",
                    ok: false,
                    detail: format!("{error:#}"),
                    warning: None,
                },
                schema,
            ];
        }
    };
    vec![
        Check {
            name: "database",
            ok: true,
            detail: format!("{} (PostgreSQL {})", facts.place, facts.server_version),
            warning: None,
        },
        schema,
        Check {
            name: "vector",
            ok: facts.vector_version.is_some(),
            detail: match &facts.vector_version {
                Some(version) => format!("pgvector {version}"),
                None => "the pgvector extension is not installed in this database \
                         (CREATE EXTENSION vector, as a user allowed to)"
                    .to_owned(),
            },
            warning: None,
        },
        Check {
            name: "fulltext",
            ok: full_text,
            detail: if full_text {
                "full-text search answers".into()
            } else {
                "full-text search does not answer".into()
            },
            warning: None,
        },
    ]
}

/// When the store cannot be opened (corrupt, unreadable, of a newer levh, a setting
/// wrong), doctor still says what it can — the file's size, permissions and header — and
/// which check failed and why, instead of stopping with the error every command gives.
pub fn run_unopened(home: Option<PathBuf>, error: anyhow::Error, json: bool) -> Result<ExitCode> {
    let home = match home {
        Some(home) => home,
        None => crate::context::default_home()?,
    };
    // The setting itself may be what failed; then there is no file to look at either.
    let (backend, mut checks) = match Database::configured(&home) {
        Ok(Database::Postgres(_)) => (
            levh_core::Backend::Postgres,
            vec![backend_check(levh_core::Backend::Postgres)],
        ),
        Ok(Database::Sqlite) | Err(_) => (
            levh_core::Backend::Sqlite,
            vec![
                backend_check(levh_core::Backend::Sqlite),
                file_check(&home.join("levh.db")),
            ],
        ),
    };
    checks.push(Check {
        name: "open",
        ok: false,
        detail: format!("{error:#}"),
        warning: None,
    });
    report(&checks, &home, backend, serde_json::Value::Null, json)
}

/// What can be read of the database file without SQLite.
fn file_check(path: &Path) -> Check {
    let fail = |detail: String| Check {
        name: "file",
        ok: false,
        detail,
        warning: None,
    };
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check {
                name: "file",
                ok: true,
                detail: format!(
                    "{} does not exist yet (created on first use)",
                    path.display()
                ),
                warning: None,
            };
        }
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let mut header = [0u8; 16];
    let read = std::fs::File::open(path).and_then(|mut file| file.read(&mut header));
    let read_only = metadata.permissions().readonly();
    let size = metadata.len();
    match read {
        Err(e) => fail(format!(
            "{} ({size} bytes) cannot be read: {e}",
            path.display()
        )),
        Ok(_) if size == 0 => fail(format!("{} is empty (0 bytes)", path.display())),
        Ok(n) if n < 16 || &header != b"SQLite format 3\0" => fail(format!(
            "{} ({size} bytes) is not an SQLite database (its header is wrong)",
            path.display()
        )),
        Ok(_) => Check {
            name: "file",
            ok: !read_only,
            detail: format!(
                "{} ({size} bytes, SQLite{})",
                path.display(),
                if read_only { ", read-only" } else { "" }
            ),
            warning: None,
        },
    }
}

fn report(
    checks: &[Check],
    home: &Path,
    backend: levh_core::Backend,
    health: serde_json::Value,
    json: bool,
) -> Result<ExitCode> {
    let healthy = checks.iter().all(|c| c.ok);
    if json {
        let items: Vec<_> = checks
            .iter()
            .map(|c| json!({ "check": c.name, "ok": c.ok, "detail": c.detail, "warning": c.warning }))
            .collect();
        output::json(&json!({
            "ok": healthy,
            "home": home,
            "backend": backend,
            "checks": items,
            "health": health,
        }))?;
    } else {
        for c in checks {
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

/// Vectors of another model than the one in use (a model renamed, installed from another
/// folder, an embedder switched): recall by meaning does not see those memories until
/// they are embedded again. `None` when every live memory has a vector of this model.
fn other_vectors(embeddings: &[(String, u64)], model: &str, memories: u64) -> Option<String> {
    let current = embeddings
        .iter()
        .find(|(m, _)| m == model)
        .map_or(0, |(_, n)| *n);
    let others: Vec<String> = embeddings
        .iter()
        .filter(|(m, _)| m != model)
        .map(|(m, n)| format!("{m}: {n}"))
        .collect();
    (current < memories && !others.is_empty()).then(|| {
        format!(
            "{} memories have no vector of {model} (vectors of {}); recall by meaning misses them until `levh reembed`",
            memories - current,
            others.join(", ")
        )
    })
}

fn vector_counts(embeddings: &[(String, u64)]) -> String {
    if embeddings.is_empty() {
        return "none yet".to_owned();
    }
    embeddings
        .iter()
        .map(|(model, n)| format!("{model} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
