//! levh-embed: embedders behind levh-core's [`Embedder`] trait, and the installer of the
//! local model.
//!
//! - [`LocalEmbedder`]: all-MiniLM-L6-v2 on ONNX Runtime, loaded on the first embed.
//! - [`RemoteEmbedder`]: Ollama or any OpenAI-compatible `/v1/embeddings`.
//! - [`HashEmbedder`]: deterministic and non-semantic, always available: the fallback.
//!
//! - [`chat::ChatModel`]: an OpenAI-compatible chat model `levh ask` may write answers with.
//!
//! [`select`] picks one from the configuration; [`install`] puts a model and the runtime
//! under `$LEVH_HOME/models`.

// Outside tests, failures are handled, never unwrapped.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod chat;
mod hash;
pub mod install;
pub mod local;
pub mod remote;
pub mod select;

use std::path::PathBuf;

pub use hash::HashEmbedder;
#[doc(no_inline)]
pub use levh_core::Embedder;
pub use local::{LocalEmbedder, LocalModel};
pub use remote::RemoteEmbedder;
pub use select::{Mode, Selection, select};

/// What can go wrong choosing, loading, running or installing an embedder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedderError {
    /// A setting has a value levh cannot use.
    #[error("{key}: {message}")]
    Config {
        /// The setting, e.g. `LEVH_EMBEDDER`.
        key: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A file the local model needs is not there.
    #[error("{} is missing: {hint}", path.display())]
    ModelMissing {
        /// The missing file.
        path: PathBuf,
        /// How to get it.
        hint: &'static str,
    },
    /// The ONNX Runtime library could not be opened.
    #[error("cannot load ONNX Runtime from {}: {message}", path.display())]
    Runtime {
        /// The library.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A model file could not be read or loaded.
    #[error("cannot load the model file {}: {message}", path.display())]
    Model {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Running the model failed.
    #[error("running the embedding model failed: {0}")]
    Inference(String),
    /// An embedding server or a download failed or answered nonsense.
    #[error("{url}: {message}")]
    Http {
        /// The URL called.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// Installing failed.
    #[error("{0}")]
    Install(String),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}
