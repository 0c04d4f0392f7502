//! levh's integration tests: the engine on a real SQLite file in WAL mode, and the real
//! `levh` binary driven as a person or a script would.

mod api_server;
mod assistant;
mod backup;
mod batch;
mod browser;
mod calendar;
mod cli;
mod concurrency;
mod connectors;
mod dashboard;
mod email;
mod embed;
mod entities;
mod export;
mod gate;
mod github;
mod hardening;
mod http;
mod inspector;
mod knowledge;
mod limits;
mod mcp;
mod memory_model;
mod notion;
mod parity;
mod plugins;
mod python_connector;
mod quality;
mod recall;
mod review;
mod scorers;
mod snapshots;
mod store;
mod support;
mod sync;
