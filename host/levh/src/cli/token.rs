//! `levh token create|list|revoke`: API tokens for `levh serve`, each bound to one
//! workspace and one role. The secret is printed once; only its hash is stored.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use levh_core::Role;

use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Issue a token for the workspace given by --workspace / LEVH_WORKSPACE. The secret
    /// is shown once: store it where the client reads it.
    Create {
        /// viewer (reads), editor (reads and writes) or admin (also purges and decides
        /// held candidates).
        #[arg(long)]
        role: Role,
        /// What the token is for.
        #[arg(long)]
        label: Option<String>,
    },
    /// List tokens (never their secrets).
    List,
    /// Revoke a token by id: it stops working at once.
    Revoke {
        /// The token's id (`tok_…`).
        id: String,
    },
}

pub fn run(context: &Context, command: Command, json: bool) -> Result<ExitCode> {
    let now = context.now();
    match command {
        Command::Create { role, label } => {
            // Through the operation every surface uses: the label is checked and its
            // secrets redacted as over REST.
            let principal = levh_core::Principal {
                workspace: context.scope.workspace.clone(),
                role: levh_core::Role::Admin,
                name: Some("local".into()),
            };
            let issued = levh_api::tokens::create(
                context.server_store(),
                &principal,
                levh_api::requests::TokenBody {
                    role: role.to_string(),
                    label,
                },
                now,
            )?;
            if json {
                output::json(&issued)?;
            } else {
                output::line(format!(
                    "token {} for workspace {} as {}:",
                    issued.token.id, issued.token.workspace, role
                ));
                output::line(&issued.secret);
                output::line(
                    "This secret is shown once. Send it as X-LEVH-Token or Authorization: Bearer.",
                );
            }
        }
        Command::List => {
            let list = levh_api::tokens::list_all(context.server_store())?;
            if json {
                output::json(&list)?;
            } else {
                print_tokens(&list);
            }
        }
        Command::Revoke { id } => {
            let left = levh_api::tokens::revoke_any(context.server_store(), &id, now)?;
            if json {
                output::json(&left)?;
            } else {
                output::line(format!("token {} revoked", id.trim()));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_tokens(list: &levh_api::views::TokenList) {
    let mut table = output::table(&["id", "workspace", "role", "label", "created", "revoked"]);
    for token in &list.tokens {
        table.add_row(vec![
            token.id.clone(),
            token.workspace.clone(),
            token.role.name().to_owned(),
            token.label.clone().unwrap_or_default(),
            token.created_at.clone(),
            token.revoked_at.clone().unwrap_or_default(),
        ]);
    }
    output::print_table(&table);
}
