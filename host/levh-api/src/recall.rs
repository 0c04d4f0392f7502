//! Finding memories: recall (reinforces what it returns), search (reinforces nothing) and
//! the session-start context.

use levh_core::{Levh, Memory, MemoryFilter, Page, Scope, text};

use crate::requests::{ContextArgs, RecallArgs};
use crate::views::HitShape;
use crate::views::{ContextView, MemoryView, RecallView};
use crate::{Error, Result};

/// Token budget of the context when none is given.
pub const DEFAULT_CONTEXT_TOKENS: usize = 1500;

/// [`Operation::RecallMemory`](crate::Operation::RecallMemory) (`reinforce`) and
/// [`Operation::SearchMemory`](crate::Operation::SearchMemory).
pub fn recall(levh: &Levh, scope: &Scope, args: RecallArgs, reinforce: bool) -> Result<RecallView> {
    let shape = HitShape {
        compact: args.compact.unwrap_or(false),
        explain: args.explain.unwrap_or(false),
    };
    let request = args.into_request(reinforce)?;
    let output = levh.recall(scope, &request)?;
    let operation = if reinforce { "recall" } else { "search" };
    levh.log_recall(
        scope,
        operation,
        &request.query,
        request.project.as_deref(),
        &output,
    );
    Ok(RecallView::new(&output, levh, shape))
}

/// [`Operation::GetContext`](crate::Operation::GetContext): pinned rules (of the project
/// and of no project), then the project's essentials (importance × retention), packed
/// into the token budget.
pub fn context(levh: &Levh, scope: &Scope, args: ContextArgs) -> Result<ContextView> {
    let max_tokens = args.max_tokens.unwrap_or(DEFAULT_CONTEXT_TOKENS);
    if max_tokens == 0 {
        return Err(Error::invalid("invalid max_tokens: must be at least 1"));
    }
    let project = args.project;
    let now = levh.now();
    let all = Page {
        limit: 1000,
        offset: 0,
    };
    let pinned: Vec<Memory> = levh
        .list(
            scope,
            MemoryFilter {
                pinned: Some(true),
                ..MemoryFilter::default()
            }
            .read_at(None, now),
            all,
        )?
        .into_iter()
        .filter(|m| m.project.is_none() || m.project == project)
        .collect();
    let mut essentials = levh.list(
        scope,
        MemoryFilter {
            project: project.clone(),
            pinned: Some(false),
            ..MemoryFilter::default()
        }
        .read_at(None, now),
        all,
    )?;
    let weight = |m: &Memory| m.state.importance * levh_core::model::retention(&m.state, now);
    essentials.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
    let (mut tokens, mut omitted) = (0, 0);
    let mut keep = |m: &Memory| {
        let cost = text::estimate_tokens(&m.content);
        if tokens + cost <= max_tokens {
            tokens += cost;
            true
        } else {
            omitted += 1;
            false
        }
    };
    let pinned: Vec<MemoryView> = pinned
        .iter()
        .filter(|m| keep(m))
        .map(|m| MemoryView::of(levh, m))
        .collect();
    let essentials: Vec<MemoryView> = essentials
        .iter()
        .filter(|m| keep(m))
        .map(|m| MemoryView::of(levh, m))
        .collect();
    let text = context_text(project.as_deref(), &pinned, &essentials);
    Ok(ContextView {
        project,
        pinned,
        essentials,
        tokens,
        omitted,
        text,
    })
}

/// The context as Markdown, ready for an agent to read.
fn context_text(project: Option<&str>, pinned: &[MemoryView], essentials: &[MemoryView]) -> String {
    let mut text = String::from("# levh context\n");
    if let Some(project) = project {
        text.push_str(&format!("\nProject: {project}\n"));
    }
    for (title, memories) in [("Pinned rules", pinned), ("Essentials", essentials)] {
        text.push_str(&format!("\n## {title}\n"));
        if memories.is_empty() {
            text.push_str("(none)\n");
        }
        for m in memories {
            text.push_str(&format!("- {} [{}]\n", m.content, m.id));
        }
    }
    text
}
