//! Views of the entity index: people, organizations, entities, the graph.

use super::*;

/// An entity of the index: a person, organization, project, event, document or task.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntityView {
    /// Its id (a UUID).
    pub id: String,
    /// person, organization, project, event, document or task.
    pub kind: String,
    /// How it is shown: a person's name (else their address), a domain, a title.
    pub name: String,
    /// Memories it appears in (forgotten ones not counted).
    pub memories: u64,
    /// The latest world time of those memories.
    pub last_seen: Option<String>,
    /// The sources of those memories (`connector:email`, `cli`, ...).
    pub channels: Vec<String>,
    /// A person's e-mail addresses.
    pub emails: Vec<String>,
    /// A person's `@handles`.
    pub handles: Vec<String>,
}

impl EntityView {
    /// The view of an entity summary.
    pub fn of(entity: &levh_core::entities::EntitySummary) -> Self {
        Self {
            id: entity.id.to_string(),
            kind: entity.kind.to_string(),
            name: entity.name.clone(),
            memories: entity.memories,
            last_seen: entity.last_seen.map(|t| t.to_string()),
            channels: entity.channels.clone(),
            emails: entity
                .keys
                .iter()
                .filter_map(|k| k.as_email().map(str::to_owned))
                .collect(),
            handles: entity
                .keys
                .iter()
                .filter_map(|k| k.as_handle().map(|h| format!("@{h}")))
                .collect(),
        }
    }
}

/// Entities, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityList {
    /// The entities.
    pub entities: Vec<EntityView>,
}

/// A person with their organizations.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PersonView {
    /// The person.
    #[serde(flatten)]
    pub person: EntityView,
    /// The organizations of their work addresses (domains).
    pub organizations: Vec<String>,
}

/// People, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PeopleList {
    /// The people.
    pub people: Vec<PersonView>,
}

/// An organization: the people graph rolled up by e-mail domain.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrganizationView {
    /// The organization (its name is its domain).
    #[serde(flatten)]
    pub organization: EntityView,
    /// Who from it appears in the memories, most memories first.
    pub people: Vec<EntityView>,
}

/// Organizations, most memories first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OrganizationList {
    /// The organizations.
    pub organizations: Vec<OrganizationView>,
}

/// One memory of an entity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityMemoryView {
    /// The memory.
    pub memory_id: String,
    /// When it happened (world time).
    pub at: String,
    /// The entity's parts in it (sender, attendee, speaker, mentioned, ...).
    pub roles: Vec<String>,
    /// The memory's kind.
    pub kind: String,
    /// Its source.
    pub source: String,
    /// The start of its text.
    pub preview: String,
}

/// An entity sharing memories with another.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RelatedEntityView {
    /// The entity.
    pub entity: EntityView,
    /// How many memories both appear in.
    pub shared: u64,
}

/// Everything the index knows about one entity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AboutView {
    /// The entity.
    pub entity: EntityView,
    /// Its memories, newest first.
    pub memories: Vec<EntityMemoryView>,
    /// A person's organizations, or an organization's people.
    pub memberships: Vec<EntityView>,
    /// Entities it shares memories with, most shared first (people first among equals).
    pub related: Vec<RelatedEntityView>,
    /// Open commitments made in its memories, soonest due first.
    pub open_commitments: Vec<CommitmentView>,
}

/// Two entities that share memories.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EdgeView {
    /// One entity's id.
    pub from: String,
    /// The other's.
    pub to: String,
    /// How many memories both appear in.
    pub weight: u64,
}

/// The entity graph: entities and their co-occurrence edges.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GraphView {
    /// The entities, most memories first.
    pub nodes: Vec<EntityView>,
    /// Edges among them, heaviest first.
    pub edges: Vec<EdgeView>,
}

/// What a reindex did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReindexView {
    /// Memories indexed in this run.
    pub indexed: u64,
    /// Memories still waiting (a run stopped early: run it again).
    pub remaining: u64,
    /// Entities the workspace has now.
    pub entities: u64,
}

/// The entities a memory involves.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryEntities {
    /// People first, then by name.
    pub entities: Vec<MemoryEntityView>,
}

/// An entity a memory involves, with its parts in it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryEntityView {
    /// The entity.
    #[serde(flatten)]
    pub entity: EntityView,
    /// Its parts in the memory: sender, recipient, attendee, speaker, mentioned, ...
    pub roles: Vec<String>,
}
