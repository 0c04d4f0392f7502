//! levh-knowledge: what levh reads out of the text of memories — who is mentioned, which
//! organizations they belong to, what was decided, and what the writer promised (with the
//! date the promise names).
//!
//! Every detector is deterministic and offline, and table-driven: the patterns live in
//! per-language rule files under `data/` (embedded in the binary), so a language or a
//! phrasing is added by editing a file, not code. Each detector has a labelled fixture set
//! under `fixtures/knowledge/`, and `levh eval detectors` measures its precision and recall
//! per language against thresholds kept beside the sets.
//!
//! - [`sentences`]: the unit every detector judges.
//! - [`decisions`]: "we decided…", "karar verdik…".
//! - [`commitments`]: "I'll send it by Friday", "yarın göndereceğim", with [`dates`]
//!   resolving the due date against the memory's world time in its time zone.
//! - [`people`]: known people by name, `@handles` and e-mail addresses in text.
//! - [`organizations`]: an e-mail address's organization, personal providers excluded.
//! - [`conflicts`]: whether two memories about the same thing may disagree.
//!
//! Why a crate of its own: it is pure text → facts, depends on no store or engine, and the
//! engine, the evaluation harness and later the entity index all call the same functions.

#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod commitments;
pub mod conflicts;
pub mod dates;
pub mod decisions;
pub mod organizations;
pub mod people;
mod rules;
mod text;

pub use rules::{RuleError, Rules};
pub use text::{Sentence, sentences};
