//! The server itself: liveness, for monitors and for the dashboard's status line.

use levh_core::{Levh, Principal, ServerStore};

use crate::views::HealthView;
use crate::{Error, Result};

/// [`Operation::Health`](crate::Operation::Health): reads no table, so it answers fast
/// even on a large store.
pub fn health(levh: &Levh, store: &dyn ServerStore, principal: &Principal) -> Result<HealthView> {
    let (schema_version, journal_mode) = store.liveness().map_err(Error::internal)?;
    Ok(HealthView {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        backend: store.backend().into(),
        schema_version,
        journal_mode,
        embedder: levh.embedder().model_id().to_owned(),
        workspace: principal.workspace.to_string(),
        role: principal.role.into(),
    })
}
