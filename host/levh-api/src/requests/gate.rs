//! Requests to the admission gate and about the held queue.

use super::*;

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
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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

/// Admit body.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmitBody {
    /// Mark the new memory as replacing the neighbour that caused the hold.
    #[serde(default)]
    pub supersede: bool,
}

impl HeldListArgs {
    /// The status asked for (held when none; `None` for all).
    pub fn status(&self) -> Result<Option<levh_core::HeldStatus>, Error> {
        match self.status.as_deref().map(str::trim) {
            None => Ok(Some(levh_core::HeldStatus::Held)),
            Some("all") => Ok(None),
            Some(text) => levh_core::HeldStatus::parse(text).map(Some).ok_or_else(|| {
                Error::invalid(format!(
                    "invalid status: '{text}' is not held, admitted, discarded, expired or all"
                ))
            }),
        }
    }
}
