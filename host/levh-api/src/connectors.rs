//! Connectors, through the runtime's core trait ([`Connectors`]): list, help, sync with
//! the stored grants only, and the record of past runs.

use levh_core::sync::{
    ConnectorCatalog, ConnectorHelp, Connectors, FetchFailure, Source, SyncOptions, SyncReport,
    SyncRequest,
};
use levh_core::{Levh, Principal, Scope};

use crate::requests::{GrantBody, SyncStatusArgs};
use crate::{Error, Result};

/// What a surface says when it runs without a connector runtime.
pub const NO_RUNTIME: &str = "this levh server runs without the connector runtime; use `levh sync`, `levh serve`, or `levh mcp stdio --profile full`";

/// The runtime, or the error that says there is none.
pub fn runtime(connectors: Option<&dyn Connectors>) -> Result<&dyn Connectors> {
    connectors.ok_or_else(|| Error::Unavailable(NO_RUNTIME.into()))
}

/// [`Operation::ListConnectors`](crate::Operation::ListConnectors), with the grants of
/// the caller's workspace.
pub fn list(connectors: &dyn Connectors, scope: &Scope) -> Result<ConnectorCatalog> {
    Ok(connectors.list(&scope.workspace)?)
}

/// [`Operation::GetConnectorHelp`](crate::Operation::GetConnectorHelp), with the grants
/// of the caller's workspace.
pub fn help(connectors: &dyn Connectors, scope: &Scope, id: &str) -> Result<ConnectorHelp> {
    Ok(connectors.help(id, &scope.workspace)?)
}

/// The workspace a grant is for: the one the body names, else the caller's.
fn grant_workspace(principal: &Principal, body: &GrantBody) -> Result<levh_core::Workspace> {
    match &body.workspace {
        None => Ok(principal.workspace.clone()),
        Some(name) => levh_core::Workspace::new(name.trim())
            .map_err(|e| Error::invalid(format!("invalid workspace: {e}"))),
    }
}

/// [`Operation::SyncConnector`](crate::Operation::SyncConnector): the run is recorded
/// whatever happens; its report says what was stored and what failed.
pub fn sync(
    levh: &Levh,
    scope: &Scope,
    connectors: &dyn Connectors,
    request: SyncRequest,
) -> Result<SyncReport> {
    Ok(connectors.sync(levh, scope, request)?)
}

/// [`Operation::SyncConnector`](crate::Operation::SyncConnector) from a person's terminal
/// (`levh sync`): the source comes with the grants the person gave on the command line
/// (a network caller's sync goes through [`sync`], with the stored grants only), and
/// `progress` sees the tally after every item.
pub fn sync_source(
    levh: &Levh,
    scope: &Scope,
    source: &mut dyn Source,
    options: SyncOptions,
    project: Option<String>,
    progress: &mut dyn FnMut(&SyncReport),
) -> Result<SyncReport> {
    Ok(levh.sync(scope, source, options, project, progress)?)
}

/// A run that failed because a person has not granted what the connector needs: the
/// line of the report that names the grant command, as a [`Error::Denied`].
pub fn refusal(report: &SyncReport) -> Option<Error> {
    (report.failure == Some(FetchFailure::Denied))
        .then(|| Error::Denied(report.errors.last().cloned().unwrap_or_default()))
}

/// [`Operation::ConnectorSyncStatus`](crate::Operation::ConnectorSyncStatus): newest
/// first, 10 unless asked.
pub fn status(levh: &Levh, scope: &Scope, args: SyncStatusArgs) -> Result<Vec<SyncReport>> {
    Ok(levh.sync_runs(scope, args.id.as_deref(), args.limit.unwrap_or(10))?)
}

/// One sync run by its id, with every item it did not store (`levh sync status RUN`);
/// `None` when no run has that id in this workspace.
pub fn sync_run(levh: &Levh, scope: &Scope, run_id: &str) -> Result<Option<SyncReport>> {
    Ok(levh.sync_run(scope, run_id)?)
}

/// Grants live with the connector on the server's machine, not in a workspace: only the
/// local person or the operator may change them.
fn host_wide(principal: &Principal) -> Result<()> {
    if principal.speaks_for_the_host() {
        return Ok(());
    }
    Err(Error::Denied(
        "a connector's grants are the machine's, not a workspace's: only the operator token \
         (LEVH_TOKEN) or the local person without a token may change them, or a person with \
         `levh connector grant` at a terminal (nothing was changed)"
            .into(),
    ))
}

/// [`Operation::GrantConnector`](crate::Operation::GrantConnector): the connector's help
/// with the grant in it.
pub fn grant(
    connectors: &dyn Connectors,
    principal: &Principal,
    id: &str,
    body: GrantBody,
) -> Result<ConnectorHelp> {
    host_wide(principal)?;
    let workspace = grant_workspace(principal, &body)?;
    let grant = body.into_grant(true)?;
    let help = connectors.grant(id, &workspace, &grant)?;
    tracing::info!(connector = id, ?grant, %workspace, principal = ?principal.name, "grant stored");
    Ok(help)
}

/// [`Operation::RevokeConnector`](crate::Operation::RevokeConnector): the connector's
/// help without the grant.
pub fn revoke(
    connectors: &dyn Connectors,
    principal: &Principal,
    id: &str,
    body: GrantBody,
) -> Result<ConnectorHelp> {
    host_wide(principal)?;
    let workspace = grant_workspace(principal, &body)?;
    let grant = body.into_grant(false)?;
    if !connectors.revoke(id, &workspace, &grant)? {
        return Err(Error::NotFound(format!(
            "{id} has no such grant for workspace {workspace} (nothing was changed)"
        )));
    }
    tracing::info!(connector = id, ?grant, %workspace, principal = ?principal.name, "grant revoked");
    Ok(connectors.help(id, &workspace)?)
}
