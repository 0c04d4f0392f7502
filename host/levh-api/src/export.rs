//! Exports in the formats people and tools read — `jsonl` (one memory a line, what `levh
//! import` reads back exactly), `json` (`{"memories": [...]}`) and `markdown` (by project,
//! one section a memory) — written a page at a time, with forgotten memories too when asked
//! (each marked with when it was forgotten, and imported back as forgotten). The CLI and
//! `GET /api/export?format=` both write through here. (The CLI's `sqlite` format writes a
//! database file of its own.)

use std::io::Write;

use levh_core::{Levh, MemoryFilter, Page, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::views::MemoryView;
use crate::{Error, Result};

/// Memories read per page.
const PAGE: usize = 1_000;

/// A text format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// One JSON memory a line.
    Jsonl,
    /// `{"memories": [...]}`.
    #[default]
    Json,
    /// For people: by project, one section a memory.
    Markdown,
}

impl ExportFormat {
    /// The media type of its text.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Jsonl => "application/x-ndjson",
            Self::Json => "application/json",
            Self::Markdown => "text/markdown; charset=utf-8",
        }
    }
}

/// What to export.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// `json` (default), `jsonl` or `markdown`.
    pub format: Option<ExportFormat>,
    /// Only this project.
    pub project: Option<String>,
    /// Forgotten memories too, each with its `forgotten_at` (imported back as forgotten).
    pub include_forgotten: Option<bool>,
}

/// One exported memory: the memory, and when it was forgotten if it was.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExportedMemory {
    /// The memory.
    #[serde(flatten)]
    pub memory: MemoryView,
    /// When it was forgotten (RFC 3339); absent for a live memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgotten_at: Option<String>,
}

/// [`Operation::ExportMemories`](crate::Operation::ExportMemories), streamed: every live
/// memory (of `project`), newest first — then, with `include_forgotten`, every forgotten
/// one — handed to `each` a page at a time, each page read by keyset (as cheap as the
/// first at any size). Returns how many were exported.
pub fn pages(
    levh: &Levh,
    scope: &Scope,
    project: Option<String>,
    include_forgotten: bool,
    each: impl FnMut(Vec<ExportedMemory>) -> Result<()>,
) -> Result<usize> {
    let filter = MemoryFilter {
        project,
        ..MemoryFilter::default()
    };
    pages_matching(levh, scope, &filter, include_forgotten, each)
}

/// [`pages`] of the memories `filter` matches (its project, kind, source, pin; the
/// workspace is the scope's): what `levh share` bundles.
pub fn pages_matching(
    levh: &Levh,
    scope: &Scope,
    filter: &MemoryFilter,
    include_forgotten: bool,
    mut each: impl FnMut(Vec<ExportedMemory>) -> Result<()>,
) -> Result<usize> {
    let mut exported = 0;
    let passes: &[bool] = if include_forgotten {
        &[false, true]
    } else {
        &[false]
    };
    for &forgotten in passes {
        let filter = MemoryFilter {
            forgotten,
            listed_after: None,
            ..filter.clone()
        };
        let mut after = None;
        loop {
            let page = levh.list(
                scope,
                MemoryFilter {
                    listed_after: after,
                    ..filter.clone()
                },
                Page {
                    limit: PAGE,
                    offset: 0,
                },
            )?;
            let done = page.len() < PAGE;
            after = page.last().map(|last| last.id);
            exported += page.len();
            let mut out = Vec::with_capacity(page.len());
            for memory in &page {
                let forgotten_at = if forgotten {
                    levh.get_forgotten(scope, memory.id)?
                        .map(|(_, at)| at.to_string())
                } else {
                    None
                };
                out.push(ExportedMemory {
                    memory: MemoryView::of(levh, memory),
                    forgotten_at,
                });
            }
            each(out)?;
            if done {
                break;
            }
        }
    }
    Ok(exported)
}

/// Writes the export in `format` to `out`, calling `progress` with each page's size.
pub fn write(
    levh: &Levh,
    scope: &Scope,
    args: &ExportArgs,
    out: &mut dyn Write,
    mut progress: impl FnMut(usize),
) -> Result<usize> {
    let format = args.format.unwrap_or_default();
    let failed =
        |error: std::io::Error| Error::internal(format!("cannot write the export: {error}"));
    match format {
        ExportFormat::Json => out.write_all(b"{\"memories\": [").map_err(failed)?,
        ExportFormat::Markdown => writeln!(out, "# levh export\n").map_err(failed)?,
        ExportFormat::Jsonl => {}
    }
    let mut first = true;
    let mut project: Option<Option<String>> = None;
    let exported = pages(
        levh,
        scope,
        args.project.clone(),
        args.include_forgotten.unwrap_or(false),
        |page| {
            for exported in &page {
                write_one(&mut *out, format, exported, first, &mut project).map_err(failed)?;
                first = false;
            }
            progress(page.len());
            Ok(())
        },
    )?;
    if format == ExportFormat::Json {
        out.write_all(b"\n]}\n").map_err(failed)?;
    }
    Ok(exported)
}

/// One memory in `format` (`first`: the first of a JSON document).
fn write_one(
    out: &mut dyn Write,
    format: ExportFormat,
    exported: &ExportedMemory,
    first: bool,
    project: &mut Option<Option<String>>,
) -> std::io::Result<()> {
    match format {
        ExportFormat::Jsonl => {
            serde_json::to_writer(&mut *out, exported)?;
            out.write_all(b"\n")
        }
        ExportFormat::Json => {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            Ok(serde_json::to_writer(&mut *out, exported)?)
        }
        ExportFormat::Markdown => markdown(out, exported, project),
    }
}

/// One memory as a Markdown section, under its project's heading (a new heading when the
/// project changes; the export comes newest first, so a project may come back).
fn markdown(
    out: &mut dyn Write,
    exported: &ExportedMemory,
    project: &mut Option<Option<String>>,
) -> std::io::Result<()> {
    let memory = &exported.memory;
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
    if let Some(at) = &exported.forgotten_at {
        facts.push(format!("forgotten {at}"));
    }
    writeln!(out, "*{}*\n", facts.join(" · "))
}
