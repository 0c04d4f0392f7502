//! `levh people`, `levh orgs`, `levh entities`, `levh about` and `levh timeline`: who and
//! what the memories are about, from the entity index (levh-api's operations, the same
//! ones REST and MCP serve).

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use levh_api::Operation;
use levh_api::requests::{
    AboutArgs, EntityListArgs, GraphArgs, MergeArgs, ReindexArgs, TimelineArgs,
};
use levh_api::views::{AboutView, EntityView};
use levh_api::{entities, timeline};

use crate::context::Context;
use crate::output;

/// Which entities a list shows.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only names, addresses or handles containing this (case and accents ignored).
    #[arg(long)]
    name: Option<String>,
    /// Only those of memories in this project.
    #[arg(long, short)]
    project: Option<String>,
    /// At most this many, most memories first.
    #[arg(long, short = 'n', default_value_t = entities::DEFAULT_LIMIT)]
    limit: usize,
}

impl ListArgs {
    fn request(self, kind: Option<String>) -> EntityListArgs {
        EntityListArgs {
            kind,
            name: self.name,
            project: self.project,
            limit: Some(self.limit),
        }
    }
}

/// One entity to read about.
#[derive(Debug, clap::Args)]
pub struct AboutCli {
    /// The entity: its id, an e-mail address, an @handle, a name, a domain or a project.
    entity: String,
    /// Only an entity of this kind (when a name fits several): person, organization,
    /// project, event, document or task.
    #[arg(long, short)]
    kind: Option<String>,
    /// At most this many of its memories.
    #[arg(long, short = 'n', default_value_t = 20)]
    limit: usize,
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PeopleArgs {
    #[command(subcommand)]
    command: Option<PeopleCommand>,
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Debug, Subcommand)]
enum PeopleCommand {
    /// One person: their memories newest first, organizations, who they appear with, and
    /// open commitments involving them.
    Show(AboutCli),
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EntitiesArgs {
    #[command(subcommand)]
    command: Option<EntitiesCommand>,
    /// Only this kind: person, organization, project, event, document or task.
    #[arg(long, short)]
    kind: Option<String>,
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Debug, Subcommand)]
enum EntitiesCommand {
    /// Everything about one entity of any kind.
    Show(AboutCli),
    /// Merge entity FROM into INTO (one person the heuristics kept apart); FROM goes.
    Merge {
        /// The entity that stays.
        into: String,
        /// The entity merged into it.
        from: String,
    },
    /// Index the memories not indexed under today's rules (every memory with --all).
    /// Resumable: an interrupted run is finished by running it again.
    Reindex {
        /// Every memory again.
        #[arg(long)]
        all: bool,
        /// Stop after this many memories.
        #[arg(long)]
        max: Option<u64>,
    },
    /// The entity graph: entities and how many memories each pair shares.
    Graph {
        /// Only entities of this kind.
        #[arg(long, short)]
        kind: Option<String>,
        /// At most this many entities.
        #[arg(long, short = 'n', default_value_t = 60)]
        limit: usize,
        /// Only edges of at least this many shared memories.
        #[arg(long, default_value_t = 1)]
        min_weight: u64,
    },
}

#[derive(Debug, clap::Args)]
pub struct TimelineCli {
    /// today, yesterday, tomorrow, "this week" (default), "last week", "next week", "this
    /// month", "last month", "next month", "next N days",
    /// "last N days".
    range: Option<String>,
    /// First day (YYYY-MM-DD, in LEVH_TZ or the system's zone), instead of a range.
    #[arg(long, conflicts_with = "range")]
    from: Option<String>,
    /// Last day, included.
    #[arg(long, conflicts_with = "range")]
    to: Option<String>,
    /// Only memories with this person (or entity).
    #[arg(long)]
    person: Option<String>,
    /// Only this project.
    #[arg(long, short)]
    project: Option<String>,
    /// Only this memory kind (email, event, transcript, note, ...).
    #[arg(long, short)]
    kind: Option<String>,
    /// At most this many memories.
    #[arg(long, short = 'n', default_value_t = timeline::DEFAULT_LIMIT)]
    limit: usize,
}

fn day(at: &Option<String>) -> String {
    at.as_deref()
        .and_then(|t| t.get(..10))
        .unwrap_or("-")
        .to_owned()
}

fn print_entities(list: &[EntityView], nothing: &str) {
    if list.is_empty() {
        output::line(nothing);
        return;
    }
    let mut table = output::table(&["kind", "name", "memories", "last seen", "channels", "id"]);
    for e in list {
        table.add_row(vec![
            e.kind.clone(),
            e.name.clone(),
            e.memories.to_string(),
            day(&e.last_seen),
            e.channels.join(", "),
            e.id.clone(),
        ]);
    }
    output::print_table(&table);
}

fn print_about(about: &AboutView) {
    let e = &about.entity;
    output::line(format!("{} ({}) {}", e.name, e.kind, e.id));
    for email in &e.emails {
        output::line(format!("  e-mail   {email}"));
    }
    for handle in &e.handles {
        output::line(format!("  handle   {handle}"));
    }
    output::line(format!(
        "  {} memories, last {}, via {}",
        e.memories,
        day(&e.last_seen),
        e.channels.join(", ")
    ));
    if !about.memberships.is_empty() {
        let names: Vec<&str> = about.memberships.iter().map(|m| m.name.as_str()).collect();
        let label = if e.kind == "organization" {
            "people"
        } else {
            "organizations"
        };
        output::line(format!("  {label}: {}", names.join(", ")));
    }
    if !about.related.is_empty() {
        let names: Vec<String> = about
            .related
            .iter()
            .filter(|r| r.entity.kind == "person")
            .take(10)
            .map(|r| format!("{} ({})", r.entity.name, r.shared))
            .collect();
        if !names.is_empty() {
            output::line(format!("  with: {}", names.join(", ")));
        }
    }
    if !about.open_commitments.is_empty() {
        output::line("open commitments:");
        for c in &about.open_commitments {
            output::line(format!(
                "  {} {} [{}]",
                c.due.as_deref().unwrap_or("-"),
                c.sentence,
                c.id
            ));
        }
    }
    let mut table = output::table(&["when", "as", "kind", "memory", "id"]);
    for m in &about.memories {
        table.add_row(vec![
            m.at.get(..16).unwrap_or(&m.at).replace('T', " "),
            m.roles.join(", "),
            m.kind.clone(),
            m.preview.clone(),
            m.memory_id.clone(),
        ]);
    }
    output::print_table(&table);
}

fn about(context: &Context, args: AboutCli, kind: Option<&str>, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::AboutEntity, |levh, scope| {
        entities::about(
            levh,
            scope,
            AboutArgs {
                entity: args.entity,
                kind: kind.map(str::to_owned).or(args.kind),
                limit: Some(args.limit),
            },
        )
    })?;
    if json {
        output::json(&view)?;
    } else {
        print_about(&view);
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh people [show PERSON]`.
pub fn people(context: &Context, args: PeopleArgs, json: bool) -> Result<ExitCode> {
    if let Some(PeopleCommand::Show(show)) = args.command {
        return about(context, show, Some("person"), json);
    }
    let list = context.run(Operation::ListPeople, |levh, scope| {
        entities::people(levh, scope, args.list.request(None))
    })?;
    if json {
        output::json(&list)?;
    } else if list.people.is_empty() {
        output::line(
            "no people yet (they come from synced mail, calendars, transcripts, ... and from addresses and @handles in memories)",
        );
    } else {
        let mut table = output::table(&[
            "name",
            "memories",
            "last",
            "channels",
            "organizations",
            "e-mail",
            "id",
        ]);
        for p in list.people {
            table.add_row(vec![
                p.person.name,
                p.person.memories.to_string(),
                day(&p.person.last_seen),
                p.person.channels.join(", "),
                p.organizations.join(", "),
                p.person.emails.join(", "),
                p.person.id,
            ]);
        }
        output::print_table(&table);
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh orgs`.
pub fn organizations(context: &Context, args: ListArgs, json: bool) -> Result<ExitCode> {
    let list = context.run(Operation::ListOrganizations, |levh, scope| {
        entities::organizations(levh, scope, args.request(None))
    })?;
    if json {
        output::json(&list)?;
    } else if list.organizations.is_empty() {
        output::line(
            "no organizations yet (they come from work e-mail addresses; personal providers such as gmail.com are left out)",
        );
    } else {
        let mut table =
            output::table(&["organization", "memories", "last contact", "people", "id"]);
        for o in list.organizations {
            // The most frequent few: a big organization has hundreds (`about` lists all).
            let mut people: Vec<String> = o.people.iter().take(5).map(|p| p.name.clone()).collect();
            if o.people.len() > 5 {
                people.push(format!("and {} more", o.people.len() - 5));
            }
            table.add_row(vec![
                o.organization.name,
                o.organization.memories.to_string(),
                day(&o.organization.last_seen),
                people.join(", "),
                o.organization.id,
            ]);
        }
        output::print_table(&table);
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh about ENTITY`.
pub fn about_any(context: &Context, args: AboutCli, json: bool) -> Result<ExitCode> {
    about(context, args, None, json)
}

/// `levh entities [show|merge|reindex|graph]`.
pub fn entities(context: &Context, args: EntitiesArgs, json: bool) -> Result<ExitCode> {
    match args.command {
        None => {
            let list = context.run(Operation::ListEntities, |levh, scope| {
                entities::list(levh, scope, args.list.request(args.kind))
            })?;
            if json {
                output::json(&list)?;
            } else {
                print_entities(
                    &list.entities,
                    "no entities yet (`levh entities reindex` indexes memories stored before the index existed)",
                );
            }
        }
        Some(EntitiesCommand::Show(show)) => return about(context, show, None, json),
        Some(EntitiesCommand::Merge { into, from }) => {
            let merged = context.run(Operation::MergeEntities, |levh, scope| {
                entities::merge(levh, scope, MergeArgs { into, from })
            })?;
            if json {
                output::json(&merged)?;
            } else {
                output::line(format!(
                    "merged: {} ({}) now has {} memories — {}",
                    merged.name, merged.kind, merged.memories, merged.id
                ));
            }
        }
        Some(EntitiesCommand::Reindex { all, max }) => {
            let bar = indicatif::ProgressBar::hidden();
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "indexing [{bar:30}] {pos}/{len} {per_sec} {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            let report = context.run(Operation::ReindexEntities, |levh, scope| {
                entities::reindex(levh, scope, ReindexArgs { all, max }, &mut |done, total| {
                    bar.set_length(total);
                    bar.set_position(done);
                })
            })?;
            bar.finish_and_clear();
            if json {
                output::json(&report)?;
            } else {
                output::line(format!(
                    "indexed {} memories; {} entities{}",
                    report.indexed,
                    report.entities,
                    if report.remaining > 0 {
                        format!("; {} still to do (run it again)", report.remaining)
                    } else {
                        String::new()
                    }
                ));
            }
        }
        Some(EntitiesCommand::Graph {
            kind,
            limit,
            min_weight,
        }) => {
            let graph = context.run(Operation::EntityGraph, |levh, scope| {
                entities::graph(
                    levh,
                    scope,
                    GraphArgs {
                        kind,
                        limit: Some(limit),
                        min_weight: Some(min_weight),
                    },
                )
            })?;
            if json {
                output::json(&graph)?;
            } else if graph.edges.is_empty() {
                output::line("no two entities share a memory yet");
            } else {
                let name = |id: &str| {
                    graph
                        .nodes
                        .iter()
                        .find(|n| n.id == id)
                        .map(|n| format!("{} ({})", n.name, n.kind))
                        .unwrap_or_else(|| id.to_owned())
                };
                let mut table = output::table(&["entity", "entity", "shared memories"]);
                for edge in &graph.edges {
                    table.add_row(vec![
                        name(&edge.from),
                        name(&edge.to),
                        edge.weight.to_string(),
                    ]);
                }
                output::print_table(&table);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `levh timeline [RANGE]`.
pub fn timeline(context: &Context, args: TimelineCli, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::Timeline, |levh, scope| {
        timeline::timeline(
            levh,
            scope,
            TimelineArgs {
                range: args.range,
                from: args.from,
                to: args.to,
                person: args.person,
                project: args.project,
                kind: args.kind,
                limit: Some(args.limit),
            },
        )
    })?;
    if json {
        output::json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(format!("{} .. {} ({})", view.from, view.to, view.time_zone));
    if view.days.is_empty() {
        output::line("nothing happened in these days, as far as the memories know");
    }
    for day in &view.days {
        output::line(format!("\n{} {}", day.day, day.weekday));
        for m in &day.memories {
            let people = if m.people.is_empty() {
                String::new()
            } else {
                format!(" — {}", m.people.join(", "))
            };
            output::line(format!(
                "  {}  {:<10} {}{}",
                m.time, m.kind, m.preview, people
            ));
        }
    }
    if view.truncated {
        output::warn("more memories fell in the range than --limit shows");
    }
    Ok(ExitCode::SUCCESS)
}
