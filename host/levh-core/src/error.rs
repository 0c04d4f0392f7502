//! The one error type of levh-core. Gate outcomes are not errors: they are [`crate::Verdict`]s.

use crate::{ConfigError, EmbedError, HeldId, HeldStatus, MemoryId, StoreError};

/// Result with levh-core's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in an engine call. Every variant names what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument failed validation; nothing was changed.
    #[error("invalid {field}: {message}")]
    Invalid {
        /// The argument or field at fault (`importance`, `content`, `as_of`, ...).
        field: &'static str,
        /// What was wrong with it.
        message: String,
    },
    /// No memory with this id in the caller's workspace.
    #[error("no memory with id {0}")]
    NotFound(MemoryId),
    /// No held candidate with this id in the caller's workspace.
    #[error("no held candidate with id {0}")]
    HeldNotFound(HeldId),
    /// A second decision on a held candidate.
    #[error("held candidate {id} was already decided ({})", status.as_str())]
    AlreadyDecided {
        /// The candidate.
        id: HeldId,
        /// What it became.
        status: HeldStatus,
    },
    /// A discard while an admission was stored but not yet recorded (a crash between the
    /// two steps); the admission must be finished instead.
    #[error(
        "held candidate {0} is already stored as a memory; run `levh held admit {0}` to finish its admission"
    )]
    AdmissionIncomplete(HeldId),
    /// No entity in the caller's workspace answers to this (an id, address, name or
    /// domain).
    #[error(
        "no entity '{0}' in this workspace (give an id, an e-mail address, a name or a domain; `levh entities` lists them)"
    )]
    EntityNotFound(String),
    /// A name that fits more than one entity.
    #[error("'{name}' could be any of: {candidates} — give the entity's id")]
    AmbiguousEntity {
        /// What was asked.
        name: String,
        /// The entities it fits, as `id (kind name)`.
        candidates: String,
    },
    /// The storage backend failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The embedder failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// A configuration value was unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl Error {
    /// A validation error on `field`.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            message: message.into(),
        }
    }
}
