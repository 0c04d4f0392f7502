//! The entity index: who and what each memory is about — people, organizations,
//! projects, events, documents and tasks — so "what do I know about Priya?" is a lookup,
//! not a search.
//!
//! A memory yields [`Sighting`]s: from a connector's structured fields (attendees,
//! senders, speakers, authors), from its text (people already known by name, `@handles`,
//! e-mail addresses; levh-knowledge's detectors), from its project and, for a connector's
//! item, the document, task or event it is. The store resolves each sighting to one
//! entity by its [`EntityKey`]s in order — an e-mail address first, then the normalised
//! name — so one person is one entity across sources; keys that point at two entities
//! merge them. What the heuristics miss, a person merges by hand.
//!
//! Extraction is pure (no store, no clock); [`INDEX_VERSION`] names the rules it follows,
//! so a store indexed by older rules is found and reindexed.

use std::fmt;
use std::str::FromStr;

pub use levh_knowledge::organizations::PersonalDomains;
use levh_knowledge::organizations::organization_of;
pub use levh_knowledge::people::KnownPeople;
use levh_knowledge::people::{MentionKind, normalized_name};
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::{Actor, Memory, MemoryId, StoreError, Timestamp, Workspace};

/// The version of the extraction rules. Bump it when [`sightings`] changes what it finds:
/// memories indexed under another version are reindexed by `levh entities reindex`.
pub const INDEX_VERSION: u32 = 1;

pub use crate::ids::EntityId;

/// Declares a closed set of names as an enum that is text only at the wire.
macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &[Self] = &[$(Self::$variant),+];

            /// The name used at the wire and in the store.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                match s.trim() {
                    $($text => Ok(Self::$variant),)+
                    other => {
                        let known: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                        Err(Error::invalid(
                            $what,
                            format!("'{}' is not one of {}", other.escape_debug(), known.join(", ")),
                        ))
                    }
                }
            }
        }
    };
}

named_enum!(
    /// What an entity is.
    EntityKind, "kind" {
        /// Someone: from attendees, senders, speakers, authors, names, handles, addresses.
        Person => "person",
        /// A company or group, by its e-mail domain.
        Organization => "organization",
        /// A memory's project.
        Project => "project",
        /// A calendar event or a meeting.
        Event => "event",
        /// A file, note, page or release a connector synced.
        Document => "document",
        /// An issue, pull request or task.
        Task => "task",
    }
);

named_enum!(
    /// An entity's part in a memory.
    EntityRole, "role" {
        /// Organized the event.
        Organizer => "organizer",
        /// Was invited to or attended it.
        Attendee => "attendee",
        /// Sent the message.
        Sender => "sender",
        /// Received it.
        Recipient => "recipient",
        /// Was copied.
        Cc => "cc",
        /// Spoke in the meeting.
        Speaker => "speaker",
        /// Wrote it.
        Author => "author",
        /// Was assigned it.
        Assignee => "assignee",
        /// Took part in another way the connector named.
        Participant => "participant",
        /// Is named in the text.
        Mentioned => "mentioned",
        /// Someone from it took part.
        Organization => "organization",
        /// The memory is this document, task or event.
        Subject => "subject",
        /// The memory belongs to this project.
        Project => "project",
    }
);

impl EntityRole {
    /// A connector's role name (`organizer`, `attendee`, `sender`, `cc`, …).
    fn of_connector(role: &str) -> Self {
        match role.trim().to_lowercase().as_str() {
            "organizer" | "organiser" => Self::Organizer,
            "attendee" | "required" | "optional" => Self::Attendee,
            "sender" | "from" => Self::Sender,
            "recipient" | "to" => Self::Recipient,
            "cc" | "bcc" => Self::Cc,
            "speaker" => Self::Speaker,
            "author" | "creator" | "owner" => Self::Author,
            "assignee" => Self::Assignee,
            _ => Self::Participant,
        }
    }

    /// A role that says the person took part (not only was written about).
    pub fn is_participation(self) -> bool {
        !matches!(
            self,
            Self::Mentioned | Self::Organization | Self::Subject | Self::Project
        )
    }
}

/// One way an entity is recognised, unique within a workspace: an e-mail address, a
/// normalised name, a handle, a domain, a project name or a connector item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntityKey(String);

impl EntityKey {
    fn new(kind: EntityKind, what: &str, value: &str) -> Self {
        Self(format!("{}:{what}:{value}", kind.as_str()))
    }
    /// A person's e-mail address (lower case).
    pub fn email(address: &str) -> Self {
        Self::new(EntityKind::Person, "email", &address.trim().to_lowercase())
    }
    /// A person's name, normalised (case, accents, "Last, First", spacing).
    pub fn person_name(name: &str) -> Self {
        Self::new(EntityKind::Person, "name", &normalized_name(name))
    }
    /// A person's `@handle` (without the `@`, lower case).
    pub fn handle(handle: &str) -> Self {
        Self::new(
            EntityKind::Person,
            "handle",
            &handle.trim().trim_start_matches('@').to_lowercase(),
        )
    }
    /// An organization's domain.
    pub fn domain(domain: &str) -> Self {
        Self::new(EntityKind::Organization, "domain", &domain.to_lowercase())
    }
    /// A project by name.
    pub fn project(name: &str) -> Self {
        Self::new(EntityKind::Project, "name", &normalized_name(name))
    }
    /// A connector's item (its document, task or event).
    pub fn item(kind: EntityKind, connector: &str, source_id: &str) -> Self {
        Self::new(kind, "item", &format!("{connector}:{source_id}"))
    }
    /// The key as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// Wraps a stored key.
    pub fn from_stored(key: String) -> Self {
        Self(key)
    }
    /// The address when this is a person's e-mail key.
    pub fn as_email(&self) -> Option<&str> {
        self.0.strip_prefix("person:email:")
    }
    /// The handle when this is a person's handle key.
    pub fn as_handle(&self) -> Option<&str> {
        self.0.strip_prefix("person:handle:")
    }
    /// The domain when this is an organization's key.
    pub fn as_domain(&self) -> Option<&str> {
        self.0.strip_prefix("organization:domain:")
    }
}

/// One entity seen in one memory, with the keys it is recognised by (most telling first).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sighting {
    /// What it is.
    pub kind: EntityKind,
    /// How it is shown (a person's name, else their address or handle).
    pub name: String,
    /// How it is recognised, most telling first; never empty.
    pub keys: Vec<EntityKey>,
    /// Its part in the memory.
    pub role: EntityRole,
    /// For a person with a work address: their organization's domain.
    pub organization: Option<String>,
}

/// What a memory is about, as [`Sighting`]s, without duplicates (one per entity and role).
///
/// `known_people` are the people the index already holds, by name: the text is searched
/// for them (a name is a person only once a source said so).
pub fn sightings(
    memory: &Memory,
    known_people: &KnownPeople,
    personal: &PersonalDomains,
) -> Vec<Sighting> {
    let mut found: Vec<Sighting> = Vec::new();
    fn push(found: &mut Vec<Sighting>, sighting: Sighting) {
        let same = |s: &Sighting| {
            s.role == sighting.role && s.keys.iter().any(|k| sighting.keys.contains(k))
        };
        if !sighting.keys.is_empty() && !found.iter().any(same) {
            found.push(sighting);
        }
    }
    let person = |name: Option<&str>, email: Option<&str>, role: EntityRole| {
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty() && !n.contains('@'));
        let email = email
            .map(str::trim)
            .filter(|e| e.contains('@') && !e.contains(char::is_whitespace));
        let mut keys = Vec::new();
        keys.extend(email.map(EntityKey::email));
        keys.extend(
            name.filter(|n| !normalized_name(n).is_empty())
                .map(EntityKey::person_name),
        );
        Sighting {
            kind: EntityKind::Person,
            name: name.or(email).unwrap_or_default().to_owned(),
            keys,
            role,
            organization: email.and_then(|e| organization_of(e, personal)),
        }
    };

    // Structured: what the connector recorded about the people of the item.
    let connector = memory.metadata["connector"].as_str();
    for p in memory.metadata["people"].as_array().into_iter().flatten() {
        let mut sighting = person(
            p["name"].as_str(),
            p["email"].as_str(),
            EntityRole::of_connector(p["role"].as_str().unwrap_or_default()),
        );
        // A code host's people are logins: the same login is an @handle in text.
        if connector == Some("github")
            && p["email"].as_str().is_none()
            && let Some(login) = p["name"].as_str()
        {
            sighting.keys.push(EntityKey::handle(login));
        }
        push(&mut found, sighting);
    }
    // The text: known people, @handles, e-mail addresses.
    for mention in known_people.mentions(&memory.content) {
        push(
            &mut found,
            match mention.kind {
                MentionKind::Known => person(Some(&mention.name), None, EntityRole::Mentioned),
                MentionKind::Email => person(None, Some(&mention.name), EntityRole::Mentioned),
                MentionKind::Handle => Sighting {
                    kind: EntityKind::Person,
                    keys: vec![EntityKey::handle(&mention.name)],
                    name: mention.name,
                    role: EntityRole::Mentioned,
                    organization: None,
                },
            },
        );
    }
    // Organizations of the people with a work address.
    let domains: Vec<String> = found
        .iter()
        .filter_map(|s| s.organization.clone())
        .collect();
    for domain in domains {
        push(
            &mut found,
            Sighting {
                kind: EntityKind::Organization,
                name: domain.clone(),
                keys: vec![EntityKey::domain(&domain)],
                role: EntityRole::Organization,
                organization: None,
            },
        );
    }
    if let Some(project) = memory.project.as_deref().filter(|p| !p.trim().is_empty()) {
        push(
            &mut found,
            Sighting {
                kind: EntityKind::Project,
                name: project.to_owned(),
                keys: vec![EntityKey::project(project)],
                role: EntityRole::Project,
                organization: None,
            },
        );
    }
    // The connector's item itself, when it is a document, a task or an event.
    if let (Some(connector), Some(source_id)) = (connector, memory.metadata["source_id"].as_str())
        && let Some(kind) = item_kind(memory.kind.as_str())
    {
        let title = memory.metadata["title"]
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(source_id);
        push(
            &mut found,
            Sighting {
                kind,
                name: title.to_owned(),
                keys: vec![EntityKey::item(kind, connector, source_id)],
                role: EntityRole::Subject,
                organization: None,
            },
        );
    }
    found
}

/// The entity kind of a connector item's kind; mail is none (its people are the entities).
fn item_kind(kind: &str) -> Option<EntityKind> {
    match kind {
        "event" | "meeting" | "transcript" => Some(EntityKind::Event),
        "issue" | "pull_request" | "task" | "todo" => Some(EntityKind::Task),
        "document" | "note" | "page" | "release" | "file" => Some(EntityKind::Document),
        _ => None,
    }
}

/// One memory's sightings, ready for the store.
#[derive(Debug, Clone)]
pub struct IndexedMemory {
    /// The memory.
    pub memory_id: MemoryId,
    /// The content hash it was indexed at (a changed content is indexed again).
    pub content_hash: String,
    /// What it is about.
    pub sightings: Vec<Sighting>,
}

/// Which entities a list returns.
#[derive(Debug, Clone, Default)]
pub struct EntityQuery {
    /// Only this kind.
    pub kind: Option<EntityKind>,
    /// Only names or keys containing this (case-insensitive).
    pub name: Option<String>,
    /// Only entities of memories in this project.
    pub project: Option<String>,
    /// At most this many, most memories first.
    pub limit: usize,
}

/// An entity with what the index knows about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntitySummary {
    /// Its id.
    pub id: EntityId,
    /// What it is.
    pub kind: EntityKind,
    /// How it is shown.
    pub name: String,
    /// Memories (not forgotten) it appears in.
    pub memories: u64,
    /// The latest world time of those memories.
    pub last_seen: Option<Timestamp>,
    /// The sources those memories came from (`connector:email`, `cli`, …).
    pub channels: Vec<String>,
    /// Its keys: addresses, handles, names, domains.
    pub keys: Vec<EntityKey>,
}

/// A memory of an entity, with the entity's roles in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityMemory {
    /// The memory.
    pub memory_id: MemoryId,
    /// When it happened.
    pub valid_from: Timestamp,
    /// The entity's parts in it.
    pub roles: Vec<EntityRole>,
}

/// Two entities that share memories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityEdge {
    /// One end.
    pub from: EntityId,
    /// The other.
    pub to: EntityId,
    /// How many (not forgotten) memories both appear in.
    pub weight: u64,
}

/// A commitment a person or a later memory marked done.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitmentDone {
    /// The commitment's id.
    pub id: String,
    /// When it was marked done.
    pub at: Timestamp,
    /// The memory that said it was done, when one did (else a person marked it).
    pub by_memory: Option<MemoryId>,
}

/// A pair of memories that may disagree, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConflictRecord {
    /// The pair's id.
    pub id: String,
    /// The older memory.
    pub older: MemoryId,
    /// The newer memory.
    pub newer: MemoryId,
    /// `value`, `negation`, `antonym` or `swap`.
    pub kind: String,
    /// When it was found.
    pub found_at: Timestamp,
    /// How a person resolved it: `keep_both`, `not_a_conflict`, `superseded`; none: open.
    pub resolution: Option<String>,
    /// When.
    pub resolved_at: Option<Timestamp>,
    /// The memory a `superseded` resolution retired.
    pub superseded: Option<MemoryId>,
}

/// How a person resolves a conflict candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictResolution {
    /// Both stay valid: they do not contradict each other after all, or both hold.
    KeepBoth,
    /// Not a conflict (a false alarm): never listed again.
    NotAConflict,
    /// This memory is right: the other is retired (`superseded_by` it).
    Supersede {
        /// The memory that stays.
        winner: MemoryId,
    },
}

impl ConflictResolution {
    /// Its recorded name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::KeepBoth => "keep_both",
            Self::NotAConflict => "not_a_conflict",
            Self::Supersede { .. } => "superseded",
        }
    }
}

/// A commitment's id: stable while the memory says the same thing, short enough to type
/// (`levh commitments done c3fa2b1d9e0`).
pub fn commitment_id(memory_id: MemoryId, sentence: &str) -> String {
    let hash = xxhash_rust::xxh3::xxh3_64(format!("{memory_id}\n{sentence}").as_bytes());
    format!("c{:010x}", hash >> 24)
}

/// Where the entity index lives: implemented by the store, in the store's transactions.
///
/// Every method is confined to one workspace; counts and lists see only memories that are
/// not forgotten.
pub trait EntityStore {
    /// The names of the people the workspace's index holds (not addresses or handles).
    fn known_people(&self, workspace: &Workspace) -> Result<Vec<String>, StoreError>;

    /// Replaces each memory's links with its sightings, resolving every sighting to one
    /// entity by its keys (creating it, or merging the entities its keys name), and
    /// records the memory as indexed at `version` — one transaction for the batch.
    fn index_entities(
        &self,
        workspace: &Workspace,
        batch: &[IndexedMemory],
        version: u32,
        now: Timestamp,
    ) -> Result<(), StoreError>;

    /// Memories (forgotten ones too) not indexed at `version` or indexed at another
    /// content, oldest first; after memory `after` when given (a run's cursor, so each
    /// batch starts where the last ended instead of scanning what is done).
    fn unindexed_memories(
        &self,
        workspace: &Workspace,
        version: u32,
        after: Option<MemoryId>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError>;

    /// How many memories [`EntityStore::unindexed_memories`] would return without a limit.
    fn count_unindexed(&self, workspace: &Workspace, version: u32) -> Result<u64, StoreError>;

    /// Marks every memory of the workspace unindexed (links stay until each is redone).
    fn mark_all_unindexed(&self, workspace: &Workspace) -> Result<u64, StoreError>;

    /// Entities with memories, most memories first.
    fn entities(
        &self,
        workspace: &Workspace,
        query: &EntityQuery,
    ) -> Result<Vec<EntitySummary>, StoreError>;

    /// The entities of these ids that exist (in any order).
    fn entities_by_id(
        &self,
        workspace: &Workspace,
        ids: &[EntityId],
    ) -> Result<Vec<EntitySummary>, StoreError>;

    /// The entity a key names.
    fn entity_by_key(
        &self,
        workspace: &Workspace,
        key: &EntityKey,
    ) -> Result<Option<EntityId>, StoreError>;

    /// An entity's memories, newest (world time) first.
    fn entity_memories(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<EntityMemory>, StoreError>;

    /// The entities a memory involves, each with its parts in it (in no order).
    fn memory_entities(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
    ) -> Result<Vec<(EntityId, Vec<EntityRole>)>, StoreError>;

    /// Entities sharing memories with this one, most shared first, with the count.
    fn related_entities(
        &self,
        workspace: &Workspace,
        id: EntityId,
        limit: usize,
    ) -> Result<Vec<(EntityId, u64)>, StoreError>;

    /// For an organization its people; for a person their organizations.
    fn memberships(&self, workspace: &Workspace, id: EntityId)
    -> Result<Vec<EntityId>, StoreError>;

    /// Co-occurrence edges among the given entities, heaviest first.
    fn entity_edges(
        &self,
        workspace: &Workspace,
        among: &[EntityId],
        limit: usize,
    ) -> Result<Vec<EntityEdge>, StoreError>;

    /// Moves `from`'s keys, links and memberships to `into` and removes `from`; logs it.
    /// `false` when either is not in the workspace.
    fn merge_entities(
        &self,
        workspace: &Workspace,
        into: EntityId,
        from: EntityId,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;

    /// The commitments marked done.
    fn commitments_done(&self, workspace: &Workspace) -> Result<Vec<CommitmentDone>, StoreError>;

    /// Marks a commitment of `memory` done (again: keeps the first).
    fn mark_commitment_done(
        &self,
        workspace: &Workspace,
        memory: MemoryId,
        done: &CommitmentDone,
        actor: &Actor,
    ) -> Result<(), StoreError>;

    /// Records conflict candidates (older, newer, kind) found at `now`, each pair once
    /// (a pair already recorded, open or resolved, is left as it is), with a `conflict`
    /// event on the newer memory. Returns the pairs recorded now.
    fn record_conflicts(
        &self,
        workspace: &Workspace,
        found: &[(MemoryId, MemoryId, String)],
        now: Timestamp,
        actor: &Actor,
    ) -> Result<Vec<ConflictRecord>, StoreError>;

    /// The recorded conflict candidates, newest first; only the open ones with `open`.
    fn conflicts(
        &self,
        workspace: &Workspace,
        open: bool,
    ) -> Result<Vec<ConflictRecord>, StoreError>;

    /// Resolves an open conflict candidate (compare-and-set: false when it is not open or
    /// does not exist). A supersession retires the other memory of the pair at `now`
    /// (`valid_to`, `superseded_by` the winner) in the same transaction.
    fn resolve_conflict(
        &self,
        workspace: &Workspace,
        id: &str,
        resolution: ConflictResolution,
        now: Timestamp,
        actor: &Actor,
    ) -> Result<bool, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AdmissionRecord, Kind, MemoryState, Workspace};

    fn memory(content: &str, metadata: serde_json::Value) -> Memory {
        let now = Timestamp::UNIX_EPOCH;
        Memory {
            id: MemoryId::new_at(now),
            workspace: Workspace::default(),
            project: Some("atlas".into()),
            content: content.into(),
            kind: Kind::new("email").unwrap_or_default(),
            source: "connector:email".into(),
            state: MemoryState {
                importance: 0.5,
                pinned: false,
                stability_hours: 24.0,
                last_recalled_at: None,
                recall_count: 0,
                created_at: now,
            },
            valid_from: now,
            valid_to: None,
            superseded_by: None,
            content_hash: String::new(),
            admission: AdmissionRecord {
                verdict: crate::AdmissionVerdict::Admit,
                reasons: vec![],
                decided_by: "gate".into(),
            },
            metadata,
            session_id: None,
            embedding_model: None,
            embedding_dimension: None,
        }
    }

    #[test]
    fn a_mail_yields_its_people_their_organization_the_known_names_and_the_project() {
        let m = memory(
            "Priya, Tomás will send it. Ask @grace or lena@outlook.com.",
            serde_json::json!({
                "connector": "email",
                "people": [
                    {"name": "Priya Raman", "email": "Priya.Raman@acme-robotics.com", "role": "sender"},
                    {"name": null, "email": "deniz.kaya@gmail.com", "role": "recipient"},
                ]
            }),
        );
        let known = vec!["Priya Raman".to_owned(), "Tomás Ortega".to_owned()];
        let found = sightings(&m, &KnownPeople::new(&known), &PersonalDomains::default());
        let summary: Vec<(EntityKind, &str, EntityRole)> = found
            .iter()
            .map(|s| (s.kind, s.name.as_str(), s.role))
            .collect();
        assert_eq!(
            summary,
            vec![
                (EntityKind::Person, "Priya Raman", EntityRole::Sender),
                (
                    EntityKind::Person,
                    "deniz.kaya@gmail.com",
                    EntityRole::Recipient
                ),
                // Mentions in the order the text has them.
                (EntityKind::Person, "Priya Raman", EntityRole::Mentioned),
                (EntityKind::Person, "Tomás Ortega", EntityRole::Mentioned),
                (EntityKind::Person, "@grace", EntityRole::Mentioned),
                (
                    EntityKind::Person,
                    "lena@outlook.com",
                    EntityRole::Mentioned
                ),
                (
                    EntityKind::Organization,
                    "acme-robotics.com",
                    EntityRole::Organization
                ),
                (EntityKind::Project, "atlas", EntityRole::Project),
            ]
        );
        // The address is the first key (it merges before the name), lower case.
        assert_eq!(
            found[0].keys[0].as_email(),
            Some("priya.raman@acme-robotics.com")
        );
        assert_eq!(found[0].keys[1], EntityKey::person_name("priya raman"));
        // A personal provider is no organization.
        assert_eq!(found[1].organization, None);
    }

    #[test]
    fn a_connector_item_is_its_own_entity_and_roles_and_kinds_read_from_the_wire() {
        let mut m = memory(
            "Fix the gripper",
            serde_json::json!({"connector": "github", "source_id": "issue-7", "title": "Gripper jams",
                "people": [{"name": "ada", "email": null, "role": "assignee"}]}),
        );
        m.kind = Kind::new("issue").unwrap_or_default();
        let found = sightings(&m, &KnownPeople::new(&[]), &PersonalDomains::default());
        let task = found.iter().find(|s| s.kind == EntityKind::Task);
        assert_eq!(task.map(|t| t.name.as_str()), Some("Gripper jams"));
        assert!(found[0].keys.contains(&EntityKey::handle("@Ada")));
        assert_eq!(found[0].role, EntityRole::Assignee);
        assert_eq!(
            "organizer".parse::<EntityRole>().ok(),
            Some(EntityRole::Organizer)
        );
        let error = "boss".parse::<EntityKind>().unwrap_err().to_string();
        assert!(
            error.contains("'boss'") && error.contains("person"),
            "{error}"
        );
    }
}
