//! levh-embed: embedders behind levh-core's [`Embedder`] trait.
//!
//! Today it has the [`HashEmbedder`], the always-available fallback. The local ONNX model
//! and the Ollama / OpenAI-compatible modes come later behind the same trait.

mod hash;

pub use hash::HashEmbedder;
#[doc(no_inline)]
pub use levh_core::Embedder;
