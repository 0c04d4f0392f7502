//! The gate and the held queue: what the gate would decide, the gate's full verdict, the
//! queue, and a person's decision asked for through elicitation.

use levh_api::held;
use levh_api::requests::{DecideArgs, EvaluateArgs, HeldListArgs, StoreArgs, held_id};
use levh_api::views::{CaptureView, DecisionOutcome, DecisionView, EvaluationView, HeldList};
use rmcp::handler::server::wrapper::Json;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer, tool, tool_router};

use super::{client_name, describe};
use crate::LevhMcp;
use crate::arguments::Parameters;

/// The person's choice in the decide_held_memory form.
const ADMIT: &str = "admit";
const REPLACE: &str = "admit_as_replacement";
const DISCARD: &str = "discard";

#[tool_router(router = held_router, vis = "pub(crate)")]
impl LevhMcp {
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
        self.run(&peer, move |levh, scope| held::evaluate(levh, scope, args))
            .await
            .map(Json)
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
        self.capture(&peer, args).await
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
        self.run(&peer, move |levh, scope| held::list(levh, scope, args))
            .await
            .map(Json)
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
        let held_id = held_id("held_id", &args.held_id).map_err(describe)?;
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(format!(
                "decide_held_memory needs a client that supports MCP elicitation, so that a person \
                 answers and not the agent; this client did not declare it. Nothing was decided. \
                 Instead, {}.",
                held::HOW_TO_DECIDE
            ));
        }
        let (held, nearest) = self
            .run(&peer, move |levh, scope| {
                held::waiting(levh, scope, held_id)
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
        let undecided = |outcome| {
            Ok(Json(DecisionView {
                held_id: held_id.to_string(),
                outcome,
                memory_id: None,
                superseded: None,
            }))
        };
        match answer.action {
            ElicitationAction::Accept => {}
            ElicitationAction::Decline => return undecided(DecisionOutcome::Declined),
            _ => return undecided(DecisionOutcome::Cancelled),
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
        self.run(&peer, move |levh, scope| {
            // The person decided, not the agent: their decision is recorded as theirs.
            let mut scope = scope.clone();
            scope.actor.principal = Some(person);
            let view = match decision.as_str() {
                ADMIT | REPLACE => {
                    let supersede = decision == REPLACE;
                    let admitted = held::admit(levh, &scope, held_id, supersede)?;
                    DecisionView {
                        held_id: admitted.held_id,
                        outcome: if supersede {
                            DecisionOutcome::AdmittedAsReplacement
                        } else {
                            DecisionOutcome::Admitted
                        },
                        memory_id: Some(admitted.memory_id),
                        superseded: admitted.superseded,
                    }
                }
                DISCARD => {
                    held::discard(levh, &scope, held_id)?;
                    DecisionView {
                        held_id: held_id.to_string(),
                        outcome: DecisionOutcome::Discarded,
                        memory_id: None,
                        superseded: None,
                    }
                }
                other => {
                    return Err(levh_api::Error::Invalid(format!(
                        "the client answered {other:?}, which is not one of the offered choices; nothing was decided"
                    )));
                }
            };
            Ok(Json(view))
        })
        .await
    }
}
