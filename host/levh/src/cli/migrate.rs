//! `levh migrate --from sqlite PATH --to postgres://…`: moves a personal store into a
//! team's PostgreSQL database (levh-migrate does the work), with a progress bar on a
//! terminal and a report per table.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::builder::TypedValueParser as _;
use levh_migrate::{MoveReport, MoveRequest, Progress};

use crate::context::DatabaseUrl;
use crate::output;

/// The kinds of store levh moves from.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SourceKind {
    /// A personal levh store: a levh.db file, or the home folder holding one.
    Sqlite,
}

/// `levh migrate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The memories are copied as they are: the same ids, contents, states, links, vectors and \
history. They do not pass through the admission gate again — they were admitted once, by \
your own levh; this is a move of your store, not new input. A memory whose id the database \
already holds with another text is not overwritten: it is reported as refused.

Run it again at any time: what is already there is skipped (a second run copies nothing \
new), and a move that was interrupted goes on where it stopped. The personal store is only \
read, never changed.

Every workspace of the store moves, under its own name (--workspace does not apply); --home \
only says whose settings name the embedder the report compares the moved vectors with.")]
pub struct Args {
    /// The kind of store to move from.
    #[arg(long, value_enum, value_name = "KIND")]
    from: SourceKind,
    /// The personal store: its levh.db, or the home folder that holds it.
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// The team database: postgres://user:password@host:port/database. Its schema is
    /// brought up to date first. Taken from LEVH_DATABASE_URL when not given, which keeps
    /// the password off the command line (and out of the process list).
    #[arg(
        long,
        value_name = "URL",
        env = "LEVH_DATABASE_URL",
        hide_env_values = true
    )]
    to: String,
    /// Rows copied per transaction.
    #[arg(long, value_name = "ROWS", default_value_t = MoveRequest::DEFAULT_BATCH_SIZE,
          value_parser = clap::value_parser!(u64).range(1..=100_000).map(|n| n as usize))]
    batch_size: usize,
    /// Waits this long after each batch (for tests that interrupt a move).
    #[arg(long, value_name = "MS", default_value_t = 0, hide = true)]
    pause_between_batches_ms: u64,
}

/// The move's progress bar: one bar per table, on stderr, drawn only on a terminal.
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new() -> Self {
        let bar = indicatif::ProgressBar::hidden();
        // indicatif draws on stderr only when it is a terminal: logs and pipes get none.
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg:>24} [{bar:30}] {pos}/{len} rows {per_sec} {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self(bar)
    }
}

impl Progress for Bar {
    fn step(&self, name: &str, rows: u64, done: u64) {
        self.0.reset();
        self.0.set_length(rows);
        self.0.set_position(done);
        self.0.set_message(name.to_owned());
    }
    fn advance(&self, rows: u64) {
        self.0.inc(rows);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

pub fn run(home: Option<PathBuf>, args: Args, json: bool) -> Result<ExitCode> {
    // The home is resolved for its settings (the embedder this levh would use) and the
    // check of LEVH_* variables; its own store is not opened.
    let home = crate::context::resolve_home(home)?;
    let SourceKind::Sqlite = args.from;
    let target = DatabaseUrl::parse(&args.to, "--to")?;
    let request = MoveRequest {
        source: args.path.clone(),
        target_url: target.secret().to_owned(),
        batch_size: args.batch_size,
        pause_between_batches: Duration::from_millis(args.pause_between_batches_ms),
    };
    let bar = Bar::new();
    let mut report = levh_migrate::move_in(&request, &bar).with_context(|| {
        format!(
            "moving {} into {target}",
            levh_migrate::store_file(&args.path).display()
        )
    })?;
    let embedder = match crate::context::configured_embedder(&home) {
        Ok((model, dimension)) => {
            if let Some(moved) = report.vectors.iter().find(|v| v.model != model) {
                report.warnings.push(format!(
                    "this levh's settings choose the embedder {model} ({dimension} dimensions), \
                     but the moved vectors are of {} ({} dimensions): a team server embedding \
                     with {model} finds none of them by meaning until `levh reembed` gives them \
                     vectors of its model (or set LEVH_EMBEDDER to match)",
                    moved.model, moved.dimension
                ));
            }
            Some(model)
        }
        Err(error) => {
            report.warnings.push(format!(
                "could not tell which embedder this levh uses: {error:#}"
            ));
            None
        }
    };
    if json {
        let mut document = serde_json::to_value(&report)?;
        document["target"] = serde_json::Value::from(target.to_string());
        document["configured_embedder"] = serde_json::json!(embedder);
        output::json(&document)?;
    } else {
        print(&report, &target);
    }
    Ok(ExitCode::SUCCESS)
}

fn print(report: &MoveReport, target: &DatabaseUrl) {
    let mut table = output::table(&[
        "table",
        "read",
        "copied",
        "already there",
        "refused",
        "seconds",
    ]);
    for t in &report.tables {
        table.add_row(vec![
            if t.finished_earlier {
                format!("{} (done earlier)", t.table)
            } else {
                t.table.clone()
            },
            t.read.to_string(),
            t.copied.to_string(),
            t.already_there.to_string(),
            t.refused.to_string(),
            format!("{:.2}", t.elapsed_seconds),
        ]);
    }
    output::line(table);
    for t in &report.tables {
        for refusal in &t.refusals {
            output::line(format!(
                "refused from {}: {} — {}",
                t.table, refusal.row, refusal.reason
            ));
        }
        if t.refused > t.refusals.len() as u64 {
            output::line(format!(
                "refused from {}: {} more (the first {} are named above)",
                t.table,
                t.refused - t.refusals.len() as u64,
                t.refusals.len()
            ));
        }
    }
    for vectors in &report.vectors {
        output::line(format!(
            "vectors: {} of the model {} ({} dimensions), copied as they are, not re-embedded",
            vectors.vectors, vectors.model, vectors.dimension
        ));
    }
    if report.vector_index_seconds >= 0.05 {
        output::line(format!(
            "vector index: built in {:.1} s after the copy",
            report.vector_index_seconds
        ));
    }
    for table in &report.not_moved {
        output::line(format!("not moved: {} — {}", table.table, table.reason));
    }
    for warning in &report.warnings {
        output::warn(warning);
    }
    output::line(format!(
        "{} {} into {target}: {} rows copied, {} already there, {} refused, in {:.1} s \
         (schema {} → {})",
        if report.resumed {
            "went on moving"
        } else {
            "moved"
        },
        report.source.display(),
        report.copied(),
        report.tables.iter().map(|t| t.already_there).sum::<u64>(),
        report.refused(),
        report.elapsed_seconds,
        report.source_schema_version,
        report.target_schema_version,
    ));
}
