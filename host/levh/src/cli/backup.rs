//! `levh backup`: back a home up into one file (encrypted with a passphrase when asked),
//! list the backups, check one, restore one.
//!
//! None of these open the store through the engine: a backup reads it beside whoever is
//! using it, and a restore needs no connection of its own left open on it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use indicatif::HumanBytes;
use levh_backup::{Passphrase, SecretString};
use serde_json::json;

use crate::output;

/// Where a passphrase comes from when no one is at a terminal to type it.
const PASSPHRASE_VARIABLE: &str = "LEVH_BACKUP_PASSPHRASE";

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Back up the home: a consistent copy of the store (taken while servers and agents
    /// keep writing), config.toml, connectors with their grants, scorers. Models and
    /// caches are left out: they are downloaded or rebuilt.
    Create(CreateArgs),
    /// The backups in the home's backups/ folder.
    List,
    /// Read a backup through and check it as a restore would, changing nothing.
    Verify(FileArgs),
    /// Make the home what a backup holds. Refused while another process has the store
    /// open; what it replaces is moved to backups/replaced-<time>/, never deleted.
    Restore(FileArgs),
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The file to write [default: <home>/backups/levh-<UTC time>.tar, .tar.age encrypted].
    #[arg(long, value_name = "FILE")]
    to: Option<PathBuf>,
    /// Encrypt with a passphrase (age, scrypt): LEVH_BACKUP_PASSPHRASE, or asked twice on a
    /// terminal. Without it the backup holds your memories and config.toml as they are.
    #[arg(long)]
    encrypt: bool,
}

#[derive(Debug, clap::Args)]
pub struct FileArgs {
    /// The backup file. An encrypted one takes its passphrase from LEVH_BACKUP_PASSPHRASE,
    /// or asks on a terminal.
    file: PathBuf,
}

pub fn run(home: &Path, command: Command, json: bool) -> Result<ExitCode> {
    // A backup copies the home's SQLite file and a restore replaces it. On a team server
    // that file is not where the memories are: backing it up would be a backup of nothing
    // (or of a stray old store), and restoring it would change nothing the server reads.
    // Listing and checking backup files touch no store, so they work on either.
    let database = crate::context::Database::configured(home)?;
    match &command {
        Command::Create(_) => database.require_sqlite(
            "`levh backup create`",
            "back the database up with pg_dump (e.g. `pg_dump -Fc -f levh.dump DATABASE`) or \
             your provider's backups",
        )?,
        Command::Restore(_) => database.require_sqlite(
            "`levh backup restore`",
            "restore the database with pg_restore from a pg_dump, or your provider's \
             point-in-time recovery",
        )?,
        Command::List | Command::Verify(_) => {}
    }
    match command {
        Command::Create(args) => create(home, args, json),
        Command::List => list(home, json),
        Command::Verify(args) => verify(home, &args.file, json),
        Command::Restore(args) => restore(home, &args.file, json),
    }
}

fn create(home: &Path, args: CreateArgs, json: bool) -> Result<ExitCode> {
    let now = jiff::Timestamp::now();
    let out = match args.to {
        Some(path) => path,
        None => {
            levh_backup::backups_dir(home).join(levh_backup::default_file_name(now, args.encrypt))
        }
    };
    let passphrase = if args.encrypt {
        Some(passphrase_for_new_backup()?)
    } else {
        None
    };
    let started = Instant::now();
    let created = levh_backup::create(home, &out, passphrase.as_ref(), now)?;
    let seconds = started.elapsed().as_secs_f64();
    if json {
        output::json(&json!({
            "path": created.path,
            "bytes": created.bytes,
            "encrypted": created.encrypted,
            "seconds": seconds,
            "manifest": created.manifest,
        }))?;
    } else {
        output::line(format!(
            "backed up {} to {}",
            created.manifest.contents(),
            created.path.display()
        ));
        output::line(format!(
            "  {}, {}, {seconds:.1} s",
            HumanBytes(created.bytes),
            if created.encrypted {
                "encrypted with your passphrase"
            } else {
                "not encrypted"
            }
        ));
        if !created.manifest.files.is_empty() {
            output::line(format!("  with {}", created.manifest.files.join(", ")));
        }
        if !created.manifest.left_out.is_empty() {
            output::line(format!(
                "  left out, since they hold tokens and the backup is not encrypted: {} (--encrypt keeps them)",
                created.manifest.left_out.join(", ")
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(home: &Path, json: bool) -> Result<ExitCode> {
    let found = levh_backup::list(home)?;
    if json {
        let rows: Vec<_> = found
            .iter()
            .map(|file| {
                json!({
                    "path": file.path,
                    "bytes": file.bytes,
                    "modified": file.modified,
                    "encrypted": file.encrypted,
                })
            })
            .collect();
        output::json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        output::line(format!(
            "no backups in {} (`levh backup create` makes one)",
            levh_backup::backups_dir(home).display()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output::table(&["file", "size", "written", "encrypted"]);
    for file in &found {
        table.add_row(vec![
            file.path.display().to_string(),
            HumanBytes(file.bytes).to_string(),
            file.modified.map(output::human_time).unwrap_or_default(),
            if file.encrypted { "yes" } else { "no" }.to_string(),
        ]);
    }
    output::print_table(&table);
    Ok(ExitCode::SUCCESS)
}

fn verify(home: &Path, file: &Path, json: bool) -> Result<ExitCode> {
    let passphrase = passphrase_to_open(file)?;
    let manifest = levh_backup::verify(file, passphrase.as_ref(), &levh_backup::backups_dir(home))?;
    if json {
        output::json(&json!({ "path": file, "ok": true, "manifest": manifest }))?;
    } else {
        output::line(format!(
            "{} is whole: {}, schema {}, written by levh {} at {}",
            file.display(),
            manifest.contents(),
            manifest.schema_version,
            manifest.levh_version,
            manifest.created_at
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn restore(home: &Path, file: &Path, json: bool) -> Result<ExitCode> {
    let passphrase = passphrase_to_open(file)?;
    let started = Instant::now();
    let restored = levh_backup::restore(home, file, passphrase.as_ref(), jiff::Timestamp::now())?;
    let seconds = started.elapsed().as_secs_f64();
    if json {
        output::json(&json!({
            "path": file,
            "replaced": restored.replaced,
            "schema_version": restored.schema_version,
            "seconds": seconds,
            "manifest": restored.manifest,
        }))?;
    } else {
        output::line(format!(
            "restored {} from {}, backed up at {}",
            restored.manifest.contents(),
            file.display(),
            restored.manifest.created_at
        ));
        if restored.schema_version != restored.manifest.schema_version {
            output::line(format!(
                "  its store was migrated from schema {} to {}",
                restored.manifest.schema_version, restored.schema_version
            ));
        }
        if !restored.manifest.left_out.is_empty() {
            output::line(format!(
                "  the backup left out {} (tokens; it is not encrypted): set them again with `levh connector secret set ID`",
                restored.manifest.left_out.join(", ")
            ));
        }
        match &restored.replaced {
            Some(dir) => output::line(format!("  what it replaced is in {}", dir.display())),
            None => output::line("  the home had no store; nothing was replaced"),
        }
        output::line(format!("  {seconds:.1} s"));
    }
    Ok(ExitCode::SUCCESS)
}

/// The passphrase for a backup being made: the variable, or typed twice.
fn passphrase_for_new_backup() -> Result<Passphrase> {
    if let Some(secret) = passphrase_from_environment()? {
        return Ok(Passphrase::new(secret));
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        bail!(
            "--encrypt needs a passphrase: set {PASSPHRASE_VARIABLE}, or run on a terminal to be asked"
        );
    }
    let first = rpassword::prompt_password("passphrase for the backup (hidden): ")
        .context("reading the passphrase")?;
    if first.is_empty() {
        bail!("the passphrase is empty");
    }
    let again = rpassword::prompt_password("the same passphrase again: ")
        .context("reading the passphrase")?;
    if first != again {
        bail!("the two passphrases differ; nothing was written");
    }
    Ok(Passphrase::new(SecretString::from(first)))
}

/// The passphrase for an existing backup, when it is encrypted.
fn passphrase_to_open(file: &Path) -> Result<Option<Passphrase>> {
    if !levh_backup::is_encrypted(file)? {
        return Ok(None);
    }
    if let Some(secret) = passphrase_from_environment()? {
        return Ok(Some(Passphrase::new(secret)));
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        bail!(
            "{} is encrypted: set {PASSPHRASE_VARIABLE} to its passphrase, or run on a terminal to be asked",
            file.display()
        );
    }
    let secret = rpassword::prompt_password(format!("passphrase of {} (hidden): ", file.display()))
        .context("reading the passphrase")?;
    Ok(Some(Passphrase::new(SecretString::from(secret))))
}

fn passphrase_from_environment() -> Result<Option<SecretString>> {
    match std::env::var(PASSPHRASE_VARIABLE) {
        Ok(secret) if secret.is_empty() => bail!("{PASSPHRASE_VARIABLE} is set but empty"),
        Ok(secret) => Ok(Some(SecretString::from(secret))),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            bail!("{PASSPHRASE_VARIABLE} is not valid UTF-8")
        }
    }
}
