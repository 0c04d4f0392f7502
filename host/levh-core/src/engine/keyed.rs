//! Keyed memories: a stable fact an agent rewrites under a key ("build command", "current
//! owner of billing"), with an optional JSON value read by JSON pointer. Each upsert passes
//! the gate like any capture — compared with every memory but the key's current one — and
//! an admitted one becomes the key's current memory while the one before it is retired as
//! superseded (kept for `--as-of`), never overwritten. Two upserts of one key at once are
//! settled by the store's compare-and-set: the second sees the first's memory and starts
//! again from it.

use super::*;

/// The largest JSON value a keyed memory holds (serialised): a fact, not a document.
pub const MAX_KEY_VALUE_BYTES: usize = 16 * 1024;

/// What an upsert asks.
#[derive(Debug, Clone, Default)]
pub struct Upsert {
    /// The project (none: the workspace's memories without one).
    pub project: Option<String>,
    /// The key (1-200 printable characters, no secret).
    pub key: String,
    /// The text, as a person reads it.
    pub content: String,
    /// A JSON value beside the text, for programs (read back by JSON pointer).
    pub value: Option<serde_json::Value>,
    /// Importance 0..1 (default 0.5).
    pub importance: Option<f64>,
    /// The kind (default `fact`; a task's checkpoint is a `checkpoint`).
    pub kind: Option<Kind>,
}

/// What an upsert did.
#[derive(Debug, Clone)]
pub enum Upserted {
    /// Stored as the key's current memory; `replaced` is the one before it, now retired.
    Stored {
        /// The new current memory.
        memory: Memory,
        /// The memory it replaced.
        replaced: Option<MemoryId>,
        /// Secrets the gate replaced in it.
        redactions: Vec<Redaction>,
    },
    /// The key's current memory already says this: nothing was written.
    Unchanged {
        /// The current memory.
        memory: Memory,
    },
    /// Held for a person (it reads like another memory); admitted, it becomes the key's
    /// current memory.
    Held {
        /// The held candidate.
        held_id: HeldId,
        /// Why.
        reason: String,
    },
    /// Refused by the gate (a duplicate of another memory, ...): nothing was written.
    Rejected {
        /// Why.
        reason: String,
        /// The memory it duplicates, when one decided it.
        nearest: Option<Nearest>,
    },
}

/// A key as a label: printable, at most 200 characters, never a secret — a key is shown in
/// every list, so one holding a secret is refused rather than stored (and never echoed).
pub(super) fn check_key(key: &str) -> Result<String> {
    let key = check_label("key", Some(key.to_owned()))?.unwrap_or_default();
    if !gate::secrets::detect(&key).is_empty() {
        return Err(Error::invalid(
            "key",
            "the key holds a secret; a key is shown in every list",
        ));
    }
    Ok(key)
}

impl Levh {
    /// Stores `upsert.content` (and its value) as the key's current memory, through the
    /// gate; see [`Upserted`].
    pub fn upsert(&self, scope: &Scope, upsert: Upsert) -> Result<Upserted> {
        let key = check_key(&upsert.key)?;
        let project = check_label("project", upsert.project)?;
        let mut metadata = serde_json::json!({ "key": key });
        if let Some(value) = upsert.value {
            let size = value.to_string().len();
            if size > MAX_KEY_VALUE_BYTES {
                return Err(Error::invalid(
                    "value",
                    format!("{size} bytes of JSON; at most {MAX_KEY_VALUE_BYTES}"),
                ));
            }
            metadata["value"] = value;
        }
        let model = self.config.model;
        // Another writer may change the key between the read and the write: the store's
        // compare-and-set says so, and the upsert starts again from what is there now.
        for _ in 0..5 {
            let current = self.keyed_memory(scope, project.as_deref(), &key, None)?;
            if let Some(memory) = &current
                && memory.content.trim() == upsert.content.trim()
                && memory.metadata.get("value") == metadata.get("value")
            {
                return Ok(Upserted::Unchanged {
                    memory: memory.clone(),
                });
            }
            let replaces = current.as_ref().map(|m| m.id);
            let new = NewMemory {
                content: upsert.content.clone(),
                project: project.clone(),
                kind: Some(match &upsert.kind {
                    Some(kind) => kind.clone(),
                    None => Kind::new("fact").map_err(|e| Error::invalid("kind", e.to_string()))?,
                }),
                importance: upsert.importance,
                metadata: Some(metadata.clone()),
                ..NewMemory::default()
            };
            // Compared with every memory but the one it replaces.
            let p = self.prepare(scope, new, replaces)?;
            let verdict = self.judge(scope, &p)?;
            match verdict {
                Verdict::Reject { reason, nearest } => {
                    return Ok(Upserted::Rejected { reason, nearest });
                }
                Verdict::Review { nearest } => {
                    let reason = gate::review_reason(&nearest);
                    let held_id = self.hold(scope, p, nearest, None)?;
                    return Ok(Upserted::Held { held_id, reason });
                }
                Verdict::Admit | Verdict::Redact => {
                    let redactions = p.redactions.clone();
                    let neighbours: Vec<(MemoryId, f64)> = p
                        .neighbours
                        .iter()
                        .filter(|(id, _)| Some(*id) != replaces)
                        .copied()
                        .collect();
                    let admission = Self::admission(&verdict, &p);
                    let record = self.record(scope, p, admission);
                    let id = record.memory.id;
                    if self.store.store_keyed(
                        &record,
                        &neighbours,
                        &|state| model::interfere(state, &model),
                        &key,
                        replaces,
                        &scope.actor,
                    )? {
                        self.index_entities_of(&scope.workspace, &[id]);
                        return Ok(Upserted::Stored {
                            memory: self.get(scope, id)?,
                            replaced: replaces,
                            redactions,
                        });
                    }
                }
            }
        }
        Err(Error::invalid(
            "key",
            "other writers changed this key five times while it was being stored; try again",
        ))
    }

    /// The memory under `key` in `project`: the current one, or with `as_of` the one that
    /// held then (world time). `None` when there is none.
    pub fn keyed_memory(
        &self,
        scope: &Scope,
        project: Option<&str>,
        key: &str,
        as_of: Option<Timestamp>,
    ) -> Result<Option<Memory>> {
        let key = check_key(key)?;
        let project = check_label("project", project.map(str::to_owned))?;
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            project,
            ..MemoryFilter::default()
        }
        .read_at(as_of, self.clock.now());
        let found = self.store.keyed(&filter, &key)?;
        Ok(match as_of {
            None => found
                .into_iter()
                .find(|m| m.superseded_by.is_none() && m.valid_to.is_none()),
            Some(_) => found.into_iter().next(),
        })
    }

    /// A keyed candidate a person admitted becomes its key's current memory.
    pub(super) fn adopt_admitted_key(
        &self,
        scope: &Scope,
        held: &HeldCandidate,
        memory: MemoryId,
    ) -> Result<()> {
        if let Some(key) = held.metadata.get("key").and_then(|k| k.as_str()) {
            self.store.adopt_key(
                &scope.workspace,
                held.project.as_deref(),
                key,
                memory,
                self.clock.now(),
                &scope.actor,
            )?;
        }
        Ok(())
    }
}
