//! The `levh` binary: parses the command line, sets up logging, wires the engine and runs
//! one subcommand. No business logic lives here.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod cli;
mod context;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_tracing();
    let json = cli.wants_json();
    match cli.run() {
        Ok(code) => code,
        Err(error) => {
            output::error(&error);
            if json {
                output::json_error(&error);
            }
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr only (MCP over stdio owns stdout). `LEVH_LOG` sets the filter, else
/// `RUST_LOG` (`levh_plugins=debug`, `levh_http=info`, ...), else warnings only.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEVH_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour codes only for a person's terminal, never in captured logs.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter)
        .init();
}
