//! A bundle's bytes: signed, then (by default) encrypted.
//!
//! ```text
//! levh-share-bundle/1 <signer's ed25519 key, base64url> <signature, base64url>\n
//! <payload: the manifest as one JSON line, then one memory a line, as `levh export` writes>
//! ```
//!
//! The signature covers the payload's exact bytes (after a fixed context line, so it can
//! never be taken for a signature of anything else levh signs). Signed first, then
//! encrypted to the peer's age recipient: the signature is inside, so whoever only holds
//! the ciphertext cannot strip it and sign the memories as their own. An encrypted bundle
//! is an ordinary age file (`age -d -i` opens it).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, VerifyingKey};

use super::identity::{Identity, key_text, parse_key};
use super::peers::{Peer, PeerBook};
use crate::{Error, Result};

/// The first word of a signed bundle; the number is its format's version.
pub(super) const FORMAT: &str = "levh-share-bundle/1";

/// What the signature covers before the payload.
const SIGNING_CONTEXT: &[u8] = b"levh-share-bundle/1 signed payload\n";

/// How an age file starts, binary and armored.
const AGE_BINARY: &[u8] = b"age-encryption.org/";
const AGE_ARMORED: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";

/// The largest bundle read: it is held whole, since nothing is imported before its
/// signature is checked over all of it.
pub const MAX_BUNDLE_BYTES: usize = 256 << 20;

/// The signed (and, given a recipient, encrypted) bundle of `payload`.
pub(super) fn seal(
    identity: &Identity,
    payload: &[u8],
    recipient: Option<&age::x25519::Recipient>,
) -> Result<Vec<u8>> {
    let signature = identity.sign(&[SIGNING_CONTEXT, payload].concat());
    let key = identity.public().key;
    let mut signed = format!(
        "{FORMAT} {} {}\n",
        URL_SAFE_NO_PAD.encode(key.to_bytes()),
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    )
    .into_bytes();
    signed.extend_from_slice(payload);
    match recipient {
        None => Ok(signed),
        Some(recipient) => age::encrypt(recipient, &signed)
            .map_err(|e| Error::internal(format!("cannot encrypt the bundle: {e}"))),
    }
}

/// A bundle whose signature checked out, from a known peer.
#[derive(Debug)]
pub(super) struct Opened {
    /// The peer that signed it.
    pub peer: Peer,
    /// Whether it came encrypted.
    pub encrypted: bool,
    /// The signed payload.
    pub payload: Vec<u8>,
}

/// Opens a bundle: decrypts it when encrypted (refused when this instance's key cannot),
/// then checks that a known peer signed exactly these bytes. Says what failed.
pub(super) fn open(identity: &Identity, peers: &PeerBook, bytes: &[u8]) -> Result<Opened> {
    if bytes.len() > MAX_BUNDLE_BYTES {
        return Err(refused(format!(
            "it is {} bytes, more than the {} MiB a bundle may be",
            bytes.len(),
            MAX_BUNDLE_BYTES >> 20
        )));
    }
    let encrypted = bytes.starts_with(AGE_BINARY) || bytes.starts_with(AGE_ARMORED);
    let signed = if encrypted {
        match age::decrypt(identity.age(), bytes) {
            Ok(signed) => signed,
            Err(age::DecryptError::NoMatchingKeys) => {
                return Err(Error::Denied(
                    "bundle refused: it is encrypted for another instance — this instance's key (`levh peer id`) cannot open it; ask the sender to share it `--to` the peer entry holding this instance's identity (nothing was imported)"
                        .to_owned(),
                ));
            }
            Err(error) => {
                return Err(refused(format!(
                    "its encryption does not open ({error}): it was changed or cut short after it was written"
                )));
            }
        }
    } else {
        bytes.to_vec()
    };
    let Some(end) = signed.iter().position(|&b| b == b'\n') else {
        return Err(not_a_bundle());
    };
    let header = std::str::from_utf8(&signed[..end]).map_err(|_| not_a_bundle())?;
    let mut words = header.split(' ');
    let (Some(format), Some(key), Some(signature), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(not_a_bundle());
    };
    if format != FORMAT {
        return Err(if format.starts_with("levh-share-bundle/") {
            refused(format!(
                "it is in format {format}, which this levh does not read (it reads {FORMAT}): update levh"
            ))
        } else {
            not_a_bundle()
        });
    }
    let key = parse_key(key).map_err(|why| refused(format!("its signer's key: {why}")))?;
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|bytes| <[u8; 64]>::try_from(bytes).ok())
        .map(|bytes| Signature::from_bytes(&bytes))
        .ok_or_else(|| refused("its signature is not 64 bytes of base64url".to_owned()))?;
    let Some(peer) = peers.with_key(&key) else {
        return Err(unknown_signer(&key));
    };
    let payload = signed[end + 1..].to_vec();
    if key
        .verify_strict(&[SIGNING_CONTEXT, &payload].concat(), &signature)
        .is_err()
    {
        return Err(refused(format!(
            "its signature does not match its content: it was changed after peer {} signed it",
            peer.name
        )));
    }
    Ok(Opened {
        peer: peer.clone(),
        encrypted,
        payload,
    })
}

/// A bundle refused for what it is; says that nothing was imported.
pub(super) fn refused(why: String) -> Error {
    Error::Unprocessable(format!("bundle refused: {why} (nothing was imported)"))
}

fn not_a_bundle() -> Error {
    refused(format!(
        "it is not a levh share bundle (its first line is not `{FORMAT} KEY SIGNATURE`, and it is not an age file)"
    ))
}

fn unknown_signer(key: &VerifyingKey) -> Error {
    Error::Denied(format!(
        "bundle refused: it is signed by {}, which is no peer of this instance; if you trust it, `levh peer add NAME IDENTITY` with the identity its owner's `levh peer id` prints (nothing was imported)",
        key_text(key)
    ))
}
