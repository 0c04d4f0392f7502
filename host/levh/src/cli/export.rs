//! `levh export`: every live memory (of a project) in one of four formats, streamed a page
//! at a time with a progress bar on a terminal — `jsonl` (one memory a line, what `levh
//! import` reads back exactly), `json` (the document `GET /api/export` answers), `markdown`
//! (for people: by project, one section a memory) or `sqlite` (a standalone database file
//! with one `memories` table, for any SQL tool).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;

use crate::context::Context;
use crate::output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON memory a line (`levh import` reads it back).
    Jsonl,
    /// `{"memories": [...]}`, as `GET /api/export` answers.
    Json,
    /// For people: by project, one section a memory.
    Markdown,
    /// A standalone SQLite database with a `memories` table (needs `-o FILE`).
    Sqlite,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The format.
    #[arg(long, short, value_enum, default_value = "jsonl")]
    format: Format,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Write here instead of standard output (refused if it exists).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Forgotten memories too, each with when it was forgotten (`levh import` brings
    /// them back forgotten).
    #[arg(long)]
    include_forgotten: bool,
}

pub fn run(context: &Context, args: Args, _json: bool) -> Result<ExitCode> {
    if let Some(path) = &args.output
        && path.exists()
    {
        bail!(
            "{} exists: an export never overwrites a file (choose another name)",
            path.display()
        );
    }
    let total = context
        .run(Operation::GetMemoryStats, |levh, scope| {
            levh_api::workspace::stats(levh, scope, args.project.clone())
        })
        .map(|s| s.total)
        .unwrap_or(0);
    let bar = indicatif::ProgressBar::hidden();
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_length(total);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("exporting [{bar:30}] {pos}/{len} {per_sec} {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let exported = match args.format {
        Format::Sqlite => {
            let Some(path) = &args.output else {
                bail!("--format sqlite writes a database file: name it with -o FILE");
            };
            sqlite(context, &args, path, &bar)?
        }
        format => {
            let mut out: Box<dyn Write> = match &args.output {
                Some(path) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create_new(path)
                        .with_context(|| format!("cannot create {}", path.display()))?,
                )),
                None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            };
            let exported = text(context, &args, format, &mut out, &bar)?;
            out.flush()?;
            exported
        }
    };
    bar.finish_and_clear();
    if let Some(path) = &args.output {
        output::line(format!(
            "exported {exported} memories to {}",
            path.display()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// JSON Lines, JSON or Markdown to `out`.
fn text(
    context: &Context,
    args: &Args,
    format: Format,
    out: &mut dyn Write,
    bar: &indicatif::ProgressBar,
) -> Result<usize> {
    let request = levh_api::export::ExportArgs {
        format: Some(match format {
            Format::Jsonl => levh_api::export::ExportFormat::Jsonl,
            Format::Json => levh_api::export::ExportFormat::Json,
            Format::Markdown => levh_api::export::ExportFormat::Markdown,
            Format::Sqlite => unreachable!("written by `sqlite`"),
        }),
        project: args.project.clone(),
        include_forgotten: Some(args.include_forgotten),
    };
    context.run(Operation::ExportMemories, |levh, scope| {
        levh_api::export::write(levh, scope, &request, out, |n| bar.inc(n as u64))
    })
}

/// A standalone SQLite database at `path`.
fn sqlite(
    context: &Context,
    args: &Args,
    path: &std::path::Path,
    bar: &indicatif::ProgressBar,
) -> Result<usize> {
    let mut db = rusqlite::Connection::open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    db.execute_batch(
        "CREATE TABLE memories (
             id TEXT PRIMARY KEY, content TEXT NOT NULL, project TEXT, kind TEXT NOT NULL,
             source TEXT NOT NULL, importance REAL NOT NULL, pinned INTEGER NOT NULL,
             stability_hours REAL NOT NULL, recall_count INTEGER NOT NULL,
             last_recalled_at TEXT, created_at TEXT NOT NULL, valid_from TEXT NOT NULL,
             valid_to TEXT, superseded_by TEXT, metadata TEXT NOT NULL,
             forgotten_at TEXT,
             memory TEXT NOT NULL -- the whole memory as levh exports it (JSON)
         );",
    )?;
    let mut failed: Option<rusqlite::Error> = None;
    let exported = context.run(Operation::ExportMemories, |levh, scope| {
        levh_api::export::pages(levh, scope, args.project.clone(), args.include_forgotten, |page| {
            let written = (|| -> rusqlite::Result<()> {
                let tx = db.transaction()?;
                {
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO memories VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                    )?;
                    for exported in &page {
                        let m = &exported.memory;
                        insert.execute(rusqlite::params![
                            m.id,
                            m.content,
                            m.project,
                            m.kind,
                            m.source,
                            m.importance,
                            m.pinned,
                            m.stability_hours,
                            m.recall_count,
                            m.last_recalled_at,
                            m.created_at,
                            m.valid_from,
                            m.valid_to,
                            m.superseded_by,
                            m.metadata.to_string(),
                            exported.forgotten_at,
                            serde_json::to_string(exported).unwrap_or_default(),
                        ])?;
                    }
                }
                tx.commit()
            })();
            bar.inc(page.len() as u64);
            written.map_err(|error| {
                let message = error.to_string();
                failed = Some(error);
                levh_api::Error::internal(message)
            })
        })
    });
    if let Some(error) = failed {
        return Err(error).context(format!("cannot write {}", path.display()));
    }
    exported
}
