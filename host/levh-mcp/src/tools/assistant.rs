//! Tools of the assistant: ask (an answer citing the memories it used), the daily briefing
//! and meeting prep. All read-only: asking reinforces nothing.

use levh_api::requests::{AskArgs, BriefingArgs, ConflictListArgs, MeetingPrepArgs};
use levh_api::views::{AnswerView, BriefingView, ConflictList, MeetingPrepView, TrustView};
use levh_api::{ask, briefing, conflicts};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use crate::LevhMcp;
use crate::arguments::Parameters;

#[tool_router(router = assistant_router, vis = "pub(crate)")]
impl LevhMcp {
    /// Answers a question from the memories, citing each memory it used (id, day, source):
    /// with a configured model (LEVH_LLM_URL) in its words, every citation checked; without
    /// one, the evidence grouped by person with each memory's best-matching sentence.
    /// Prefers memories of people the question names and keeps to the days its time words
    /// choose ("last week"). Reinforces nothing.
    #[tool(annotations(
        title = "Ask",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn ask(
        &self,
        Parameters(args): Parameters<AskArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<AnswerView>, String> {
        self.run(&peer, move |levh, scope| {
            let model =
                levh_embed::chat::ChatModel::from_env().map_err(levh_api::Error::invalid)?;
            ask::ask(
                levh,
                scope,
                args,
                model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
            )
        })
        .await
        .map(Json)
    }

    /// The day at a glance in the user's zone: its events, the user's promises due or
    /// overdue, promises others owe, decisions of the last seven days, the people of the
    /// day's meetings with what was last discussed, and important memories fading.
    #[tool(annotations(
        title = "Daily briefing",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn briefing(
        &self,
        Parameters(args): Parameters<BriefingArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<BriefingView>, String> {
        self.run(&peer, move |levh, scope| {
            briefing::briefing(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Prepares a meeting (a calendar event by memory id or source id; the next one by
    /// default): each attendee with what was last discussed and what is open with them,
    /// related decisions and documents, earlier meetings of the same title.
    #[tool(annotations(
        title = "Meeting prep",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn meeting_prep(
        &self,
        Parameters(args): Parameters<MeetingPrepArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<MeetingPrepView>, String> {
        self.run(&peer, move |levh, scope| {
            briefing::meeting_prep(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Pairs of memories that may disagree (a different value, a negation, opposite
    /// words, another name in the same role), found when a memory is stored or by
    /// `levh conflicts detect`; open ones unless asked. Resolving them is a person's
    /// (`levh conflicts resolve`, REST, the dashboard), never an agent's.
    #[tool(annotations(
        title = "List conflicts",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_conflicts(
        &self,
        Parameters(args): Parameters<ConflictListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<ConflictList>, String> {
        self.run(&peer, move |levh, scope| conflicts::list(levh, scope, args))
            .await
            .map(Json)
    }

    /// How far one memory can be believed, separate from ranking: its source, a person's
    /// review (admitted from the held queue, feedback), corroboration by other sources, age,
    /// and risks (an open conflict, redactions, a supersession), summed to 0..1 with a label
    /// and each factor's reason.
    #[tool(annotations(
        title = "Memory trust",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn memory_trust(
        &self,
        Parameters(args): Parameters<levh_api::requests::IdArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<TrustView>, String> {
        let Some(events) = self.events.clone() else {
            return Err("memory_trust reads the event log, which this MCP server was started without (nothing was changed)".into());
        };
        self.run(&peer, move |levh, scope| {
            levh_api::trust::trust(levh, events.as_ref(), scope, &args.id)
        })
        .await
        .map(Json)
    }

    /// What was recalled and what was done with it, from the event log: each recall,
    /// search and ask since `since` (default 7 days) with the ids it returned, its tokens,
    /// which were then used or marked unhelpful, and the recalls that found nothing.
    /// Query text only when the operator turned query logging on.
    #[tool(annotations(
        title = "Recall report",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn report_recalls(
        &self,
        Parameters(args): Parameters<levh_api::reports::ReportArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::reports::RecallReportView>, String> {
        let Some(events) = self.events.clone() else {
            return Err("report_recalls reads the event log, which this MCP server was started without (nothing was changed)".into());
        };
        self.run(&peer, move |levh, scope| {
            levh_api::reports::recalls(levh, events.as_ref(), scope, args)
        })
        .await
        .map(Json)
    }

    /// What each token and client stored and recalled per day (UTC) since `since`
    /// (default 7 days): memories and bytes stored, recalls, and the memories, tokens and
    /// bytes they returned.
    #[tool(annotations(
        title = "Usage report",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn report_usage(
        &self,
        Parameters(args): Parameters<levh_api::reports::ReportArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::reports::UsageView>, String> {
        let Some(events) = self.events.clone() else {
            return Err("report_usage reads the event log, which this MCP server was started without (nothing was changed)".into());
        };
        self.run(&peer, move |levh, scope| {
            levh_api::reports::usage(levh, events.as_ref(), scope, args)
        })
        .await
        .map(Json)
    }

    /// The review queue: fading memories waiting for a person's decision, weakest first,
    /// each with how often it was reviewed; those a decision put off are left out until
    /// they are due.
    #[tool(annotations(
        title = "List memories to review",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_review_memories(
        &self,
        Parameters(args): Parameters<levh_api::requests::ReviewQueueArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::ReviewQueueView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::review::queue(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// A review decision on a fading memory: `keep` (shown again after a growing
    /// interval: 1, 2, 4, 8… days), `reinforce`, `weaken`, `pin`, `snooze` with `days`, or
    /// `forget` (retired from every read). Recorded in the memory's history.
    #[tool(annotations(
        title = "Review a memory",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn review_memory(
        &self,
        Parameters(args): Parameters<levh_api::requests::ReviewArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::ReviewView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::review::review(
                levh,
                scope,
                &args.id,
                levh_api::requests::ReviewBody {
                    decision: args.decision,
                    days: args.days,
                },
            )
        })
        .await
        .map(Json)
    }

    /// Consolidates clusters of related memories: in each project, live unpinned memories
    /// older than `older_than_days` (default 30) that are about one thread become one
    /// summary memory (kind `summary`) each, which retires them from default recall but
    /// keeps them (shown on the summary's page and with `as_of`). Pinned memories are
    /// never touched. `dry_run` shows the clusters without writing. Undo with
    /// `undo_consolidation`.
    #[tool(annotations(
        title = "Consolidate memories",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn consolidate(
        &self,
        Parameters(args): Parameters<levh_api::requests::ConsolidateArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::ConsolidationView>, String> {
        self.run(&peer, move |levh, scope| {
            let model =
                levh_embed::chat::ChatModel::from_env().map_err(levh_api::Error::invalid)?;
            levh_api::consolidation::consolidate(
                levh,
                scope,
                args,
                model.as_ref().map(|m| m as &dyn levh_core::AnswerModel),
            )
        })
        .await
        .map(Json)
    }

    /// Undoes a consolidation: the memories its summary replaced are live again as they
    /// were, and the summary is forgotten.
    #[tool(annotations(
        title = "Undo a consolidation",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn undo_consolidation(
        &self,
        Parameters(args): Parameters<levh_api::requests::UndoConsolidationArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::UndoConsolidationView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::consolidation::undo(levh, scope, &args.id)
        })
        .await
        .map(Json)
    }

    /// Attaches a file to a memory: PDF, HTML, Markdown or UTF-8 text, base64, at most
    /// 10 MiB. Its text is derived and stored through the gate as an `attachment` memory
    /// in the memory's project (recall finds it); the file is kept beside the store. A file
    /// holding a secret is refused. Purging either memory erases the file too.
    #[tool(annotations(
        title = "Attach a file",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn attach_file(
        &self,
        Parameters(args): Parameters<levh_api::requests::AttachFileArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::AttachedView>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::attachments::attach_encoded(
                levh,
                scope,
                &args.id,
                levh_api::requests::AttachArgs {
                    name: args.name,
                    content_base64: args.content_base64,
                },
            )
        })
        .await
        .map(Json)
    }

    /// The files attached to a memory, oldest first.
    #[tool(annotations(
        title = "List attachments",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_attachments(
        &self,
        Parameters(args): Parameters<levh_api::requests::AttachmentsArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<levh_api::views::AttachmentList>, String> {
        self.run(&peer, move |levh, scope| {
            levh_api::attachments::list(levh, scope, &args.id)
        })
        .await
        .map(Json)
    }
}
