//! Claude Code's hooks (`levh hook install claude-code`): at session start the client runs
//! `levh hook run session-start`, whose output (the project's pinned rules and essentials,
//! as `levh context` prints them) Claude Code adds to the session; before it compacts a
//! session it runs `levh hook run pre-compact`, which reads the session's transcript and
//! stores one summary memory of it — what was asked first, decided and promised — through
//! the gate. The entries are merged into the client's `settings.json` (its other settings and
//! hooks kept), shown before they are written, and removed by `levh hook uninstall
//! claude-code`. Both commands are fail-soft: a hook never breaks the client's session.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;
use serde_json::{Value, json};

use crate::context::Context;
use crate::output;

/// What marks a hook entry as levh's.
const MARK: &str = "hook run";

/// The hook entries levh adds, for the `levh` binary at `levh` and the home `home`.
fn entries(levh: &Path, home: &Path) -> [(&'static str, &'static str, String); 3] {
    let command = |what: &str| {
        format!(
            "{} --home {} hook run {what}",
            super::hook::quoted(&levh.display().to_string()),
            super::hook::quoted(&home.display().to_string())
        )
    };
    [
        (
            "SessionStart",
            "startup|resume|clear|compact",
            command("session-start"),
        ),
        ("PreCompact", "manual|auto", command("pre-compact")),
        ("SessionEnd", "", command("session-end")),
    ]
}

/// `settings.json` with levh's entries (again, in place of older ones), or without them.
pub fn merged(mut settings: Value, add: Option<(&Path, &Path)>) -> Result<Value> {
    let Value::Object(top) = &mut settings else {
        bail!("the settings file is not a JSON object; nothing was changed");
    };
    let hooks = top.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else {
        bail!("`hooks` in the settings file is not a JSON object; nothing was changed");
    };
    let ours = |entry: &Value| {
        entry["hooks"].as_array().is_some_and(|list| {
            list.iter().any(|h| {
                h["command"]
                    .as_str()
                    .is_some_and(|c| c.contains(MARK) && c.contains("levh"))
            })
        })
    };
    for event in ["SessionStart", "PreCompact", "SessionEnd"] {
        if let Some(Value::Array(list)) = hooks.get_mut(event) {
            list.retain(|entry| !ours(entry));
        }
    }
    if let Some((levh, home)) = add {
        for (event, matcher, command) in entries(levh, home) {
            let list = hooks.entry(event).or_insert_with(|| json!([]));
            let Value::Array(list) = list else {
                bail!("`hooks.{event}` in the settings file is not a list; nothing was changed");
            };
            list.push(json!({
                "matcher": matcher,
                "hooks": [{"type": "command", "command": command, "timeout": 30}],
            }));
        }
    }
    // Nothing left of levh's: no empty lists or `hooks` left behind.
    for event in ["SessionStart", "PreCompact", "SessionEnd"] {
        if hooks
            .get(event)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        top.remove("hooks");
    }
    Ok(settings)
}

/// The settings file: the project's (`DIR/.claude/settings.json`) or the user's.
pub fn settings_path(user: bool, dir: Option<PathBuf>) -> Result<PathBuf> {
    if user {
        let home = std::env::var_os("HOME").context("HOME is not set")?;
        return Ok(PathBuf::from(home).join(".claude/settings.json"));
    }
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    Ok(dir.join(".claude/settings.json"))
}

/// Installs (or, with `install` false, removes) levh's entries in `path`.
pub fn install(path: &Path, home: &Path, install: bool, dry_run: bool, json: bool) -> Result<()> {
    let before: Value = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => json!({}),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not valid JSON; nothing was changed (fix it or move it aside)",
                path.display()
            )
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(error) => return Err(error).context(format!("reading {}", path.display())),
    };
    let levh = std::env::current_exe().context("finding the levh binary")?;
    let after = merged(before.clone(), install.then_some((levh.as_path(), home)))?;
    let text = serde_json::to_string_pretty(&after)? + "\n";
    let changed = after != before;
    if !dry_run && changed {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // Written whole next to it, then moved over it: a crash leaves the old file.
        let temporary = path.with_extension("json.levh-tmp");
        std::fs::write(&temporary, &text)?;
        std::fs::rename(&temporary, path).with_context(|| format!("writing {}", path.display()))?;
    }
    if json {
        output::json(&json!({
            "settings": path.display().to_string(),
            "written": !dry_run && changed,
            "hooks": after.get("hooks").cloned().unwrap_or(Value::Null),
        }))?;
    } else {
        let hooks =
            serde_json::to_string_pretty(&after.get("hooks").cloned().unwrap_or(json!({})))?;
        let verb = match (dry_run, changed, install) {
            (true, _, _) => "would write",
            (false, false, _) => "already as wanted:",
            (false, true, true) => "installed in",
            (false, true, false) => "removed levh's hooks from",
        };
        output::line(format!(
            "{verb} {}\nits hooks now:\n{hooks}",
            path.display()
        ));
    }
    Ok(())
}

/// What a hook command gets on standard input (the fields levh reads).
#[derive(Debug, Default, serde::Deserialize)]
struct HookInput {
    session_id: Option<String>,
    transcript_path: Option<PathBuf>,
    cwd: Option<PathBuf>,
    trigger: Option<String>,
}

fn hook_input() -> HookInput {
    let mut text = String::new();
    let _ = std::io::stdin().take(1 << 20).read_to_string(&mut text);
    serde_json::from_str(&text).unwrap_or_default()
}

/// The project of the session: the git repository its directory is in.
fn project_of(cwd: Option<&Path>) -> Option<String> {
    let mut dir = cwd
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())?;
    loop {
        if dir.join(".git").exists() {
            return dir.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// `levh hook run session-start`: the session's context on standard output.
pub fn session_start(context: &Context) -> Result<()> {
    let input = hook_input();
    let project = project_of(input.cwd.as_deref());
    let view = context.run(Operation::GetContext, |levh, scope| {
        levh_api::recall::context(
            levh,
            scope,
            levh_api::requests::ContextArgs {
                project: project.clone(),
                max_tokens: None,
            },
        )
    })?;
    let block = super::context_file::block(&view);
    output::line(block);
    Ok(())
}

/// `levh hook run pre-compact`: the session's summary stored as a memory.
pub fn pre_compact(context: &Context) -> Result<()> {
    let input = hook_input();
    let Some(path) = input.transcript_path.as_deref() else {
        bail!("no transcript_path on standard input: nothing to summarise");
    };
    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the transcript {}", path.display()))?;
    let project = project_of(input.cwd.as_deref());
    let today = jiff::Zoned::now().date();
    let session = input.session_id.unwrap_or_default();
    let Some(text) = levh_api::summaries::transcript(
        std::io::BufReader::new(file),
        &session,
        project.as_deref(),
        today,
    ) else {
        return Ok(()); // nothing was said yet: nothing to keep
    };
    // The session's checkpoint, so that the next one (`levh continue`, MCP
    // `continue_task`) resumes from what was asked, resting on the summary.
    let goal = text
        .lines()
        .find_map(|l| l.strip_prefix("Asked: "))
        .map(str::to_owned);
    let checkpoint_project = project.clone();
    let outcome = context.run(Operation::StoreMemory, |levh, scope| {
        levh_api::memories::store(
            levh,
            scope,
            levh_api::requests::StoreArgs {
                content: text,
                project,
                kind: Some("summary".into()),
                importance: None,
                pin: None,
                valid_from: None,
                valid_to: None,
                session_id: None,
                metadata: Some(json!({
                    "claude_code": {"session_id": session, "trigger": input.trigger},
                })),
                prior: None,
            },
            "claude-code".into(),
        )
    })?;
    eprintln!("levh: session summary {:?}", outcome.verdict);
    if let Some(goal) = goal {
        // The summary holds what was decided and promised; the checkpoint points to it
        // rather than repeat it (a repetition would read to the gate as a near-duplicate).
        let args = levh_api::checkpoints::CheckpointArgs {
            task: Some("Claude Code session".into()),
            goal,
            memories: outcome.memory_id.clone().into_iter().collect(),
            project: checkpoint_project,
            ..Default::default()
        };
        let written = context.run(Operation::Checkpoint, |levh, scope| {
            levh_api::checkpoints::checkpoint(levh, scope, args)
        })?;
        eprintln!("levh: session checkpoint {}", written.status);
    }
    Ok(())
}
