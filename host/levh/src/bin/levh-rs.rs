//! `levh-rs`: the same program as `levh`, under the name of its package on PyPI.
//!
//! `uvx NAME` runs the executable named like the package, and the package is `levh-rs`
//! (the name `levh` belongs to the Python project), while every command, document and
//! test says `levh`. So the wheel carries a second, tiny executable that replaces itself
//! with the `levh` installed beside it. Why a binary and not the other ways:
//!
//! - a second copy of `levh` would double the wheel (wheels are zip files: no symlinks);
//! - a Python entry point would start an interpreter before every MCP session (clients
//!   spawn one process per session) and tie the wheel to a Python;
//! - `exec` keeps the process: the client's stdio, signals, exit status and process id
//!   are levh's own, as if it had spawned `levh` directly.
//!
//! It uses only the standard library, so it stays a few hundred kilobytes.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let levh = match sibling() {
        Ok(path) => path,
        Err(error) => {
            eprintln!("error: levh-rs: finding the levh beside it: {error}");
            return ExitCode::FAILURE;
        }
    };
    let arguments = std::env::args_os().skip(1);
    let mut command = std::process::Command::new(&levh);
    command.args(arguments);
    run(command, &levh)
}

/// The `levh` in the directory of this executable (symbolic links resolved, so a
/// `~/.local/bin/levh-rs` that links into a tool environment finds that environment's).
fn sibling() -> std::io::Result<PathBuf> {
    let this = std::env::current_exe()?;
    let this = this.canonicalize().unwrap_or(this);
    let name = if cfg!(windows) { "levh.exe" } else { "levh" };
    Ok(this.with_file_name(name))
}

#[cfg(unix)]
fn run(mut command: std::process::Command, levh: &std::path::Path) -> ExitCode {
    use std::os::unix::process::CommandExt;
    // `exec` only returns on failure.
    let error = command.exec();
    eprintln!("error: levh-rs: starting {}: {error}", levh.display());
    ExitCode::FAILURE
}

/// Without `exec`, the child runs and its exit status is passed on.
#[cfg(not(unix))]
fn run(mut command: std::process::Command, levh: &std::path::Path) -> ExitCode {
    match command.status() {
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(error) => {
            eprintln!("error: levh-rs: starting {}: {error}", levh.display());
            ExitCode::FAILURE
        }
    }
}
