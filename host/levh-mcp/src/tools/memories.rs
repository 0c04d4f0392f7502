//! Tools on memories: store, list, change, forget, purge, and what the model says.

use levh_api::memories;
use levh_api::requests::{
    FadingArgs, FeedbackArgs, GetArgs, IdArgs, ImportanceArgs, ListArgs, RelatedArgs, StoreArgs,
    StoreBatchArgs, UpdateArgs, UpdateBody, UpsertArgs,
};
use levh_api::views::{
    BatchView, CaptureView, Done, FadingList, GotMemory, MemoryList, MemoryView, PurgeView,
    RelatedList, UpdateView, UpsertView,
};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use super::client_name;
use crate::LevhMcp;
use crate::arguments::Parameters;

impl LevhMcp {
    /// Stores through the gate, recording the client's name as the source; tells the
    /// client when a stored memory was pinned at once.
    pub(crate) async fn capture(
        &self,
        peer: &Peer<RoleServer>,
        args: StoreArgs,
    ) -> Result<Json<CaptureView>, String> {
        let source = client_name(peer).unwrap_or_else(|| "mcp".to_owned());
        let pinned = args.pin.unwrap_or(false);
        let view = self
            .run(peer, move |levh, scope| {
                memories::store(levh, scope, args, source)
            })
            .await?;
        if pinned && view.memory_id.is_some() {
            self.pinned_set_changed(peer).await;
        }
        Ok(Json(view))
    }

    /// Pins or unpins, and tells the client its resources changed.
    async fn pinning(
        &self,
        peer: &Peer<RoleServer>,
        id: String,
        pinned: bool,
    ) -> Result<Json<MemoryView>, String> {
        let view = self
            .run(peer, move |levh, scope| {
                memories::set_pinned(levh, scope, &id, pinned)
            })
            .await?;
        self.pinned_set_changed(peer).await;
        Ok(Json(view))
    }
}

#[tool_router(router = memory_router, vis = "pub(crate)")]
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
        self.capture(&peer, args).await
    }

    /// Remember many things at once (1..1000), e.g. importing notes. Each item gets its own
    /// gate verdict, as if sent alone after the ones before it: a copy of an earlier item
    /// is rejected, a near-copy is held for a person. An invalid item is named by its
    /// index; the others are stored.
    #[tool(annotations(
        title = "Store many memories",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn store_memories(
        &self,
        Parameters(args): Parameters<StoreBatchArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<BatchView>, String> {
        let source = client_name(&peer).unwrap_or_else(|| "mcp".to_owned());
        let pinned = args.memories.iter().any(|m| m.pin.unwrap_or(false));
        let view = self
            .run(&peer, move |levh, scope| {
                memories::store_batch(levh, scope, args, source)
            })
            .await?;
        if pinned && view.admitted + view.redacted > 0 {
            self.pinned_set_changed(&peer).await;
        }
        Ok(Json(view))
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
        self.run(&peer, move |levh, scope| memories::list(levh, scope, args))
            .await
            .map(Json)
    }

    /// Write a fact under a key ("build command", "owner of billing") that you rewrite in
    /// place: the key's current memory is replaced (the old one kept for `as_of`), an
    /// unchanged value writes nothing. It passes the admission gate like any memory. An
    /// optional JSON `value` travels beside the text, read back by pointer.
    #[tool(annotations(
        title = "Upsert a keyed memory",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn upsert_memory(
        &self,
        Parameters(args): Parameters<UpsertArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<UpsertView>, String> {
        self.run(&peer, move |levh, scope| {
            memories::upsert(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// One memory by its id, or the memory under a key (the current one, or with `as_of`
    /// the one that held then); `pointer` (`/deploy/region`) reads into its JSON value.
    #[tool(annotations(
        title = "Get a memory",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn get_memory(
        &self,
        Parameters(args): Parameters<GetArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<GotMemory>, String> {
        self.run(&peer, move |levh, scope| {
            memories::get_by(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Record a mistake — what happened, why, how to avoid it — so that `check_action`
    /// warns before it happens again. Stored through the admission gate like any memory.
    #[tool(annotations(
        title = "Record a mistake",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn record_mistake(
        &self,
        Parameters(args): Parameters<levh_api::mistakes::MistakeArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<CaptureView>, String> {
        let source = client_name(&peer).unwrap_or_else(|| "mcp".to_owned());
        self.run(&peer, move |levh, scope| {
            levh_api::mistakes::record(levh, scope, args, source)
        })
        .await
        .map(Json)
    }

    /// Before you act: the recorded mistakes and pinned rules that apply to the action,
    /// ranked, each with why it happened and how to avoid it — or "no known issue".
    #[tool(annotations(
        title = "Check an action",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn check_action(
        &self,
        Parameters(args): Parameters<levh_api::mistakes::CheckArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::mistakes::CheckView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::mistakes::check(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Write down where a task stands — goal, what is done, what comes next, open
    /// questions, the memories it rests on — before a session ends or the context is
    /// compacted. One current checkpoint per task; the last one is kept for history.
    #[tool(annotations(
        title = "Checkpoint a task",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn checkpoint(
        &self,
        Parameters(args): Parameters<levh_api::checkpoints::CheckpointArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<UpsertView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::checkpoints::checkpoint(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Resume a task: its latest checkpoint, then what was stored and used since, the
    /// project's open commitments and decisions — as one text within `max_tokens`.
    #[tool(annotations(
        title = "Continue a task",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn continue_task(
        &self,
        Parameters(args): Parameters<levh_api::checkpoints::ContinueArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::checkpoints::ContinueView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::checkpoints::resume(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Set a goal you will work towards over many sessions, with its milestones.
    #[tool(annotations(
        title = "Create a goal",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn create_goal(
        &self,
        Parameters(args): Parameters<levh_api::goals::GoalArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::goals::GoalChange>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::goals::create(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Change a goal: its status (active, blocked, done, dropped), milestones reached or
    /// added, and a progress note (kept as a memory, linked from the goal's log).
    #[tool(annotations(
        title = "Update a goal",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn update_goal(
        &self,
        Parameters(args): Parameters<levh_api::goals::GoalUpdateArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::goals::GoalChange>, String> {
        let source = client_name(&peer).unwrap_or_else(|| "mcp".to_owned());
        self.run(&peer, move |levh, scope| {
            levh_api::goals::update(levh, scope, args, source)
        })
        .await
        .map(Json)
    }

    /// The goals, most recently changed first, with milestones, status and progress log.
    #[tool(annotations(
        title = "List goals",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_goals(
        &self,
        Parameters(args): Parameters<levh_api::goals::GoalListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::goals::GoalList>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::goals::list(levh, scope, args)
        })
        .await
        .map(Json)
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
        self.run(&peer, move |levh, scope| {
            memories::reinforce(levh, scope, &args.id)
        })
        .await
        .map(Json)
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
        self.pinning(&peer, args.id, true).await
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
        self.pinning(&peer, args.id, false).await
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
        self.run(&peer, move |levh, scope| {
            memories::set_importance(levh, scope, &args.id, args.importance)
        })
        .await
        .map(Json)
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
        self.run(&peer, move |levh, scope| {
            memories::related(levh, scope, args)
        })
        .await
        .map(Json)
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
        self.run(&peer, move |levh, scope| {
            memories::fading(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Replace a memory's content (it keeps its id and history). The gate judges the new
    /// content like a capture: a duplicate of another memory is rejected, content close to
    /// another is held for a person (held_id), anything else is applied with secrets
    /// redacted. `applied` says whether it changed.
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
        let body = UpdateBody {
            content: Some(args.content),
            importance: None,
        };
        self.run(&peer, move |levh, scope| {
            memories::update(levh, scope, &args.id, body)
        })
        .await
        .map(Json)
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
        let forgotten = self
            .run(&peer, move |levh, scope| {
                memories::forget(levh, scope, &args.id)
            })
            .await?;
        if forgotten.was_pinned {
            self.pinned_set_changed(&peer).await;
        }
        Ok(Json(forgotten.done))
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
        self.run(&peer, move |levh, scope| {
            memories::feedback(levh, scope, &args.id, args.helpful)
        })
        .await
        .map(Json)
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
        let view = self
            .run(&peer, move |levh, scope| {
                memories::purge(levh, scope, &args.id)
            })
            .await?;
        self.pinned_set_changed(&peer).await;
        Ok(Json(view))
    }
}
