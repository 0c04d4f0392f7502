//! Secrets already stored: find them (kinds only, never the secrets) or strip them.

use levh_core::{Levh, Scope, SecretFinding};

use crate::Result;
use crate::views::{SecretFindingView, SecretsView};

/// [`Operation::AuditSecrets`](crate::Operation::AuditSecrets).
pub fn audit(levh: &Levh, scope: &Scope) -> Result<SecretsView> {
    Ok(view(levh.audit_secrets(scope)?, false))
}

/// [`Operation::RedactSecrets`](crate::Operation::RedactSecrets): re-embeds each memory.
pub fn redact(levh: &Levh, scope: &Scope) -> Result<SecretsView> {
    Ok(view(levh.redact_secrets(scope)?, true))
}

fn view(findings: Vec<SecretFinding>, redacted: bool) -> SecretsView {
    SecretsView {
        findings: findings
            .into_iter()
            .map(|f| SecretFindingView {
                memory_id: f.memory_id.to_string(),
                kinds: f.kinds,
                fields: f.fields,
            })
            .collect(),
        redacted,
    }
}
