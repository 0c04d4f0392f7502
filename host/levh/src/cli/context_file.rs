//! `levh context`: the pinned rules and a project's essentials (levh-api's `get_context`,
//! the one MCP and REST serve) as the file a coding agent reads at start — CLAUDE.md,
//! `.cursor/rules/levh.mdc`, AGENTS.md or `.github/copilot-instructions.md` — within a token
//! budget. levh writes only its own block, between two marker lines; the rest of an
//! existing file is kept byte for byte, so a person's own instructions stay theirs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use levh_api::Operation;
use levh_api::requests::ContextArgs;
use levh_api::views::ContextView;

use crate::context::Context;
use crate::output;

/// The lines around levh's block.
const BEGIN: &str = "<!-- levh:begin — written by `levh context`; edit outside this block -->";
const END: &str = "<!-- levh:end -->";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain Markdown (printed).
    Markdown,
    /// Claude Code's CLAUDE.md.
    Claude,
    /// Cursor's `.cursor/rules/levh.mdc` (a rule always applied).
    Cursor,
    /// AGENTS.md (Codex and others).
    Agents,
    /// GitHub Copilot's `.github/copilot-instructions.md`.
    Copilot,
}

impl Format {
    /// Where the client reads it, relative to the repository.
    fn default_path(self) -> Option<&'static str> {
        match self {
            Self::Markdown => None,
            Self::Claude => Some("CLAUDE.md"),
            Self::Cursor => Some(".cursor/rules/levh.mdc"),
            Self::Agents => Some("AGENTS.md"),
            Self::Copilot => Some(".github/copilot-instructions.md"),
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project whose essentials to include (pinned rules of no project always are).
    #[arg(long, short)]
    project: Option<String>,
    /// The file's format.
    #[arg(long, value_enum, default_value = "markdown")]
    format: Format,
    /// Tokens at most.
    #[arg(long, default_value_t = levh_api::recall::DEFAULT_CONTEXT_TOKENS)]
    max_tokens: usize,
    /// Write into this file (only levh's block of it) instead of printing.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write into the format's usual file in the current directory (CLAUDE.md, ...).
    #[arg(long, conflicts_with = "output")]
    write: bool,
}

/// The block levh owns, for `view`.
pub(super) fn block(view: &ContextView) -> String {
    let mut out = format!("{BEGIN}\n## What levh remembers");
    if let Some(project) = &view.project {
        out.push_str(&format!(" for {project}"));
    }
    out.push('\n');
    for (title, memories) in [
        ("Rules (pinned)", &view.pinned),
        ("Essentials", &view.essentials),
    ] {
        out.push_str(&format!("\n### {title}\n"));
        if memories.is_empty() {
            out.push_str("(none)\n");
        }
        for m in memories {
            // One line each: a memory's own line breaks would end the list item.
            let line = m.content.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push_str(&format!("- {line}\n"));
        }
    }
    if view.omitted > 0 {
        out.push_str(&format!(
            "\n({} more left out by the {}-token budget: `levh context --max-tokens`)\n",
            view.omitted, view.tokens
        ));
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// `existing` with levh's block replaced (or, without one, added at the end); the rest kept
/// byte for byte.
pub fn merged(existing: &str, block: &str) -> Result<String> {
    match (existing.find(BEGIN), existing.find(END)) {
        (Some(begin), Some(end)) if end > begin => {
            let mut after = end + END.len();
            if existing[after..].starts_with('\n') {
                after += 1;
            }
            Ok(format!(
                "{}{block}{}",
                &existing[..begin],
                &existing[after..]
            ))
        }
        (None, None) => {
            let mut out = existing.to_owned();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(block);
            Ok(out)
        }
        _ => bail!(
            "the file has one of levh's marker lines but not the other: restore or remove it, \
             nothing was written"
        ),
    }
}

fn render(format: Format, view: &ContextView) -> String {
    let body = block(view);
    match format {
        Format::Cursor => format!(
            "---\ndescription: What levh remembers: pinned rules and the project's essentials\nglobs:\nalwaysApply: true\n---\n\n{body}"
        ),
        _ => body,
    }
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::GetContext, |levh, scope| {
        levh_api::recall::context(
            levh,
            scope,
            ContextArgs {
                project: args.project.clone(),
                max_tokens: Some(args.max_tokens),
            },
        )
    })?;
    let target: Option<PathBuf> =
        match (&args.output, args.write) {
            (Some(path), _) => Some(path.clone()),
            (None, true) => Some(args.format.default_path().map(PathBuf::from).ok_or_else(
                || {
                    anyhow::anyhow!(
                        "--write needs a --format with a file (claude, cursor, agents, copilot)"
                    )
                },
            )?),
            (None, false) => None,
        };
    let Some(path) = target else {
        if json {
            output::json(&view)?;
        } else {
            print!("{}", render(args.format, &view));
        }
        return Ok(ExitCode::SUCCESS);
    };
    let written = write(&path, args.format, &view)?;
    if json {
        output::json(&serde_json::json!({
            "file": path.display().to_string(),
            "changed": written,
            "pinned": view.pinned.len(),
            "essentials": view.essentials.len(),
            "tokens": view.tokens,
            "omitted": view.omitted,
        }))?;
    } else {
        output::line(format!(
            "{} {} ({} rules, {} essentials, ~{} tokens)",
            if written { "wrote" } else { "unchanged:" },
            path.display(),
            view.pinned.len(),
            view.essentials.len(),
            view.tokens
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes levh's block into `path` (a Cursor rule file is levh's whole); false when the
/// file already says exactly that.
fn write(path: &Path, format: Format, view: &ContextView) -> Result<bool> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let new = match (format, &existing) {
        (Format::Cursor, _) | (_, None) => render(format, view),
        (_, Some(text)) => merged(text, &block(view))?,
    };
    if existing.as_deref() == Some(new.as_str()) {
        return Ok(false);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Written beside and renamed over: a crash never leaves half a CLAUDE.md.
    let temporary = path.with_extension("levh-tmp");
    std::fs::write(&temporary, &new).with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_levhs_block_changes_and_the_rest_is_kept_byte_for_byte() {
        let mine = "# My project\r\n\r\nUse tabs.  \n\tKeep this.\n";
        let first = merged(mine, &format!("{BEGIN}\nA\n{END}\n")).unwrap();
        assert!(first.starts_with(mine));
        let second = merged(&format!("{first}After.\n"), &format!("{BEGIN}\nB\n{END}\n")).unwrap();
        assert_eq!(second, format!("{mine}\n{BEGIN}\nB\n{END}\nAfter.\n"));
        assert!(merged(&format!("{BEGIN}\nno end"), "x").is_err());
    }
}
