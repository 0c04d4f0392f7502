//! The MCP protocol side: discovery filtered by profile, resources, prompts.

use std::borrow::Cow;

use levh_core::MemoryId;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::LevhMcp;

/// The generated context as a resource.
pub const CONTEXT_URI: &str = "levh://context";
/// Prefix of each pinned memory's resource.
pub const MEMORY_URI_PREFIX: &str = "levh://memory/";
/// The session-start prompt.
pub const SESSION_START_PROMPT: &str = "session_start";

impl ServerHandler for LevhMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("levh", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "levh is the user's persistent memory. Call get_context (or the {SESSION_START_PROMPT} prompt) \
             at the start of a session, recall_memory before answering from memory, store_memory for \
             facts worth keeping. The admission gate decides every write; held candidates are decided \
             by a person. Tool profile: {}.",
            self.profile
        ))
    }

    /// The stand-in for a stdio message too large to read (see [`crate::stdio`]): the
    /// client's request ends with an error naming the size and the limit.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == crate::stdio::PARSE_ERROR_METHOD {
            let error = request
                .params
                .as_ref()
                .and_then(|p| p.get("error"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("not JSON");
            return Err(ErrorData::new(
                ErrorCode::PARSE_ERROR,
                format!("parse error: the message is not valid JSON ({error}); nothing was done"),
                None,
            ));
        }
        if request.method != crate::stdio::TOO_LARGE_METHOD {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("unknown method {:?}", request.method),
                None,
            ));
        }
        let number = |key: &str| {
            request
                .params
                .as_ref()
                .and_then(|p| p.get(key))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        Err(ErrorData::invalid_request(
            format!(
                "message too large: {} bytes, and levh reads at most {} bytes ({} MiB) per MCP message over stdio; nothing was done — send less (content is capped at the gate's LEVH_GATE_MAX_CHARS anyway)",
                number("bytes"),
                number("limit"),
                number("limit") / (1024 * 1024)
            ),
            None,
        ))
    }

    // Server-to-client requests (elicitation) need a session with an `initialize`
    // handshake; 2026-07-28 forbids them, so levh speaks the versions that still have one.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let caller = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<levh_core::Principal>())
            .cloned();
        self.note_presence(caller.as_ref(), &context.peer, None, false);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            LevhMcp::all_tools()
                .into_iter()
                .filter(|tool| self.profile.includes(&tool.name))
                .collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.profile.includes(name) {
            self.tool_router.get(name).cloned()
        } else {
            None
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = crate::caller_of(&context);
        if let Some(caller) = &caller {
            let needed = crate::required_role(&request.name);
            if caller.role < needed {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "tool {} needs role {needed}; this token is {} in workspace {}. Nothing was changed.",
                    request.name, caller.role, caller.workspace
                ))])
                .into());
            }
        }
        let project = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("project"))
            .and_then(|p| p.as_str())
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| levh_core::gate::secrets::redact(p).0);
        self.note_presence(caller.as_ref(), &context.peer, project, true);
        let span = tracing::info_span!("tool", name = %request.name);
        crate::as_caller(caller, tracing::Instrument::instrument(async move {
            if let Some(band) = crate::Profile::of_tool(&request.name)
                && !self.profile.includes(&request.name)
            {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "tool {} is not in this server's profile ({}); it needs profile {band} or larger \
                     (start levh with `levh mcp stdio --profile {band}` or LEVH_MCP_PROFILE={band}). \
                     Nothing was changed.",
                    request.name, self.profile
                ))])
                .into());
            }
            let call = ToolCallContext::new(self, request, context);
            let result = self.tool_router.call(call).await;
            tracing::debug!(protocol_error = result.is_err(), "tool call answered");
            result
        }, span))
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = crate::caller_of(&context);
        crate::as_caller(caller, async move {
            let pinned = self
                .run(&context.peer, |levh, scope| {
                    levh_api::memories::list(
                        levh,
                        scope,
                        levh_api::requests::ListArgs {
                            pinned: Some(true),
                            limit: Some(1000),
                            ..Default::default()
                        },
                    )
                })
                .await
                .map_err(|e| ErrorData::internal_error(e, None))?;
            let mut resources = vec![
                Resource::new(CONTEXT_URI, "context")
                    .with_title("levh context: pinned rules and essentials")
                    .with_description("Generated context for a session: pinned rules first, then the most important memories.")
                    .with_mime_type("text/markdown"),
            ];
            resources.extend(pinned.memories.iter().map(|m| {
                Resource::new(
                    format!("{MEMORY_URI_PREFIX}{}", m.id),
                    format!("memory {}", m.id),
                )
                .with_title(levh_core::text::preview(&m.content, 60))
                .with_description("A pinned memory (never fades).")
                .with_mime_type("text/plain")
            }));
            Ok(ListResourcesResult::with_all_items(resources))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = crate::caller_of(&context);
        crate::as_caller(caller, async move {
            let uri = request.uri.clone();
            if uri == CONTEXT_URI {
                let context_view = self
                    .run(&context.peer, |levh, scope| {
                        levh_api::recall::context(levh, scope, Default::default())
                    })
                    .await
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                return Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(context_view.text, uri).with_mime_type("text/markdown"),
                ])
                .into());
            }
            let Some(id) = uri
                .strip_prefix(MEMORY_URI_PREFIX)
                .filter(|id| id.parse::<MemoryId>().is_ok())
                .map(str::to_owned)
            else {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no levh resource {uri} (expected {CONTEXT_URI} or {MEMORY_URI_PREFIX}<id>)"
                    ),
                    None,
                ));
            };
            let memory = self
                .run(&context.peer, move |levh, scope| {
                    levh_api::memories::get(levh, scope, &id)
                })
                .await
                .map_err(|e| ErrorData::resource_not_found(e, None))?;
            Ok(ReadResourceResult::new(vec![
                ResourceContents::text(memory.content, uri).with_mime_type("text/plain"),
            ])
            .into())
        })
        .await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            session_start_prompt(),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = crate::caller_of(&context);
        crate::as_caller(caller, async move {
            if request.name != SESSION_START_PROMPT {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no prompt {} (levh has {SESSION_START_PROMPT})",
                        request.name
                    ),
                    None,
                ));
            }
            let project = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("project"))
                .and_then(|p| p.as_str())
                .map(str::to_owned)
                .filter(|p| !p.trim().is_empty());
            let view = self
                .run(&context.peer, move |levh, scope| {
                    levh_api::recall::context(
                        levh,
                        scope,
                        levh_api::requests::ContextArgs {
                            project,
                            max_tokens: None,
                        },
                    )
                })
                .await
                .map_err(|e| ErrorData::invalid_params(e, None))?;
            let text = format!(
                "Here is what levh remembers for this session. Follow the pinned rules; use the \
                 essentials as background; call recall_memory for anything else and store_memory for \
                 new facts worth keeping.\n\n{}",
                view.text
            );
            Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                    .with_description("levh context for the start of a session")
                    .into(),
            )
        })
        .await
    }
}

fn session_start_prompt() -> Prompt {
    Prompt::new(
        SESSION_START_PROMPT,
        Some(
            "Load levh's context (pinned rules and project essentials) at the start of a session.",
        ),
        Some(vec![
            PromptArgument::new("project")
                .with_description("The project to load essentials of")
                .with_required(false),
        ]),
    )
}
