//! What an operation reports when it cannot do what was asked.

use levh_core::sync::{ConnectorError, FetchFailure};

/// Why an operation failed. Every message names what was wrong; a caller's mistake says
/// that nothing was changed. REST turns the kind into a status, MCP into an `isError`
/// result with the same words.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request failed validation (400).
    #[error("{0}")]
    Invalid(String),
    /// No such memory, candidate or connector in this workspace (404).
    #[error("{0}")]
    NotFound(String),
    /// The thing asked about is no longer in a state that allows it (409).
    #[error("{0}")]
    Conflict(String),
    /// A person has to grant something first; the message says how (403).
    #[error("{0}")]
    Denied(String),
    /// The request was understood but cannot be carried out as given, e.g. a connector's
    /// settings (422).
    #[error("{0}")]
    Unprocessable(String),
    /// This server runs without what the operation needs (503).
    #[error("{0}")]
    Unavailable(String),
    /// The disk holding the store is full: nothing was stored (507).
    #[error("{0}")]
    InsufficientStorage(String),
    /// A fault on levh's side; the detail is for the server log (500).
    #[error("{0}")]
    Internal(String),
}

/// The words every refused request ends with.
const UNCHANGED: &str = "(nothing was changed)";

impl Error {
    /// A validation failure; says that nothing was changed.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(unchanged(message.into()))
    }

    /// An internal fault, logged once here with its detail.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Self::Internal(detail.to_string())
    }
}

fn unchanged(message: String) -> String {
    if message.contains("nothing was changed") || message.contains("nothing was decided") {
        message
    } else {
        format!("{message} {UNCHANGED}")
    }
}

impl From<levh_core::Error> for Error {
    fn from(error: levh_core::Error) -> Self {
        use levh_core::Error as E;
        match error {
            E::Invalid { .. } => Self::invalid(error.to_string()),
            E::NotFound(id) => Self::NotFound(unchanged(format!(
                "no memory with id {id} in this workspace"
            ))),
            E::HeldNotFound(_) | E::EntityNotFound(_) => {
                Self::NotFound(unchanged(error.to_string()))
            }
            E::AmbiguousEntity { .. } => Self::invalid(error.to_string()),
            E::AlreadyDecided { .. } | E::AdmissionIncomplete(_) => {
                Self::Conflict(error.to_string())
            }
            // A list continued from a memory purged meanwhile: the caller lists again.
            E::Store(store) if store.is_cursor_gone() => Self::Conflict(store.0.to_string()),
            // Judged again several times and each time another writer stored one of the
            // texts first: the caller's to send again (its copies now count as stored).
            E::Store(store) if store.is_raced() => Self::Conflict(format!(
                "{}; send the batch again",
                store.0
            )),
            E::Store(store) if store.is_disk_full() => Self::InsufficientStorage(
                "the disk holding levh's store is full: nothing was stored; free some space and try again"
                    .into(),
            ),
            // The embedder is the person's configuration (a model file, a URL), not a
            // fault of levh's: they need its words to fix it, on every surface.
            E::Embed(embed) => Self::Unavailable(format!(
                "the embedder could not run: {embed} (nothing was changed; `levh doctor` explains, `levh models status` checks a local model)"
            )),
            other => Self::internal(other),
        }
    }
}

impl From<ConnectorError> for Error {
    fn from(error: ConnectorError) -> Self {
        match error {
            ConnectorError::Unknown { .. } => Self::NotFound(error.to_string()),
            ConnectorError::Fetch(fetch) => match fetch.kind {
                FetchFailure::Denied => Self::Denied(fetch.message),
                FetchFailure::InvalidConfig => Self::Unprocessable(fetch.message),
                _ => Self::Unprocessable(fetch.message),
            },
            ConnectorError::Engine(engine) => engine.into(),
            other => Self::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use levh_core::StoreError;

    /// Conditions a caller can act on are theirs (4xx), with the store's own words;
    /// anything else from the store is levh's fault (500).
    #[test]
    fn a_store_condition_a_caller_can_act_on_is_not_an_internal_error() {
        let gone = Error::from(levh_core::Error::Store(StoreError::cursor_gone(
            "the memory x that this list continues from is no longer stored; list again",
        )));
        assert!(
            matches!(&gone, Error::Conflict(m) if m.contains("list again") && !m.contains("storage error")),
            "{gone:?}"
        );
        let full = Error::from(levh_core::Error::Store(StoreError::disk_full("ENOSPC")));
        assert!(matches!(full, Error::InsufficientStorage(_)), "{full:?}");
        let other = Error::from(levh_core::Error::Store(StoreError::new("locked")));
        assert!(matches!(other, Error::Internal(_)), "{other:?}");
    }
}
