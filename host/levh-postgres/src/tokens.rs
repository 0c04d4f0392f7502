//! API tokens for `levh serve`: each binds one workspace and one role. The secret is shown
//! once, at creation; the store keeps only its SHA-256 (the secret is 160 random bits, so
//! a fast hash is enough: there is nothing to brute-force).

use crate::connection::Db;
use levh_core::{IssuedToken, Role, Timestamp, TokenInfo, Workspace};
use postgres::Row;

use crate::rows::{column, from_micros, micros, optional_time};
use crate::{PostgresStore, PostgresStoreError};

/// How a secret is kept (levh-core's one rule for every store).
pub use levh_core::secret_hash;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_hex(bytes: usize) -> Result<String, PostgresStoreError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)
        .map_err(|e| PostgresStoreError::Corrupt(format!("no randomness for a token: {e}")))?;
    Ok(hex(&buffer))
}

const SELECT: &str = "SELECT id, workspace, role, label, created_at, revoked_at FROM tokens";

fn read(row: &Row) -> Result<TokenInfo, PostgresStoreError> {
    let id: String = column(row, 0)?;
    let corrupt = |what: &str| PostgresStoreError::Corrupt(format!("token {id}: {what}"));
    let workspace: &str = column(row, 1)?;
    let role: &str = column(row, 2)?;
    Ok(TokenInfo {
        workspace: Workspace::new(workspace).map_err(|_| corrupt("workspace"))?,
        role: role.parse().map_err(|_| corrupt("role"))?,
        label: column(row, 3)?,
        created_at: from_micros(column(row, 4)?),
        revoked_at: optional_time(column(row, 5)?),
        id,
    })
}

impl PostgresStore {
    /// Issues a token for `workspace` with `role`.
    pub(crate) fn create_token(
        &self,
        workspace: &Workspace,
        role: Role,
        label: Option<&str>,
        now: Timestamp,
    ) -> Result<IssuedToken, PostgresStoreError> {
        let secret = format!("levh_{}", random_hex(20)?);
        let id = format!("tok_{}", random_hex(6)?);
        self.connection()?.execute(
            "INSERT INTO tokens (id, secret_hash, workspace, role, label, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &id,
                &secret_hash(&secret),
                &workspace.as_str(),
                &role.as_str(),
                &label,
                &micros(now),
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
    pub(crate) fn verify_token(
        &self,
        secret: &str,
    ) -> Result<Option<TokenInfo>, PostgresStoreError> {
        self.connection()?
            .query_opt(
                &format!("{SELECT} WHERE secret_hash = $1 AND revoked_at IS NULL"),
                &[&secret_hash(secret)],
            )?
            .map(|row| read(&row))
            .transpose()
    }

    /// Every token, or one workspace's, newest first.
    pub(crate) fn list_tokens(
        &self,
        workspace: Option<&Workspace>,
    ) -> Result<Vec<TokenInfo>, PostgresStoreError> {
        let rows = self.connection()?.query(
            &format!(
                "{SELECT} WHERE ($1::text IS NULL OR workspace = $1) ORDER BY created_at DESC, id COLLATE \"C\""
            ),
            &[&workspace.map(Workspace::as_str)],
        )?;
        rows.iter().map(read).collect()
    }

    /// Revokes a live token by id, of one workspace when given. False when there is none.
    pub(crate) fn revoke_token(
        &self,
        workspace: Option<&Workspace>,
        id: &str,
        now: Timestamp,
    ) -> Result<bool, PostgresStoreError> {
        let changed = self.connection()?.execute(
            "UPDATE tokens SET revoked_at = $3
              WHERE id = $1 AND ($2::text IS NULL OR workspace = $2) AND revoked_at IS NULL",
            &[&id, &workspace.map(Workspace::as_str), &micros(now)],
        )?;
        Ok(changed == 1)
    }
}
