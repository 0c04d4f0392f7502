//! `levh hook install|uninstall git`: a `post-commit` hook that captures each commit
//! message, with the repository's name as the project. An existing `post-commit` hook is
//! kept and still runs first (moved aside to `post-commit.pre-levh`, put back on uninstall).
//! `levh hook install|uninstall claude-code`: Claude Code's session hooks
//! ([`super::claude_code`]); `levh hook run …` is what those hooks call.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};

use crate::output;

/// The line that marks a hook as levh's.
const MARK: &str = "# levh post-commit hook: `levh hook uninstall git` removes it";
/// Where an existing hook is kept.
const CHAINED: &str = "post-commit.pre-levh";

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Install a hook.
    Install {
        #[command(subcommand)]
        what: Target,
    },
    /// Remove a hook levh installed (an existing one it chained is put back).
    Uninstall {
        #[command(subcommand)]
        what: Target,
    },
    /// What an installed client hook runs (reads the client's hook input on stdin).
    Run {
        #[arg(value_enum)]
        what: HookRun,
    },
}

/// The client hooks' commands.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum HookRun {
    /// Print the session's context (pinned rules, the project's essentials).
    SessionStart,
    /// Store one summary memory of the session's transcript, and checkpoint it.
    PreCompact,
    /// At the session's end: the same summary and checkpoint.
    SessionEnd,
}

impl Command {
    /// Whether it reads or writes the store (the others only write a file).
    pub fn needs_store(&self) -> bool {
        matches!(self, Command::Run { .. })
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum Target {
    /// The git repository's `post-commit` hook: each commit message becomes a memory.
    Git {
        /// The repository (default: the one the current directory is in).
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
    },
    /// Claude Code's SessionStart (context injected) and PreCompact (the session
    /// summarised into a memory) hooks, merged into its settings.json.
    ClaudeCode {
        /// The user's settings (~/.claude/settings.json) instead of the project's.
        #[arg(long, conflicts_with = "dir")]
        user: bool,
        /// The project whose .claude/settings.json to change (default: the current
        /// directory).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Show what would be written; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The hooks directory git uses for the repository at (or above) `dir`.
fn hooks_dir(dir: &Path) -> Result<PathBuf> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--git-path", "hooks"])
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "{} is not in a git repository ({})",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Ok(if path.is_absolute() {
        path
    } else {
        dir.join(path)
    })
}

/// A shell word for `text`.
pub(super) fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn script(levh: &Path, home: &Path) -> String {
    format!(
        r#"#!/bin/sh
{MARK}
hooks="$(dirname "$0")"
status=0
if [ -x "$hooks/{CHAINED}" ]; then
  "$hooks/{CHAINED}" "$@" || status=$?
fi
message="$(git log -1 --pretty=%B)"
repository="$(basename "$(git rev-parse --show-toplevel)")"
# A commit never fails because of levh: what it could not store, it says on stderr.
{levh} --home {home} capture --project "$repository" --source git --kind commit -- "$message" >/dev/null || true
exit $status
"#,
        levh = quoted(&levh.display().to_string()),
        home = quoted(&home.display().to_string()),
    )
}

/// `levh hook run …`, with the store open.
pub fn run_hook(context: &crate::context::Context, what: HookRun) -> Result<ExitCode> {
    // A hook never breaks the client's session: what fails is said on stderr, exit 0.
    let done = match what {
        HookRun::SessionStart => super::claude_code::session_start(context),
        HookRun::PreCompact | HookRun::SessionEnd => super::claude_code::pre_compact(context),
    };
    if let Err(error) = done {
        eprintln!("levh hook: {error:#}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(home: &Path, command: Command, json: bool) -> Result<ExitCode> {
    let (install, what) = match command {
        Command::Install { what } => (true, what),
        Command::Uninstall { what } => (false, what),
        Command::Run { .. } => unreachable!("run with the store open (run_hook)"),
    };
    let repo = match what {
        Target::Git { repo } => repo,
        Target::ClaudeCode { user, dir, dry_run } => {
            let path = super::claude_code::settings_path(user, dir)?;
            super::claude_code::install(&path, home, install, dry_run, json)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let dir = match repo {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let hooks = hooks_dir(&dir)?;
    let hook = hooks.join("post-commit");
    let chained = hooks.join(CHAINED);
    let ours = |path: &Path| std::fs::read_to_string(path).is_ok_and(|t| t.contains(MARK));
    let said = if install {
        std::fs::create_dir_all(&hooks)?;
        if hook.exists() && !ours(&hook) {
            if chained.exists() {
                bail!(
                    "{} exists: a hook levh moved aside before is still there; nothing was changed",
                    chained.display()
                );
            }
            std::fs::rename(&hook, &chained)
                .with_context(|| format!("moving {} aside", hook.display()))?;
        }
        let levh = std::env::current_exe().context("finding the levh binary")?;
        std::fs::write(&hook, script(&levh, home))
            .with_context(|| format!("writing {}", hook.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;
        }
        format!(
            "installed {} (each commit message becomes a memory{})",
            hook.display(),
            if chained.exists() {
                format!("; the existing hook runs first, kept as {CHAINED}")
            } else {
                String::new()
            }
        )
    } else {
        if !ours(&hook) {
            return Err(anyhow!(
                "{} is not levh's hook; nothing was changed",
                hook.display()
            ));
        }
        std::fs::remove_file(&hook)?;
        if chained.exists() {
            std::fs::rename(&chained, &hook)?;
            format!("removed levh's hook; {} is back", hook.display())
        } else {
            format!("removed {}", hook.display())
        }
    };
    if json {
        output::json(&serde_json::json!({ "hook": hook.display().to_string(), "message": said }))?;
    } else {
        output::line(said);
    }
    Ok(ExitCode::SUCCESS)
}

/// The name of the git repository the current directory is in, if any: `levh capture`'s
/// project when none is given.
pub fn repository_name() -> Option<String> {
    let mut dir = std::env::current_dir().ok()?;
    loop {
        if dir.join(".git").exists() {
            return dir.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        if !dir.pop() {
            return None;
        }
    }
}
