//! Who has a store open: a lock that only the holder's own exit releases.
//!
//! SQLite's own locks are POSIX record locks, and POSIX drops *every* such lock a process
//! holds on a file the moment the process closes *any* descriptor of that file — a read
//! of `levh.db` by some other code in a server was enough to leave the server's store
//! unguarded, and a restore then replaced the file underneath it. So whole-store
//! operations (a restore) do not rely on SQLite's locks alone: every process that opens a
//! store holds a shared `flock` on `<db>-lock` for as long as it has the store open, and a
//! restore takes it exclusively. An `flock` belongs to its own open file description, so
//! no other open or close in the process can drop it; the kernel releases it when the
//! holder exits, `kill -9` included.
//!
//! To name who holds it, each open also writes `<db>-holders/<pid>-<n>` (the process id,
//! its command and when it opened the store) and holds an exclusive `flock` on that file;
//! a holder file nobody holds any more is left from a killed process and is removed when
//! read.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A process's open of a store, held until dropped.
#[derive(Debug)]
pub(crate) struct Lease {
    /// `None` where the lock file can be neither written nor read (a read-only copy of
    /// a home without one): there is nobody to guard against there.
    _shared: Option<File>,
    holder: Option<(File, PathBuf)>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some((_, path)) = self.holder.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The store's exclusive lock, held until dropped: no process has the store open, and
/// none can open it, meanwhile.
#[derive(Debug)]
pub struct ExclusiveLease {
    _lock: File,
}

/// Why a lease could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Other processes have the store open (or, for a shared lease, one holds it alone).
    #[error("{}", in_use_message(.0))]
    InUse(Vec<String>),
    /// The lock file could not be used.
    #[error("using the store's lock file {path}: {error}")]
    Io {
        /// The lock or holder file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
}

fn in_use_message(holders: &[String]) -> String {
    if holders.is_empty() {
        "another process has the store open (a `levh serve`, an MCP client, a sync); stop it first"
            .to_owned()
    } else {
        format!(
            "another process has the store open ({}); stop it first",
            holders.join("; ")
        )
    }
}

fn lock_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-lock");
    PathBuf::from(name)
}

fn holders_dir(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-holders");
    PathBuf::from(name)
}

fn open_lock(path: &Path) -> Result<File, LeaseError> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|error| LeaseError::Io {
            path: path.to_owned(),
            error,
        })
}

/// Tries `attempt` until it succeeds or `wait` has passed.
fn retry(
    wait: Duration,
    mut attempt: impl FnMut() -> Result<bool, LeaseError>,
) -> Result<bool, LeaseError> {
    let start = Instant::now();
    loop {
        if attempt()? {
            return Ok(true);
        }
        if start.elapsed() >= wait {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn try_lock(file: &File, shared: bool, path: &Path) -> Result<bool, LeaseError> {
    let result = if shared {
        file.try_lock_shared()
    } else {
        file.try_lock()
    };
    match result {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(error)) => Err(LeaseError::Io {
            path: path.to_owned(),
            error,
        }),
    }
}

/// Records that this process has the store at `database` open, waiting up to `wait` while
/// a restore holds it.
pub(crate) fn acquire(database: &Path, wait: Duration) -> Result<Lease, LeaseError> {
    let path = lock_path(database);
    let shared = match open_lock(&path) {
        Ok(file) => file,
        // A read-only home: the lock file is read if it is there (a shared lock needs
        // no write access), else the store opens without one.
        Err(LeaseError::Io { error, .. })
            if matches!(
                error.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            match File::open(&path) {
                Ok(file) => file,
                Err(_) => {
                    tracing::debug!(path = %path.display(), "read-only home: no lease");
                    return Ok(Lease {
                        _shared: None,
                        holder: None,
                    });
                }
            }
        }
        Err(other) => return Err(other),
    };
    if !retry(wait, || try_lock(&shared, true, &path))? {
        return Err(LeaseError::InUse(holders(database)));
    }
    // Naming the holder is a courtesy to whoever is refused: a folder that cannot be
    // written (a read-only home) does not stop the store from opening.
    let holder = write_holder(database).ok();
    Ok(Lease {
        _shared: Some(shared),
        holder,
    })
}

/// Takes the store at `database` for this process alone, waiting up to `wait` for other
/// processes to close it; when they do not, names them.
pub fn acquire_exclusive(database: &Path, wait: Duration) -> Result<ExclusiveLease, LeaseError> {
    let path = lock_path(database);
    let lock = open_lock(&path)?;
    if !retry(wait, || try_lock(&lock, false, &path))? {
        return Err(LeaseError::InUse(holders(database)));
    }
    Ok(ExclusiveLease { _lock: lock })
}

static OPENS: AtomicU64 = AtomicU64::new(0);

fn write_holder(database: &Path) -> std::io::Result<(File, PathBuf)> {
    let dir = holders_dir(database);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!(
        "{}-{}",
        std::process::id(),
        OPENS.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)?;
    file.lock()?;
    // The wall clock on purpose: this names a live process to a person, it is not data.
    writeln!(
        file,
        "pid {} ({}), open since {}",
        std::process::id(),
        command(),
        levh_core::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ")
    )?;
    Ok((file, path))
}

/// The program and its subcommand (`levh serve`, `levh mcp`), never its other arguments:
/// they may be the very text a user is capturing.
fn command() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "levh".to_owned());
    let subcommand = args.find(|a| {
        !a.is_empty()
            && a.len() <= 20
            && a.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            && !a.starts_with('-')
    });
    match subcommand {
        Some(word) => format!("{program} {word}"),
        None => program,
    }
}

/// What the live holders of the store wrote about themselves; a holder file whose owner
/// has exited (its lock is free) is removed.
pub(crate) fn holders(database: &Path) -> Vec<String> {
    let dir = holders_dir(database);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file) = File::open(&path) else {
            continue;
        };
        match file.try_lock_shared() {
            Ok(()) => {
                // Nobody holds it: left by a process that was killed.
                let _ = std::fs::remove_file(&path);
            }
            Err(TryLockError::WouldBlock) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let line = text.lines().next().unwrap_or("").trim();
                if !line.is_empty() {
                    found.push(line.to_owned());
                }
            }
            Err(TryLockError::Error(_)) => {}
        }
    }
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_lease_is_refused_while_a_shared_one_lives_and_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("levh.db");
        let shared = acquire(&database, Duration::ZERO).unwrap();
        let LeaseError::InUse(holders) =
            acquire_exclusive(&database, Duration::from_millis(50)).unwrap_err()
        else {
            panic!("not refused as in use");
        };
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert!(
            holders[0].starts_with(&format!("pid {} (", std::process::id())),
            "{holders:?}"
        );
        drop(shared);
        let exclusive = acquire_exclusive(&database, Duration::ZERO).unwrap();
        // While it lives, nobody opens the store.
        assert!(matches!(
            acquire(&database, Duration::from_millis(50)),
            Err(LeaseError::InUse(_))
        ));
        drop(exclusive);
        acquire(&database, Duration::ZERO).unwrap();
    }

    /// The reason the lease exists: opening and closing the database file elsewhere in the
    /// process (which drops SQLite's POSIX locks) leaves the lease in force.
    #[test]
    fn reading_the_database_file_elsewhere_in_the_process_does_not_release_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("levh.db");
        std::fs::write(&database, b"x").unwrap();
        let _shared = acquire(&database, Duration::ZERO).unwrap();
        let _ = std::fs::read(&database).unwrap();
        let _ = std::fs::read(lock_path(&database)).unwrap();
        assert!(acquire_exclusive(&database, Duration::from_millis(50)).is_err());
    }

    #[test]
    fn a_holder_file_left_by_a_killed_process_is_not_named_and_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("levh.db");
        let left = holders_dir(&database);
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(
            left.join("999999-0"),
            "pid 999999 (levh serve), open since then\n",
        )
        .unwrap();
        assert!(holders(&database).is_empty());
        assert!(!left.join("999999-0").exists());
    }
}
