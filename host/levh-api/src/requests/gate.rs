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
    /// held (default), admitted, discarded, expired, or all.
    pub status: Option<HeldStatusFilter>,
}

/// Which held candidates a list shows: those of one status, or all.
// Read from its name through `HeldStatusFilter::parse` (the Deserialize impl below), so
// every surface refuses an unknown one in the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeldStatusFilter {
    /// Waiting for a person (the default).
    #[default]
    Held,
    /// Stored as memories.
    Admitted,
    /// Let go by a person.
    Discarded,
    /// Let go because nobody decided in time.
    Expired,
    /// Every candidate, whatever became of it.
    All,
}

impl HeldStatusFilter {
    /// The names a caller may give, as they are written.
    pub const NAMES: [&'static str; 5] = ["held", "admitted", "discarded", "expired", "all"];

    /// The filter named `text` (as [`HeldStatusFilter::NAMES`] writes it).
    pub fn parse(text: &str) -> Result<Self, Error> {
        Ok(match text.trim() {
            "held" => Self::Held,
            "admitted" => Self::Admitted,
            "discarded" => Self::Discarded,
            "expired" => Self::Expired,
            "all" => Self::All,
            other => {
                return Err(Error::invalid(format!(
                    "invalid status: '{other}' is not held, admitted, discarded, expired or all"
                )));
            }
        })
    }

    /// The one status it keeps; `None` for all.
    #[must_use]
    pub fn status(self) -> Option<levh_core::HeldStatus> {
        match self {
            Self::Held => Some(levh_core::HeldStatus::Held),
            Self::Admitted => Some(levh_core::HeldStatus::Admitted),
            Self::Discarded => Some(levh_core::HeldStatus::Discarded),
            Self::Expired => Some(levh_core::HeldStatus::Expired),
            Self::All => None,
        }
    }
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

impl<'de> Deserialize<'de> for HeldStatusFilter {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::parse(&name).map_err(serde::de::Error::custom)
    }
}
