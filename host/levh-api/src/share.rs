//! Sharing memories between instances: `levh share` writes a bundle of a project (or a
//! filter) for one named peer; `levh pull` reads a bundle a peer wrote for this instance.
//!
//! - Each instance has an identity ([`Identity`]): an ed25519 key that signs what it
//!   shares and an age x25519 identity that opens what is shared with it, kept in
//!   `share/` under the home. Peers ([`PeerBook`]) are other instances' public
//!   identities, added by a person: trust is given, never learned from a bundle.
//! - A bundle is a manifest (format, sender's key and name, recipient, time, filter,
//!   count) and the memories in `levh export`'s JSON Lines, signed over their exact
//!   bytes, and encrypted to the peer unless `encrypt` is off ([`bundle`]).
//! - Pulling checks everything before it reads one memory — it opens (only this
//!   instance's key can), a known peer signed exactly these bytes, it was made for this
//!   instance — then stores the memories through this instance's own gate, in batches,
//!   as `levh import` does: secrets redacted, duplicates rejected, near-duplicates held.
//!   Nothing skips the gate.
//! - A memory keeps its id across instances, so "pulled before" is a lookup in the store
//!   by that id (forgotten memories included: a pull never brings back what a person
//!   retired), not a comparison of texts. Its metadata says where it came from
//!   (`shared_from`: the instance's key and name, the memory's id there, when it was
//!   shared and pulled), and its source is `peer:NAME`.

mod bundle;
mod identity;
mod peers;

use std::path::{Path, PathBuf};

use levh_core::{Levh, MemoryFilter, MemoryId, Scope, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::import::ImportItem;
use crate::requests::{StoreArgs, StoreBatchArgs};
use crate::views::VerdictKind;
use crate::{Error, Result};

pub use bundle::MAX_BUNDLE_BYTES;
pub use identity::{Identity, PublicIdentity};
pub use peers::{Grant, Peer, PeerBook, SHARE_TOKEN_PREFIX};

/// Where an instance keeps its identity and peers: `share/` under its home.
#[derive(Debug, Clone)]
pub struct ShareHome {
    dir: PathBuf,
}

impl ShareHome {
    /// The sharing directory of the home `home`.
    pub fn new(home: &Path) -> Self {
        Self {
            dir: home.join("share"),
        }
    }

    /// This instance's identity, created on first use (named `name` then).
    pub fn identity(&self, name: &str, now: Timestamp) -> Result<Identity> {
        Identity::load_or_create(&self.dir, name, now)
    }

    /// The peers this instance trusts.
    pub fn peers(&self) -> Result<PeerBook> {
        PeerBook::load(&self.dir)
    }
}

/// Which memories to share: every live memory matching all that is given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareFilter {
    /// Only this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Only this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only from this source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Only pinned (true) or only unpinned (false) memories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
}

/// What to share, with whom.
#[derive(Debug, Clone)]
pub struct ShareArgs {
    /// The peer's name in this instance's peer list.
    pub to: String,
    /// Which memories.
    pub filter: ShareFilter,
    /// Encrypt to the peer (the default); off writes a bundle that is signed only.
    pub encrypt: bool,
}

/// A bundle written.
#[derive(Debug, Serialize)]
pub struct SharedView {
    /// The peer it is for.
    pub to: String,
    /// The peer's key.
    pub to_key: String,
    /// This instance's key, which signed it.
    pub from_key: String,
    /// How many memories it holds.
    pub count: usize,
    /// Whether only the peer can read it.
    pub encrypted: bool,
    /// Its size.
    pub bytes: usize,
    /// Which memories.
    pub filter: ShareFilter,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

/// The first line of a bundle's payload.
#[derive(Debug, Serialize, Deserialize)]
struct ManifestLine {
    manifest: Manifest,
}

/// What a bundle says about itself; signed with the memories.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    from: Party,
    to: Party,
    created_at: String,
    filter: ShareFilter,
    count: usize,
}

/// An instance named in a manifest: its signing key, and a name for people.
#[derive(Debug, Serialize, Deserialize)]
struct Party {
    key: String,
    name: String,
}

/// [`Operation::ExportMemories`](crate::Operation::ExportMemories) for a peer: the bundle
/// of every live memory `args.filter` matches, signed by this instance and encrypted to
/// the peer unless `args.encrypt` is off. Refused when nothing matches.
pub fn share(
    levh: &Levh,
    scope: &Scope,
    home: &ShareHome,
    identity: &Identity,
    args: &ShareArgs,
) -> Result<(Vec<u8>, SharedView)> {
    let peers = home.peers()?;
    let peer = peers.named(&args.to)?;
    let public = peer.public()?;
    let now = levh.now();
    let filter = MemoryFilter {
        project: clean(&args.filter.project),
        kind: crate::requests::kind(clean(&args.filter.kind).as_deref())?,
        source: clean(&args.filter.source),
        pinned: args.filter.pinned,
        ..MemoryFilter::default()
    };
    let mut memories = Vec::new();
    let count = crate::export::pages_matching(levh, scope, &filter, false, |page| {
        for exported in &page {
            serde_json::to_writer(&mut memories, exported).map_err(Error::internal)?;
            memories.push(b'\n');
        }
        Ok(())
    })?;
    if count == 0 {
        return Err(Error::NotFound(format!(
            "no live memory matches {} in this workspace: no bundle written",
            describe(&args.filter)
        )));
    }
    let manifest = Manifest {
        format: bundle::FORMAT.to_owned(),
        from: Party {
            key: identity.public().key_text(),
            name: identity.name().to_owned(),
        },
        to: Party {
            key: public.key_text(),
            name: peer.name.clone(),
        },
        created_at: now.to_string(),
        filter: args.filter.clone(),
        count,
    };
    let mut payload = serde_json::to_vec(&ManifestLine { manifest }).map_err(Error::internal)?;
    payload.push(b'\n');
    payload.extend_from_slice(&memories);
    let sealed = bundle::seal(
        identity,
        &payload,
        args.encrypt.then_some(&public.recipient),
    )?;
    let view = SharedView {
        to: peer.name.clone(),
        to_key: public.key_text(),
        from_key: identity.public().key_text(),
        count,
        encrypted: args.encrypt,
        bytes: sealed.len(),
        filter: args.filter.clone(),
        created_at: now.to_string(),
    };
    Ok((sealed, view))
}

fn clean(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// A filter in words, for messages.
fn describe(filter: &ShareFilter) -> String {
    let mut parts = Vec::new();
    if let Some(project) = &filter.project {
        parts.push(format!("project {project:?}"));
    }
    if let Some(kind) = &filter.kind {
        parts.push(format!("kind {kind:?}"));
    }
    if let Some(source) = &filter.source {
        parts.push(format!("source {source:?}"));
    }
    match filter.pinned {
        Some(true) => parts.push("pinned".into()),
        Some(false) => parts.push("unpinned".into()),
        None => {}
    }
    if parts.is_empty() {
        "the filter (none: every memory)".into()
    } else {
        parts.join(", ")
    }
}

/// The query of `GET /api/share/bundle`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShareBundleArgs {
    /// The granted project to bundle (may be left out when one was granted).
    pub project: Option<String>,
}

/// The bundle a peer fetches over HTTP with the token it was granted: of one project it
/// may pull (`project`; may be left out when it was granted one), always encrypted to it
/// (the connection may be plain HTTP). The caller's scope is the grant's workspace.
pub fn bundle_for_peer(
    levh: &Levh,
    scope: &Scope,
    home: &ShareHome,
    identity: &Identity,
    peer: &Peer,
    project: Option<&str>,
) -> Result<(Vec<u8>, SharedView)> {
    let Some(grant) = &peer.grant else {
        return Err(Error::Denied(format!(
            "peer {} may pull nothing: `levh peer grant {0} --project P` first",
            peer.name
        )));
    };
    let project = match project.map(str::trim).filter(|p| !p.is_empty()) {
        Some(project) => project.to_owned(),
        None if grant.projects.len() == 1 => grant.projects[0].clone(),
        None => {
            return Err(Error::invalid(format!(
                "invalid project: name one of the projects granted ({})",
                grant.projects.join(", ")
            )));
        }
    };
    if !grant.projects.contains(&project) {
        // Said the same whether or not the project exists: a peer learns nothing of the
        // projects it was not given.
        return Err(Error::Denied(format!(
            "peer {} may not pull project {project:?}: it was granted {} (nothing was changed)",
            peer.name,
            grant.projects.join(", ")
        )));
    }
    share(
        levh,
        scope,
        home,
        identity,
        &ShareArgs {
            to: peer.name.clone(),
            filter: ShareFilter {
                project: Some(project),
                ..ShareFilter::default()
            },
            encrypt: true,
        },
    )
}

/// What to do with a pulled bundle's memories.
#[derive(Debug, Clone, Default)]
pub struct PullArgs {
    /// Put every memory in this project (instead of the one each had there).
    pub project: Option<String>,
}

/// What became of one memory of a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PullOutcome {
    /// Admitted by the gate as it was.
    Imported,
    /// Admitted with secrets replaced.
    Redacted,
    /// Close to a memory here: held for a person to decide (`levh held list`).
    Held,
    /// The gate rejected it as a copy of what this instance already has.
    Duplicate,
    /// This memory (by its id) was pulled or stored here before: not imported again.
    AlreadyPulled,
    /// Not stored, for the reason given (unreadable, too short, invalid).
    Refused,
}

/// One memory of a pulled bundle.
#[derive(Debug, Serialize)]
pub struct PulledItem {
    /// Its id at the peer (kept here when it is stored).
    pub memory_id: String,
    /// What became of it.
    pub outcome: PullOutcome,
    /// The memory stored here, or the held candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Why, when it was not imported as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A bundle pulled.
#[derive(Debug, Serialize)]
pub struct PulledView {
    /// The peer that signed it (this instance's name for it).
    pub from: String,
    /// Its key.
    pub from_key: String,
    /// The name it gives itself.
    pub from_name: String,
    /// When it was shared (RFC 3339).
    pub shared_at: String,
    /// Whether it came encrypted.
    pub encrypted: bool,
    /// The memories it held.
    pub count: usize,
    /// Admitted as they were.
    pub imported: usize,
    /// Admitted with secrets replaced.
    pub redacted: usize,
    /// Held for a person.
    pub held: usize,
    /// Rejected as copies of what is here.
    pub duplicate: usize,
    /// Pulled before: not imported again.
    pub already_pulled: usize,
    /// Not stored for another reason.
    pub refused: usize,
    /// Each memory, in the bundle's order.
    pub items: Vec<PulledItem>,
}

/// [`Operation::StoreMemories`](crate::Operation::StoreMemories) from a peer: opens
/// `bytes` (see the module's documentation for what is checked, all before anything is
/// stored) and stores its memories through the gate, each with its provenance, none
/// pulled before.
pub fn pull(
    levh: &Levh,
    scope: &Scope,
    home: &ShareHome,
    identity: &Identity,
    bytes: &[u8],
    args: &PullArgs,
) -> Result<PulledView> {
    let peers = home.peers()?;
    let opened = bundle::open(identity, &peers, bytes)?;
    let peer = &opened.peer;
    let Some(end) = opened.payload.iter().position(|&b| b == b'\n') else {
        return Err(bundle::refused(
            "its payload has no manifest line".to_owned(),
        ));
    };
    let manifest = serde_json::from_slice::<ManifestLine>(&opened.payload[..end])
        .map_err(|e| bundle::refused(format!("its manifest is not readable: {e}")))?
        .manifest;
    let signer = identity::key_text(&peer.public()?.key);
    if manifest.format != bundle::FORMAT {
        return Err(bundle::refused(format!(
            "its manifest says format {:?}, its header {}",
            manifest.format,
            bundle::FORMAT
        )));
    }
    if manifest.from.key != signer {
        return Err(bundle::refused(format!(
            "its manifest names {} as its sender, but {signer} (peer {}) signed it",
            manifest.from.key, peer.name
        )));
    }
    let own = identity.public().key_text();
    if manifest.to.key != own {
        return Err(Error::Denied(format!(
            "bundle refused: peer {} made it for another instance ({}, which it calls {:?}), not for this one ({own}) (nothing was imported)",
            peer.name, manifest.to.key, manifest.to.name
        )));
    }
    let text = std::str::from_utf8(&opened.payload[end + 1..])
        .map_err(|e| bundle::refused(format!("its memories are not UTF-8 text: {e}")))?;
    let items = if text.trim().is_empty() {
        Vec::new()
    } else {
        crate::import::parse(text)?
    };
    if items.len() != manifest.count {
        return Err(bundle::refused(format!(
            "its manifest counts {} memories but it holds {}",
            manifest.count,
            items.len()
        )));
    }
    let now = levh.now();
    let source = format!("peer:{}", peer.name);
    let provenance = Provenance {
        instance: signer,
        name: manifest.from.name.clone(),
        peer: peer.name.clone(),
        shared_at: manifest.created_at.clone(),
        pulled_at: now.to_string(),
    };
    let mut view = PulledView {
        from: peer.name.clone(),
        from_key: provenance.instance.clone(),
        from_name: manifest.from.name.clone(),
        shared_at: manifest.created_at.clone(),
        encrypted: opened.encrypted,
        count: items.len(),
        imported: 0,
        redacted: 0,
        held: 0,
        duplicate: 0,
        already_pulled: 0,
        refused: 0,
        items: Vec::with_capacity(items.len()),
    };
    // Items go to the gate a batch at a time; `pending` keeps where each one's report goes.
    let mut seen = std::collections::HashSet::new();
    let mut batch: Vec<(usize, StoreArgs)> = Vec::new();
    for item in items {
        let index = view.items.len();
        let (memory_id, decided) = prepare(levh, scope, item, &provenance, args, now, &mut seen)?;
        view.items.push(PulledItem {
            memory_id,
            outcome: PullOutcome::Refused,
            id: None,
            reason: None,
        });
        match decided {
            Ok(memory) => batch.push((index, memory)),
            Err((outcome, reason)) => {
                view.items[index].outcome = outcome;
                view.items[index].reason = Some(reason);
            }
        }
        if batch.len() == levh_core::MAX_BATCH {
            store(levh, scope, std::mem::take(&mut batch), &source, &mut view)?;
        }
    }
    if !batch.is_empty() {
        store(levh, scope, batch, &source, &mut view)?;
    }
    for item in &view.items {
        match item.outcome {
            PullOutcome::Imported => view.imported += 1,
            PullOutcome::Redacted => view.redacted += 1,
            PullOutcome::Held => view.held += 1,
            PullOutcome::Duplicate => view.duplicate += 1,
            PullOutcome::AlreadyPulled => view.already_pulled += 1,
            PullOutcome::Refused => view.refused += 1,
        }
    }
    Ok(view)
}

/// Where a pulled memory came from, as its metadata keeps it.
struct Provenance {
    instance: String,
    name: String,
    peer: String,
    shared_at: String,
    pulled_at: String,
}

/// One item of a bundle made ready for the gate, or what became of it before: its id at
/// the peer, and the memory to store or its outcome and reason.
#[allow(clippy::type_complexity)]
fn prepare(
    levh: &Levh,
    scope: &Scope,
    item: ImportItem,
    provenance: &Provenance,
    args: &PullArgs,
    now: Timestamp,
    seen: &mut std::collections::HashSet<MemoryId>,
) -> Result<(
    String,
    std::result::Result<StoreArgs, (PullOutcome, String)>,
)> {
    let ImportItem { location, memory } = item;
    let mut memory = match memory {
        Ok(memory) => memory,
        Err(reason) => {
            return Ok((
                String::new(),
                Err((PullOutcome::Refused, format!("{location}: {reason}"))),
            ));
        }
    };
    // A bundle holds levh's export: every memory carries its id and decay state.
    let Some(prior) = memory.prior.as_mut() else {
        return Ok((
            String::new(),
            Err((
                PullOutcome::Refused,
                format!("{location}: not a memory of levh's export (it has no `id`)"),
            )),
        ));
    };
    let id = prior.id;
    if !seen.insert(id) {
        return Ok((
            id.to_string(),
            Err((
                PullOutcome::AlreadyPulled,
                "the bundle holds this memory twice".to_owned(),
            )),
        ));
    }
    if let Some(reason) = pulled_before(levh, scope, id)? {
        return Ok((id.to_string(), Err((PullOutcome::AlreadyPulled, reason))));
    }
    // Here it is new: recorded now, recalled by no one yet. Its stability (how durable it
    // had become) and its world time (valid_from/to) travel with it.
    prior.source = Some(format!("peer:{}", provenance.peer));
    prior.recall_count = 0;
    prior.last_recalled_at = None;
    prior.created_at = now;
    prior.forgotten_at = None;
    let mut metadata = match memory.metadata.take() {
        Some(Value::Object(object)) => object,
        _ => serde_json::Map::new(),
    };
    metadata.insert(
        "shared_from".to_owned(),
        json!({
            "instance": provenance.instance,
            "name": provenance.name,
            "peer": provenance.peer,
            "memory_id": id.to_string(),
            "shared_at": provenance.shared_at,
            "pulled_at": provenance.pulled_at,
        }),
    );
    memory.metadata = Some(Value::Object(metadata));
    if let Some(project) = clean(&args.project) {
        memory.project = Some(project);
    }
    Ok((id.to_string(), Ok(memory)))
}

/// Why the memory `id` is not to be imported again, if it is here already (live or
/// forgotten: a pull never brings back what a person retired).
fn pulled_before(levh: &Levh, scope: &Scope, id: MemoryId) -> Result<Option<String>> {
    let found = match levh.get(scope, id) {
        Ok(memory) => Some((memory, None)),
        Err(levh_core::Error::NotFound(_)) => levh
            .get_forgotten(scope, id)?
            .map(|(memory, at)| (memory, Some(at))),
        Err(error) => return Err(error.into()),
    };
    Ok(found.map(|(memory, forgotten)| {
        let when = memory
            .metadata
            .pointer("/shared_from/pulled_at")
            .and_then(Value::as_str)
            .map(|at| format!("pulled {at}"))
            .unwrap_or_else(|| "stored here before".to_owned());
        match forgotten {
            Some(at) => format!("{when} and forgotten here {at}: not brought back"),
            None => format!("{when} as memory {}", memory.id),
        }
    }))
}

/// Stores one batch through the gate and records each item's outcome.
fn store(
    levh: &Levh,
    scope: &Scope,
    batch: Vec<(usize, StoreArgs)>,
    source: &str,
    view: &mut PulledView,
) -> Result<()> {
    let (indexes, memories): (Vec<usize>, Vec<StoreArgs>) = batch.into_iter().unzip();
    let stored =
        crate::memories::store_batch(levh, scope, StoreBatchArgs { memories }, source.to_owned())?;
    for result in stored.results {
        let item = &mut view.items[indexes[result.index]];
        match (result.outcome, result.error) {
            (_, Some(error)) => {
                item.outcome = PullOutcome::Refused;
                item.reason = Some(
                    error
                        .split_once(": ")
                        .map_or(error.clone(), |(_, why)| why.to_owned()),
                );
            }
            (Some(outcome), None) => {
                let (kind, id) = match outcome.verdict {
                    VerdictKind::Admit => (PullOutcome::Imported, outcome.memory_id),
                    VerdictKind::Redact => (PullOutcome::Redacted, outcome.memory_id),
                    VerdictKind::Review => (PullOutcome::Held, outcome.held_id),
                    VerdictKind::Reject => {
                        let reason = outcome.reason.clone().unwrap_or_default();
                        let kind = if reason.contains("imported before") {
                            PullOutcome::AlreadyPulled
                        } else if outcome.nearest.is_some() || reason.contains("duplicate") {
                            PullOutcome::Duplicate
                        } else {
                            PullOutcome::Refused
                        };
                        (kind, outcome.nearest.map(|n| n.id))
                    }
                };
                item.outcome = kind;
                item.id = id;
                item.reason = outcome.reason.filter(|r| !r.is_empty()).or_else(|| {
                    (!outcome.redactions.is_empty())
                        .then(|| format!("redacted: {}", outcome.redactions.join(", ")))
                });
            }
            (None, None) => {}
        }
    }
    Ok(())
}
