//! levh-eval: measures recall quality and checks levh's promises end to end.
//!
//! Both harnesses build a throwaway engine ([`Sandbox`]) — a real SQLite file in WAL mode
//! in a temporary directory, the caller's embedder and configuration, a clock the harness
//! moves — so they never touch the user's memories and every run starts from the same
//! state.
//!
//! - [`benchmark`]: a labelled query set (paraphrases, near-miss distractors, a non-English
//!   slice) loaded through the admission gate, then searched without reinforcement;
//!   reports hit@1/3/5 and MRR per slice and checks them against thresholds kept with the
//!   dataset (`levh benchmark [--check]`).
//! - [`conversational`]: long two-person conversations over dated sessions, one memory per
//!   turn, questions labelled with their evidence turns; levh's recall beside a plain BM25
//!   baseline computed in the same run (`levh benchmark --dataset conversational`).
//! - [`detectors`]: precision and recall of levh-knowledge's detectors (decisions,
//!   commitments and their due dates, people) on labelled sentence sets, per language
//!   (`levh eval detectors [--check]`).
//! - [`scenario`]: golden scenario files — stores with expected gate verdicts, held
//!   decisions, clock steps, recalls with expected and forbidden results, feedback, pins,
//!   fading — run step by step; writes a JSON report tagged with [`EVALUATION_VERSION`]
//!   (`levh eval run|report`).

#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod benchmark;
pub mod consolidation;
pub mod conversational;
pub mod detectors;
mod sandbox;
pub mod scenario;
pub mod tune;

pub use sandbox::{Sandbox, measure_on_postgres};

/// The version of the evaluation report format and of the scenario semantics. Bumped when
/// either changes, so reports of different versions are never compared as equals.
pub const EVALUATION_VERSION: u32 = 1;

/// How an embedder's vectors compare: `semantic` (a language model) or `lexical` (the hash
/// embedder). The gate and the thresholds differ between the two.
pub fn measure_name(embedder: &dyn levh_core::Embedder) -> &'static str {
    if embedder.is_semantic() {
        "semantic"
    } else {
        "lexical"
    }
}
