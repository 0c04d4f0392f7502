//! The table of operations: one name and one required role each. REST's router takes each
//! route's role from here, MCP checks each tool call against it, and tests check that
//! every route and every tool has an entry — so who may call what is decided once.

use levh_core::Role;

/// Every operation levh offers, on whichever surfaces have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Operation {
    // -- memories
    /// Store through the gate (`store_memory`, `admit_memory`, `POST /api/memories`).
    StoreMemory,
    /// Store many through the gate in one transaction, each with its own verdict
    /// (`store_memories`, `POST /api/memories:batch`, `levh import`).
    StoreMemories,
    /// List memories, newest first.
    ListMemories,
    /// One memory.
    GetMemory,
    /// Change content (through the gate) and/or importance.
    UpdateMemory,
    /// Set importance.
    SetImportance,
    /// Retire a memory from every read.
    ForgetMemory,
    /// Reinforce as if recalled.
    ReinforceMemory,
    /// Pin: never fades.
    PinMemory,
    /// Unpin: decays again.
    UnpinMemory,
    /// Move memories to another project.
    MoveMemories,
    /// Store a fact under a key, replacing the key's current memory.
    UpsertMemory,
    /// Record a mistake: what happened, why, how to avoid it.
    RecordMistake,
    /// The mistakes and pinned rules that apply to an action (reinforcing the mistakes).
    CheckAction,
    /// Write where a task stands: goal, done, next, open questions.
    Checkpoint,
    /// Everything needed to resume a task, within a token budget.
    ContinueTask,
    /// Set a goal with milestones.
    CreateGoal,
    /// Change a goal: status, milestones, a progress note.
    UpdateGoal,
    /// The goals.
    ListGoals,
    /// Helpful (reinforces) or wrong (weakens).
    MemoryFeedback,
    /// Erase a memory and every trace of its content.
    PurgeMemory,
    /// Memories closest to one memory.
    RelatedMemories,
    /// What happened to one memory, from the event log.
    MemoryHistory,
    /// Who used the memory: each surface and client, from the event log.
    ListAgents,
    /// What was recalled and what was done with it, from the event log.
    ReportRecalls,
    /// What each token and client stored and recalled, per day.
    ReportUsage,
    /// The MCP sessions connected now.
    ListPresence,
    /// Memories below the fading threshold.
    ListFadingMemories,
    /// Predicted retention for the coming days.
    ForgettingCurve,
    /// The H-score and its terms.
    ScoreBreakdown,
    /// Every live memory of the workspace.
    ExportMemories,
    /// A bundle of a granted project for the peer whose share token asks
    /// (`GET /api/share/bundle`; `levh pull PEER` at the other end).
    FetchShareBundle,
    // -- recall
    /// Recall (reinforces what it returns).
    RecallMemory,
    /// Search (reinforces nothing).
    SearchMemory,
    /// Pinned rules and essentials in a token budget.
    GetContext,
    // -- workspace
    /// Counts and averages.
    GetMemoryStats,
    /// Projects with counts.
    ListProjects,
    /// Sessions newest first, with their memories counted.
    ListSessions,
    /// Sources with counts.
    ListSources,
    // -- the gate and the held queue
    /// What the gate would decide, storing nothing.
    EvaluateAdmission,
    /// The held queue.
    ListHeldMemories,
    /// One held candidate.
    GetHeldMemory,
    /// Admit a held candidate (a person's decision).
    AdmitHeldMemory,
    /// Discard a held candidate (a person's decision).
    DiscardHeldMemory,
    /// Ask the person behind an MCP client to decide a held candidate.
    DecideHeldMemory,
    // -- secrets
    /// Memories holding secrets (kinds only).
    AuditSecrets,
    /// Strip secrets from stored memories.
    RedactSecrets,
    // -- sessions
    /// Open a session.
    CreateSession,
    /// End a session.
    EndSession,
    /// Summarise a session into one memory.
    SummarizeSession,
    // -- life cycle
    /// Turn clusters of aged, related memories into one summary each.
    Consolidate,
    /// Undo a consolidation: its members back, its summary forgotten.
    UndoConsolidation,
    /// Attach a file to a memory (its text through the gate, found by recall).
    AttachFile,
    /// A memory's attached files.
    ListAttachments,
    // -- connectors
    /// Connectors, manifests and grants.
    ListConnectors,
    /// One connector's settings and grants.
    GetConnectorHelp,
    /// Run a connector with its stored grants.
    SyncConnector,
    /// Let a connector read a directory or reach a host (a person's decision).
    GrantConnector,
    /// Take a connector's grant back.
    RevokeConnector,
    /// Recent sync runs.
    ConnectorSyncStatus,
    // -- the server itself
    /// Liveness and store health.
    Health,
    /// The API's own description (OpenAPI).
    DescribeApi,
    /// The live feed of every mutation.
    WatchFeed,
    /// The store's checks, the embedder, the scorer and MCP client configurations.
    GetSettings,
    // -- what the memories say
    /// Decisions the memories state.
    ListDecisions,
    /// Promises the memories make, with their due dates.
    ListCommitments,
    /// A person marks a commitment done.
    CompleteCommitment,
    /// Memories grouped by the day they happened.
    Timeline,
    // -- the assistant
    /// An answer to a question, citing the memories it used (reinforces nothing).
    Ask,
    /// The day at a glance: events, what is due, decisions, people, what is fading.
    Briefing,
    /// What to know before a meeting.
    MeetingPrep,
    /// Pairs of memories that may disagree.
    ListConflicts,
    /// Look for pairs that may disagree among the newest memories.
    DetectConflicts,
    /// A person resolves a conflict candidate.
    ResolveConflict,
    /// How far a memory can be believed, factor by factor.
    MemoryTrust,
    /// Fading memories waiting for a person's review.
    ListReviewMemories,
    /// A person's review decision on a fading memory.
    ReviewMemory,
    // -- the entity index
    /// Entities of every kind.
    ListEntities,
    /// People with counts, last interaction, channels and organizations.
    ListPeople,
    /// Organizations by e-mail domain with their people.
    ListOrganizations,
    /// Everything about one entity.
    AboutEntity,
    /// Entities and their co-occurrence edges.
    EntityGraph,
    /// Merge two entities the heuristics kept apart.
    MergeEntities,
    /// Index the memories not indexed under today's rules.
    ReindexEntities,
    // -- tokens of the workspace
    /// The workspace's tokens (never their secrets).
    ListTokens,
    /// Issue a token in the caller's workspace (its secret shown once).
    CreateToken,
    /// Revoke one of the workspace's tokens.
    RevokeToken,
}

use Operation as O;

impl Operation {
    /// Every operation, in the order of the table.
    pub const ALL: &[Operation] = &[
        O::StoreMemory,
        O::StoreMemories,
        O::ListMemories,
        O::GetMemory,
        O::UpdateMemory,
        O::SetImportance,
        O::ForgetMemory,
        O::ReinforceMemory,
        O::PinMemory,
        O::UnpinMemory,
        O::MoveMemories,
        O::UpsertMemory,
        O::RecordMistake,
        O::CheckAction,
        O::Checkpoint,
        O::ContinueTask,
        O::CreateGoal,
        O::UpdateGoal,
        O::ListGoals,
        O::MemoryFeedback,
        O::PurgeMemory,
        O::RelatedMemories,
        O::MemoryHistory,
        O::ListAgents,
        O::ReportRecalls,
        O::ReportUsage,
        O::ListPresence,
        O::ListFadingMemories,
        O::ForgettingCurve,
        O::ScoreBreakdown,
        O::ExportMemories,
        O::FetchShareBundle,
        O::RecallMemory,
        O::SearchMemory,
        O::GetContext,
        O::GetMemoryStats,
        O::ListProjects,
        O::ListSessions,
        O::ListSources,
        O::EvaluateAdmission,
        O::ListHeldMemories,
        O::GetHeldMemory,
        O::AdmitHeldMemory,
        O::DiscardHeldMemory,
        O::DecideHeldMemory,
        O::AuditSecrets,
        O::RedactSecrets,
        O::CreateSession,
        O::EndSession,
        O::SummarizeSession,
        O::Consolidate,
        O::UndoConsolidation,
        O::AttachFile,
        O::ListAttachments,
        O::ListConnectors,
        O::GetConnectorHelp,
        O::SyncConnector,
        O::GrantConnector,
        O::RevokeConnector,
        O::ConnectorSyncStatus,
        O::Health,
        O::DescribeApi,
        O::WatchFeed,
        O::GetSettings,
        O::ListDecisions,
        O::ListCommitments,
        O::CompleteCommitment,
        O::Timeline,
        O::Ask,
        O::Briefing,
        O::MeetingPrep,
        O::ListConflicts,
        O::ListReviewMemories,
        O::ReviewMemory,
        O::DetectConflicts,
        O::ResolveConflict,
        O::MemoryTrust,
        O::ListEntities,
        O::ListPeople,
        O::ListOrganizations,
        O::AboutEntity,
        O::EntityGraph,
        O::MergeEntities,
        O::ReindexEntities,
        O::ListTokens,
        O::CreateToken,
        O::RevokeToken,
    ];

    /// The weakest role that may call it. Reading is for viewers; recall writes
    /// (it reinforces), so it is for editors; purging and deciding held candidates are
    /// for admins (SPEC §8), and so are grants and tokens.
    pub fn role(self) -> Role {
        match self {
            O::ListMemories
            | O::GetMemory
            | O::ListAttachments
            | O::RelatedMemories
            | O::MemoryHistory
            | O::ListAgents
            | O::ReportRecalls
            | O::ReportUsage
            | O::ListPresence
            | O::ContinueTask
            | O::ListGoals
            | O::ListFadingMemories
            | O::ForgettingCurve
            | O::ScoreBreakdown
            | O::ExportMemories
            | O::FetchShareBundle
            | O::SearchMemory
            | O::GetContext
            | O::GetMemoryStats
            | O::ListProjects
            | O::ListSessions
            | O::ListSources
            | O::EvaluateAdmission
            | O::ListHeldMemories
            | O::GetHeldMemory
            | O::AuditSecrets
            | O::ListConnectors
            | O::GetConnectorHelp
            | O::ConnectorSyncStatus
            | O::Health
            | O::DescribeApi
            | O::WatchFeed
            | O::GetSettings
            | O::ListDecisions
            | O::ListCommitments
            | O::Timeline
            | O::Ask
            | O::Briefing
            | O::MeetingPrep
            | O::ListConflicts
            | O::ListReviewMemories
            | O::MemoryTrust
            | O::ListEntities
            | O::ListPeople
            | O::ListOrganizations
            | O::AboutEntity
            | O::EntityGraph => Role::Viewer,
            O::StoreMemory
            | O::StoreMemories
            | O::UpdateMemory
            | O::SetImportance
            | O::ForgetMemory
            | O::ReinforceMemory
            | O::PinMemory
            | O::UnpinMemory
            | O::MoveMemories
            | O::UpsertMemory
            | O::RecordMistake
            | O::CheckAction
            | O::Checkpoint
            | O::CreateGoal
            | O::UpdateGoal
            | O::MemoryFeedback
            | O::RecallMemory
            | O::RedactSecrets
            | O::CreateSession
            | O::EndSession
            | O::SummarizeSession
            | O::Consolidate
            | O::UndoConsolidation
            | O::AttachFile
            | O::SyncConnector
            | O::CompleteCommitment
            | O::DetectConflicts
            | O::ResolveConflict
            | O::ReviewMemory
            | O::MergeEntities
            | O::ReindexEntities => Role::Editor,
            // A token's list names who holds access; issuing one grants it.
            O::PurgeMemory
            | O::AdmitHeldMemory
            | O::DiscardHeldMemory
            | O::DecideHeldMemory
            | O::ListTokens
            | O::CreateToken
            | O::RevokeToken
            | O::GrantConnector
            | O::RevokeConnector => Role::Admin,
        }
    }

    /// Whether it changes nothing (MCP's `readOnlyHint` must agree).
    pub fn is_read_only(self) -> bool {
        self.role() == Role::Viewer
    }

    /// Its name: the MCP tool's name where there is one.
    pub fn name(self) -> &'static str {
        match self {
            O::StoreMemory => "store_memory",
            O::StoreMemories => "store_memories",
            O::MoveMemories => "move_memories",
            O::UpsertMemory => "upsert_memory",
            O::RecordMistake => "record_mistake",
            O::CheckAction => "check_action",
            O::Checkpoint => "checkpoint",
            O::ContinueTask => "continue_task",
            O::CreateGoal => "create_goal",
            O::UpdateGoal => "update_goal",
            O::ListGoals => "list_goals",
            O::ListMemories => "list_memories",
            O::GetMemory => "get_memory",
            O::UpdateMemory => "update_memory",
            O::SetImportance => "set_importance",
            O::ForgetMemory => "forget_memory",
            O::ReinforceMemory => "reinforce_memory",
            O::PinMemory => "pin_memory",
            O::UnpinMemory => "unpin_memory",
            O::MemoryFeedback => "memory_feedback",
            O::PurgeMemory => "purge_memory",
            O::RelatedMemories => "related_memories",
            O::MemoryHistory => "memory_history",
            O::ListAgents => "list_agents",
            O::ReportRecalls => "report_recalls",
            O::ReportUsage => "report_usage",
            O::ListPresence => "list_presence",
            O::ListFadingMemories => "list_fading_memories",
            O::ForgettingCurve => "forgetting_curve",
            O::ScoreBreakdown => "score_breakdown",
            O::ExportMemories => "export_memories",
            O::FetchShareBundle => "fetch_share_bundle",
            O::RecallMemory => "recall_memory",
            O::SearchMemory => "search_memory",
            O::GetContext => "get_context",
            O::GetMemoryStats => "get_memory_stats",
            O::ListProjects => "list_projects",
            O::ListSessions => "list_sessions",
            O::ListSources => "list_sources",
            O::EvaluateAdmission => "evaluate_admission",
            O::ListHeldMemories => "list_held_memories",
            O::GetHeldMemory => "get_held_memory",
            O::AdmitHeldMemory => "admit_held_memory",
            O::DiscardHeldMemory => "discard_held_memory",
            O::DecideHeldMemory => "decide_held_memory",
            O::AuditSecrets => "audit_secrets",
            O::RedactSecrets => "redact_secrets",
            O::CreateSession => "create_session",
            O::EndSession => "end_session",
            O::SummarizeSession => "summarize_session",
            O::Consolidate => "consolidate",
            O::UndoConsolidation => "undo_consolidation",
            O::AttachFile => "attach_file",
            O::ListAttachments => "list_attachments",
            O::ListConnectors => "list_connectors",
            O::GetConnectorHelp => "get_connector_help",
            O::SyncConnector => "sync_connector",
            O::GrantConnector => "grant_connector",
            O::RevokeConnector => "revoke_connector",
            O::ConnectorSyncStatus => "connector_sync_status",
            O::Health => "health",
            O::DescribeApi => "describe_api",
            O::WatchFeed => "watch_feed",
            O::GetSettings => "get_settings",
            O::ListDecisions => "list_decisions",
            O::ListCommitments => "list_commitments",
            O::CompleteCommitment => "complete_commitment",
            O::Timeline => "timeline",
            O::Ask => "ask",
            O::Briefing => "briefing",
            O::MeetingPrep => "meeting_prep",
            O::ListConflicts => "list_conflicts",
            O::DetectConflicts => "detect_conflicts",
            O::ResolveConflict => "resolve_conflict",
            O::MemoryTrust => "memory_trust",
            O::ListReviewMemories => "list_review_memories",
            O::ReviewMemory => "review_memory",
            O::ListEntities => "list_entities",
            O::ListPeople => "list_people",
            O::ListOrganizations => "list_organizations",
            O::AboutEntity => "about_entity",
            O::EntityGraph => "entity_graph",
            O::MergeEntities => "merge_entities",
            O::ReindexEntities => "reindex_entities",
            O::ListTokens => "list_tokens",
            O::CreateToken => "create_token",
            O::RevokeToken => "revoke_token",
        }
    }

    /// The operation of this name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|op| op.name() == name)
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = Operation::ALL.iter().map(|op| op.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operation::ALL.len());
        for op in Operation::ALL {
            assert_eq!(Operation::named(op.name()), Some(*op));
        }
    }

    #[test]
    fn only_purging_deciding_held_candidates_grants_and_tokens_need_an_admin() {
        let admin: Vec<_> = Operation::ALL
            .iter()
            .filter(|op| op.role() == Role::Admin)
            .map(|op| op.name())
            .collect();
        assert_eq!(
            admin,
            [
                "purge_memory",
                "admit_held_memory",
                "discard_held_memory",
                "decide_held_memory",
                "grant_connector",
                "revoke_connector",
                "list_tokens",
                "create_token",
                "revoke_token"
            ]
        );
        // Recall reinforces what it returns: it writes.
        assert_eq!(Operation::RecallMemory.role(), Role::Editor);
        assert_eq!(Operation::SearchMemory.role(), Role::Viewer);
    }
}
