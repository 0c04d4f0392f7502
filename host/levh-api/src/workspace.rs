//! The workspace as a whole: counts, projects, sources.

use levh_core::{Levh, Scope};

use crate::Result;
use crate::views::{NamedCount, ProjectList, SourceList, StatsView};

/// [`Operation::GetMemoryStats`](crate::Operation::GetMemoryStats).
pub fn stats(levh: &Levh, scope: &Scope, project: Option<String>) -> Result<StatsView> {
    Ok(StatsView::from(levh.stats(scope, project)?))
}

/// [`Operation::ListProjects`](crate::Operation::ListProjects): memories without a
/// project are counted in the stats, not listed as a project.
pub fn projects(levh: &Levh, scope: &Scope) -> Result<ProjectList> {
    let stats = levh.stats(scope, None)?;
    Ok(ProjectList {
        projects: named(stats.by_project),
    })
}

/// [`Operation::ListSources`](crate::Operation::ListSources).
pub fn sources(levh: &Levh, scope: &Scope) -> Result<SourceList> {
    let stats = levh.stats(scope, None)?;
    Ok(SourceList {
        sources: named(stats.by_source),
    })
}

fn named(counts: std::collections::BTreeMap<String, u64>) -> Vec<NamedCount> {
    counts
        .into_iter()
        .map(|(name, memories)| NamedCount { name, memories })
        .collect()
}
