//! The MCP server: an rmcp client over an in-process duplex drives every tool (happy path
//! and a bad input), elicitation with three kinds of client, resources, prompts, the
//! profiles; and the real `levh mcp stdio` binary, alone and two at once on one store.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use levh_core::{HeldStatus, MemoryId, NewMemory, Workspace};
use levh_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, GetPromptRequestParams, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents,
};
use levh_mcp::rmcp::service::{NotificationContext, RequestContext, RunningService};
use levh_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use levh_mcp::{LevhMcp, Profile, tokio};
use serde_json::{Value, json};

use crate::support::{Harness, levh};

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// What a test client answers when the server asks its person to decide.
#[derive(Clone, Copy)]
pub(crate) enum Person {
    /// The client has no elicitation capability.
    Absent,
    /// The person picks this choice.
    Chooses(&'static str),
    /// The person declines to decide.
    Declines,
}

#[derive(Clone)]
pub(crate) struct TestClient {
    name: &'static str,
    person: Person,
    /// Messages the server asked the person.
    asked: Arc<Mutex<Vec<String>>>,
    /// `resources/list_changed` notifications received.
    list_changed: Arc<AtomicUsize>,
}

impl TestClient {
    fn new(name: &'static str, person: Person) -> Self {
        Self {
            name,
            person,
            asked: Arc::default(),
            list_changed: Arc::default(),
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.person {
            Person::Absent => ClientCapabilities::default(),
            _ => ClientCapabilities::builder().enable_elicitation().build(),
        };
        ClientConfig::new(capabilities, Implementation::new(self.name, "1.0.0"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            let schema = serde_json::to_string(requested_schema).unwrap();
            self.asked
                .lock()
                .unwrap()
                .push(format!("{message}\n{schema}"));
        }
        Ok(match self.person {
            Person::Chooses(choice) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({ "decision": choice })),
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

pub(crate) type Client = RunningService<RoleClient, TestClient>;

/// A server on the harness's engine, and a client connected to it over a duplex.
async fn connect(harness: &Harness, profile: Profile, client: TestClient) -> Client {
    let server = LevhMcp::new(harness.levh.clone(), Workspace::default(), profile);
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.unwrap();
        let _ = running.waiting().await;
    });
    client.serve(client_io).await.unwrap()
}

pub(crate) async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

/// The structured output of a successful call.
pub(crate) async fn ok(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = call(client, tool, arguments.clone()).await;
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} {arguments} failed: {:?}",
        result.content
    );
    result
        .structured_content
        .unwrap_or_else(|| panic!("{tool}: no structured output"))
}

/// The text of an `isError` result.
async fn error(client: &Client, tool: &str, arguments: Value) -> String {
    let result = call(client, tool, arguments.clone()).await;
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} {arguments} should have failed: {:?}",
        result.structured_content
    );
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn count(harness: &Harness) -> u64 {
    harness.levh.stats(&harness.scope, None).unwrap().total
}

fn id_of(value: &Value) -> MemoryId {
    value["memory_id"].as_str().unwrap().parse().unwrap()
}

const WORK_ONLY: &[&str] = &[
    "about_entity",
    "admit_memory",
    "ask",
    "attach_file",
    "briefing",
    "check_action",
    "checkpoint",
    "continue_task",
    "create_goal",
    "entity_graph",
    "evaluate_admission",
    "get_memory",
    "list_attachments",
    "list_commitments",
    "list_conflicts",
    "list_decisions",
    "list_entities",
    "list_fading_memories",
    "list_goals",
    "list_memories",
    "list_organizations",
    "list_people",
    "list_projects",
    "list_sources",
    "meeting_prep",
    "memory_trust",
    "pin_memory",
    "record_mistake",
    "reinforce_memory",
    "related_memories",
    "set_importance",
    "store_memories",
    "timeline",
    "unpin_memory",
    "update_goal",
    "upsert_memory",
];
const ADMIN_ONLY: &[&str] = &[
    "audit_secrets",
    "consolidate",
    "undo_consolidation",
    "create_session",
    "decide_held_memory",
    "end_session",
    "forget_memory",
    "list_held_memories",
    "list_review_memories",
    "memory_feedback",
    "purge_memory",
    "redact_secrets",
    "review_memory",
    "summarize_session",
    "update_memory",
];
const FULL_ONLY: &[&str] = &[
    "connector_sync_status",
    "get_connector_help",
    "list_connectors",
    "report_recalls",
    "report_usage",
    "sync_connector",
];

#[test]
fn mcp_tools_list_per_profile_matches_the_snapshot() {
    let harness = Harness::new();
    block_on(async {
        let mut expected = vec![
            "get_context",
            "get_memory_stats",
            "recall_memory",
            "search_memory",
            "store_memory",
        ];
        for (profile, added) in [
            (Profile::Minimal, &[][..]),
            (Profile::Work, WORK_ONLY),
            (Profile::Admin, ADMIN_ONLY),
            (Profile::Full, FULL_ONLY),
        ] {
            expected.extend_from_slice(added);
            expected.sort();
            let client = connect(
                &harness,
                profile,
                TestClient::new("snapshot", Person::Absent),
            )
            .await;
            let tools = client.list_all_tools().await.unwrap();
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            assert_eq!(names, expected, "profile {profile}");
            for tool in &tools {
                assert!(
                    tool.output_schema.is_some(),
                    "{} has no output schema",
                    tool.name
                );
                let hints = tool.annotations.as_ref().unwrap();
                assert!(hints.read_only_hint.is_some() && hints.destructive_hint.is_some());
            }
            client.cancel().await.unwrap();
        }
        assert_eq!(expected.len(), 62);
        // The hints are true: a search changes nothing, a purge destroys.
        let tools = LevhMcp::all_tools();
        let hint = |name: &str| {
            tools
                .iter()
                .find(|t| t.name == name)
                .unwrap()
                .annotations
                .clone()
                .unwrap()
        };
        assert_eq!(hint("search_memory").read_only_hint, Some(true));
        assert_eq!(hint("recall_memory").read_only_hint, Some(false));
        assert_eq!(hint("purge_memory").destructive_hint, Some(true));
        assert_eq!(hint("store_memory").destructive_hint, Some(false));
        // No write tool takes a `force`.
        for name in ["store_memory", "admit_memory"] {
            let tool = tools.iter().find(|t| t.name == name).unwrap();
            assert!(
                !tool.input_schema["properties"]
                    .as_object()
                    .unwrap()
                    .contains_key("force")
            );
        }
    });
}

#[test]
fn mcp_tool_outside_the_profile_is_refused_and_changes_nothing() {
    let harness = Harness::new();
    let id = harness.capture("The staging database lives on host db-stage-3");
    block_on(async {
        let client = connect(
            &harness,
            Profile::Work,
            TestClient::new("agent", Person::Absent),
        )
        .await;
        let text = error(&client, "forget_memory", json!({ "id": id.to_string() })).await;
        assert!(
            text.contains("not in this server's profile (work)"),
            "{text}"
        );
        assert!(text.contains("--profile admin"), "{text}");
    });
    assert!(harness.levh.get(&harness.scope, id).is_ok());
}

#[test]
fn mcp_store_recall_search_context_stats_and_their_bad_inputs() {
    let harness = Harness::new();
    block_on(async {
        let client = connect(
            &harness,
            Profile::Minimal,
            TestClient::new("claude-code", Person::Absent),
        )
        .await;

        let stored = ok(&client, "store_memory", json!({
            "content": "We use PostgreSQL 16 as the main database", "project": "api", "importance": 0.8
        })).await;
        assert_eq!(stored["verdict"], "admit");
        assert_eq!(stored["source"], "claude-code");
        let id = id_of(&stored);
        let memory = harness.levh.get(&harness.scope, id).unwrap();
        assert_eq!(memory.source, "claude-code");
        assert_eq!(memory.project.as_deref(), Some("api"));
        // The event log records the surface and the client.
        let actor: (String, Option<String>) = harness.store.with_connection(|c| {
            c.query_row(
                "SELECT surface, client FROM events WHERE kind = 'store' AND memory_id = ?1",
                [id.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        });
        assert_eq!(actor, ("mcp".to_owned(), Some("claude-code".to_owned())));

        let text = error(
            &client,
            "store_memory",
            json!({ "content": "Deploys happen on Tuesdays", "importance": 1.5 }),
        )
        .await;
        assert!(text.contains("invalid importance"), "{text}");
        let text = error(
            &client,
            "store_memory",
            json!({ "content": "Deploys happen on Tuesdays", "force": true }),
        )
        .await;
        assert!(text.contains("force"), "{text}");
        assert_eq!(count(&harness), 1);

        let recalled = ok(
            &client,
            "recall_memory",
            json!({ "query": "which database do we use" }),
        )
        .await;
        assert_eq!(recalled["results"][0]["id"], id.to_string());
        assert_eq!(
            recalled["results"][0]["content"],
            "We use PostgreSQL 16 as the main database"
        );
        assert_eq!(recalled["reinforced"], json!([id.to_string()]));
        let text = error(&client, "recall_memory", json!({ "query": "  " })).await;
        assert!(text.contains("invalid query"), "{text}");

        let searched = ok(&client, "search_memory", json!({ "query": "PostgreSQL" })).await;
        assert_eq!(searched["results"][0]["id"], id.to_string());
        assert_eq!(searched["reinforced"], json!([]));
        assert_eq!(
            harness
                .levh
                .get(&harness.scope, id)
                .unwrap()
                .state
                .recall_count,
            1
        );
        let text = error(
            &client,
            "search_memory",
            json!({ "query": "PostgreSQL", "limit": 0 }),
        )
        .await;
        assert!(text.contains("invalid limit"), "{text}");

        let context = ok(&client, "get_context", json!({ "project": "api" })).await;
        assert_eq!(context["essentials"][0]["id"], id.to_string());
        assert!(context["text"].as_str().unwrap().contains("PostgreSQL 16"));
        let text = error(&client, "get_context", json!({ "max_tokens": 0 })).await;
        assert!(text.contains("invalid max_tokens"), "{text}");

        let stats = ok(&client, "get_memory_stats", json!({})).await;
        assert_eq!(stats["total"], 1);
        assert_eq!(stats["by_source"]["claude-code"], 1);
        let text = error(&client, "get_memory_stats", json!({ "project": "" })).await;
        assert!(text.contains("invalid project"), "{text}");
    });
}

#[test]
fn mcp_everyday_tools_and_their_bad_inputs() {
    let harness = Harness::new();
    let db = harness.capture_with(NewMemory {
        content: "The main database is PostgreSQL 16 on host db-main".into(),
        project: Some("api".into()),
        ..NewMemory::default()
    });
    let deploys = harness.capture("Deploys happen on Tuesdays after the standup meeting");
    block_on(async {
        let client = connect(
            &harness,
            Profile::Work,
            TestClient::new("cursor", Person::Absent),
        )
        .await;
        let unknown = MemoryId::new_at(harness.levh.now()).to_string();

        let listed = ok(&client, "list_memories", json!({ "project": "api" })).await;
        assert_eq!(listed["memories"].as_array().unwrap().len(), 1);
        assert_eq!(listed["memories"][0]["id"], db.to_string());
        let text = error(&client, "list_memories", json!({ "limit": 0 })).await;
        assert!(text.contains("invalid limit"), "{text}");

        let reinforced = ok(&client, "reinforce_memory", json!({ "id": db.to_string() })).await;
        assert_eq!(reinforced["recall_count"], 1);
        let text = error(&client, "reinforce_memory", json!({ "id": "nope" })).await;
        assert!(
            text.contains("invalid id: 'nope' is not a memory id"),
            "{text}"
        );

        let pinned = ok(&client, "pin_memory", json!({ "id": deploys.to_string() })).await;
        assert_eq!(pinned["pinned"], true);
        let text = error(&client, "pin_memory", json!({ "id": unknown })).await;
        assert!(
            text.contains(&format!("no memory with id {unknown}")),
            "{text}"
        );
        let unpinned = ok(
            &client,
            "unpin_memory",
            json!({ "id": deploys.to_string() }),
        )
        .await;
        assert_eq!(unpinned["pinned"], false);
        let text = error(&client, "unpin_memory", json!({ "id": unknown })).await;
        assert!(text.contains("no memory with id"), "{text}");

        let important = ok(
            &client,
            "set_importance",
            json!({ "id": db.to_string(), "importance": 0.9 }),
        )
        .await;
        assert_eq!(important["importance"], 0.9);
        let text = error(
            &client,
            "set_importance",
            json!({ "id": db.to_string(), "importance": 2.0 }),
        )
        .await;
        assert!(
            text.contains("invalid importance: 2 is outside 0..1"),
            "{text}"
        );
        assert_eq!(
            harness
                .levh
                .get(&harness.scope, db)
                .unwrap()
                .state
                .importance,
            0.9
        );

        let related = ok(&client, "related_memories", json!({ "id": db.to_string() })).await;
        assert_eq!(related["related"][0]["id"], deploys.to_string());
        let text = error(
            &client,
            "related_memories",
            json!({ "id": db.to_string(), "limit": 0 }),
        )
        .await;
        assert!(text.contains("invalid limit"), "{text}");

        let projects = ok(&client, "list_projects", json!({})).await;
        assert_eq!(
            projects["projects"],
            json!([{ "name": "api", "memories": 1 }])
        );
        let sources = ok(&client, "list_sources", json!({})).await;
        assert_eq!(
            sources["sources"],
            json!([{ "name": "cli", "memories": 2 }])
        );

        let evaluated = ok(
            &client,
            "evaluate_admission",
            json!({
                "content": "The main database is PostgreSQL 16 on host db-main", "project": "api"
            }),
        )
        .await;
        assert_eq!(evaluated["verdict"], "reject");
        assert_eq!(evaluated["nearest"]["id"], db.to_string());
        let text = error(
            &client,
            "evaluate_admission",
            json!({ "content": "x y z", "project": "" }),
        )
        .await;
        assert!(text.contains("invalid project"), "{text}");

        // A near-duplicate is held for a person, never stored and never forced.
        let admitted = ok(
            &client,
            "admit_memory",
            json!({
                "content": "The main database is PostgreSQL 17 on host db-main", "project": "api"
            }),
        )
        .await;
        assert_eq!(admitted["verdict"], "review");
        let held_id = admitted["held_id"].as_str().unwrap();
        assert_eq!(
            harness
                .levh
                .held_list(&harness.scope, Some(HeldStatus::Held))
                .unwrap()[0]
                .id
                .to_string(),
            held_id
        );
        let text = error(
            &client,
            "admit_memory",
            json!({
                "content": "The main database is PostgreSQL 17 on host db-main", "force": true
            }),
        )
        .await;
        assert!(text.contains("unknown field `force`"), "{text}");
        assert_eq!(count(&harness), 2);

        // Fading: a month later, unrecalled memories have faded.
        harness.clock.advance_hours(24.0 * 30.0);
        let fading = ok(&client, "list_fading_memories", json!({})).await;
        let ids: Vec<&str> = fading["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&deploys.to_string().as_str()), "{fading}");
        let text = error(
            &client,
            "list_fading_memories",
            json!({ "project": "a\u{7}b" }),
        )
        .await;
        assert!(text.contains("invalid project"), "{text}");
    });
}

#[test]
fn mcp_admin_tools_and_their_bad_inputs() {
    let harness = Harness::new();
    let db = harness.capture("The main database is PostgreSQL 16 on host db-main");
    let other = harness.capture("Deploys happen on Tuesdays after the standup meeting");
    let third = harness.capture("The office plants get watered every Friday morning");
    block_on(async {
        let client = connect(
            &harness,
            Profile::Admin,
            TestClient::new("windsurf", Person::Absent),
        )
        .await;
        let unknown = MemoryId::new_at(harness.levh.now()).to_string();

        let updated = ok(&client, "update_memory", json!({
            "id": db.to_string(), "content": "The main database is PostgreSQL 17; admin password=hunter2secret"
        })).await;
        let content = updated["memory"]["content"].as_str().unwrap();
        assert!(
            content.starts_with("The main database is PostgreSQL 17")
                && !content.contains("hunter2"),
            "{content}"
        );
        assert_eq!(updated["redactions"].as_array().unwrap().len(), 1);
        let text = error(
            &client,
            "update_memory",
            json!({ "id": db.to_string(), "content": "ab" }),
        )
        .await;
        assert!(text.contains("invalid content: too short"), "{text}");
        assert_eq!(
            harness.levh.get(&harness.scope, db).unwrap().content,
            content
        );

        let before = harness
            .levh
            .get(&harness.scope, other)
            .unwrap()
            .state
            .stability_hours;
        let weakened = ok(
            &client,
            "memory_feedback",
            json!({ "id": other.to_string(), "helpful": false }),
        )
        .await;
        assert_eq!(weakened["id"], other.to_string());
        assert_eq!(
            harness
                .levh
                .get(&harness.scope, other)
                .unwrap()
                .state
                .stability_hours,
            before / 2.0
        );
        let text = error(
            &client,
            "memory_feedback",
            json!({ "id": unknown, "helpful": true }),
        )
        .await;
        assert!(text.contains("no memory with id"), "{text}");

        let forgotten = ok(&client, "forget_memory", json!({ "id": other.to_string() })).await;
        assert_eq!(forgotten["status"], "forgotten");
        assert!(harness.levh.get(&harness.scope, other).is_err());
        let text = error(&client, "forget_memory", json!({ "id": other.to_string() })).await;
        assert!(text.contains("no memory with id"), "{text}");

        let purged = ok(&client, "purge_memory", json!({ "id": third.to_string() })).await;
        assert_eq!(purged["memory_id"], third.to_string());
        assert_eq!(purged["residue"], json!([]));
        let text = error(&client, "purge_memory", json!({ "id": "12" })).await;
        assert!(text.contains("not a memory id"), "{text}");

        // A secret written behind the gate's back is found, then stripped.
        harness.store.with_connection(|c| {
            c.execute(
                "UPDATE memories SET content = content || ' token ghp_abcdefghijklmnopqrstuvwxyz0123456789' WHERE id = ?1",
                [db.to_string()],
            )
            .unwrap()
        });
        let audit = ok(&client, "audit_secrets", json!({})).await;
        assert_eq!(audit["findings"][0]["memory_id"], db.to_string());
        assert_eq!(audit["redacted"], false);
        let redacted = ok(&client, "redact_secrets", json!({})).await;
        assert_eq!(redacted["findings"][0]["memory_id"], db.to_string());
        assert!(
            !harness
                .levh
                .get(&harness.scope, db)
                .unwrap()
                .content
                .contains("ghp_")
        );
        assert_eq!(
            ok(&client, "audit_secrets", json!({})).await["findings"],
            json!([])
        );

        let session = ok(&client, "create_session", json!({ "project": "api" })).await;
        let session_id = session["session_id"].as_str().unwrap().to_owned();
        assert_eq!(session["client"], "windsurf");
        let stored = ok(
            &client,
            "store_memory",
            json!({
                "content": "Session notes: the cache layer uses Redis 7", "session_id": session_id
            }),
        )
        .await;
        assert_eq!(
            harness
                .levh
                .get(&harness.scope, id_of(&stored))
                .unwrap()
                .session_id
                .unwrap()
                .as_str(),
            session_id
        );
        let ended = ok(&client, "end_session", json!({ "session_id": session_id })).await;
        assert!(ended["ended_at"].is_string());
        let text = error(
            &client,
            "end_session",
            json!({ "session_id": "no-such-session" }),
        )
        .await;
        assert!(
            text.contains("invalid session_id: no session with id no-such-session"),
            "{text}"
        );
        let text = error(&client, "create_session", json!({ "project": "" })).await;
        assert!(text.contains("invalid project"), "{text}");

        let held = harness
            .levh
            .capture(
                &harness.scope,
                NewMemory {
                    content: "Session notes: the cache layer uses Redis 7.2".into(),
                    ..NewMemory::default()
                },
            )
            .unwrap()
            .held_id
            .unwrap();
        let queue = ok(&client, "list_held_memories", json!({})).await;
        assert_eq!(queue["held"][0]["id"], held.to_string());
        assert!(
            queue["how_to_decide"]
                .as_str()
                .unwrap()
                .contains("levh held")
        );
        let text = error(&client, "list_held_memories", json!({ "status": "maybe" })).await;
        assert!(text.contains("invalid status"), "{text}");
    });
}

#[test]
fn mcp_connector_tools_without_a_runtime_say_how_to_sync_and_status_reads_runs() {
    let harness = Harness::new();
    block_on(async {
        let client = connect(
            &harness,
            Profile::Full,
            TestClient::new("cline", Person::Absent),
        )
        .await;
        let status = ok(&client, "connector_sync_status", json!({})).await;
        assert_eq!(status["result"], json!([]));
        let text = error(&client, "list_connectors", json!({})).await;
        assert!(text.contains("without the connector runtime"), "{text}");
        let text = error(
            &client,
            "sync_connector",
            json!({ "id": "files", "grant": "/" }),
        )
        .await;
        assert!(text.contains("unknown field `grant`"), "{text}");
    });
}

/// A held candidate next to the memory that caused the hold.
fn held_candidate(harness: &Harness) -> (MemoryId, levh_core::HeldId) {
    let nearest = harness.capture("The main database is PostgreSQL 16 on host db-main");
    let held = harness
        .levh
        .capture(
            &harness.scope,
            NewMemory {
                content: "The main database is PostgreSQL 17 on host db-main".into(),
                ..NewMemory::default()
            },
        )
        .unwrap()
        .held_id
        .unwrap();
    (nearest, held)
}

#[test]
fn mcp_decide_held_memory_admits_as_replacement_when_the_person_chooses_it() {
    let harness = Harness::new();
    let (nearest, held) = held_candidate(&harness);
    let client_side = TestClient::new("claude", Person::Chooses("admit_as_replacement"));
    let asked = client_side.asked.clone();
    let decision = block_on(async {
        let client = connect(&harness, Profile::Admin, client_side).await;
        ok(
            &client,
            "decide_held_memory",
            json!({ "held_id": held.to_string() }),
        )
        .await
    });
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].contains("PostgreSQL 17") && asked[0].contains("PostgreSQL 16"),
        "{}",
        asked[0]
    );
    assert!(asked[0].contains("admit_as_replacement") && asked[0].contains("discard"));
    assert_eq!(decision["outcome"], "admitted_as_replacement");
    assert_eq!(decision["superseded"], nearest.to_string());
    let memory = harness.levh.get(&harness.scope, id_of(&decision)).unwrap();
    assert_eq!(
        memory.content,
        "The main database is PostgreSQL 17 on host db-main"
    );
    let candidate = harness.levh.held_get(&harness.scope, held).unwrap();
    assert_eq!(candidate.status, HeldStatus::Admitted);
    assert_eq!(candidate.decision.unwrap().surface, "mcp");
}

#[test]
fn mcp_decide_held_memory_admits_when_the_person_chooses_admit() {
    let harness = Harness::new();
    let (nearest, held) = held_candidate(&harness);
    let decision = block_on(async {
        let client = connect(
            &harness,
            Profile::Admin,
            TestClient::new("claude", Person::Chooses("admit")),
        )
        .await;
        ok(
            &client,
            "decide_held_memory",
            json!({ "held_id": held.to_string() }),
        )
        .await
    });
    assert_eq!(decision["outcome"], "admitted");
    assert_eq!(decision["superseded"], Value::Null);
    assert!(harness.levh.get(&harness.scope, id_of(&decision)).is_ok());
    assert!(harness.levh.get(&harness.scope, nearest).is_ok());
}

#[test]
fn mcp_decide_held_memory_leaves_the_candidate_held_when_the_person_declines() {
    let harness = Harness::new();
    let (_, held) = held_candidate(&harness);
    let decision = block_on(async {
        let client = connect(
            &harness,
            Profile::Admin,
            TestClient::new("claude", Person::Declines),
        )
        .await;
        ok(
            &client,
            "decide_held_memory",
            json!({ "held_id": held.to_string() }),
        )
        .await
    });
    assert_eq!(decision["outcome"], "declined");
    assert_eq!(decision["memory_id"], Value::Null);
    assert_eq!(
        harness.levh.held_get(&harness.scope, held).unwrap().status,
        HeldStatus::Held
    );
    assert_eq!(count(&harness), 1);
}

#[test]
fn mcp_decide_held_memory_is_refused_without_elicitation_and_the_agent_cannot_answer() {
    let harness = Harness::new();
    let (_, held) = held_candidate(&harness);
    block_on(async {
        let client = connect(
            &harness,
            Profile::Admin,
            TestClient::new("bare-agent", Person::Absent),
        )
        .await;
        let text = error(
            &client,
            "decide_held_memory",
            json!({ "held_id": held.to_string() }),
        )
        .await;
        assert!(
            text.contains("needs a client that supports MCP elicitation"),
            "{text}"
        );
        assert!(
            text.contains("levh held admit") && text.contains("dashboard"),
            "{text}"
        );
        let text = error(
            &client,
            "decide_held_memory",
            json!({ "held_id": held.to_string(), "decision": "admit" }),
        )
        .await;
        assert!(text.contains("unknown field `decision`"), "{text}");
        let text = error(&client, "decide_held_memory", json!({ "held_id": "x" })).await;
        assert!(text.contains("invalid held_id"), "{text}");
    });
    assert_eq!(
        harness.levh.held_get(&harness.scope, held).unwrap().status,
        HeldStatus::Held
    );
}

#[test]
fn mcp_pinned_memories_are_resources_with_list_changed_and_the_prompt_loads_context() {
    let harness = Harness::new();
    let rule = harness.capture("Never commit directly to the main branch");
    block_on(async {
        let client_side = TestClient::new("vscode", Person::Absent);
        let changes = client_side.list_changed.clone();
        let client = connect(&harness, Profile::Work, client_side).await;
        let uri = format!("levh://memory/{rule}");

        let before = client.list_all_resources().await.unwrap();
        assert_eq!(
            before.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
            vec!["levh://context"]
        );

        ok(&client, "pin_memory", json!({ "id": rule.to_string() })).await;
        let after = client.list_all_resources().await.unwrap();
        assert!(after.iter().any(|r| r.uri == uri), "{after:?}");
        for _ in 0..100 {
            if changes.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(changes.load(Ordering::SeqCst), 1);

        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("not text: {read:?}")
        };
        assert_eq!(text, "Never commit directly to the main branch");

        let context = client
            .read_resource(ReadResourceRequestParams::new("levh://context"))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &context.contents[0] else {
            panic!("not text")
        };
        assert!(
            text.contains("## Pinned rules\n- Never commit directly to the main branch"),
            "{text}"
        );

        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "session_start");
        let prompt = client
            .get_prompt(GetPromptRequestParams::new("session_start"))
            .await
            .unwrap();
        let message = serde_json::to_string(&prompt.messages[0]).unwrap();
        assert!(
            message.contains("Never commit directly to the main branch"),
            "{message}"
        );

        ok(&client, "unpin_memory", json!({ "id": rule.to_string() })).await;
        assert!(
            !client
                .list_all_resources()
                .await
                .unwrap()
                .iter()
                .any(|r| r.uri == uri)
        );
        assert!(
            client
                .read_resource(ReadResourceRequestParams::new("levh://nothing"))
                .await
                .is_err()
        );
    });
}

/// A client on a spawned `levh mcp stdio`.
async fn spawn_stdio(
    home: &std::path::Path,
    name: &'static str,
) -> (Client, tokio::process::Child) {
    spawn_stdio_with(home, name, &[]).await
}

pub(crate) async fn spawn_stdio_with(
    home: &std::path::Path,
    name: &'static str,
    extra: &[&str],
) -> (Client, tokio::process::Child) {
    spawn_stdio_in(levh(home), name, extra).await
}

/// A client on a spawned `levh mcp stdio` with these settings in its environment.
pub(crate) async fn spawn_stdio_with_env(
    home: &std::path::Path,
    name: &'static str,
    env: &[(&str, &str)],
) -> (Client, tokio::process::Child) {
    let mut command = levh(home);
    command.envs(env.iter().copied());
    spawn_stdio_in(command, name, &[]).await
}

async fn spawn_stdio_in(
    command: std::process::Command,
    name: &'static str,
    extra: &[&str],
) -> (Client, tokio::process::Child) {
    let mut command = tokio::process::Command::from(command);
    command
        .args(["mcp", "stdio"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let client = TestClient::new(name, Person::Absent)
        .serve((stdout, stdin))
        .await
        .unwrap();
    (client, child)
}

#[test]
fn mcp_stdio_binary_stores_recalls_pins_and_serves_the_pinned_resource() {
    let home = tempfile::tempdir().unwrap();
    block_on(async {
        let (client, _child) = spawn_stdio(home.path(), "claude-code").await;
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "levh");

        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 41, "the default profile is work");

        let stored = ok(
            &client,
            "store_memory",
            json!({ "content": "Releases are tagged vYYYY.MM.DD", "pin": false }),
        )
        .await;
        assert_eq!(stored["verdict"], "admit");
        let id = stored["memory_id"].as_str().unwrap().to_owned();
        let recalled = ok(
            &client,
            "recall_memory",
            json!({ "query": "how are releases tagged" }),
        )
        .await;
        assert_eq!(recalled["results"][0]["id"], id);
        assert_eq!(recalled["results"][0]["source"], "claude-code");
        ok(&client, "pin_memory", json!({ "id": id })).await;
        let read = client
            .read_resource(ReadResourceRequestParams::new(format!(
                "levh://memory/{id}"
            )))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("not text")
        };
        assert_eq!(text, "Releases are tagged vYYYY.MM.DD");
        client.cancel().await.unwrap();
    });
}

#[test]
fn mcp_two_stdio_processes_on_one_store_see_each_others_memories() {
    let home = tempfile::tempdir().unwrap();
    block_on(async {
        let (first, _a) = spawn_stdio(home.path(), "cursor").await;
        let (second, _b) = spawn_stdio(home.path(), "claude-code").await;
        let stored = ok(
            &first,
            "store_memory",
            json!({ "content": "The VPN gateway is vpn.example.net" }),
        )
        .await;
        let recalled = ok(&second, "recall_memory", json!({ "query": "VPN gateway" })).await;
        assert_eq!(recalled["results"][0]["id"], stored["memory_id"]);
        assert_eq!(recalled["results"][0]["source"], "cursor");
        first.cancel().await.unwrap();
        second.cancel().await.unwrap();
    });
}

#[test]
fn mcp_stdio_binds_its_workspace_from_levh_workspace() {
    let home = tempfile::tempdir().unwrap();
    crate::support::ok(
        levh(home.path()).args(["capture", "The default workspace keeps its VPN notes here"]),
    );
    block_on(async {
        let mut command = tokio::process::Command::from(levh(home.path()));
        command
            .env("LEVH_WORKSPACE", "beta")
            .args(["mcp", "stdio"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let beta = TestClient::new("beta-agent", Person::Absent)
            .serve((stdout, stdin))
            .await
            .unwrap();
        let found = ok(&beta, "search_memory", json!({ "query": "VPN notes" })).await;
        assert_eq!(found["results"], json!([]), "beta sees nothing of default");
        ok(
            &beta,
            "store_memory",
            json!({ "content": "Beta's VPN notes live in the beta wiki" }),
        )
        .await;
        beta.cancel().await.unwrap();
    });
    let default = crate::support::json(levh(home.path()).args(["list", "--json"]));
    let default = default.to_string();
    assert!(
        default.contains("VPN notes here") && !default.contains("beta wiki"),
        "{default}"
    );
    let beta =
        crate::support::json(levh(home.path()).args(["--workspace", "beta", "list", "--json"]));
    assert!(beta.to_string().contains("beta wiki"), "{beta}");
}

/// Both forms a client can start levh by: this binary's absolute path (a checkout, the
/// archive) and the package runner `uvx levh-rs` (the wheel from PyPI), with the same
/// arguments and store; for people each under the line saying when it fits.
#[test]
fn mcp_config_prints_the_binary_and_the_runner_form_with_the_home() {
    let home = tempfile::tempdir().unwrap();
    let view = crate::support::json(levh(home.path()).args([
        "mcp",
        "config",
        "claude_code",
        "--profile",
        "admin",
        "--json",
    ]));
    assert_eq!(view["client"], "claude_code");
    let server = &view["config"]["mcpServers"]["levh"];
    assert_eq!(
        server["command"],
        crate::support::levh_binary()
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    assert_eq!(
        server["args"],
        json!(["mcp", "stdio", "--profile", "admin"])
    );
    let home_path = home.path().canonicalize().unwrap().display().to_string();
    assert_eq!(server["env"]["LEVH_HOME"], home_path);
    let runner = &view["runner_config"]["mcpServers"]["levh"];
    assert_eq!(runner["command"], "uvx", "{view}");
    assert_eq!(
        runner["args"],
        json!(["levh-rs", "mcp", "stdio", "--profile", "admin"])
    );
    assert_eq!(runner["env"], server["env"]);
    assert_eq!(runner["type"], "stdio");

    let shown = crate::support::ok(levh(home.path()).args(["mcp", "config", "vscode"]));
    let shown = String::from_utf8(shown.stdout).unwrap();
    let binary_at = shown.find("absolute path").expect(&shown);
    let runner_at = shown.find("package runner").expect(&shown);
    assert!(binary_at < runner_at, "{shown}");
    // What follows each line is the JSON to paste, whole.
    let pasted = |from: usize| -> serde_json::Value {
        let start = from + shown[from..].find('{').unwrap();
        serde_json::Deserializer::from_str(&shown[start..])
            .into_iter::<serde_json::Value>()
            .next()
            .unwrap()
            .unwrap()
    };
    assert_eq!(pasted(binary_at)["servers"]["levh"]["type"], "stdio");
    assert_eq!(
        pasted(runner_at)["servers"]["levh"]["args"],
        json!(["levh-rs", "mcp", "stdio", "--profile", "work"])
    );

    let profiles = crate::support::json(levh(home.path()).args(["mcp", "profiles", "--json"]));
    assert_eq!(profiles[0]["profile"], "minimal");
    assert_eq!(profiles[3]["tools"].as_array().unwrap().len(), 62);
}

/// `levh setup --uvx` writes the runner's form: the client starts the wheel from PyPI
/// through `uvx levh-rs`, not the path of the binary that wrote it (which, run by uvx
/// itself, is a copy in uv's cache).
#[test]
fn setup_with_uvx_writes_the_package_runners_form() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("mcp.json");
    let done = crate::support::json(levh(home.path()).args([
        "setup",
        "--client",
        "cursor",
        "--uvx",
        "--path",
        file.to_str().unwrap(),
        "--yes",
        "--json",
    ]));
    assert_eq!(done["written"], true, "{done}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &written["mcpServers"]["levh"];
    assert_eq!(entry["command"], "uvx", "{written}");
    assert_eq!(
        entry["args"],
        json!(["levh-rs", "mcp", "stdio", "--profile", "work"])
    );
    assert_eq!(
        entry["env"]["LEVH_HOME"],
        home.path().canonicalize().unwrap().display().to_string()
    );
}

#[test]
fn mcp_sync_connector_uses_only_the_grants_a_person_stored() {
    let home = tempfile::tempdir().unwrap();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("ops.txt"),
        "The on-call rotation changes every Monday at nine",
    )
    .unwrap();
    let directory = notes.path().canonicalize().unwrap().display().to_string();
    block_on(async {
        let (client, _child) = spawn_stdio_with(home.path(), "agent", &["--profile", "full"]).await;
        let listed = ok(&client, "list_connectors", json!({})).await;
        let ids: Vec<&str> = listed["result"]["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"local_files"), "{listed}");
        let help = ok(
            &client,
            "get_connector_help",
            json!({ "id": "local_files" }),
        )
        .await;
        assert_eq!(help["result"]["granted_paths"], json!([]));

        // Naming a directory in the config grants nothing: the read is refused.
        let refused = ok(
            &client,
            "sync_connector",
            json!({ "id": "local_files", "config": { "directory": directory } }),
        )
        .await;
        assert_eq!(refused["result"]["admitted"], 0, "{refused}");
        assert_eq!(refused["result"]["status"], "failed", "{refused}");
        let text = error(
            &client,
            "sync_connector",
            json!({ "id": "local_files", "config": { "directory": directory, "colour": "red" } }),
        )
        .await;
        assert!(text.contains("has no setting `colour`"), "{text}");
        client.cancel().await.unwrap();
    });
    // A person grants the directory; now the agent's sync reads it.
    crate::support::ok(levh(home.path()).args(["connector", "grant", "local_files", &directory]));
    block_on(async {
        let (client, _child) = spawn_stdio_with(home.path(), "agent", &["--profile", "full"]).await;
        let synced = ok(
            &client,
            "sync_connector",
            json!({ "id": "local_files", "config": { "directory": directory } }),
        )
        .await;
        assert_eq!(synced["result"]["admitted"], 1, "{synced}");
        let status = ok(
            &client,
            "connector_sync_status",
            json!({ "id": "local_files" }),
        )
        .await;
        assert_eq!(status["result"][0]["admitted"], 1, "{status}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn mcp_search_takes_min_similarity_and_names_it_when_out_of_range() {
    block_on(async {
        let harness = Harness::new();
        // Shares character trigrams with the query but no word: a vector-only candidate.
        harness.capture("prekubernetes and postkubernetes tooling");
        let client = connect(
            &harness,
            Profile::Minimal,
            TestClient::new("claude-code", Person::Absent),
        )
        .await;
        let loose = ok(
            &client,
            "search_memory",
            json!({"query": "kubernetes", "min_similarity": 0.0}),
        )
        .await;
        assert_eq!(loose["results"].as_array().unwrap().len(), 1, "{loose}");
        assert!(loose["results"][0]["similarity"].as_f64().unwrap() > 0.0);
        assert_eq!(loose["results"][0]["lexical"], 0.0);
        let strict = ok(
            &client,
            "search_memory",
            json!({"query": "kubernetes", "min_similarity": 0.99}),
        )
        .await;
        assert_eq!(strict["results"], json!([]), "{strict}");
        let text = error(
            &client,
            "recall_memory",
            json!({"query": "kubernetes", "min_similarity": 1.5}),
        )
        .await;
        assert!(text.contains("min_similarity"), "{text}");
    });
}

#[test]
fn mcp_argument_errors_name_the_argument() {
    block_on(async {
        let harness = Harness::new();
        let client = connect(
            &harness,
            Profile::Minimal,
            TestClient::new("claude-code", Person::Absent),
        )
        .await;
        for (tool, arguments, name) in [
            (
                "recall_memory",
                json!({"query": "x", "limit": "three"}),
                "`limit`",
            ),
            (
                "recall_memory",
                json!({"query": "x", "min_similarity": "high"}),
                "`min_similarity`",
            ),
            ("recall_memory", json!({"limit": 3}), "query"),
            (
                "store_memory",
                json!({"content": "a fine fact", "importance": "0.7"}),
                "`importance`",
            ),
        ] {
            // An isError result the agent can read and correct, naming the argument.
            let text = error(&client, tool, arguments).await;
            assert!(text.contains(name), "{name}: {text}");
        }
        assert_eq!(count(&harness), 0);
    });
}

/// One plugin engine per process: 20 connector calls over one `levh mcp stdio` session
/// (list, help, syncs) start wasmtime once, not once per call. The engine announces
/// itself in the debug log, which the test counts.
#[test]
fn twenty_connector_calls_over_mcp_start_one_plugin_engine() {
    let home = tempfile::tempdir().unwrap();
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(
        notes.path().join("ops.txt"),
        "The on-call rotation changes every Monday at nine",
    )
    .unwrap();
    crate::support::ok(levh(home.path()).args([
        "connector",
        "grant",
        "local_files",
        &notes.path().display().to_string(),
    ]));
    let directory = notes.path().canonicalize().unwrap().display().to_string();
    let stderr = block_on(async {
        let mut command = tokio::process::Command::from(levh(home.path()));
        command
            .args(["mcp", "stdio", "--profile", "full"])
            .env("RUST_LOG", "levh_plugins=debug")
            .env_remove("LEVH_LOG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take().unwrap();
        let client = TestClient::new("agent", Person::Absent)
            .serve((stdout, stdin))
            .await
            .unwrap();
        for call in 0..20 {
            let (tool, arguments) = match call % 3 {
                0 => ("list_connectors", json!({})),
                1 => ("get_connector_help", json!({ "id": "local_files" })),
                _ => (
                    "sync_connector",
                    json!({ "id": "local_files", "config": { "directory": directory } }),
                ),
            };
            ok(&client, tool, arguments).await;
        }
        client.cancel().await.unwrap();
        let output = child.wait_with_output().await.unwrap();
        String::from_utf8_lossy(&output.stderr).into_owned()
    });
    assert_eq!(
        stderr.matches("starting the plugin engine").count(),
        1,
        "{stderr}"
    );
}

/// Over MCP too: an unknown session is an argument error naming `session_id` (once a raw
/// foreign-key failure), and content with nothing visible is rejected by the gate.
#[test]
fn mcp_refuses_an_unknown_session_and_invisible_content_by_name() {
    let harness = Harness::new();
    block_on(async {
        let client = connect(
            &harness,
            Profile::Work,
            TestClient::new("cline", Person::Absent),
        )
        .await;
        let text = error(
            &client,
            "store_memory",
            json!({ "content": "Deploys happen on Fridays after the standup", "session_id": "nope" }),
        )
        .await;
        assert!(text.contains("session_id"), "{text}");
        assert!(!text.contains("FOREIGN KEY"), "{text}");
        let refused = ok(
            &client,
            "store_memory",
            json!({ "content": "\u{200B}\u{200B}\u{200B}\u{200B}" }),
        )
        .await;
        assert_eq!(refused["verdict"], "reject", "{refused}");
        assert!(
            refused["reason"]
                .as_str()
                .unwrap()
                .contains("nothing visible"),
            "{refused}"
        );
        let listed = ok(&client, "list_memories", json!({})).await;
        assert_eq!(listed["memories"], json!([]));
    });
}

#[test]
fn a_secret_in_an_mcp_client_name_is_redacted_from_the_source_the_sessions_and_the_log() {
    const NAME: &str = "bot ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let harness = Harness::new();
    block_on(async {
        let client = connect(
            &harness,
            Profile::Full,
            TestClient::new(NAME, Person::Absent),
        )
        .await;
        let stored = ok(
            &client,
            "store_memory",
            json!({ "content": "The nightly export runs at 02:00" }),
        )
        .await;
        assert_eq!(stored["source"], "bot [REDACTED:github-token]", "{stored}");
        let session = ok(&client, "create_session", json!({})).await;
        assert_eq!(
            session["client"], "bot [REDACTED:github-token]",
            "{session}"
        );
        let memory = harness.levh.get(&harness.scope, id_of(&stored)).unwrap();
        assert_eq!(memory.source, "bot [REDACTED:github-token]");
    });
    let clients: Vec<String> = harness.store.with_connection(|c| {
        let mut s = c
            .prepare("SELECT coalesce(client, '') FROM events")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    });
    assert!(clients.iter().all(|c| !c.contains("ghp_")), "{clients:?}");
}

/// A misspelt argument is refused by every tool, naming it and the argument meant —
/// never quietly ignored (`asof` once answered with today's data, `projet` listed every
/// project).
#[test]
fn mcp_unknown_arguments_are_refused_everywhere_naming_the_closest_valid_one() {
    let harness = Harness::new();
    block_on(async {
        let client = connect(
            &harness,
            Profile::Full,
            TestClient::new("claude-code", Person::Absent),
        )
        .await;
        for (tool, arguments, meant) in [
            (
                "recall_memory",
                json!({ "query": "deploys", "asof": "2026-01-01T00:00:00Z" }),
                "as_of",
            ),
            (
                "search_memory",
                json!({ "query": "deploys", "asof": "2026-01-01T00:00:00Z" }),
                "as_of",
            ),
            ("list_memories", json!({ "projet": "api" }), "project"),
            ("get_context", json!({ "projet": "api" }), "project"),
            (
                "store_memory",
                json!({ "content": "a note long enough", "projet": "api" }),
                "project",
            ),
        ] {
            let told = error(&client, tool, arguments).await;
            assert!(
                told.contains("unknown field `")
                    && told.contains(&format!("did you mean `{meant}`?")),
                "{tool}: {told}"
            );
        }
        assert_eq!(count(&harness), 0, "nothing was stored");
    });
}
