//! `levh session start|end|summarize|list` and `levh summarize SESSION`: an agent's working
//! session from the command line (what MCP's `create_session`, `end_session` and
//! `summarize_session` do); `levh capture --session ID` stores into it.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;
use levh_api::views::SessionSummaryView;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Open a session; its id goes to `levh capture --session ID`.
    Start {
        /// Its project.
        #[arg(long, short)]
        project: Option<String>,
    },
    /// End a session (with LEVH_AUTO_SUMMARIZE=1, summarise it into a memory too).
    End {
        /// The session's id.
        id: String,
    },
    /// Summarise a session into one memory: what it stored, decided and promised.
    Summarize {
        /// The session's id.
        id: String,
    },
    /// Sessions newest first, each with the memories it stored.
    List {
        /// At most this many (1..500).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Only sessions started before this instant (RFC 3339): the next page.
        #[arg(long)]
        before: Option<String>,
    },
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    match command {
        Command::Start { project } => {
            let view = context.run(Operation::CreateSession, |levh, scope| {
                levh_api::sessions::create(levh, scope, project)
            })?;
            if json {
                output::json(&view)?;
            } else {
                output::line(&view.session_id);
            }
        }
        Command::End { id } => {
            let view = context.run(Operation::EndSession, |levh, scope| {
                levh_api::sessions::end(levh, scope, id)
            })?;
            if json {
                output::json(&view)?;
            } else {
                output::line(format!(
                    "ended {} at {}",
                    view.session_id,
                    view.ended_at.as_deref().unwrap_or("-")
                ));
                if let Some(summary) = &view.summary {
                    said(summary);
                }
            }
        }
        Command::Summarize { id } => return summarize(context, id, json),
        Command::List { limit, before } => {
            let list = context.run(Operation::ListSessions, |levh, scope| {
                levh_api::sessions::list(
                    levh,
                    scope,
                    levh_api::requests::SessionListArgs {
                        limit: Some(limit),
                        before,
                    },
                )
            })?;
            if json {
                output::json(&list)?;
            } else if list.sessions.is_empty() {
                output::line("no session yet");
            } else {
                let mut table = output::table(&[
                    "session", "started", "ended", "project", "client", "memories",
                ]);
                for listed in &list.sessions {
                    let s = &listed.session;
                    table.add_row(vec![
                        s.session_id.clone(),
                        s.started_at.clone(),
                        s.ended_at.clone().unwrap_or_else(|| "open".into()),
                        s.project.clone().unwrap_or_default(),
                        s.client.clone().unwrap_or_default(),
                        listed.memories.to_string(),
                    ]);
                }
                output::print_table(&table);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh summarize SESSION`.
pub fn summarize(context: &Context, id: String, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::SummarizeSession, |levh, scope| {
        levh_api::sessions::summarize(levh, scope, id)
    })?;
    if json {
        output::json(&view)?;
    } else {
        said(&view);
    }
    Ok(ExitCode::SUCCESS)
}

fn said(view: &SessionSummaryView) {
    match (&view.text, &view.stored) {
        (Some(text), Some(stored)) => output::line(format!(
            "{text}\n({:?}{})",
            stored.verdict,
            stored
                .memory_id
                .as_deref()
                .map(|id| format!(": {id}"))
                .unwrap_or_default()
        )),
        _ => output::line(format!(
            "session {} stored nothing: no summary",
            view.session_id
        )),
    }
}
