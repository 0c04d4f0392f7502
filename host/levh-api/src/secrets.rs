//! Secrets already stored: find them (kinds only, never the secrets) or strip them, in
//! memories and everywhere else levh keeps text (held candidates, kinds, synced items'
//! ids, tokens' labels).

use levh_core::{Levh, Scope, SecretFinding, SecretPlace};

use crate::Result;
use crate::views::{SecretFindingView, SecretPlaceView, SecretsView};

/// [`Operation::AuditSecrets`](crate::Operation::AuditSecrets).
pub fn audit(levh: &Levh, scope: &Scope) -> Result<SecretsView> {
    Ok(view(
        levh.audit_secrets(scope)?,
        levh.audit_secret_places(scope)?,
        false,
    ))
}

/// [`Operation::RedactSecrets`](crate::Operation::RedactSecrets): re-embeds each memory.
pub fn redact(levh: &Levh, scope: &Scope) -> Result<SecretsView> {
    Ok(view(
        levh.redact_secrets(scope)?,
        levh.redact_secret_places(scope)?,
        true,
    ))
}

fn view(findings: Vec<SecretFinding>, elsewhere: Vec<SecretPlace>, redacted: bool) -> SecretsView {
    SecretsView {
        findings: findings
            .into_iter()
            .map(|f| SecretFindingView {
                memory_id: f.memory_id.to_string(),
                kinds: f.kinds,
                fields: f.fields,
            })
            .collect(),
        elsewhere: elsewhere
            .into_iter()
            .map(|p| SecretPlaceView {
                place: p.place,
                kinds: p.kinds,
            })
            .collect(),
        redacted,
    }
}
