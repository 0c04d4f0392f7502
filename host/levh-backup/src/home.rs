//! What of a home goes into a backup, and how a backup becomes a home again.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use jiff::Timestamp;

use crate::archive::{self, Hashing, Sink};
use crate::{BackupError, FORMAT, Manifest, Passphrase};

/// The store's file, in the home and in the archive.
const DATABASE: &str = "levh.db";
/// The archive's last entry.
const MANIFEST: &str = "manifest.json";
/// Besides the store, what a home cannot rebuild: its settings, the installed connectors
/// with their grants, the installed scorers, the files attached to memories.
const PARTS: &[&str] = &["config.toml", "plugins", "scorers", "attachments"];
/// Built from the store and describing it (the vector index's graph): moved aside with the
/// store a restore replaces, rebuilt for the restored one.
const DERIVED: &[&str] = &["cache/index"];
/// Where backups go by default, and what a restore replaced.
const BACKUPS: &str = "backups";
/// Files holding a secret: the token a connector's requests carry (`levh connector secret
/// set`, stored as `plugins/<id>/credential` by levh-plugins' registry). Only an encrypted
/// backup carries them; a plain one leaves them out and lists them in its manifest, so a
/// backup copied to a USB stick holds no token in the clear.
const SECRET_FILE_NAMES: &[&str] = &["credential"];
/// A manifest is a few hundred bytes; anything past this is not one.
const MANIFEST_LIMIT: u64 = 1 << 20;

/// A backup just written.
#[derive(Debug, Clone)]
pub struct Created {
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Whether a passphrase encrypts it.
    pub encrypted: bool,
    /// What it holds.
    pub manifest: Manifest,
}

/// A backup that was restored.
#[derive(Debug, Clone)]
pub struct Restored {
    /// What the backup held.
    pub manifest: Manifest,
    /// Where what it replaced was moved (nothing is deleted); none for an empty home.
    pub replaced: Option<PathBuf>,
    /// The store's schema after the restore (an older backup is migrated).
    pub schema_version: i64,
}

/// A file in a home's `backups/` folder.
#[derive(Debug, Clone)]
pub struct BackupFile {
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// When it was last written.
    pub modified: Option<Timestamp>,
    /// Whether a passphrase encrypts it.
    pub encrypted: bool,
}

/// `levh-<UTC time>.tar`, `.tar.age` when encrypted: sorts by time, and says what opens it.
pub fn default_file_name(now: Timestamp, encrypted: bool) -> String {
    let suffix = if encrypted { ".tar.age" } else { ".tar" };
    format!("levh-{}{suffix}", now.strftime("%Y%m%dT%H%M%SZ"))
}

/// The home's `backups/` folder.
pub fn backups_dir(home: &Path) -> PathBuf {
    home.join(BACKUPS)
}

/// Writes a backup of `home` to `out` (which must not exist), taken at `now`.
///
/// The store is copied consistently while other processes keep using it; the file
/// appears under its name only once complete and on disk (written beside it under a
/// temporary name, then renamed), so an interrupted backup leaves no file that looks whole.
pub fn create(
    home: &Path,
    out: &Path,
    passphrase: Option<&Passphrase>,
    now: Timestamp,
) -> Result<Created, BackupError> {
    let _span = tracing::info_span!("backup create", encrypted = passphrase.is_some()).entered();
    let database = home.join(DATABASE);
    if !database.is_file() {
        return Err(BackupError::Io {
            what: "reading the store",
            path: database,
            cause: io::Error::new(io::ErrorKind::NotFound, "no store in this home"),
        });
    }
    if out.exists() {
        return Err(BackupError::Io {
            what: "writing",
            path: out.to_path_buf(),
            cause: io::Error::new(io::ErrorKind::AlreadyExists, "the file exists"),
        });
    }
    let folder = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_private_dir(&folder)?;

    // The store's copy, beside the backup (same file system, removed when done).
    let staging = tempfile::Builder::new()
        .prefix(".levh-backup-")
        .tempdir_in(&folder)
        .map_err(BackupError::io("creating a folder in", &folder))?;
    let copy = staging.path().join(DATABASE);
    let summary = levh_store::snapshot(&database, &copy).map_err(BackupError::store(&database))?;

    let (file, partial) = tempfile::Builder::new()
        .prefix(".levh-backup-")
        .suffix(".partial")
        .tempfile_in(&folder)
        .map_err(BackupError::io("creating a file in", &folder))?
        .into_parts();
    let sink = Sink::new(file, passphrase).map_err(BackupError::io("writing", &partial))?;
    let mut tar = tar::Builder::new(sink);
    tar.follow_symlinks(false);

    let store = File::open(&copy).map_err(BackupError::io("reading", &copy))?;
    let database_bytes = store
        .metadata()
        .map_err(BackupError::io("reading", &copy))?
        .len();
    let mut hashed = Hashing::new(BufReader::with_capacity(1 << 20, store));
    let mut header = file_header(database_bytes, now);
    tar.append_data(&mut header, DATABASE, &mut hashed)
        .map_err(BackupError::io("writing", &partial))?;
    let database_sha256 = hashed.hex();

    let mut files = Vec::new();
    let mut left_out = Vec::new();
    for part in PARTS {
        for relative in files_under(home, Path::new(part))? {
            let secret = relative
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| SECRET_FILE_NAMES.contains(&name));
            if secret && passphrase.is_none() {
                left_out.push(slash_path(&relative));
                continue;
            }
            let source = home.join(&relative);
            tar.append_path_with_name(&source, &relative)
                .map_err(BackupError::io("adding to the backup", &source))?;
            files.push(slash_path(&relative));
        }
    }

    let manifest = Manifest {
        format: FORMAT,
        levh_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: now,
        schema_version: summary.schema_version,
        memories: summary.memories,
        held: summary.held,
        forgotten: Some(summary.forgotten),
        waiting: Some(summary.waiting),
        database_bytes,
        database_sha256,
        files,
        left_out,
    };
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| BackupError::Io {
        what: "writing",
        path: partial.to_path_buf(),
        cause: io::Error::other(e),
    })?;
    let mut header = file_header(text.len() as u64, now);
    let finished = tar
        .append_data(&mut header, MANIFEST, text.as_slice())
        .and_then(|()| tar.into_inner())
        .and_then(Sink::finish)
        .and_then(|file| file.sync_all());
    finished.map_err(BackupError::io("writing", &partial))?;
    partial
        .persist_noclobber(out)
        .map_err(|e| BackupError::io("writing", out)(e.error))?;
    sync_dir(&folder);
    let bytes = fs::metadata(out)
        .map_err(BackupError::io("reading", out))?
        .len();
    Ok(Created {
        path: out.to_path_buf(),
        bytes,
        encrypted: passphrase.is_some(),
        manifest,
    })
}

/// Reads the whole backup at `path` and checks it as a restore would (every entry, the
/// store's checksum and SQLite's structural check), changing nothing. Unpacks into a
/// temporary folder inside `scratch`, removed after.
pub fn verify(
    path: &Path,
    passphrase: Option<&Passphrase>,
    scratch: &Path,
) -> Result<Manifest, BackupError> {
    let _span = tracing::info_span!("backup verify").entered();
    create_private_dir(scratch)?;
    let staging = tempfile::Builder::new()
        .prefix(".levh-verify-")
        .tempdir_in(scratch)
        .map_err(BackupError::io("creating a folder in", scratch))?;
    unpack(path, passphrase, staging.path())
}

/// Makes `home` what the backup at `path` holds.
///
/// Everything is unpacked and checked before the home changes; an older store is migrated
/// then, too. The home's store is then held exclusively (refused while another process
/// has it open), copied to `backups/replaced-<time>/` and its content replaced in place;
/// its settings, connectors and scorers are moved there, and the vector index's graph,
/// which described the replaced store.
pub fn restore(
    home: &Path,
    path: &Path,
    passphrase: Option<&Passphrase>,
    now: Timestamp,
) -> Result<Restored, BackupError> {
    let _span = tracing::info_span!("backup restore").entered();
    let backups = backups_dir(home);
    create_private_dir(&backups)?;
    let staging = tempfile::Builder::new()
        .prefix(".levh-restore-")
        .tempdir_in(&backups)
        .map_err(BackupError::io("creating a folder in", &backups))?;
    let manifest = unpack(path, passphrase, staging.path())?;
    let staged = staging.path().join(DATABASE);
    // Opened as the store it is about to be: an older schema is migrated here, before
    // anything of the home changes (it is then at this build's schema). Dropping it
    // closes it (and folds its log back in).
    drop(levh_store::SqliteStore::open(&staged).map_err(BackupError::store(&staged))?);

    let database = home.join(DATABASE);
    let replaced = backups.join(format!("replaced-{}", now.strftime("%Y%m%dT%H%M%SZ")));
    let mut moved_any = false;
    let hold = if database.exists() {
        let mut hold =
            levh_store::hold_exclusively(&database).map_err(|cause| BackupError::InUse {
                path: database.clone(),
                cause,
            })?;
        create_private_dir(&replaced)?;
        let kept = replaced.join(DATABASE);
        hold.copy_to(&kept).map_err(BackupError::store(&database))?;
        hold.replace_with(&staged)
            .map_err(BackupError::store(&database))?;
        moved_any = true;
        Some(hold)
    } else {
        // No store yet: still, nobody may open one here while the restored one moves in.
        let lease = levh_store::acquire_exclusive(&database, std::time::Duration::from_secs(5))
            .map_err(|e| BackupError::InUse {
                path: database.clone(),
                cause: match e {
                    levh_store::LeaseError::InUse(holders) => levh_store::HoldError::InUse(holders),
                    other => levh_store::HoldError::Store(other.into()),
                },
            })?;
        fs::rename(&staged, &database).map_err(BackupError::io("writing", &database))?;
        drop(lease);
        None
    };
    for part in PARTS.iter().chain(DERIVED) {
        let current = home.join(part);
        if current.symlink_metadata().is_ok() {
            let aside = replaced.join(part);
            if let Some(parent) = aside.parent() {
                create_private_dir(parent)?;
            }
            fs::rename(&current, &aside).map_err(BackupError::io("moving aside", &current))?;
            moved_any = true;
        }
    }
    for part in PARTS {
        let restored = staging.path().join(part);
        if restored.symlink_metadata().is_ok() {
            let target = home.join(part);
            fs::rename(&restored, &target).map_err(BackupError::io("writing", &target))?;
        }
    }
    sync_dir(home);
    drop(hold);
    Ok(Restored {
        manifest,
        replaced: moved_any.then_some(replaced),
        schema_version: levh_store::latest_schema_version(),
    })
}

/// The backups in `home`'s `backups/` folder, oldest first (their names hold the time).
pub fn list(home: &Path) -> Result<Vec<BackupFile>, BackupError> {
    let folder = backups_dir(home);
    let entries = match fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(BackupError::io("reading", &folder)(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(BackupError::io("reading", &folder))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_backup = name.ends_with(".tar") || name.ends_with(".tar.age");
        if name.starts_with('.') || !is_backup {
            continue;
        }
        let metadata = entry
            .metadata()
            .map_err(BackupError::io("reading", &path))?;
        if !metadata.is_file() {
            continue;
        }
        found.push(BackupFile {
            encrypted: archive::is_encrypted(&path)?,
            bytes: metadata.len(),
            modified: metadata
                .modified()
                .ok()
                .and_then(|time| Timestamp::try_from(time).ok()),
            path,
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Unpacks the backup at `path` into `staging` and checks it: only the entries a backup
/// has, the manifest last and readable, the store's size and checksum as the manifest
/// says, the files it lists, and a store SQLite and this build accept.
fn unpack(
    path: &Path,
    passphrase: Option<&Passphrase>,
    staging: &Path,
) -> Result<Manifest, BackupError> {
    let damaged =
        |e: io::Error| BackupError::not_a_backup(path, format!("it is damaged or cut short ({e})"));
    let mut tar = tar::Archive::new(archive::open(path, passphrase)?);
    let mut manifest: Option<Manifest> = None;
    let mut database: Option<(u64, String)> = None;
    let mut files = BTreeSet::new();
    for entry in tar.entries().map_err(damaged)? {
        let mut entry = entry.map_err(damaged)?;
        let name = entry.path().map_err(damaged)?.into_owned();
        let name = entry_name(&name).ok_or_else(|| {
            BackupError::not_a_backup(
                path,
                format!("it holds {}, which a backup never does", name.display()),
            )
        })?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            return Err(BackupError::not_a_backup(
                path,
                format!("its entry {name} is not a plain file ({kind:?})"),
            ));
        }
        if manifest.is_some() {
            return Err(BackupError::not_a_backup(
                path,
                format!("{name} comes after the manifest, which is always last"),
            ));
        }
        if name == MANIFEST {
            let mut text = Vec::new();
            (&mut entry)
                .take(MANIFEST_LIMIT)
                .read_to_end(&mut text)
                .map_err(damaged)?;
            let read: Manifest = serde_json::from_slice(&text).map_err(|e| {
                BackupError::not_a_backup(path, format!("its manifest is unreadable ({e})"))
            })?;
            if read.format > FORMAT {
                return Err(BackupError::not_a_backup(
                    path,
                    format!(
                        "it was written by a newer levh ({}; archive format {}, this levh reads {FORMAT}); upgrade levh",
                        read.levh_version, read.format
                    ),
                ));
            }
            manifest = Some(read);
            continue;
        }
        let target = staging.join(&name);
        if let Some(parent) = target.parent() {
            create_private_dir(parent)?;
        }
        let mut out = File::create_new(&target).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                BackupError::not_a_backup(path, format!("it holds {name} twice"))
            } else {
                BackupError::io("writing", &target)(e)
            }
        })?;
        let mut hashed = Hashing::new(&mut entry);
        io::copy(&mut hashed, &mut out).map_err(damaged)?;
        if name == DATABASE {
            let bytes = hashed.bytes;
            database = Some((bytes, hashed.hex()));
        } else {
            files.insert(name);
        }
    }
    // Read to the very end: an encrypted file's last chunk is what proves it whole.
    io::copy(&mut tar.into_inner(), &mut io::sink()).map_err(damaged)?;

    let manifest = manifest.ok_or_else(|| {
        BackupError::not_a_backup(path, "it has no manifest (cut short, or not a backup)")
    })?;
    let (bytes, sha256) =
        database.ok_or_else(|| BackupError::not_a_backup(path, "it holds no store (levh.db)"))?;
    if bytes != manifest.database_bytes || sha256 != manifest.database_sha256 {
        return Err(BackupError::not_a_backup(
            path,
            format!(
                "its store does not match the manifest ({bytes} bytes, SHA-256 {sha256}; the manifest says {} bytes, {})",
                manifest.database_bytes, manifest.database_sha256
            ),
        ));
    }
    let listed: BTreeSet<String> = manifest.files.iter().cloned().collect();
    if listed != files {
        let missing: Vec<_> = listed.difference(&files).cloned().collect();
        let extra: Vec<_> = files.difference(&listed).cloned().collect();
        return Err(BackupError::not_a_backup(
            path,
            format!(
                "its files differ from the manifest (missing: {missing:?}; not listed: {extra:?})"
            ),
        ));
    }
    let staged = staging.join(DATABASE);
    let summary = levh_store::check_restorable(&staged)
        .map_err(|e| BackupError::not_a_backup(path, format!("its store cannot be used: {e}")))?;
    if (summary.memories, summary.held) != (manifest.memories, manifest.held) {
        return Err(BackupError::not_a_backup(
            path,
            format!(
                "its store holds {} memories and {} held, the manifest says {} and {}",
                summary.memories, summary.held, manifest.memories, manifest.held
            ),
        ));
    }
    Ok(manifest)
}

/// An entry's name as the archive may hold it: relative, no `..`, under one of the parts
/// a backup has. `None` for anything else.
fn entry_name(name: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in name.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let first = parts.first()?.as_str();
    let allowed = first == DATABASE || first == MANIFEST || PARTS.contains(&first);
    let single = parts.len() == 1 || PARTS.contains(&first) && first != "config.toml";
    (allowed && single).then(|| parts.join("/"))
}

/// The regular files at or under `home/part`, relative to `home`, sorted; symbolic links
/// are skipped (a backup holds files, not pointers to elsewhere).
fn files_under(home: &Path, part: &Path) -> Result<Vec<PathBuf>, BackupError> {
    let path = home.join(part);
    let Ok(metadata) = path.symlink_metadata() else {
        return Ok(Vec::new());
    };
    if metadata.is_file() {
        return Ok(vec![part.to_path_buf()]);
    }
    if !metadata.is_dir() {
        return Ok(Vec::new());
    }
    let mut names: Vec<_> = fs::read_dir(&path)
        .map_err(BackupError::io("reading", &path))?
        .map(|entry| entry.map(|entry| entry.file_name()))
        .collect::<Result<_, _>>()
        .map_err(BackupError::io("reading", &path))?;
    names.sort();
    let mut found = Vec::new();
    for name in names {
        found.extend(files_under(home, &part.join(name))?);
    }
    Ok(found)
}

fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn file_header(size: u64, now: Timestamp) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o600);
    header.set_mtime(now.as_second().max(0).unsigned_abs());
    header.set_cksum();
    header
}

/// Creates `path` (and its parents) readable by this user only, as the home is.
fn create_private_dir(path: &Path) -> Result<(), BackupError> {
    if path.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(path)
        .map_err(BackupError::io("creating", path))
}

/// Makes a rename in `folder` durable. Best effort: not every file system supports it.
fn sync_dir(folder: &Path) {
    if let Ok(dir) = File::open(folder) {
        let _ = dir.sync_all();
    }
}
