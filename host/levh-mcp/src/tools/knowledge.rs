//! Tools on who and what the memories are about: people, organizations, one entity, the
//! entity graph and the timeline. All read-only (work profile); merging entities and
//! marking commitments done are a person's, on the CLI, REST and the dashboard.

use levh_api::requests::{AboutArgs, EntityListArgs, GraphArgs, TimelineArgs};
use levh_api::views::{
    AboutView, EntityList, GraphView, OrganizationList, PeopleList, TimelineView,
};
use levh_api::{entities, timeline};
use rmcp::handler::server::wrapper::Json;
use rmcp::{Peer, RoleServer, tool, tool_router};

use crate::LevhMcp;
use crate::arguments::Parameters;

#[tool_router(router = knowledge_router, vis = "pub(crate)")]
impl LevhMcp {
    /// People the memories are about (attendees, senders, speakers, authors, names and
    /// addresses in the text), one per person across sources, most memories first: how
    /// many memories, the last interaction, the channels and their organizations.
    #[tool(annotations(
        title = "List people",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_people(
        &self,
        Parameters(args): Parameters<EntityListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<PeopleList>, String> {
        self.run(&peer, move |levh, scope| {
            entities::people(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Organizations the memories deal with, by e-mail domain (personal providers such as
    /// gmail.com excluded): who from each appears, how often, and the last contact.
    #[tool(annotations(
        title = "List organizations",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_organizations(
        &self,
        Parameters(args): Parameters<EntityListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<OrganizationList>, String> {
        self.run(&peer, move |levh, scope| {
            entities::organizations(levh, scope, args)
        })
        .await
        .map(Json)
    }

    /// Entities of every kind (person, organization, project, event, document, task),
    /// most memories first; filter by kind or by a name, address or handle.
    #[tool(annotations(
        title = "List entities",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn list_entities(
        &self,
        Parameters(args): Parameters<EntityListArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<EntityList>, String> {
        self.run(&peer, move |levh, scope| entities::list(levh, scope, args))
            .await
            .map(Json)
    }

    /// Everything about one person, organization, project or item ("what do I know about
    /// Priya?"): its memories newest first with its part in each, its organizations (or an
    /// organization's people), who and what it shares memories with, and open commitments.
    #[tool(annotations(
        title = "About an entity",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn about_entity(
        &self,
        Parameters(args): Parameters<AboutArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<AboutView>, String> {
        self.run(&peer, move |levh, scope| entities::about(levh, scope, args))
            .await
            .map(Json)
    }

    /// The entity graph: the entities with the most memories and co-occurrence edges
    /// among them (weight = memories both appear in).
    #[tool(annotations(
        title = "Entity graph",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn entity_graph(
        &self,
        Parameters(args): Parameters<GraphArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<GraphView>, String> {
        self.run(&peer, move |levh, scope| entities::graph(levh, scope, args))
            .await
            .map(Json)
    }

    /// What happened, day by day in the user's time zone ("this week", "last week",
    /// from/to), optionally with one person, in one project or of one kind.
    #[tool(annotations(
        title = "Timeline",
        read_only_hint = true,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn timeline(
        &self,
        Parameters(args): Parameters<TimelineArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<Json<TimelineView>, String> {
        self.run(&peer, move |levh, scope| {
            timeline::timeline(levh, scope, args)
        })
        .await
        .map(Json)
    }
}
