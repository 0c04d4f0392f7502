//! API tokens of the caller's workspace, for its admins: issue (the secret is in that one
//! answer), list, revoke. A workspace's admin never sees or revokes another workspace's
//! tokens; `levh token` at a terminal manages all of them.

use levh_core::{Principal, Role, ServerStore, Timestamp};

use crate::requests::TokenBody;
use crate::views::{IssuedTokenView, TokenList, TokenView};
use crate::{Error, Result};

/// The longest label a token may carry.
const MAX_LABEL: usize = 200;

/// [`Operation::ListTokens`](crate::Operation::ListTokens).
pub fn list(store: &dyn ServerStore, principal: &Principal) -> Result<TokenList> {
    let tokens = store
        .workspace_tokens(&principal.workspace)
        .map_err(Error::internal)?;
    Ok(TokenList {
        tokens: tokens.iter().map(TokenView::from).collect(),
    })
}

/// Every workspace's tokens, for the operator at a terminal (`levh token list`).
pub fn list_all(store: &dyn ServerStore) -> Result<TokenList> {
    let tokens = store.all_tokens().map_err(Error::internal)?;
    Ok(TokenList {
        tokens: tokens.iter().map(TokenView::from).collect(),
    })
}

/// Revokes a token of any workspace, for the operator at a terminal (`levh token
/// revoke`); the tokens left, in every workspace.
pub fn revoke_any(store: &dyn ServerStore, id: &str, now: Timestamp) -> Result<TokenList> {
    let id = id.trim();
    if !store.revoke_any_token(id, now).map_err(Error::internal)? {
        return Err(Error::NotFound(format!(
            "no live token with id {id} (`levh token list` shows them; nothing was changed)"
        )));
    }
    list_all(store)
}

/// [`Operation::CreateToken`](crate::Operation::CreateToken): bound to the caller's
/// workspace. A label is a person's note, shown in lists: secrets in it are redacted.
pub fn create(
    store: &dyn ServerStore,
    principal: &Principal,
    body: TokenBody,
    now: Timestamp,
) -> Result<IssuedTokenView> {
    let role: Role = body.role.trim().parse().map_err(|_| {
        // Debug-quoted: an invisible character in the role is shown, not hidden.
        Error::invalid(format!(
            "invalid role: {:?} is not viewer, editor or admin",
            body.role
        ))
    })?;
    let label = body
        .label
        .map(|label| label.trim().to_owned())
        .filter(|label| !label.is_empty());
    if let Some(label) = &label
        && label.chars().count() > MAX_LABEL
    {
        return Err(Error::invalid(format!(
            "invalid label: {} characters, at most {MAX_LABEL}",
            label.chars().count()
        )));
    }
    let label = label.map(|label| levh_core::gate::secrets::redact(&label).0);
    let issued = store
        .issue_token(&principal.workspace, role, label.as_deref(), now)
        .map_err(Error::internal)?;
    Ok(IssuedTokenView {
        token: TokenView::from(&issued.info),
        secret: issued.secret,
    })
}

/// [`Operation::RevokeToken`](crate::Operation::RevokeToken): it stops working at once.
pub fn revoke(
    store: &dyn ServerStore,
    principal: &Principal,
    id: &str,
    now: Timestamp,
) -> Result<TokenList> {
    let id = id.trim();
    if !store
        .revoke_workspace_token(&principal.workspace, id, now)
        .map_err(Error::internal)?
    {
        return Err(Error::NotFound(format!(
            "no live token with id {id} in this workspace (nothing was changed)"
        )));
    }
    list(store, principal)
}
