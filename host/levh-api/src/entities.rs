//! Who and what the memories are about, from the entity index: entities, people,
//! organizations, everything about one entity, the co-occurrence graph, merging what the
//! heuristics missed, and reindexing.

use levh_core::entities::{EntityId, EntityKind, EntityQuery, EntitySummary};
use levh_core::{Levh, REINDEX_BATCH, Scope};

use crate::requests::{
    AboutArgs, EntityListArgs, GraphArgs, KnowledgeArgs, MergeArgs, ReindexArgs, limit,
};
use crate::views::{
    AboutView, EdgeView, EntityList, EntityMemoryView, EntityView, GraphView, MemoryEntities,
    MemoryEntityView, OrganizationList, OrganizationView, PeopleList, PersonView, ReindexView,
    RelatedEntityView,
};
use crate::{Error, Result};

/// How many a list returns when no limit is given.
pub const DEFAULT_LIMIT: usize = 50;

fn kind(text: Option<&str>) -> Result<Option<EntityKind>> {
    text.filter(|k| !k.trim().is_empty())
        .map(|k| {
            k.parse::<EntityKind>()
                .map_err(|e| Error::invalid(e.to_string()))
        })
        .transpose()
}

fn query(args: &EntityListArgs, kind: Option<EntityKind>) -> Result<EntityQuery> {
    if let Some(name) = &args.name
        && name.chars().any(char::is_control)
    {
        return Err(Error::invalid(format!(
            "invalid name: '{}' holds control characters",
            name.escape_debug()
        )));
    }
    Ok(EntityQuery {
        kind,
        name: args.name.clone(),
        project: args.project.clone(),
        limit: limit(args.limit, DEFAULT_LIMIT)?,
    })
}

/// [`Operation::ListEntities`](crate::Operation::ListEntities).
pub fn list(levh: &Levh, scope: &Scope, args: EntityListArgs) -> Result<EntityList> {
    let query = query(&args, kind(args.kind.as_deref())?)?;
    Ok(EntityList {
        entities: levh
            .entities(scope, &query)?
            .iter()
            .map(EntityView::of)
            .collect(),
    })
}

/// [`Operation::ListPeople`](crate::Operation::ListPeople): people with their counts,
/// last interaction, channels and organizations.
pub fn people(levh: &Levh, scope: &Scope, args: EntityListArgs) -> Result<PeopleList> {
    if args.kind.is_some() {
        return Err(Error::invalid(
            "invalid kind: people are all of kind person",
        ));
    }
    let query = query(&args, Some(EntityKind::Person))?;
    let mut people = Vec::new();
    for person in levh.entities(scope, &query)? {
        let organizations = levh
            .memberships(scope, person.id)?
            .into_iter()
            .map(|o| o.name)
            .collect();
        people.push(PersonView {
            person: EntityView::of(&person),
            organizations,
        });
    }
    Ok(PeopleList { people })
}

/// [`Operation::ListOrganizations`](crate::Operation::ListOrganizations): organizations
/// (by e-mail domain) with who from them appears, most memories first.
pub fn organizations(levh: &Levh, scope: &Scope, args: EntityListArgs) -> Result<OrganizationList> {
    if args.kind.is_some() {
        return Err(Error::invalid(
            "invalid kind: organizations are all of kind organization",
        ));
    }
    let query = query(&args, Some(EntityKind::Organization))?;
    let mut organizations = Vec::new();
    for organization in levh.entities(scope, &query)? {
        let mut people = levh.memberships(scope, organization.id)?;
        people.sort_by(|a, b| b.memories.cmp(&a.memories).then(a.name.cmp(&b.name)));
        organizations.push(OrganizationView {
            organization: EntityView::of(&organization),
            people: people.iter().map(EntityView::of).collect(),
        });
    }
    Ok(OrganizationList { organizations })
}

/// [`Operation::GetMemory`](crate::Operation::GetMemory) of a memory's entities: the
/// people and things it involves, with their parts in it.
pub fn of_memory(levh: &Levh, scope: &Scope, id: &str) -> Result<MemoryEntities> {
    let memory = crate::requests::memory_id("id", id)?;
    Ok(MemoryEntities {
        entities: levh
            .memory_entities(scope, memory)?
            .iter()
            .map(|(entity, roles)| MemoryEntityView {
                entity: EntityView::of(entity),
                roles: roles.iter().map(ToString::to_string).collect(),
            })
            .collect(),
    })
}

/// [`Operation::AboutEntity`](crate::Operation::AboutEntity): an entity's memories
/// newest first, its organizations or people, who and what it shares memories with,
/// and open commitments made in its memories.
pub fn about(levh: &Levh, scope: &Scope, args: AboutArgs) -> Result<AboutView> {
    let limit = limit(args.limit, 20)?;
    let entity = levh.resolve_entity(scope, &args.entity, kind(args.kind.as_deref())?)?;
    let linked = levh.entity_memories(scope, entity.id, usize::MAX)?;
    let ids: Vec<_> = linked.iter().map(|m| m.memory_id).collect();
    let memories = levh.get_many(scope, &ids)?;
    let by_id: std::collections::HashMap<_, _> = memories.iter().map(|m| (m.id, m)).collect();
    let mut views = Vec::new();
    for link in linked.iter().take(limit) {
        let Some(memory) = by_id.get(&link.memory_id) else {
            continue;
        };
        views.push(EntityMemoryView {
            memory_id: memory.id.to_string(),
            at: memory.valid_from.to_string(),
            roles: link.roles.iter().map(|r| r.to_string()).collect(),
            kind: memory.kind.to_string(),
            source: memory.source.clone(),
            preview: levh_core::text::preview(&memory.content, levh_core::PREVIEW_CHARS),
        });
    }
    let mut related = levh.related_entities(scope, entity.id, 30)?;
    // People first among equals: "who else" is what a person page is read for.
    related.sort_by(|(a, x), (b, y)| {
        y.cmp(x)
            .then((a.kind != EntityKind::Person).cmp(&(b.kind != EntityKind::Person)))
    });
    let zone = crate::knowledge::user_time_zone(levh)?;
    let all = crate::knowledge::memories(levh, scope, &KnowledgeArgs::default())?;
    // Its memories that are valid now (the others make no open promise).
    let valid: std::collections::HashSet<_> = all.iter().map(|m| m.id).collect();
    let live: Vec<_> = memories
        .into_iter()
        .filter(|m| valid.contains(&m.id))
        .collect();
    let mut open_commitments =
        crate::knowledge::found_commitments(levh, scope, &live, &all, &zone)?;
    open_commitments.retain(|c| !c.done);
    Ok(AboutView {
        entity: EntityView::of(&entity),
        memories: views,
        memberships: levh
            .memberships(scope, entity.id)?
            .iter()
            .map(EntityView::of)
            .collect(),
        related: related
            .into_iter()
            .map(|(entity, shared)| RelatedEntityView {
                entity: EntityView::of(&entity),
                shared,
            })
            .collect(),
        open_commitments,
    })
}

/// [`Operation::EntityGraph`](crate::Operation::EntityGraph): the entities with the
/// most memories and the co-occurrence edges among them (weight = shared memories).
pub fn graph(levh: &Levh, scope: &Scope, args: GraphArgs) -> Result<GraphView> {
    let size = args.limit.unwrap_or(60);
    if size == 0 || size > 500 {
        return Err(Error::invalid(format!(
            "invalid limit: {size} is outside 1..500"
        )));
    }
    let nodes: Vec<EntitySummary> = levh.entities(
        scope,
        &EntityQuery {
            kind: kind(args.kind.as_deref())?,
            limit: size,
            ..EntityQuery::default()
        },
    )?;
    let ids: Vec<EntityId> = nodes.iter().map(|n| n.id).collect();
    let min = args.min_weight.unwrap_or(1);
    let edges = levh
        .entity_edges(scope, &ids, 4 * size)?
        .into_iter()
        .filter(|e| e.weight >= min)
        .map(|e| EdgeView {
            from: e.from.to_string(),
            to: e.to.to_string(),
            weight: e.weight,
        })
        .collect();
    Ok(GraphView {
        nodes: nodes.iter().map(EntityView::of).collect(),
        edges,
    })
}

/// [`Operation::MergeEntities`](crate::Operation::MergeEntities).
pub fn merge(levh: &Levh, scope: &Scope, args: MergeArgs) -> Result<EntityView> {
    Ok(EntityView::of(
        &levh.merge_entities(scope, &args.into, &args.from)?,
    ))
}

/// [`Operation::ReindexEntities`](crate::Operation::ReindexEntities), with `progress`
/// called after each batch (done, total).
pub fn reindex(
    levh: &Levh,
    scope: &Scope,
    args: ReindexArgs,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ReindexView> {
    if args.max == Some(0) {
        return Err(Error::invalid("invalid max: 0 would index nothing"));
    }
    let report = levh.reindex_entities(scope, args.all, REINDEX_BATCH, args.max, progress)?;
    Ok(ReindexView {
        indexed: report.indexed,
        remaining: report.remaining,
        entities: report.entities,
    })
}
