//! levh-embed: embedders behind levh-core's [`Embedder`] trait.
//!
//! Today it has the [`HashEmbedder`], the always-available fallback. The local ONNX model
//! and the Ollama / OpenAI-compatible modes come later behind the same trait.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod hash;

pub use hash::HashEmbedder;
#[doc(no_inline)]
pub use levh_core::Embedder;
