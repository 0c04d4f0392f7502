//! The peers this instance trusts: other instances' public identities, each under a name
//! a person gave it, with where to pull from (a URL and the token that peer issued).
//! Kept in `share/peers.toml` under the home, readable by its owner only (it holds
//! tokens). Trust is added by a person, never learned from a bundle.

use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use super::identity::{PublicIdentity, refuse_if_shared, write_private};
use crate::{Error, Result};

/// The file of peers.
const PEERS_FILE: &str = "peers.toml";

/// The longest peer name.
const MAX_NAME: usize = 64;

/// How a share token starts: told apart from API tokens at a glance, and by the server
/// before it looks anywhere else.
pub const SHARE_TOKEN_PREFIX: &str = "levh_share_";

fn token_hash(token: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One trusted instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peer {
    /// What this instance calls it (`peer:NAME` is the source of what it shares).
    pub name: String,
    /// Its public identity, as `levh peer id` printed it there.
    pub identity: String,
    /// Where its `levh serve` answers, to pull from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The token it issued to this instance, to pull with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// When it was added.
    pub added_at: String,
    /// What it may pull from this instance's `levh serve` (`levh peer grant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<Grant>,
}

/// What a peer may pull from this instance over HTTP: bundles of these projects of this
/// workspace, with the token issued for it — and nothing else.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The workspace the projects are in.
    pub workspace: String,
    /// The projects it may pull.
    pub projects: Vec<String>,
    /// The SHA-256 of its token (the token itself is shown once, never kept).
    pub token_sha256: String,
    /// When it was granted.
    pub granted_at: String,
}

impl Peer {
    /// Its public identity.
    pub fn public(&self) -> Result<PublicIdentity> {
        PublicIdentity::parse(&self.identity).map_err(|why| {
            Error::Unprocessable(format!(
                "peer {}'s identity in {PEERS_FILE} is damaged: {why}; `levh peer remove {0}` and add it again",
                self.name
            ))
        })
    }
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PeersFile {
    #[serde(default, rename = "peer")]
    peers: Vec<Peer>,
}

/// The peers, as kept in the file.
#[derive(Debug)]
pub struct PeerBook {
    path: PathBuf,
    peers: Vec<Peer>,
}

impl PeerBook {
    /// The peers kept in `dir` (none when there is no file yet).
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(PEERS_FILE);
        let peers = match std::fs::read_to_string(&path) {
            Ok(text) => {
                refuse_if_shared(&path)?;
                toml::from_str::<PeersFile>(&text)
                    .map_err(|e| {
                        Error::Unprocessable(format!("{} is damaged: {e}", path.display()))
                    })?
                    .peers
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(Error::internal(format!(
                    "cannot read {}: {error}",
                    path.display()
                )));
            }
        };
        Ok(Self { path, peers })
    }

    /// Every peer, in the order added.
    pub fn peers(&self) -> &[Peer] {
        &self.peers
    }

    /// The peer of this name.
    pub fn named(&self, name: &str) -> Result<&Peer> {
        self.peers.iter().find(|p| p.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.peers.iter().map(|p| p.name.as_str()).collect();
            Error::NotFound(format!(
                "no peer named {name:?} ({}); `levh peer add NAME IDENTITY` adds one",
                if known.is_empty() {
                    "there are none yet".to_owned()
                } else {
                    format!("known: {}", known.join(", "))
                }
            ))
        })
    }

    /// The peer whose signing key this is.
    pub fn with_key(&self, key: &VerifyingKey) -> Option<&Peer> {
        self.peers
            .iter()
            .find(|p| p.public().is_ok_and(|public| public.key == *key))
    }

    /// Adds a peer; refuses a name or an identity already there.
    pub fn add(&mut self, peer: Peer) -> Result<&Peer> {
        check_name(&peer.name)?;
        let public = PublicIdentity::parse(&peer.identity)
            .map_err(|why| Error::invalid(format!("invalid identity: {why}")))?;
        if self.peers.iter().any(|p| p.name == peer.name) {
            return Err(Error::Conflict(format!(
                "a peer named {:?} exists; `levh peer remove {0}` first to replace it (nothing was changed)",
                peer.name
            )));
        }
        if let Some(same) = self.with_key(&public.key) {
            return Err(Error::Conflict(format!(
                "this identity is already peer {:?} (nothing was changed)",
                same.name
            )));
        }
        if let Some(url) = &peer.url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(Error::invalid(format!(
                "invalid url: {url:?} is not an http:// or https:// address"
            )));
        }
        // Written in the canonical form, whatever spacing it was pasted with.
        let peer = Peer {
            identity: public.to_string(),
            ..peer
        };
        self.peers.push(peer);
        self.save()?;
        Ok(self.peers.last().expect("just added"))
    }

    /// Lets the peer `name` pull bundles of `projects` of `workspace` over HTTP, with a new
    /// token (returned once; any earlier token of that peer stops working).
    pub fn grant(
        &mut self,
        name: &str,
        workspace: &str,
        projects: Vec<String>,
        now: &str,
    ) -> Result<String> {
        let projects: Vec<String> = projects
            .iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect();
        if projects.is_empty() {
            return Err(Error::invalid(
                "invalid projects: name at least one project the peer may pull (--project P)",
            ));
        }
        self.named(name)?;
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)
            .map_err(|e| Error::internal(format!("no randomness for a token: {e}")))?;
        let token = format!(
            "{SHARE_TOKEN_PREFIX}{}",
            base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, secret)
        );
        let peer = self
            .peers
            .iter_mut()
            .find(|p| p.name == name)
            .expect("found above");
        peer.grant = Some(Grant {
            workspace: workspace.to_owned(),
            projects,
            token_sha256: token_hash(&token),
            granted_at: now.to_owned(),
        });
        self.save()?;
        Ok(token)
    }

    /// The peer this share token was issued to, if any.
    pub fn with_share_token(&self, token: &str) -> Option<&Peer> {
        let hash = token_hash(token.trim());
        // Hashes are compared, not secrets: how long a comparison takes says nothing of
        // the token.
        self.peers
            .iter()
            .find(|p| p.grant.as_ref().is_some_and(|g| g.token_sha256 == hash))
    }

    /// Removes a peer: its bundles are refused from now on.
    pub fn remove(&mut self, name: &str) -> Result<Peer> {
        self.named(name)?;
        let at = self
            .peers
            .iter()
            .position(|p| p.name == name)
            .expect("found above");
        let removed = self.peers.remove(at);
        self.save()?;
        Ok(removed)
    }

    fn save(&self) -> Result<()> {
        let text = format!(
            "# The instances this one trusts (`levh peer add|list|remove`). Holds their tokens: keep it private.\n{}",
            toml::to_string(&PeersFile {
                peers: self.peers.clone()
            })
            .map_err(Error::internal)?
        );
        write_private(&self.path, text.as_bytes(), false)
            .map_err(|e| Error::internal(format!("cannot write {}: {e}", self.path.display())))
    }
}

/// A peer's name becomes part of a memory's source (`peer:NAME`): short, plain, and
/// typed at a terminal.
fn check_name(name: &str) -> Result<()> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if name.is_empty() || name.len() > MAX_NAME || !plain || name.starts_with(['-', '.']) {
        return Err(Error::invalid(format!(
            "invalid peer name {name:?}: 1..{MAX_NAME} letters, digits, `-`, `_` or `.`, starting with a letter or digit"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::Identity;

    #[test]
    fn peers_are_named_once_and_a_grant_token_is_kept_only_as_its_hash() {
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).unwrap();
        let dir =
            std::env::temp_dir().join(format!("levh-peers-test-{}", u64::from_le_bytes(seed)));
        let now = levh_core::Timestamp::UNIX_EPOCH;
        let other = Identity::load_or_create(&dir.join("other"), "bo", now).unwrap();
        let third = Identity::load_or_create(&dir.join("third"), "cy", now).unwrap();
        let mut book = PeerBook::load(&dir).unwrap();
        let peer = |name: &str, identity: String| Peer {
            name: name.to_owned(),
            identity,
            url: None,
            token: None,
            added_at: now.to_string(),
            grant: None,
        };
        book.add(peer("bo", format!("  {}\n", other.public())))
            .unwrap();
        let again = book
            .add(peer("bo", third.public().to_string()))
            .unwrap_err();
        assert!(again.to_string().contains("exists"), "{again}");
        let same = book
            .add(peer("bo2", other.public().to_string()))
            .unwrap_err();
        assert!(same.to_string().contains("already peer \"bo\""), "{same}");
        for bad in ["", "-x", "a b", "peer:x", &"x".repeat(65)] {
            assert!(
                book.add(peer(bad, third.public().to_string())).is_err(),
                "{bad:?}"
            );
        }
        assert!(book.add(peer("cy", "levh-peer1:nope".into())).is_err());

        let token = book
            .grant("bo", "default", vec!["atlas".into()], "now")
            .unwrap();
        assert!(token.starts_with(SHARE_TOKEN_PREFIX));
        let text = std::fs::read_to_string(dir.join(PEERS_FILE)).unwrap();
        assert!(!text.contains(&token), "only the hash is kept");
        let reloaded = PeerBook::load(&dir).unwrap();
        assert_eq!(
            reloaded.with_share_token(&token).map(|p| p.name.as_str()),
            Some("bo")
        );
        assert_eq!(
            reloaded
                .with_key(&other.public().key)
                .map(|p| p.name.as_str()),
            Some("bo")
        );
        let newer = book
            .grant("bo", "default", vec!["atlas".into()], "later")
            .unwrap();
        let reloaded = PeerBook::load(&dir).unwrap();
        assert!(
            reloaded.with_share_token(&token).is_none(),
            "granting again replaces it"
        );
        assert!(reloaded.with_share_token(&newer).is_some());
        assert!(
            book.grant("bo", "default", vec![" ".into()], "now")
                .is_err()
        );
        book.remove("bo").unwrap();
        assert!(PeerBook::load(&dir).unwrap().peers().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
