//! Requests to the entity index.

use super::*;

/// Which entities to list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityListArgs {
    /// Only this kind: person, organization, project, event, document or task.
    pub kind: Option<String>,
    /// Only names, addresses or handles containing this (case and accents ignored).
    pub name: Option<String>,
    /// Only those of memories in this project.
    pub project: Option<String>,
    /// At most this many, most memories first (1..1000, default 50).
    pub limit: Option<usize>,
}

/// Which entity to read about.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AboutArgs {
    /// The entity: its id, an e-mail address, an `@handle`, a name, a domain or a project.
    pub entity: String,
    /// Only an entity of this kind (when a name fits several).
    pub kind: Option<String>,
    /// At most this many of its memories (1..1000, default 20).
    pub limit: Option<usize>,
}

/// Which part of the entity graph to draw.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphArgs {
    /// Only entities of this kind.
    pub kind: Option<String>,
    /// At most this many entities, most memories first (1..500, default 60).
    pub limit: Option<usize>,
    /// Only edges of at least this many shared memories (default 1).
    pub min_weight: Option<u64>,
}

/// Two entities that are one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeArgs {
    /// The entity that stays (id, address, name, ...).
    pub into: String,
    /// The entity merged into it and removed.
    pub from: String,
}

/// What an entity reindex does.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReindexArgs {
    /// Every memory again, not only those not indexed under today's rules.
    #[serde(default)]
    pub all: bool,
    /// Stop after this many memories (the next run goes on from there).
    pub max: Option<u64>,
}

/// How much of one entity's page to read (REST's `/api/entities/{entity}`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityPageArgs {
    /// Only an entity of this kind (when a name fits several).
    pub kind: Option<String>,
    /// At most this many of its memories (1..1000, default 20).
    pub limit: Option<usize>,
}
