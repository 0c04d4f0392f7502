//! What every surface returns: the response types of the operations, each with a JSON
//! schema (REST's OpenAPI document and MCP's output schemas are generated from them).
//!
//! These are deliberately separate from levh-core's types: the wire shape is a contract
//! of its own (ids and times as strings, retention computed for `now`), and levh-core
//! stays free of schema derives.
//!
//! One file per area, as the operations are: memories (a memory, lists,
//! changes, curves, history), the gate and the held queue, recall, the workspace, the
//! server (health, tokens, settings), knowledge (decisions, commitments, timeline) and the
//! entity index. Every type is re-exported here: callers write `views::MemoryView`.

use std::collections::BTreeMap;

use levh_core::{
    CaptureOutcome, Evaluation, HeldCandidate, HeldStatus, Levh, Measure, Memory, ModelConfig,
    Nearest, Redaction, Timestamp, Verdict, model,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod assistant;
mod entities;
mod gate;
mod knowledge;
mod memories;
mod recall;
mod server;
mod workspace;

pub use assistant::*;
pub use entities::*;
pub use gate::*;
pub use knowledge::*;
pub use memories::*;
pub use recall::*;
pub use server::*;
pub use workspace::*;
