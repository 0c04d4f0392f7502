//! Trust: how far a memory can be believed, separate from how well it ranks. A readable
//! sum of factors — who wrote it (a person, a connector, an agent), whether a person
//! admitted it or said it helped or was wrong, whether other sources say the same, its
//! age, and what puts it at risk (an open conflict, redactions, a supersession) — clamped
//! to 0..1, with a label. It changes recall order only when a scorer uses it.

use std::collections::BTreeSet;

use levh_core::{Levh, Memory, RecallRequest, Scope};
use levh_knowledge::conflicts::{MIN_SHARED, Relation, content_words, relate};

use crate::requests::memory_id;
use crate::views::{TrustFactorView, TrustView};
use crate::{Error, Result};

/// Corroborating memories counted at most (each +0.05).
const MAX_CORROBORATION: usize = 3;
/// Events of a memory read for its review history.
const EVENTS: usize = 500;

/// [`Operation::MemoryTrust`](crate::Operation::MemoryTrust).
pub fn trust(
    levh: &Levh,
    store: &dyn levh_core::ServerStore,
    scope: &Scope,
    id: &str,
) -> Result<TrustView> {
    let id = memory_id("id", id)?;
    let memory = levh.get(scope, id)?;
    let mut factors = Vec::new();
    let mut add = |name: &str, effect: f64, why: String| {
        factors.push(TrustFactorView {
            factor: name.to_owned(),
            effect,
            why,
        });
    };

    // Who wrote it.
    let source = memory.source.as_str();
    let (base, who) = if matches!(source, "cli" | "dashboard") {
        (0.8, "written by a person".to_owned())
    } else if let Some(connector) = source.strip_prefix("connector:") {
        (0.7, format!("synced from {connector}"))
    } else {
        (0.55, format!("written by an agent or client ({source})"))
    };
    add("source", base, who);

    // A person's review: admitted from the held queue, feedback.
    if memory.admission.decided_by != "gate" {
        add(
            "admitted by a person",
            0.1,
            format!(
                "held by the gate, admitted by {}",
                memory.admission.decided_by
            ),
        );
    }
    let mut events = store
        .memory_events(&scope.workspace, id, EVENTS)
        .map_err(Error::internal)?;
    events.sort_by_key(|e| e.seq);
    let (mut helpful, mut wrong, mut recalls) = (0, 0, 0u64);
    for event in &events {
        let count = event.detail["recall_count"].as_u64().unwrap_or(recalls);
        if event.kind == "feedback" {
            // Said by the event since the recall report came; an older log's feedback is
            // helpful when it counted one more recall (helpful reinforces).
            if event.detail["helpful"].as_bool().unwrap_or(count > recalls) {
                helpful += 1;
            } else {
                wrong += 1;
            }
        }
        recalls = count;
    }
    if helpful > 0 {
        add(
            "said to help",
            (0.05 * f64::from(helpful)).min(0.15),
            format!("{helpful} helpful feedback"),
        );
    }
    if wrong > 0 {
        add(
            "said to be wrong",
            -0.15 * f64::from(wrong),
            format!("{wrong} feedback that it was wrong"),
        );
    }

    // Other sources that say the same (share what it is about, and do not contradict it).
    let corroborating = corroboration(levh, scope, &memory)?;
    if !corroborating.is_empty() {
        add(
            "corroborated",
            0.05 * corroborating.len() as f64,
            format!(
                "{} other source(s) say the same: {}",
                corroborating.len(),
                corroborating.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }

    // Age.
    let days = levh.now().duration_since(memory.valid_from).as_secs_f64() / 86_400.0;
    if days > 3.0 * 365.0 {
        add("age", -0.1, format!("{:.0} years old", days / 365.0));
    } else if days > 365.0 {
        add("age", -0.05, "more than a year old".into());
    }

    // Risks.
    let open: Vec<_> = levh
        .conflicts(scope, true)?
        .into_iter()
        .filter(|c| c.older == id || c.newer == id)
        .collect();
    if !open.is_empty() {
        add(
            "open conflict",
            (-0.2 * open.len() as f64).max(-0.3),
            format!(
                "may contradict {} (`levh conflicts`)",
                open.iter()
                    .map(|c| if c.older == id { c.newer } else { c.older }.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    if memory
        .admission
        .reasons
        .iter()
        .any(|r| r.starts_with("redacted"))
    {
        add(
            "redacted",
            -0.05,
            "secrets were removed from it before storing".into(),
        );
    }
    if let Some(by) = memory.superseded_by {
        add("superseded", -0.3, format!("superseded by {by}"));
    }

    let value = factors
        .iter()
        .map(|f| f.effect)
        .sum::<f64>()
        .clamp(0.0, 1.0);
    let label = if value >= 0.75 {
        "high"
    } else if value >= 0.5 {
        "medium"
    } else {
        "low"
    };
    Ok(TrustView {
        memory_id: id.to_string(),
        value: (value * 1000.0).round() / 1000.0,
        label: label.into(),
        factors,
    })
}

/// Sources other than the memory's own whose memories share what it is about and do
/// not contradict it.
fn corroboration(levh: &Levh, scope: &Scope, memory: &Memory) -> Result<BTreeSet<String>> {
    let own = content_words(&memory.content);
    let similar = levh.recall(
        scope,
        &RecallRequest {
            limit: 10,
            reinforce: false,
            ..RecallRequest::new(memory.content.clone())
        },
    )?;
    let mut sources = BTreeSet::new();
    for hit in similar.hits {
        let other = hit.memory;
        if other.id == memory.id || other.source == memory.source {
            continue;
        }
        let shared = content_words(&other.content).intersection(&own).count();
        let disagrees = matches!(
            relate(&other.content, &memory.content),
            Some(Relation::Conflict(_))
        ) || matches!(
            relate(&memory.content, &other.content),
            Some(Relation::Conflict(_))
        );
        if shared > MIN_SHARED && !disagrees {
            sources.insert(other.source);
        }
        if sources.len() >= MAX_CORROBORATION {
            break;
        }
    }
    Ok(sources)
}
