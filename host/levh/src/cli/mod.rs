//! The command tree. One file per subcommand; each parses its own arguments and calls the
//! engine through [`Context`].

mod assistant;
mod attach;
mod backup;
mod benchmark;
mod capture;
mod checkpoint;
mod claude_code;
mod connector;
mod consolidate;
mod context_file;
mod curve;
mod doctor;
mod entities;
mod eval;
mod export;
mod fading;
mod feedback;
mod forget;
mod goals;
mod held;
mod hook;
mod import;
mod keyed;
mod knowledge;
mod list;
mod mcp;
mod migrate;
mod mistakes;
mod models;
mod move_memories;
mod peer;
mod pin;
mod pull;
mod purge;
mod recall;
mod reembed;
mod reinforce;
mod report;
mod review;
pub mod scorer;
mod secrets;
mod seed_demo;
mod serve;
mod session;
mod setup;
mod share;
mod show;
mod stats;
mod sync;
mod template;
mod token;
mod tune;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use levh_core::MemoryId;

use crate::context::Context;

/// levh: a local memory for AI agents that curates itself.
///
/// Memories decay unless recall, importance or confirmation reinforces them; pinned ones
/// never fade. Set LEVH_NOW=<RFC 3339> to fix the clock (simulations, tests).
#[derive(Debug, Parser)]
#[command(name = "levh", version, propagate_version = true)]
pub struct Cli {
    /// Where levh keeps its data [default: the platform data dir, e.g. ~/.local/share/levh]
    #[arg(long, global = true, env = "LEVH_HOME", value_name = "DIR")]
    home: Option<PathBuf>,

    /// The workspace to read and write.
    #[arg(long, global = true, env = "LEVH_WORKSPACE", default_value = "default")]
    workspace: String,

    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Store a memory through the admission gate (admit, redact, hold for review, or reject).
    #[command(visible_alias = "admit")]
    Capture(capture::Args),
    /// Store many memories from a file (an export, a JSON array or JSON Lines) through the
    /// gate, a batch per transaction; each item gets its own verdict.
    Import(import::Args),
    /// Write every live memory (of a project) out: jsonl (what `levh import` reads back),
    /// json, markdown or sqlite.
    Export(export::Args),
    /// Write a bundle of memories (a project, or a filter) for one peer: signed by this
    /// instance, encrypted so only that peer can open it (`levh pull` there reads it).
    Share(share::Args),
    /// Import a bundle a peer shared with this instance: checked (its signer is a known
    /// peer, no byte changed, it is for this instance), then every memory through this
    /// instance's gate, keeping where it came from; a memory pulled before is not again.
    Pull(pull::Args),
    /// This instance's identity for sharing, and the instances it trusts.
    #[command(subcommand)]
    Peer(peer::Command),
    /// Fill an empty store with a demo team's two weeks (people, mail, meetings, decisions,
    /// promises, one conflict), to try every feature; `--remove` takes it out.
    SeedDemo(seed_demo::Args),
    /// First run: configure an MCP client (Claude Desktop, Claude Code, Cursor, VS Code, …)
    /// to start this levh, merged into the file it reads.
    Setup(setup::Args),
    /// Keep a file with a memory (PDF, HTML, Markdown, text; at most 10 MiB): its text is
    /// stored through the gate as an `attachment` memory that recall finds.
    Attach(attach::Args),
    /// Turn clusters of aged, related memories into one summary each (`--dry-run` shows
    /// them); `undo SUMMARY` brings the members back.
    Consolidate(consolidate::Args),
    /// An agent's working session: start, end, summarize.
    #[command(subcommand)]
    Session(session::Command),
    /// Summarise a session into one memory: what it stored, decided and promised.
    Summarize {
        /// The session's id.
        session: String,
    },
    /// Find the memories that best match a query; what is returned is reinforced.
    Recall(recall::Args),
    /// Show one memory in full; `--trust`: how far it can be believed, factor by factor.
    Show(ShowArgs),
    /// List memories: newest first, or `--sort importance|recalled|retention`; filters
    /// by project, kind, source, pinned, fading, forgotten, dates and who they are about.
    List(list::Args),
    /// Move memories to another project (`--project P`), or out of every project.
    Move(move_memories::Args),
    /// Write a fact under a key, replacing the key's current memory (kept for --as-of).
    Upsert(keyed::UpsertCommand),
    /// Read a memory by id, or by `--key` (with `--pointer` into its JSON value).
    Get(keyed::GetCommand),
    /// Mistakes: `add WHAT [--why …] [--avoid …]`, or list them.
    Mistakes(mistakes::Args),
    /// Before an action: the mistakes and pinned rules that apply, or "no known issue".
    CheckAction(mistakes::CheckCommand),
    /// Write where a task stands: goal, done, next, open questions.
    Checkpoint(checkpoint::CheckpointCommand),
    /// Resume a task: its latest checkpoint and what happened since, within a budget.
    Continue(checkpoint::ContinueCommand),
    /// Goals with milestones: list, `add TITLE --milestone …`, `update GOAL …`.
    Goals(goals::Args),
    /// Reports from the event log: `recalls` (what was asked, returned, used), `usage`
    /// (per day, token and client), `sessions` (MCP clients connected now).
    Report(report::Args),
    /// Retire a memory from every read (kept for `--known-at` history).
    Forget(IdArgs),
    /// Pin a memory: it never fades and resists interference.
    Pin(IdArgs),
    /// Unpin a memory: it decays again from now on.
    Unpin(IdArgs),
    /// Reinforce a memory as if it had been recalled.
    Reinforce(IdArgs),
    /// Tell levh whether a memory helped: helpful reinforces, unhelpful weakens.
    Feedback(feedback::Args),
    /// List memories whose retention has dropped below the fading threshold.
    Fading(fading::Args),
    /// Go through the fading memories one at a time: keep, reinforce, weaken, pin, snooze,
    /// forget (each decision lands in the memory's history); `--json` lists the queue.
    Review(review::Args),
    /// Decisions the memories state ("we decided to…", "karar verdik"), newest first.
    Decisions(knowledge::Args),
    /// Promises the memories make in the user's own words, soonest due first; `done ID`
    /// marks one kept.
    Commitments(knowledge::CommitmentsArgs),
    /// People the memories are about, one per person across sources; `show PERSON`.
    People(entities::PeopleArgs),
    /// Organizations by e-mail domain, with who from each appears.
    Orgs(entities::ListArgs),
    /// The entity index: list, show, merge, reindex, graph.
    Entities(entities::EntitiesArgs),
    /// Everything about one entity: a person, an organization, a project, an item.
    About(entities::AboutCli),
    /// What happened, day by day in your time zone (LEVH_TZ): this week, last week, ...
    Timeline(entities::TimelineCli),
    /// Hooks into other tools: `install git` captures each commit message.
    #[command(subcommand)]
    Hook(hook::Command),
    /// Pinned rules and a project's essentials as CLAUDE.md, a Cursor rule, AGENTS.md or
    /// Copilot instructions (only levh's marked block of an existing file is rewritten).
    Context(context_file::Args),
    /// Ask a question: an answer citing the memories it used (a model writes it when
    /// LEVH_LLM_URL is set). Reinforces nothing.
    Ask(assistant::AskCli),
    /// The day at a glance: events, what is due and owed, decisions, people, what fades.
    Briefing(assistant::BriefingCli),
    /// What to know before a meeting (the next one, or EVENT).
    MeetingPrep(assistant::MeetingPrepCli),
    /// Pairs of memories that may disagree; `detect` looks for them, `resolve ID` decides.
    Conflicts(assistant::ConflictsCli),
    /// Predict a memory's retention for the coming days.
    Curve(curve::Args),
    /// Counts and averages for the workspace.
    Stats(stats::Args),
    /// Check the store, the index and the embedder.
    Doctor,
    /// Decide what the gate held for review: list, show, admit, discard.
    #[command(subcommand)]
    Held(held::Command),
    /// Find stored memories holding secrets that today's patterns recognise.
    AuditSecrets,
    /// Strip recognised secrets from stored memories.
    RedactSecrets,
    /// Erase a memory and every copy of its content, and check nothing remains.
    Purge(IdArgs),
    /// Back the home up into one file (encrypted with a passphrase when asked), list the
    /// backups, check one, restore one.
    #[command(subcommand)]
    Backup(backup::Command),
    /// Run a connector: its items go through the gate into memory.
    Sync(sync::Args),
    /// Manage connectors: list, inspect, add, remove, grant, revoke, new.
    #[command(subcommand)]
    Connector(connector::Command),
    /// Choose how recall ranks: list, add, use, off, remove scorers.
    #[command(subcommand)]
    Scorer(scorer::Command),
    /// Serve agents over MCP (stdio), list the tool profiles, print client configs.
    #[command(subcommand)]
    Mcp(mcp::Command),
    /// Serve the REST API, the live feed (/api/ws) and MCP over HTTP (/mcp) on one port.
    Serve(serve::Args),
    /// API tokens for `levh serve`, each bound to one workspace and role.
    #[command(subcommand)]
    Token(token::Command),
    /// Install the local embedding model and ONNX Runtime, or check them.
    #[command(subcommand)]
    Models(models::Command),
    /// Give every stored memory a vector of the active embedder (backfill or switch
    /// models). Resumable: run it again after an interruption.
    Reembed(reembed::Args),
    /// Measure recall quality on a labelled query set (hit@1/3/5, MRR) with the configured
    /// embedder, on a throwaway store; `--check` fails below the dataset's thresholds.
    Benchmark(benchmark::Args),
    /// Fit recall's fusion settings to your own labelled conversations (the benchmark's
    /// format), cross-validated; `--write` saves them to config.toml when they gain on
    /// held-out questions.
    Tune(tune::Args),
    /// Golden scenarios through the real gate, store and recall: run them, or read a report.
    #[command(subcommand)]
    Eval(eval::Command),
    /// Move a personal store into a team's PostgreSQL database: `--from sqlite PATH --to
    /// postgres://…`. Copies everything as it is (not through the gate: it was admitted
    /// once); resumable, and a second run copies nothing twice.
    Migrate(migrate::Args),
}

/// `levh show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The memory's id.
    id: MemoryIdArg,
    /// Its trust instead: source, review, corroboration, age, risks, and the sum.
    #[arg(long, conflicts_with = "history")]
    trust: bool,
    /// Its history instead: what happened to it, newest first (stored, recalled,
    /// reviewed, …), from the event log.
    #[arg(long)]
    history: bool,
}

/// A command that takes one memory id.
#[derive(Debug, clap::Args)]
pub struct IdArgs {
    /// The memory's id.
    id: MemoryIdArg,
}

/// A memory id parsed by clap, so a malformed one is refused before anything opens.
#[derive(Debug, Clone, Copy)]
pub struct MemoryIdArg(pub MemoryId);

impl std::str::FromStr for MemoryIdArg {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        text.parse()
            .map(Self)
            .map_err(|_| format!("'{text}' is not a memory id (expected a UUID)"))
    }
}

/// Parses an RFC 3339 time or a date for clap.
pub fn time_arg(text: &str) -> Result<levh_core::Timestamp, String> {
    crate::context::parse_time(text)
}

impl Cli {
    /// Runs the chosen command.
    /// Whether the person asked for JSON (`--json`): errors are JSON on stdout then too,
    /// so a script reads one document whatever happened.
    pub fn wants_json(&self) -> bool {
        self.json
    }

    pub fn run(self) -> Result<ExitCode> {
        // `levh mcp` opens the store only to serve, and after parsing its own flags.
        let command = match self.command {
            Command::Mcp(command) => {
                return mcp::run(self.home, &self.workspace, command, self.json);
            }
            // Writes a client's configuration file; opens no store.
            Command::Setup(args) => {
                return setup::run(self.home, &self.workspace, args, self.json);
            }
            // The address is checked before anything is opened.
            Command::Serve(args) => return serve::run(self.home, &self.workspace, args),
            // `--model` chooses the embedder the engine is built with.
            Command::Reembed(args) => {
                let context =
                    Context::open_with_embedder(self.home, &self.workspace, args.model.as_deref())?;
                return reembed::run(&context, args, self.json);
            }
            Command::Benchmark(args) => {
                let context = Context::open_with_embedder(
                    self.home,
                    &self.workspace,
                    args.embedder.as_deref(),
                )?;
                return benchmark::run(&context, args, self.json);
            }
            Command::Tune(args) => {
                let context = Context::open_with_embedder(
                    self.home,
                    &self.workspace,
                    args.embedder.as_deref(),
                )?;
                return tune::run(&context, args, self.json);
            }
            // Doctor reports on a store that cannot be opened, rather than failing with it.
            Command::Doctor => {
                return match Context::open(self.home.clone(), &self.workspace) {
                    Ok(context) => doctor::run(&context, self.json),
                    Err(error) => doctor::run_unopened(self.home, error, self.json),
                };
            }
            Command::Eval(command) => {
                let context =
                    Context::open_with_embedder(self.home, &self.workspace, command.embedder())?;
                return eval::run(&context, command, self.json);
            }
            // A backup reads the store beside its users; a restore must leave no connection
            // of its own open on it. Neither opens the engine.
            Command::Backup(command) => {
                let home = crate::context::resolve_home(self.home)?;
                return backup::run(&home, command, self.json);
            }
            // Keys and the list of peers are files of the home; no store is needed.
            Command::Peer(command) => {
                let home = crate::context::resolve_home(self.home)?;
                return peer::run(&home, &self.workspace, command, self.json);
            }
            // Reads another store and writes a database; opens neither the home's store nor
            // the one LEVH_DATABASE_URL names.
            Command::Migrate(args) => return migrate::run(self.home, args, self.json),
            // Writes a file in a repository; opens no store.
            Command::Hook(command) if !command.needs_store() => {
                let home = crate::context::resolve_home(self.home)?;
                return hook::run(&home, command, self.json);
            }
            command => command,
        };
        let context = Context::open(self.home, &self.workspace)?;
        let json = self.json;
        match command {
            Command::Capture(args) => capture::run(&context, args, json),
            Command::Import(args) => import::run(&context, args, json),
            Command::Export(args) => export::run(&context, args, json),
            Command::Share(args) => share::run(&context, args, json),
            Command::Pull(args) => pull::run(&context, args, json),
            Command::SeedDemo(args) => seed_demo::run(&context, args, json),
            Command::Session(command) => session::run(&context, command, json),
            Command::Consolidate(args) => consolidate::run(&context, args, json),
            Command::Attach(args) => attach::run(&context, args, json),
            Command::Summarize { session } => session::summarize(&context, session, json),
            Command::Recall(args) => recall::run(&context, args, json),
            Command::Show(args) if args.trust => show::trust(&context, args.id.0, json),
            Command::Show(args) if args.history => show::history(&context, args.id.0, json),
            Command::Show(args) => show::run(&context, args.id.0, json),
            Command::List(args) => list::run(&context, args, json),
            Command::Forget(args) => forget::run(&context, args.id.0, json),
            Command::Pin(args) => pin::run(&context, args.id.0, true, json),
            Command::Move(args) => move_memories::run(&context, args, json),
            Command::Upsert(args) => keyed::upsert(&context, args, json),
            Command::Get(args) => keyed::get(&context, args, json),
            Command::Mistakes(args) => mistakes::run(&context, args, json),
            Command::Report(args) => report::run(&context, args, json),
            Command::CheckAction(args) => mistakes::check(&context, args, json),
            Command::Checkpoint(args) => checkpoint::checkpoint(&context, args, json),
            Command::Continue(args) => checkpoint::resume(&context, args, json),
            Command::Goals(args) => goals::run(&context, args, json),
            Command::Unpin(args) => pin::run(&context, args.id.0, false, json),
            Command::Reinforce(args) => reinforce::run(&context, args.id.0, json),
            Command::Feedback(args) => feedback::run(&context, args, json),
            Command::Fading(args) => fading::run(&context, args, json),
            Command::Review(args) => review::run(&context, args, json),
            Command::Decisions(args) => knowledge::decisions(&context, args, json),
            Command::Commitments(args) => knowledge::commitments(&context, args, json),
            Command::People(args) => entities::people(&context, args, json),
            Command::Orgs(args) => entities::organizations(&context, args, json),
            Command::Entities(args) => entities::entities(&context, args, json),
            Command::About(args) => entities::about_any(&context, args, json),
            Command::Timeline(args) => entities::timeline(&context, args, json),
            Command::Context(args) => context_file::run(&context, args, json),
            Command::Ask(args) => assistant::ask(&context, args, json),
            Command::Briefing(args) => assistant::briefing(&context, args, json),
            Command::MeetingPrep(args) => assistant::meeting_prep(&context, args, json),
            Command::Conflicts(args) => assistant::conflicts(&context, args, json),
            Command::Curve(args) => curve::run(&context, args, json),
            Command::Stats(args) => stats::run(&context, args, json),
            Command::Held(command) => held::run(&context, command, json),
            Command::AuditSecrets => secrets::audit(&context, json),
            Command::RedactSecrets => secrets::redact(&context, json),
            Command::Purge(args) => purge::run(&context, args.id.0, json),
            Command::Sync(args) => sync::run(&context, args, json),
            Command::Connector(command) => connector::run(&context, command, json),
            Command::Scorer(command) => scorer::run(&context, command, json),
            Command::Token(command) => token::run(&context, command, json),
            Command::Models(command) => models::run(&context, command, json),
            Command::Mcp(_)
            | Command::Doctor
            | Command::Serve(_)
            | Command::Reembed(_)
            | Command::Benchmark(_)
            | Command::Tune(_)
            | Command::Eval(_)
            | Command::Backup(_)
            | Command::Peer(_)
            | Command::Migrate(_)
            | Command::Setup(_) => {
                unreachable!("handled before the store is opened")
            }
            Command::Hook(hook::Command::Run { what }) => hook::run_hook(&context, what),
            Command::Hook(_) => unreachable!("handled before the store is opened"),
        }
    }
}
