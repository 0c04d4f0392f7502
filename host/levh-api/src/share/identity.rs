//! This instance's identity for sharing, and the public identities of its peers.
//!
//! Two keys, because they do two jobs: an ed25519 key signs what this instance shares
//! (a peer checks who wrote a bundle and that no byte changed), and an age x25519 identity
//! opens what peers encrypt for it. Both are created on first use in `share/identity.toml`
//! under the home, readable by its owner only; only their public halves are ever shown,
//! together as one string a person copies to a colleague ([`PublicIdentity`]).

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use age::secrecy::ExposeSecret as _;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The file holding this instance's two private keys.
const IDENTITY_FILE: &str = "identity.toml";

/// How a public identity string starts; the `1` is its version, so a later form can be
/// told apart rather than misread.
const PUBLIC_PREFIX: &str = "levh-peer1:";

/// How a signing key is written where a person reads it (metadata, errors, lists).
const KEY_PREFIX: &str = "ed25519:";

/// This instance's private identity: it signs bundles and opens those sent to it.
pub struct Identity {
    name: String,
    signing: SigningKey,
    age: age::x25519::Identity,
}

// The private keys never reach a log line.
impl fmt::Debug for Identity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Identity")
            .field("name", &self.name)
            .field("key", &key_text(&self.signing.verifying_key()))
            .finish_non_exhaustive()
    }
}

/// The file's fields.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IdentityFile {
    /// The name this instance gives itself in what it shares.
    name: String,
    /// The ed25519 secret key (its 32-byte seed), base64url.
    signing_key: String,
    /// The age identity (`AGE-SECRET-KEY-1…`).
    age_identity: String,
    created_at: String,
}

impl Identity {
    /// The identity kept in `dir`, created there (readable by its owner only) if there is
    /// none yet, named `name`. A file others can read is refused: its keys may be copied.
    pub fn load_or_create(dir: &Path, name: &str, now: levh_core::Timestamp) -> Result<Self> {
        let path = dir.join(IDENTITY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&path, &text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let identity = Self::generate(name)?;
                let file = IdentityFile {
                    name: identity.name.clone(),
                    signing_key: URL_SAFE_NO_PAD.encode(identity.signing.to_bytes()),
                    age_identity: identity.age.to_string().expose_secret().to_owned(),
                    created_at: now.to_string(),
                };
                let text = format!(
                    "# levh's identity for sharing (levh share, levh pull): two PRIVATE keys.\n\
                     # Never copy this file; `levh peer id` prints what a colleague needs.\n{}",
                    toml::to_string(&file).map_err(Error::internal)?
                );
                match write_private(&path, text.as_bytes(), true) {
                    Ok(()) => Ok(identity),
                    // Another process created it first: that one is the identity.
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                        let text = std::fs::read_to_string(&path).map_err(|e| {
                            Error::internal(format!("cannot read {}: {e}", path.display()))
                        })?;
                        Self::parse(&path, &text)
                    }
                    Err(error) => Err(Error::internal(format!(
                        "cannot create {}: {error}",
                        path.display()
                    ))),
                }
            }
            Err(error) => Err(Error::internal(format!(
                "cannot read {}: {error}",
                path.display()
            ))),
        }
    }

    fn generate(name: &str) -> Result<Self> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| Error::internal(format!("no randomness for a new key: {e}")))?;
        Ok(Self {
            name: name.to_owned(),
            signing: SigningKey::from_bytes(&seed),
            age: age::x25519::Identity::generate(),
        })
    }

    fn parse(path: &Path, text: &str) -> Result<Self> {
        refuse_if_shared(path)?;
        let bad = |what: String| {
            Error::Unprocessable(format!(
                "{} is damaged: {what}; move it away and run `levh peer id` for a new identity (peers must then add the new one)",
                path.display()
            ))
        };
        let file: IdentityFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        let seed = URL_SAFE_NO_PAD
            .decode(file.signing_key.trim())
            .ok()
            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            .ok_or_else(|| bad("`signing_key` is not a 32-byte base64url key".into()))?;
        let age = file
            .age_identity
            .trim()
            .parse::<age::x25519::Identity>()
            .map_err(|e| bad(format!("`age_identity`: {e}")))?;
        Ok(Self {
            name: file.name,
            signing: SigningKey::from_bytes(&seed),
            age,
        })
    }

    /// The name it gives itself in what it shares.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What a colleague adds with `levh peer add`.
    pub fn public(&self) -> PublicIdentity {
        PublicIdentity {
            key: self.signing.verifying_key(),
            recipient: self.age.to_public(),
        }
    }

    /// The signature of `message`.
    pub(super) fn sign(&self, message: &[u8]) -> ed25519_dalek::Signature {
        self.signing.sign(message)
    }

    /// The age identity that opens what peers encrypt to this instance.
    pub(super) fn age(&self) -> &age::x25519::Identity {
        &self.age
    }
}

/// Another instance's (or this one's) public identity: the key its bundles are signed
/// with and the age recipient bundles for it are encrypted to. Written as one string,
/// `levh-peer1:<ed25519 key, base64url>:<age1…>`.
#[derive(Clone)]
pub struct PublicIdentity {
    /// Checks its signatures.
    pub key: VerifyingKey,
    /// Encrypts for it.
    pub recipient: age::x25519::Recipient,
}

impl fmt::Debug for PublicIdentity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.to_string())
    }
}

impl fmt::Display for PublicIdentity {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{PUBLIC_PREFIX}{}:{}",
            URL_SAFE_NO_PAD.encode(self.key.to_bytes()),
            self.recipient
        )
    }
}

impl PublicIdentity {
    /// Reads the string `levh peer id` printed; says what is wrong with one that is not.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let text = text.trim();
        let Some(rest) = text.strip_prefix(PUBLIC_PREFIX) else {
            return Err(format!(
                "{:?} is not a levh identity: it starts with `{PUBLIC_PREFIX}` (copy the whole line `levh peer id` prints)",
                preview(text)
            ));
        };
        let Some((key, recipient)) = rest.split_once(':') else {
            return Err(
                "the identity is cut short: after its key comes `:` and the age recipient (age1…)"
                    .to_owned(),
            );
        };
        let key = parse_key(key)?;
        let recipient = recipient
            .parse::<age::x25519::Recipient>()
            .map_err(|e| format!("the identity's age recipient is not valid: {e}"))?;
        Ok(Self { key, recipient })
    }

    /// Its signing key as people read it (`ed25519:…`): what names the instance in a
    /// memory's provenance.
    pub fn key_text(&self) -> String {
        key_text(&self.key)
    }
}

/// A signing key as people read it.
pub(super) fn key_text(key: &VerifyingKey) -> String {
    format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(key.to_bytes()))
}

/// A signing key from its base64url text (with or without `ed25519:`).
pub(super) fn parse_key(text: &str) -> std::result::Result<VerifyingKey, String> {
    let text = text.strip_prefix(KEY_PREFIX).unwrap_or(text);
    let bytes = URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| {
            format!(
                "{:?} is not an ed25519 key (32 bytes, base64url)",
                preview(text)
            )
        })?;
    VerifyingKey::from_bytes(&bytes).map_err(|e| format!("not a valid ed25519 key: {e}"))
}

fn preview(text: &str) -> String {
    let mut preview: String = text.chars().take(40).collect();
    if preview.len() < text.len() {
        preview.push('…');
    }
    preview
}

/// Writes a file only its owner can read (created new when `create_new`, else replaced
/// whole through a temporary file, so a reader never sees half of it).
pub(super) fn write_private(path: &Path, bytes: &[u8], create_new: bool) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let target: PathBuf = if create_new {
        path.to_path_buf()
    } else {
        path.with_extension("tmp")
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if create_new {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&target)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    if !create_new {
        std::fs::rename(&target, path)?;
    }
    Ok(())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Refuses a key file that others can read: its keys may have been copied, as ssh
/// refuses such a private key.
pub(super) fn refuse_if_shared(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)
            .map_err(|e| Error::internal(format!("cannot read {}: {e}", path.display())))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(Error::Denied(format!(
                "{} can be read by other users (mode {:o}): its keys may have been copied; `chmod 600` it, or move it away for a new identity",
                path.display(),
                mode & 0o777
            )));
        }
    }
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_created_private_once_and_its_public_string_reads_back() {
        let dir = tempfile_dir();
        let now = levh_core::Timestamp::UNIX_EPOCH;
        let first = Identity::load_or_create(&dir, "ada", now).unwrap();
        let again = Identity::load_or_create(&dir, "other", now).unwrap();
        assert_eq!(first.public().to_string(), again.public().to_string());
        assert_eq!(again.name(), "ada");
        let text = first.public().to_string();
        assert!(text.starts_with("levh-peer1:"), "{text}");
        let parsed = PublicIdentity::parse(&text).unwrap();
        assert_eq!(parsed.key, first.public().key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.join(IDENTITY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(
                dir.join(IDENTITY_FILE),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
            let refused = Identity::load_or_create(&dir, "ada", now).unwrap_err();
            assert!(refused.to_string().contains("other users"), "{refused}");
        }
        assert!(PublicIdentity::parse("age1xyz").is_err());
        assert!(PublicIdentity::parse("levh-peer1:abc").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).unwrap();
        std::env::temp_dir().join(format!("levh-share-test-{}", u64::from_le_bytes(seed)))
    }
}
