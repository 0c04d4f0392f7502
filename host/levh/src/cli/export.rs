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
use levh_api::views::MemoryView;

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
    let mut first = true;
    let mut project: Option<Option<String>> = None;
    let mut failed: Option<std::io::Error> = None;
    if format == Format::Json {
        out.write_all(b"{\"memories\": [")?;
    } else if format == Format::Markdown {
        writeln!(out, "# levh export\n")?;
    }
    let exported = context.run(Operation::ExportMemories, |levh, scope| {
        levh_api::memories::export_pages(levh, scope, args.project.clone(), |page| {
            let written = (|| -> std::io::Result<()> {
                for memory in &page {
                    match format {
                        Format::Jsonl => {
                            serde_json::to_writer(&mut *out, memory)?;
                            out.write_all(b"\n")?;
                        }
                        Format::Json => {
                            out.write_all(if first { b"\n" } else { b",\n" })?;
                            serde_json::to_writer(&mut *out, memory)?;
                        }
                        Format::Markdown => markdown(out, memory, &mut project)?,
                        Format::Sqlite => unreachable!("written by `sqlite`"),
                    }
                    first = false;
                }
                Ok(())
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
        return Err(error).context("cannot write the export");
    }
    let exported = exported?;
    if format == Format::Json {
        out.write_all(b"\n]}\n")?;
    }
    Ok(exported)
}

/// One memory as a Markdown section, under its project's heading (a new heading when the
/// project changes; the export comes newest first, so a project may come back).
fn markdown(
    out: &mut dyn Write,
    memory: &MemoryView,
    project: &mut Option<Option<String>>,
) -> std::io::Result<()> {
    if project.as_ref() != Some(&memory.project) {
        writeln!(
            out,
            "## {}\n",
            memory.project.as_deref().unwrap_or("(no project)")
        )?;
        *project = Some(memory.project.clone());
    }
    let title: String = memory
        .content
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(80)
        .collect();
    writeln!(out, "### {}\n", title.trim())?;
    writeln!(out, "{}\n", memory.content.trim_end())?;
    let mut facts = vec![
        format!("id `{}`", memory.id),
        memory.kind.clone(),
        format!("from {}", memory.source),
        format!("valid from {}", memory.valid_from),
        format!("importance {:.2}", memory.importance),
    ];
    if memory.pinned {
        facts.push("pinned".into());
    }
    if let Some(to) = &memory.valid_to {
        facts.push(format!("valid to {to}"));
    }
    writeln!(out, "*{}*\n", facts.join(" · "))
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
             memory TEXT NOT NULL -- the whole memory as levh exports it (JSON)
         );",
    )?;
    let mut failed: Option<rusqlite::Error> = None;
    let exported = context.run(Operation::ExportMemories, |levh, scope| {
        levh_api::memories::export_pages(levh, scope, args.project.clone(), |page| {
            let written = (|| -> rusqlite::Result<()> {
                let tx = db.transaction()?;
                {
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO memories VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                    )?;
                    for m in &page {
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
                            serde_json::to_string(m).unwrap_or_default(),
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
