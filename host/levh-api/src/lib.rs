//! levh-api: the application layer. Every feature of levh is an operation here — a
//! request type, a response type, one required [`Role`](levh_core::Role) — validated
//! once and run against the [`Levh`](levh_core::Levh) facade. Each surface is a thin
//! adapter: a REST route (levh-http), an MCP tool (levh-mcp), a CLI subcommand's
//! `--json`, a dashboard page. Nothing but the adapter differs between them.
//!
//! Why a crate and not a module of levh-core: the operations speak the wire (ids and
//! times as strings, JSON schemas for OpenAPI and MCP), which levh-core is kept free of;
//! and both levh-http and levh-mcp depend on it without depending on each other (as uv
//! keeps its shared types in their own crates).
//!
//! - [`Operation`]: the table of every operation and the role it needs. REST's router and
//!   MCP's tool list both read their roles from it, and tests check both against it.
//! - [`requests`] and [`views`]: what callers send and what they get back.
//! - the operation functions, by area: [`memories`], [`recall`], [`held`], [`secrets`],
//!   [`sessions`], [`workspace`], [`connectors`], [`server`], [`settings`],
//!   [`tokens`], [`knowledge`], [`entities`], [`timeline`].
//! - [`Error`]: what went wrong, in words that name the field or item at fault; each
//!   surface maps its kind to a status (REST) or an `isError` result (MCP).

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod agents;
pub mod ask;
pub mod attachments;
pub mod briefing;
pub mod checkpoints;
pub mod conflicts;
pub mod connectors;
pub mod consolidation;
pub mod entities;
mod error;
pub mod export;
pub mod goals;
pub mod held;
pub mod import;
pub mod knowledge;
pub mod memories;
pub mod mistakes;
mod operation;
pub mod recall;
pub mod reports;
pub mod requests;
pub mod review;
pub mod secrets;
pub mod server;
pub mod sessions;
pub mod settings;
pub mod share;
pub mod summaries;
pub mod timeline;
pub mod tokens;
pub mod trust;
pub mod views;
pub mod workspace;

pub use error::Error;
pub use operation::Operation;

/// The result of an operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
