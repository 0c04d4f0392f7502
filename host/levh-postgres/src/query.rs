//! SQL text built at run time with bound values only: a [`MemoryFilter`] as a `WHERE`
//! clause, numbered `$n` in the order values are bound.

use levh_core::{ListOrder, MemoryFilter};
use postgres::types::ToSql;

use crate::rows::micros;

/// Values bound to a statement, numbered as they are added.
#[derive(Default)]
pub(crate) struct Bound {
    values: Vec<Box<dyn ToSql + Sync + Send>>,
}

impl Bound {
    /// Binds `value` and returns its placeholder (`$n`).
    pub(crate) fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    /// The values, as the driver takes them.
    pub(crate) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|value| value.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

/// The filter as a clause (without `WHERE`) over `memories m`, its values bound in `bound`.
pub(crate) fn where_clause(filter: &MemoryFilter, bound: &mut Bound) -> String {
    let mut clauses = vec![format!(
        "m.workspace = {}",
        bound.bind(filter.workspace.as_str().to_owned())
    )];
    if let Some(project) = &filter.project {
        clauses.push(format!("m.project = {}", bound.bind(project.clone())));
    }
    if let Some(kind) = &filter.kind {
        clauses.push(format!("m.kind = {}", bound.bind(kind.as_str().to_owned())));
    }
    if let Some(source) = &filter.source {
        clauses.push(format!("m.source = {}", bound.bind(source.clone())));
    }
    if let Some(after) = filter.created_after {
        clauses.push(format!("m.created_at >= {}", bound.bind(micros(after))));
    }
    if let Some(before) = filter.created_before {
        clauses.push(format!("m.created_at < {}", bound.bind(micros(before))));
    }
    if let Some(at) = filter.valid_at {
        let at = bound.bind(micros(at));
        clauses.push(format!(
            "m.valid_from <= {at} AND (m.valid_to IS NULL OR m.valid_to > {at})"
        ));
    }
    if let Some(at) = filter.not_retired_at {
        clauses.push(format!(
            "(m.valid_to IS NULL OR m.valid_to > {})",
            bound.bind(micros(at))
        ));
    }
    if let Some(pinned) = filter.pinned {
        clauses.push(format!("m.pinned = {}", bound.bind(pinned)));
    }
    if let Some(except) = &filter.working_except {
        // No session id is empty: `<> ''` leaves out every session's working memory.
        let session = except.as_ref().map_or("", |s| s.as_str()).to_owned();
        clauses.push(format!(
            "NOT EXISTS (SELECT 1 FROM working_memories w WHERE w.memory_seq = m.seq AND w.session_id <> {})",
            bound.bind(session)
        ));
    }
    if let Some(entity) = filter.entity {
        clauses.push(format!(
            "m.seq IN (SELECT me.memory_seq FROM memory_entities me
                        JOIN entities ent ON ent.seq = me.entity_seq WHERE ent.id = {})",
            bound.bind(entity.to_string())
        ));
    }
    if let Some(id) = filter.listed_after {
        // Row values in the list's own order; the cursor's row is found once by its id.
        let key = order_key(filter.order);
        clauses.push(format!(
            "({key}, m.seq) < (SELECT {}, c.seq FROM memories c WHERE c.id = {})",
            key.replace("m.", "c."),
            bound.bind(id.to_string())
        ));
    }
    match filter.known_at {
        Some(known) => {
            let known = bound.bind(micros(known));
            clauses.push(format!(
                "m.created_at <= {known} AND (m.forgotten_at IS NULL OR m.forgotten_at > {known})"
            ));
        }
        None if filter.forgotten => clauses.push("m.forgotten_at IS NOT NULL".to_owned()),
        None => clauses.push("m.forgotten_at IS NULL".to_owned()),
    }
    clauses.join(" AND ")
}

/// The column (or expression) a list is ordered by, descending, before the seq that
/// breaks ties; each is an index of migration 0001.
pub(crate) fn order_key(order: ListOrder) -> &'static str {
    match order {
        ListOrder::Created => "m.created_at",
        ListOrder::Importance => "m.importance",
        ListOrder::Recalled => "coalesce(m.last_recalled_at, 0)",
    }
}

/// `ORDER BY` for a list in `order`.
pub(crate) fn order_by(order: ListOrder) -> String {
    format!("ORDER BY {} DESC, m.seq DESC", order_key(order))
}

/// A count for `LIMIT` or `OFFSET`, as PostgreSQL's bigint.
pub(crate) fn limit(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Ids as a text array, for `= ANY($n)`.
pub(crate) fn id_texts<T: ToString>(ids: &[T]) -> Vec<String> {
    ids.iter().map(ToString::to_string).collect()
}
