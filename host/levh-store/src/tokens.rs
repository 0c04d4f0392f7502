//! API tokens for `levh serve`: each binds one workspace and one role. The secret is
//! shown once, at creation; the store keeps only its SHA-256.

use levh_core::{IssuedToken, Role, Timestamp, TokenInfo, Workspace};
use rusqlite::{OptionalExtension, params};

use crate::rows::micros;
use crate::{SqliteStore, SqliteStoreError};

/// How a secret is kept (levh-core's one rule for every store).
pub use levh_core::secret_hash;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_hex(bytes: usize) -> Result<String, SqliteStoreError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)
        .map_err(|e| SqliteStoreError::Corrupt(format!("no randomness for a token: {e}")))?;
    Ok(hex(&buffer))
}

impl SqliteStore {
    /// Issues a token for `workspace` with `role`.
    pub fn create_token(
        &self,
        workspace: &Workspace,
        role: Role,
        label: Option<&str>,
        now: Timestamp,
    ) -> Result<IssuedToken, SqliteStoreError> {
        let secret = format!("levh_{}", random_hex(20)?);
        let id = format!("tok_{}", random_hex(6)?);
        self.lock().execute(
            "INSERT INTO tokens (id, secret_hash, workspace, role, label, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                id,
                secret_hash(&secret),
                workspace.as_str(),
                role.as_str(),
                label,
                micros(now)
            ],
        )?;
        Ok(IssuedToken {
            info: TokenInfo {
                id,
                workspace: workspace.clone(),
                role,
                label: label.map(str::to_owned),
                created_at: now,
                revoked_at: None,
            },
            secret,
        })
    }

    /// The live (not revoked) token whose secret this is.
    pub fn verify_token(&self, secret: &str) -> Result<Option<TokenInfo>, SqliteStoreError> {
        let connection = self.read();
        let mut statement = connection.prepare_cached(&format!(
            "{SELECT} WHERE secret_hash = ?1 AND revoked_at IS NULL"
        ))?;
        let row = statement
            .query_row(params![secret_hash(secret)], read_row)
            .optional()?;
        row.map(token_info).transpose()
    }

    /// Every token, newest first.
    pub fn list_tokens(&self) -> Result<Vec<TokenInfo>, SqliteStoreError> {
        let connection = self.read();
        let mut statement =
            connection.prepare_cached(&format!("{SELECT} ORDER BY created_at DESC, id"))?;
        let rows = statement.query_map([], read_row)?;
        rows.map(|row| token_info(row?)).collect()
    }

    /// Tokens bound to one workspace, newest first (what a workspace's admin may see).
    pub fn list_workspace_tokens(
        &self,
        workspace: &Workspace,
    ) -> Result<Vec<TokenInfo>, SqliteStoreError> {
        let connection = self.read();
        let mut statement = connection.prepare_cached(&format!(
            "{SELECT} WHERE workspace = ?1 ORDER BY created_at DESC, id"
        ))?;
        let rows = statement.query_map(params![workspace.as_str()], read_row)?;
        rows.map(|row| token_info(row?)).collect()
    }

    /// Revokes a token of one workspace by id. False when that workspace has no live
    /// token with that id (a token of another workspace is not found, not revoked).
    pub fn revoke_workspace_token(
        &self,
        workspace: &Workspace,
        id: &str,
        now: Timestamp,
    ) -> Result<bool, SqliteStoreError> {
        let changed = self.lock().execute(
            "UPDATE tokens SET revoked_at = ?3
             WHERE id = ?1 AND workspace = ?2 AND revoked_at IS NULL",
            params![id, workspace.as_str(), micros(now)],
        )?;
        Ok(changed == 1)
    }

    /// Revokes a token by id. False when no live token has that id.
    pub fn revoke_token(&self, id: &str, now: Timestamp) -> Result<bool, SqliteStoreError> {
        let changed = self.lock().execute(
            "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id, micros(now)],
        )?;
        Ok(changed == 1)
    }
}

const SELECT: &str = "SELECT id, workspace, role, label, created_at, revoked_at FROM tokens";

type Row = (String, String, String, Option<String>, i64, Option<i64>);

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ))
}

fn token_info(
    (id, workspace, role, label, created_at, revoked_at): Row,
) -> Result<TokenInfo, SqliteStoreError> {
    let corrupt = |what: &str| SqliteStoreError::Corrupt(format!("token {id}: {what}"));
    let time = |micros: i64| Ok::<_, SqliteStoreError>(crate::rows::from_micros(micros));
    Ok(TokenInfo {
        workspace: Workspace::new(&workspace).map_err(|_| corrupt("workspace"))?,
        role: role.parse().map_err(|_| corrupt("role"))?,
        label,
        created_at: time(created_at)?,
        revoked_at: revoked_at.map(time).transpose()?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_until_revoked_and_only_its_hash_is_stored() {
        let store = SqliteStore::open_in_memory().unwrap();
        let workspace = Workspace::new("team").unwrap();
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let issued = store
            .create_token(&workspace, Role::Editor, Some("ci"), now)
            .unwrap();
        assert!(issued.secret.starts_with("levh_") && issued.secret.len() == 45);
        let found = store.verify_token(&issued.secret).unwrap().unwrap();
        assert_eq!(found, issued.info);
        assert_eq!(store.verify_token("levh_wrong").unwrap(), None);
        let stored: String = store.with_connection(|c| {
            c.query_row("SELECT secret_hash FROM tokens", [], |r| r.get(0))
                .unwrap()
        });
        assert_ne!(stored, issued.secret);
        assert_eq!(stored, secret_hash(&issued.secret));

        assert!(store.revoke_token(&issued.info.id, now).unwrap());
        assert!(!store.revoke_token(&issued.info.id, now).unwrap());
        assert_eq!(store.verify_token(&issued.secret).unwrap(), None);
        assert_eq!(store.list_tokens().unwrap()[0].revoked_at, Some(now));
    }

    #[test]
    fn roles_order_from_viewer_to_admin() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Admin);
        assert_eq!("admin".parse::<Role>(), Ok(Role::Admin));
        assert!(
            "owner"
                .parse::<Role>()
                .unwrap_err()
                .contains("viewer, editor or admin")
        );
    }
}
