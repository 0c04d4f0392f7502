//! The tools, each next to its code. Every tool returns structured output; an engine
//! error (bad input, unknown id) becomes an `isError` result whose text names the problem,
//! never a protocol error. There is no `force` anywhere: the gate decides every write.

use levh_core::{
    HeldId, HeldStatus, Kind, Levh, MemoryFilter, MemoryId, NewMemory, Page, RecallRequest, Scope,
    SessionId, Timestamp, text,
};
use rmcp::handler::server::wrapper::Json;

use crate::arguments::Parameters;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::LevhMcp;
use crate::views::*;

/// Token budget of `get_context` and the context resource when none is given.
pub const DEFAULT_CONTEXT_TOKENS: usize = 1500;

/// An engine error as the agent should read it.
fn describe(error: levh_core::Error) -> String {
    match error {
        levh_core::Error::NotFound(id) => {
            format!("no memory with id {id} in this workspace (nothing was changed)")
        }
        other => format!("{other} (nothing was changed)"),
    }
}

pub fn memory_id(field: &'static str, text: &str) -> Result<MemoryId, String> {
    text.parse::<MemoryId>()
        .map_err(|_| format!("invalid {field}: '{text}' is not a memory id (expected a UUID)"))
}

pub fn time(field: &'static str, text: Option<&str>) -> Result<Option<Timestamp>, String> {
    text.map(|t| {
        t.trim().parse::<Timestamp>().map_err(|_| {
            format!("invalid {field}: '{t}' is not an RFC 3339 time like 2026-11-30T09:00:00Z")
        })
    })
    .transpose()
}

pub fn kind(text: Option<&str>) -> Result<Option<Kind>, String> {
    text.map(|k| Kind::new(k).map_err(|e| e.to_string()))
        .transpose()
}

fn client_name(peer: &Peer<RoleServer>) -> Option<String> {
    peer.peer_info()
        .map(|info| info.client_info.name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

impl LevhMcp {
    /// The caller's scope: surface `mcp`, client = the name it gave in `initialize`.
    /// The scope of the call in progress: the HTTP caller's principal, or (stdio) the
    /// server's own workspace. An HTTP server without a caller refuses rather than guess.
    pub(crate) fn scope_for(&self, peer: &Peer<RoleServer>) -> Result<Scope, String> {
        let client = client_name(peer);
        match crate::current_caller() {
            Some(caller) => Ok(caller.scope("mcp", client)),
            None if self.needs_caller => Err(
                "unauthenticated MCP call: no principal on the request (nothing was changed)"
                    .into(),
            ),
            None => {
                let mut scope = self.scope.clone();
                scope.actor.client = client;
                Ok(scope)
            }
        }
    }

    /// Runs an engine call off the async threads (SQLite is blocking) in the caller's
    /// scope, and turns an engine error into the text of an `isError` result.
    pub(crate) async fn engine<T, F>(&self, peer: &Peer<RoleServer>, call: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Levh, &Scope) -> Result<T, String> + Send + 'static,
    {
        let levh = self.levh.clone();
        let scope = self.scope_for(peer)?;
        tokio::task::spawn_blocking(move || call(&levh, &scope))
            .await
            .map_err(|e| format!("internal error: {e}"))?
    }

    /// Pinned rules (of the project and of no project), then the project's essentials
    /// (importance × retention), packed into `max_tokens`.
    pub(crate) fn context(
        levh: &Levh,
        scope: &Scope,
        project: Option<String>,
        max_tokens: usize,
    ) -> Result<ContextView, String> {
        if max_tokens == 0 {
            return Err("invalid max_tokens: must be at least 1 (nothing was changed)".into());
        }
        let now = levh.now();
        let all = Page {
            limit: 1000,
            offset: 0,
        };
        let pinned: Vec<_> = levh
            .list(
                scope,
                MemoryFilter {
                    pinned: Some(true),
                    valid_at: Some(now),
                    ..MemoryFilter::default()
                },
                all,
            )
            .map_err(describe)?
            .into_iter()
            .filter(|m| m.project.is_none() || m.project == project)
            .collect();
        let mut essentials = levh
            .list(
                scope,
                MemoryFilter {
                    project: project.clone(),
                    pinned: Some(false),
                    valid_at: Some(now),
                    ..MemoryFilter::default()
                },
                all,
            )
            .map_err(describe)?;
        let weight =
            |m: &levh_core::Memory| m.state.importance * levh_core::model::retention(&m.state, now);
        essentials.sort_by(|a, b| weight(b).total_cmp(&weight(a)));
        let (mut tokens, mut omitted) = (0, 0);
        let mut keep = |m: &levh_core::Memory| {
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
            .map(|m| MemoryView::new(m, now))
            .collect();
        let essentials: Vec<MemoryView> = essentials
            .iter()
            .filter(|m| keep(m))
            .map(|m| MemoryView::new(m, now))
            .collect();
        let mut text = String::from("# levh context\n");
        if let Some(project) = &project {
            text.push_str(&format!("\nProject: {project}\n"));
        }
        text.push_str("\n## Pinned rules\n");
        if pinned.is_empty() {
            text.push_str("(none)\n");
        }
        for m in &pinned {
            text.push_str(&format!("- {} [{}]\n", m.content, m.id));
        }
        text.push_str("\n## Essentials\n");
        if essentials.is_empty() {
            text.push_str("(none)\n");
        }
        for m in &essentials {
            text.push_str(&format!("- {} [{}]\n", m.content, m.id));
        }
        Ok(ContextView {
            project,
            pinned,
            essentials,
            tokens,
            omitted,
            text,
        })
    }

    async fn recall_inner(
        &self,
        peer: &Peer<RoleServer>,
        args: RecallArgs,
        reinforce: bool,
    ) -> Result<Json<RecallView>, String> {
        let request = args.into_request(reinforce)?;
        self.engine(peer, move |levh, scope| {
            let output = levh.recall(scope, &request).map_err(describe)?;
            Ok(Json(RecallView::new(&output, levh.now())))
        })
        .await
    }

    async fn capture_inner(
        &self,
        peer: &Peer<RoleServer>,
        args: StoreArgs,
    ) -> Result<Json<CaptureView>, String> {
        let source = client_name(peer).unwrap_or_else(|| "mcp".to_owned());
        let new = args.into_new_memory(source.clone())?;
        let pinned = new.pinned;
        let (view, stored) = self
            .engine(peer, move |levh, scope| {
                let outcome = levh.capture(scope, new).map_err(describe)?;
                Ok((
                    CaptureView::new(&outcome, source),
                    outcome.memory_id.is_some(),
                ))
            })
            .await?;
        if pinned && stored {
            self.pinned_set_changed(peer).await;
        }
        Ok(Json(view))
    }

    async fn update_state(
        &self,
        peer: &Peer<RoleServer>,
        id: &str,
        call: impl FnOnce(&Levh, &Scope, MemoryId) -> levh_core::Result<levh_core::Memory>
        + Send
        + 'static,
    ) -> Result<Json<MemoryView>, String> {
        let id = memory_id("id", id)?;
        self.engine(peer, move |levh, scope| {
            let memory = call(levh, scope, id).map_err(describe)?;
            Ok(Json(MemoryView::new(&memory, levh.now())))
        })
        .await
    }

    /// Tells the client the pinned set (and so the resource list) changed.
    async fn pinned_set_changed(&self, peer: &Peer<RoleServer>) {
        if let Err(error) = peer.notify_resource_list_changed().await {
            tracing::debug!(%error, "resources/list_changed not sent");
        }
    }
}

/// Arguments of store_memory and admit_memory. There is deliberately no `force`: the
/// gate decides, and a review verdict becomes a held candidate for a person.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreArgs {
    /// The text to remember (3..32000 characters). Secrets are redacted before storing.
    pub content: String,
    /// Project within the workspace.
    pub project: Option<String>,
    /// note (default), event, decision, ...
    pub kind: Option<String>,
    /// Importance 0..1 (default 0.5): important memories grow durable faster.
    pub importance: Option<f64>,
    /// Pin it at once: it never fades.
    pub pin: Option<bool>,
    /// World time from which it holds (RFC 3339).
    pub valid_from: Option<String>,
    /// World time at which it stops holding (RFC 3339).
    pub valid_to: Option<String>,
    /// A session id from create_session.
    pub session_id: Option<String>,
    /// Free-form JSON object.
    pub metadata: Option<serde_json::Value>,
}

impl StoreArgs {
    /// The engine's input, `source` recorded as who wrote it.
    pub fn into_new_memory(self, source: String) -> Result<NewMemory, String> {
        Ok(NewMemory {
            content: self.content,
            project: self.project,
            kind: kind(self.kind.as_deref())?,
            source: Some(source),
            importance: self.importance,
            pinned: self.pin.unwrap_or(false),
            valid_from: time("valid_from", self.valid_from.as_deref())?,
            valid_to: time("valid_to", self.valid_to.as_deref())?,
            metadata: self.metadata,
            session_id: self.session_id.map(SessionId::new),
        })
    }
}

impl RecallArgs {
    /// The engine's request; `reinforce` is false for a search.
    pub fn into_request(self, reinforce: bool) -> Result<RecallRequest, String> {
        Ok(RecallRequest {
            query: self.query,
            limit: self.limit.unwrap_or(10),
            project: self.project,
            kind: kind(self.kind.as_deref())?,
            source: self.source,
            since: None,
            until: None,
            as_of: time("as_of", self.as_of.as_deref())?,
            known_at: time("known_at", self.known_at.as_deref())?,
            max_tokens: self.max_tokens,
            compact: false,
            reinforce,
            min_similarity: self.min_similarity,
        })
    }
}

/// Arguments of recall_memory and search_memory.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecallArgs {
    /// What to look for.
    pub query: String,
    /// At most this many results (1..1000, default 10).
    pub limit: Option<usize>,
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only this source.
    pub source: Option<String>,
    /// What was true at this world time (RFC 3339).
    pub as_of: Option<String>,
    /// What levh knew at this record time (RFC 3339).
    pub known_at: Option<String>,
    /// Pack results into roughly this many tokens.
    pub max_tokens: Option<usize>,
    /// The least cosine (0..1) a result found only by meaning, sharing no word with the
    /// query, needs; default: the embedder's floor. Raise it to prefer no answer to a
    /// loose one.
    pub min_similarity: Option<f64>,
}

/// A memory id.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdArgs {
    /// The memory's id (a UUID).
    pub id: String,
}

/// Arguments of get_context.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextArgs {
    /// The project to load essentials of (pinned rules without a project always come).
    pub project: Option<String>,
    /// Token budget (default 1500).
    pub max_tokens: Option<usize>,
}

/// An optional project.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProjectArgs {
    /// Only this project.
    pub project: Option<String>,
}

/// Arguments of list_memories.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<String>,
    /// Only this source.
    pub source: Option<String>,
    /// Only pinned (true) or unpinned (false).
    pub pinned: Option<bool>,
    /// At most this many (1..1000, default 20).
    pub limit: Option<usize>,
    /// Skip this many (newest first).
    pub offset: Option<usize>,
}

/// Arguments of set_importance.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ImportanceArgs {
    /// The memory's id.
    pub id: String,
    /// Importance 0..1.
    pub importance: f64,
}

/// Arguments of update_memory.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateArgs {
    /// The memory's id.
    pub id: String,
    /// The new content (3..32000 characters; secrets are redacted).
    pub content: String,
}

/// Arguments of memory_feedback.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FeedbackArgs {
    /// The memory's id.
    pub id: String,
    /// true: it helped (reinforces). false: it was wrong (weakens; the clock is not reset).
    pub helpful: bool,
}

/// Arguments of related_memories.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelatedArgs {
    /// The memory's id.
    pub id: String,
    /// At most this many (default 5).
    pub limit: Option<usize>,
}

/// Arguments of list_fading_memories.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FadingArgs {
    /// Only this project.
    pub project: Option<String>,
    /// At most this many (default 20).
    pub limit: Option<usize>,
}

/// Arguments of end_session.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionArgs {
    /// The id create_session returned.
    pub session_id: String,
}

/// Arguments of evaluate_admission.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateArgs {
    /// The text the gate should judge.
    pub content: String,
    /// Project it would go in.
    pub project: Option<String>,
}

/// Arguments of list_held_memories.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct HeldListArgs {
    /// held (default), admitted, discarded or expired.
    pub status: Option<String>,
}

/// Arguments of decide_held_memory: only the candidate. The decision comes from the
/// person, through elicitation; the agent cannot pass it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecideArgs {
    /// The held candidate's id.
    pub held_id: String,
}

/// Arguments of get_connector_help.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConnectorArgs {
    /// The connector's id (list_connectors shows them).
    pub id: String,
}

/// Arguments of sync_connector.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncArgs {
    /// The connector's id.
    pub id: String,
    /// Its settings (get_connector_help lists them). Paths must already be granted by
    /// a person (`levh connector grant`); naming one here grants nothing.
    pub config: Option<std::collections::BTreeMap<String, String>>,
    /// Put the memories in this project.
    pub project: Option<String>,
    /// Ask the gate about every item, store nothing.
    pub dry_run: Option<bool>,
}

/// Arguments of connector_sync_status.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SyncStatusArgs {
    /// Only this connector.
    pub id: Option<String>,
    /// How many runs (default 10).
    pub limit: Option<usize>,
}

/// The person's choice in the decide_held_memory form.
const ADMIT: &str = "admit";
const REPLACE: &str = "admit_as_replacement";
const DISCARD: &str = "discard";

/// Where a person decides held candidates when the client cannot ask them.
pub const HOW_TO_DECIDE: &str = "a person decides held candidates: `levh held list`, `levh held show ID`, `levh held admit ID [--supersede]`, `levh held discard ID`, or the dashboard's Review page (`levh serve`); over MCP only through decide_held_memory in a client that supports elicitation";

#[tool_router(vis = "pub(crate)")]
impl LevhMcp {
    /// Remember something. The admission gate decides: admit, redact (secrets replaced),
    /// review (held for a person to decide; never dropped) or reject (duplicate, too short).
    #[tool(annotations(
        title = "Store a memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn store_memory(
        &self,
        Parameters(args): Parameters<StoreArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<CaptureView>, String> {
        self.capture_inner(&peer, args).await
    }

    /// Find the memories that best match a query, ranked by H-score. What is returned is
    /// reinforced (it grows more durable); use search_memory to look without reinforcing.
    #[tool(annotations(
        title = "Recall memories",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn recall_memory(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<RecallView>, String> {
        self.recall_inner(&peer, args, true).await
    }

    /// Search memories like recall_memory, without reinforcing anything (read-only).
    #[tool(annotations(
        title = "Search memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn search_memory(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<RecallView>, String> {
        self.recall_inner(&peer, args, false).await
    }

    /// Context for the start of a session: pinned rules first, then the project's most
    /// important, best-retained memories, within a token budget.
    #[tool(annotations(
        title = "Get context",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_context(
        &self,
        Parameters(args): Parameters<ContextArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ContextView>, String> {
        self.engine(&peer, move |levh, scope| {
            Self::context(
                levh,
                scope,
                args.project,
                args.max_tokens.unwrap_or(DEFAULT_CONTEXT_TOKENS),
            )
            .map(Json)
        })
        .await
    }

    /// Counts and averages of the workspace (optionally one project).
    #[tool(annotations(
        title = "Memory statistics",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_memory_stats(
        &self,
        Parameters(args): Parameters<ProjectArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<StatsView>, String> {
        self.engine(&peer, move |levh, scope| {
            let s = levh.stats(scope, args.project).map_err(describe)?;
            Ok(Json(StatsView::from(s)))
        })
        .await
    }

    /// List memories, newest first, with optional filters.
    #[tool(annotations(
        title = "List memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_memories(
        &self,
        Parameters(args): Parameters<ListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryList>, String> {
        let limit = args.limit.unwrap_or(20);
        if limit == 0 || limit > 1000 {
            return Err(format!(
                "invalid limit: {limit} is outside 1..1000 (nothing was changed)"
            ));
        }
        let kind = kind(args.kind.as_deref())?;
        self.engine(&peer, move |levh, scope| {
            let now = levh.now();
            let memories = levh
                .list(
                    scope,
                    MemoryFilter {
                        project: args.project,
                        kind,
                        source: args.source,
                        pinned: args.pinned,
                        valid_at: Some(now),
                        ..MemoryFilter::default()
                    },
                    Page {
                        limit,
                        offset: args.offset.unwrap_or(0),
                    },
                )
                .map_err(describe)?;
            Ok(Json(MemoryList {
                memories: memories.iter().map(|m| MemoryView::new(m, now)).collect(),
            }))
        })
        .await
    }

    /// Reinforce a memory as if it had been recalled: "this still matters".
    #[tool(annotations(
        title = "Reinforce a memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn reinforce_memory(
        &self,
        Parameters(args): Parameters<IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryView>, String> {
        self.update_state(&peer, &args.id, |levh, scope, id| levh.reinforce(scope, id))
            .await
    }

    /// Pin a memory: it never fades and resists interference. It becomes a resource.
    #[tool(annotations(
        title = "Pin a memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn pin_memory(
        &self,
        Parameters(args): Parameters<IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryView>, String> {
        let view = self
            .update_state(&peer, &args.id, |levh, scope, id| {
                levh.set_pinned(scope, id, true)
            })
            .await?;
        self.pinned_set_changed(&peer).await;
        Ok(view)
    }

    /// Unpin a memory: it decays again from now on.
    #[tool(annotations(
        title = "Unpin a memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn unpin_memory(
        &self,
        Parameters(args): Parameters<IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryView>, String> {
        let view = self
            .update_state(&peer, &args.id, |levh, scope, id| {
                levh.set_pinned(scope, id, false)
            })
            .await?;
        self.pinned_set_changed(&peer).await;
        Ok(view)
    }

    /// Set a memory's importance (0..1); important memories grow durable faster.
    #[tool(annotations(
        title = "Set importance",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn set_importance(
        &self,
        Parameters(args): Parameters<ImportanceArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryView>, String> {
        let importance = args.importance;
        self.update_state(&peer, &args.id, move |levh, scope, id| {
            levh.set_importance(scope, id, importance)
        })
        .await
    }

    /// Memories whose content is closest to one memory's.
    #[tool(annotations(
        title = "Related memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn related_memories(
        &self,
        Parameters(args): Parameters<RelatedArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<RelatedList>, String> {
        let id = memory_id("id", &args.id)?;
        let limit = args.limit.unwrap_or(5);
        self.engine(&peer, move |levh, scope| {
            let now = levh.now();
            let related = levh.related(scope, id, limit).map_err(describe)?;
            Ok(Json(RelatedList {
                memory_id: id.to_string(),
                related: related
                    .iter()
                    .map(|r| RelatedView {
                        memory: MemoryView::new(&r.memory, now),
                        similarity: r.similarity,
                    })
                    .collect(),
            }))
        })
        .await
    }

    /// Memories whose retention has dropped below the fading threshold, weakest first.
    #[tool(annotations(
        title = "Fading memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_fading_memories(
        &self,
        Parameters(args): Parameters<FadingArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<FadingList>, String> {
        self.engine(&peer, move |levh, scope| {
            let now = levh.now();
            let fading = levh
                .fading(scope, args.project, args.limit.unwrap_or(20))
                .map_err(describe)?;
            Ok(Json(FadingList {
                memories: fading
                    .iter()
                    .map(|f| MemoryView::new(&f.memory, now))
                    .collect(),
            }))
        })
        .await
    }

    /// Projects of the workspace with their memory counts.
    #[tool(annotations(
        title = "List projects",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_projects(&self, peer: Peer<RoleServer>) -> Result<Json<ProjectList>, String> {
        self.engine(&peer, move |levh, scope| {
            let stats = levh.stats(scope, None).map_err(describe)?;
            Ok(Json(ProjectList {
                projects: stats
                    .by_project
                    .into_iter()
                    .filter(|(name, _)| name != "(none)")
                    .map(|(name, memories)| NamedCount { name, memories })
                    .collect(),
            }))
        })
        .await
    }

    /// Sources (clients and connectors) that wrote memories, with counts.
    #[tool(annotations(
        title = "List sources",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_sources(&self, peer: Peer<RoleServer>) -> Result<Json<SourceList>, String> {
        self.engine(&peer, move |levh, scope| {
            let stats = levh.stats(scope, None).map_err(describe)?;
            Ok(Json(SourceList {
                sources: stats
                    .by_source
                    .into_iter()
                    .map(|(name, memories)| NamedCount { name, memories })
                    .collect(),
            }))
        })
        .await
    }

    /// What the admission gate would decide for a text, without storing anything.
    #[tool(annotations(
        title = "Evaluate admission",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn evaluate_admission(
        &self,
        Parameters(args): Parameters<EvaluateArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<EvaluationView>, String> {
        self.engine(&peer, move |levh, scope| {
            let new = NewMemory {
                content: args.content,
                project: args.project,
                ..NewMemory::default()
            };
            let evaluation = levh.evaluate(scope, new).map_err(describe)?;
            Ok(Json(EvaluationView::from(&evaluation)))
        })
        .await
    }

    /// Store through the admission gate and report its full verdict. There is no force:
    /// content the gate will not judge becomes a held candidate that a person decides.
    #[tool(annotations(
        title = "Admit a memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn admit_memory(
        &self,
        Parameters(args): Parameters<StoreArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<CaptureView>, String> {
        self.capture_inner(&peer, args).await
    }

    /// Replace a memory's content (it keeps its id and history). The new content passes
    /// the gate's content checks: length limits, secrets redacted.
    #[tool(annotations(
        title = "Update a memory",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn update_memory(
        &self,
        Parameters(args): Parameters<UpdateArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<UpdateView>, String> {
        let id = memory_id("id", &args.id)?;
        self.engine(&peer, move |levh, scope| {
            let update = levh
                .update_content(scope, id, &args.content)
                .map_err(describe)?;
            Ok(Json(UpdateView::new(&update, levh.now())))
        })
        .await
    }

    /// Retire a memory from every read (kept for known_at history).
    #[tool(annotations(
        title = "Forget a memory",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn forget_memory(
        &self,
        Parameters(args): Parameters<IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<Done>, String> {
        let id = memory_id("id", &args.id)?;
        let done = self
            .engine(&peer, move |levh, scope| {
                let pinned = levh.get(scope, id).map_err(describe)?.state.pinned;
                levh.forget(scope, id).map_err(describe)?;
                Ok((
                    Done {
                        memory_id: id.to_string(),
                        status: "forgotten".into(),
                    },
                    pinned,
                ))
            })
            .await?;
        if done.1 {
            self.pinned_set_changed(&peer).await;
        }
        Ok(Json(done.0))
    }

    /// Tell levh whether a memory helped: helpful reinforces; unhelpful halves its
    /// stability without resetting its clock.
    #[tool(annotations(
        title = "Memory feedback",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn memory_feedback(
        &self,
        Parameters(args): Parameters<FeedbackArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MemoryView>, String> {
        let helpful = args.helpful;
        self.update_state(&peer, &args.id, move |levh, scope, id| {
            levh.feedback(scope, id, helpful)
        })
        .await
    }

    /// Erase a memory and every copy of its content, and report any residue.
    #[tool(annotations(
        title = "Purge a memory",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn purge_memory(
        &self,
        Parameters(args): Parameters<IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<PurgeView>, String> {
        let id = memory_id("id", &args.id)?;
        let view = self
            .engine(&peer, move |levh, scope| {
                let report = levh.purge(scope, id).map_err(describe)?;
                Ok(PurgeView {
                    memory_id: report.memory_id.to_string(),
                    held_removed: report.held_removed,
                    residue: report.residue,
                })
            })
            .await?;
        self.pinned_set_changed(&peer).await;
        Ok(Json(view))
    }

    /// Find stored memories holding secrets that today's patterns recognise.
    #[tool(annotations(
        title = "Audit secrets",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn audit_secrets(&self, peer: Peer<RoleServer>) -> Result<Json<SecretsView>, String> {
        self.engine(&peer, move |levh, scope| {
            let findings = levh.audit_secrets(scope).map_err(describe)?;
            Ok(Json(secrets_view(findings, false)))
        })
        .await
    }

    /// Strip recognised secrets from stored memories (re-embedding each).
    #[tool(annotations(
        title = "Redact secrets",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn redact_secrets(&self, peer: Peer<RoleServer>) -> Result<Json<SecretsView>, String> {
        self.engine(&peer, move |levh, scope| {
            let findings = levh.redact_secrets(scope).map_err(describe)?;
            Ok(Json(secrets_view(findings, true)))
        })
        .await
    }

    /// The held queue: content the gate declined to judge, waiting for a person.
    #[tool(annotations(
        title = "List held memories",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_held_memories(
        &self,
        Parameters(args): Parameters<HeldListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<HeldList>, String> {
        let status = match args.status.as_deref() {
            None => HeldStatus::Held,
            Some(text) => HeldStatus::parse(text.trim()).ok_or_else(|| {
                format!("invalid status: '{text}' is not held, admitted, discarded or expired")
            })?,
        };
        self.engine(&peer, move |levh, scope| {
            let held = levh.held_list(scope, Some(status)).map_err(describe)?;
            Ok(Json(HeldList {
                held: held.iter().map(HeldView::from).collect(),
                how_to_decide: HOW_TO_DECIDE.into(),
            }))
        })
        .await
    }

    /// Ask the person behind this client to decide a held candidate: the client shows
    /// them the candidate, its nearest memory and the choices (admit, admit as
    /// replacement, discard). The agent cannot answer for them; a client without
    /// elicitation is refused.
    #[tool(annotations(
        title = "Decide a held memory (asks the person)",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn decide_held_memory(
        &self,
        Parameters(args): Parameters<DecideArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<DecisionView>, String> {
        let held_id = args.held_id.parse::<HeldId>().map_err(|_| {
            format!(
                "invalid held_id: '{}' is not a held candidate id (expected a UUID)",
                args.held_id
            )
        })?;
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(format!(
                "decide_held_memory needs a client that supports MCP elicitation, so that a person \
                 answers and not the agent; this client did not declare it. Nothing was decided. \
                 Instead, {HOW_TO_DECIDE}."
            ));
        }
        let (held, nearest) = self
            .engine(&peer, move |levh, scope| {
                let held = levh.held_get(scope, held_id).map_err(describe)?;
                if held.status != HeldStatus::Held {
                    return Err(format!(
                        "held candidate {held_id} was already decided ({})",
                        held.status.as_str()
                    ));
                }
                let nearest = held.nearest.and_then(|n| levh.get(scope, n.id).ok());
                Ok((held, nearest))
            })
            .await?;
        let mut message = format!(
            "levh held this memory for you to decide (the agent cannot).\n\nCandidate:\n  {}\n\nWhy: {}\n",
            held.content, held.reason
        );
        let mut values = vec![ADMIT.to_owned()];
        let mut titles = vec!["Admit it as a new memory".to_owned()];
        if let Some(nearest) = &nearest {
            message.push_str(&format!(
                "\nNearest existing memory ({}):\n  {}\n",
                nearest.id, nearest.content
            ));
            values.push(REPLACE.to_owned());
            titles.push("Admit it as a replacement of the nearest memory".to_owned());
        }
        values.push(DISCARD.to_owned());
        titles.push("Discard it".to_owned());
        let choices = EnumSchema::builder(values)
            .enum_titles(titles)
            .map_err(|e| format!("internal error: {e}"))?
            .build();
        let schema = ElicitationSchema::builder()
            .required_enum_schema("decision", choices)
            .build()
            .map_err(|e| format!("internal error: {e}"))?;
        let answer = peer
            .create_elicitation(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            })
            .await
            .map_err(|e| {
                format!("the client could not ask the person ({e}); nothing was decided")
            })?;
        let held_text = held_id.to_string();
        let undecided = |outcome: &str| {
            Ok(Json(DecisionView {
                held_id: held_text.clone(),
                outcome: outcome.to_owned(),
                memory_id: None,
                superseded: None,
            }))
        };
        match answer.action {
            ElicitationAction::Accept => {}
            ElicitationAction::Decline => return undecided("declined"),
            _ => return undecided("cancelled"),
        }
        let decision = answer
            .content
            .as_ref()
            .and_then(|c| c.get("decision"))
            .and_then(|d| d.as_str())
            .unwrap_or_default()
            .to_owned();
        let person = format!(
            "person at {}",
            client_name(&peer).unwrap_or_else(|| "an MCP client".into())
        );
        self.engine(&peer, move |levh, scope| {
            let mut scope = scope.clone();
            scope.actor.principal = Some(person);
            let view = match decision.as_str() {
                ADMIT | REPLACE => {
                    let supersede = decision == REPLACE;
                    let admission = levh
                        .held_admit(&scope, held_id, supersede)
                        .map_err(describe)?;
                    DecisionView {
                        held_id: held_id.to_string(),
                        outcome: if supersede {
                            "admitted_as_replacement".into()
                        } else {
                            "admitted".into()
                        },
                        memory_id: Some(admission.memory_id.to_string()),
                        superseded: admission.superseded.map(|id| id.to_string()),
                    }
                }
                DISCARD => {
                    levh.held_discard(&scope, held_id).map_err(describe)?;
                    DecisionView {
                        held_id: held_id.to_string(),
                        outcome: "discarded".into(),
                        memory_id: None,
                        superseded: None,
                    }
                }
                other => {
                    return Err(format!(
                        "the client answered {other:?}, which is not one of the offered choices; nothing was decided"
                    ));
                }
            };
            Ok(Json(view))
        })
        .await
    }

    /// Open a session; pass its id as session_id when storing.
    #[tool(annotations(
        title = "Create a session",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn create_session(
        &self,
        Parameters(args): Parameters<ProjectArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<SessionView>, String> {
        self.engine(&peer, move |levh, scope| {
            let session = levh.create_session(scope, args.project).map_err(describe)?;
            Ok(Json(SessionView::from(&session)))
        })
        .await
    }

    /// End a session opened with create_session (ending it twice keeps the first end).
    #[tool(annotations(
        title = "End a session",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn end_session(
        &self,
        Parameters(args): Parameters<SessionArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<SessionView>, String> {
        self.engine(&peer, move |levh, scope| {
            let session = levh
                .end_session(scope, &SessionId::new(args.session_id))
                .map_err(describe)?;
            Ok(Json(SessionView::from(&session)))
        })
        .await
    }

    /// Built-in and installed connectors, with what they ask for and what a person granted.
    #[tool(annotations(
        title = "List connectors",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_connectors(&self) -> Result<Json<ConnectorOutput>, String> {
        let connectors = self.connectors()?;
        let result = tokio::task::spawn_blocking(move || connectors.list())
            .await
            .map_err(|e| format!("internal error: {e}"))??;
        Ok(Json(ConnectorOutput { result }))
    }

    /// A connector's settings, requested capabilities and stored grants.
    #[tool(annotations(
        title = "Connector help",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_connector_help(
        &self,
        Parameters(args): Parameters<ConnectorArgs>,
    ) -> Result<Json<ConnectorOutput>, String> {
        let connectors = self.connectors()?;
        let result = tokio::task::spawn_blocking(move || connectors.help(&args.id))
            .await
            .map_err(|e| format!("internal error: {e}"))??;
        Ok(Json(ConnectorOutput { result }))
    }

    /// Run a connector: its items go through the gate into memory. Uses only the grants a
    /// person stored (`levh connector grant`); an agent cannot grant paths or hosts.
    #[tool(annotations(
        title = "Sync a connector",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = true
    ))]
    async fn sync_connector(
        &self,
        Parameters(args): Parameters<SyncArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput>, String> {
        let connectors = self.connectors()?;
        let request = crate::SyncRequest {
            id: args.id,
            config: args.config.unwrap_or_default().into_iter().collect(),
            project: args.project,
            dry_run: args.dry_run.unwrap_or(false),
        };
        self.engine(&peer, move |levh, scope| {
            let report = connectors.sync(levh, scope, request)?;
            let result = serde_json::to_value(&report).map_err(|e| e.to_string())?;
            Ok(Json(ConnectorOutput { result }))
        })
        .await
    }

    /// Recent sync runs and their tallies.
    #[tool(annotations(
        title = "Connector sync status",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn connector_sync_status(
        &self,
        Parameters(args): Parameters<SyncStatusArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConnectorOutput>, String> {
        self.engine(&peer, move |levh, scope| {
            let runs = levh
                .sync_runs(scope, args.id.as_deref(), args.limit.unwrap_or(10))
                .map_err(describe)?;
            let result = serde_json::to_value(&runs).map_err(|e| e.to_string())?;
            Ok(Json(ConnectorOutput { result }))
        })
        .await
    }
}

impl LevhMcp {
    fn connectors(&self) -> Result<std::sync::Arc<dyn crate::Connectors>, String> {
        self.connectors.clone().ok_or_else(|| {
            "this levh MCP server runs without the connector runtime; use `levh sync` or `levh mcp stdio --profile full`".to_owned()
        })
    }
}

pub fn secrets_view(findings: Vec<levh_core::SecretFinding>, redacted: bool) -> SecretsView {
    SecretsView {
        findings: findings
            .into_iter()
            .map(|f| SecretFindingView {
                memory_id: f.memory_id.to_string(),
                kinds: f.kinds,
            })
            .collect(),
        redacted,
    }
}
