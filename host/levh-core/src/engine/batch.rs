//! Many memories through the gate at once: one embedder call per chunk, one transaction
//! per batch. Each item gets the verdict it would get captured alone right after the
//! batch's earlier items — a copy of an earlier item is its duplicate, a near-copy is held,
//! a repeat of an item held earlier in the batch is rejected, an item close to an earlier
//! one interferes with it — because the batch's own admitted items are compared with each
//! candidate beside the stored memories. A capture is a batch of one.

use std::collections::HashSet;

use crate::{BatchWrite, SyncedPage};

use super::*;

/// Texts per embedder call: a local model's batches stay this size, so memory does not
/// grow with a large import.
const EMBED_CHUNK: usize = 64;

/// Most items one batch call may carry (REST, MCP, import read their input in batches of
/// at most this many).
pub const MAX_BATCH: usize = 1000;

/// Items per transaction of [`Levh::capture_batches`] with the lexical measure. Each
/// memory adds 21 near-duplicate keys at random places of one index, so a transaction
/// re-writes most of that index's pages whatever its size once the store is large: five
/// batches at once write them a fifth as often (bulk ingest 10k → 100k: 4,130 → 5,670/s).
const GROUP_ITEMS: usize = 5 * MAX_BATCH;

/// Consecutive batches judged together, to be written in one transaction.
struct Group {
    plan: BatchPlan,
    /// Items per batch, in order (to give each batch its own outcomes).
    sizes: Vec<usize>,
    /// The group's items that will be written.
    peers: Peers,
    /// The batches as given, to judge again when another writer stored one of their
    /// texts before the group was written.
    batches: Vec<Vec<NewMemory>>,
}

/// A batch judged, nothing written yet: per item (in the caller's order) its outcome as it
/// will be once written, or why it was refused.
pub(super) struct BatchPlan {
    pub(super) items: Vec<Result<Planned>>,
}

/// One judged item.
pub(super) struct Planned {
    /// The verdict, with the ids the item will have once written.
    pub(super) outcome: CaptureOutcome,
    /// What to write (nothing for a reject).
    pub(super) write: Option<BatchWrite>,
}

impl Levh {
    /// Stores many memories through the gate in one transaction (bulk ingest, import, the
    /// REST and MCP batch calls). Each item is judged as if captured alone after the
    /// earlier items of the batch; an item that is invalid gets its own error and the
    /// others go on. Nothing is written when the transaction fails.
    pub fn capture_batch(
        &self,
        scope: &Scope,
        items: Vec<NewMemory>,
    ) -> Result<Vec<Result<CaptureOutcome>>> {
        check_batch_size(&items)?;
        judged_again_when_raced(|| {
            let plan = self.plan_batch(scope, items.clone())?;
            self.commit_batch(scope, plan, None)
        })
    }

    /// Stores batches one after another, each item judged exactly as
    /// [`Levh::capture_batch`] would judge it after the batches before it, for bulk
    /// imports: consecutive batches are written together, up to [`GROUP_ITEMS`] items in
    /// one transaction, and the next group is judged while one is written (its items
    /// counting as stored, as a batch's own earlier items do), so the writer and a second
    /// core stay busy at once. `done` receives each batch's outcomes, in order, once
    /// they are stored. An error (a batch too large, a failing embedder, a store that
    /// refuses a write) ends the run: what `done` has received is stored, nothing else.
    pub fn capture_batches<E: From<Error>>(
        &self,
        scope: &Scope,
        batches: impl IntoIterator<Item = Vec<NewMemory>>,
        mut done: impl FnMut(Vec<Result<CaptureOutcome>>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut batches = batches.into_iter();
        let Some(first) = batches.next() else {
            return Ok(());
        };
        let mut group = self.plan_group(scope, first, &mut batches, None)?;
        loop {
            let Group {
                plan,
                sizes,
                peers,
                batches: judged,
            } = group;
            let next = batches.next();
            let (written, next_group) = std::thread::scope(|threads| {
                let writer = threads.spawn(|| self.commit_batch(scope, plan, None));
                let next_group =
                    next.map(|first| self.plan_group(scope, first, &mut batches, Some(&peers)));
                let written = writer
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (written, next_group)
            });
            match written {
                Ok(outcomes) => {
                    let mut outcomes = outcomes.into_iter();
                    for size in sizes {
                        done(outcomes.by_ref().take(size).collect())?;
                    }
                }
                Err(Error::Store(raced)) if raced.is_raced() => {
                    // Another writer stored one of the group's texts after it was judged:
                    // nothing of it was written. Its batches, and the next group's (judged
                    // with this one's items counting as stored), are judged again one
                    // batch at a time; the pipeline resumes after them.
                    let again = next_group.map(|g| g.map(|g| g.batches)).transpose()?;
                    for batch in judged.into_iter().chain(again.into_iter().flatten()) {
                        done(self.capture_batch(scope, batch)?)?;
                    }
                    match batches.next() {
                        Some(first) => {
                            group = self.plan_group(scope, first, &mut batches, None)?;
                            continue;
                        }
                        None => return Ok(()),
                    }
                }
                Err(error) => return Err(error.into()),
            }
            match next_group {
                Some(next_group) => group = next_group?,
                None => return Ok(()),
            }
        }
    }

    /// Judges `first` and the batches after it until the group holds [`GROUP_ITEMS`]
    /// items (or the batches end), each against the store, the group's earlier items
    /// and the `earlier` group's (being written).
    fn plan_group(
        &self,
        scope: &Scope,
        first: Vec<NewMemory>,
        rest: &mut impl Iterator<Item = Vec<NewMemory>>,
        earlier: Option<&Peers>,
    ) -> Result<Group> {
        let mut group = Group {
            plan: BatchPlan { items: Vec::new() },
            sizes: Vec::new(),
            peers: Peers::default(),
            batches: Vec::new(),
        };
        let mut items = first;
        loop {
            check_batch_size(&items)?;
            group.batches.push(items.clone());
            let plan = self.plan_into(scope, items, &mut group.peers, earlier)?;
            group.sizes.push(plan.items.len());
            group.plan.items.extend(plan.items);
            if group.plan.items.len() >= self.group_items() {
                return Ok(group);
            }
            match rest.next() {
                Some(next) => items = next,
                None => return Ok(group),
            }
        }
    }

    /// Items per transaction of [`Levh::capture_batches`]: [`GROUP_ITEMS`] with the
    /// lexical measure; one batch with cosine, where every item is compared with every
    /// unwritten peer (five batches would make that 5× dearer, and a language model's
    /// embedding, not the writer, bounds such an import anyway).
    fn group_items(&self) -> usize {
        match self.measure().0 {
            Measure::Lexical => GROUP_ITEMS,
            Measure::Cosine => MAX_BATCH,
        }
    }

    /// Judges every item of a batch against the store and the batch's earlier items.
    /// Reads only; the ids of what would be written are assigned here.
    pub(super) fn plan_batch(&self, scope: &Scope, items: Vec<NewMemory>) -> Result<BatchPlan> {
        self.plan_into(scope, items, &mut Peers::default(), None)
    }

    /// [`Levh::plan_batch`], the items already in `peers` (planned, not yet written) and
    /// those of an `earlier` group being written meanwhile counting as stored. Adds the
    /// batch's items that will be written to `peers`.
    fn plan_into(
        &self,
        scope: &Scope,
        items: Vec<NewMemory>,
        peers: &mut Peers,
        earlier: Option<&Peers>,
    ) -> Result<BatchPlan> {
        let drafts: Vec<Result<Draft>> = items
            .into_iter()
            .map(|new| self.draft(scope, new, false))
            .collect();
        let texts: Vec<&str> = drafts
            .iter()
            .filter_map(|d| d.as_ref().ok().map(|d| d.content.as_str()))
            .collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(EMBED_CHUNK) {
            let embedded = self.embedder.embed(chunk)?;
            if embedded.len() != chunk.len() {
                return Err(crate::EmbedError::new(format!(
                    "embedder {} returned {} vectors for {} texts",
                    self.embedder.model_id(),
                    embedded.len(),
                    chunk.len()
                ))
                .into());
            }
            vectors.extend(embedded);
        }
        let mut vectors = vectors.into_iter();
        let mut planned = Vec::with_capacity(drafts.len());
        for draft in drafts {
            let item = draft.and_then(|draft| {
                let vector = vectors.next().ok_or_else(|| {
                    crate::EmbedError::new("embedder returned too few vectors".to_owned())
                })?;
                let embedding = Embedding {
                    model: self.embedder.model_id().to_owned(),
                    vector,
                };
                let prepared = self.compared(scope, draft, embedding, None)?;
                self.plan_one(scope, prepared, peers, earlier)
            });
            planned.push(item);
        }
        Ok(BatchPlan { items: planned })
    }

    /// The gate's verdict on one prepared item, the earlier items of its batch and group
    /// (and of an `earlier` group, being written) counting as stored; records the item
    /// among the peers when it will be written.
    fn plan_one(
        &self,
        scope: &Scope,
        mut p: Prepared,
        peers: &mut Peers,
        earlier: Option<&Peers>,
    ) -> Result<Planned> {
        let (measure, threshold) = self.measure();
        let (duplicate, _) = self.config.gate.thresholds(measure);
        // The earlier group's write may land while this batch is judged: a memory the
        // store already showed is not counted twice (interference would apply twice).
        let from_store: HashSet<MemoryId> = p.neighbours.iter().map(|(id, _)| *id).collect();
        for set in earlier.into_iter().chain([&*peers]) {
            for (index, similarity) in set.similar(&p, measure, duplicate) {
                let peer = &set.items[index];
                if from_store.contains(&peer.id) {
                    continue;
                }
                let closer = p.nearest.is_none_or(|n| {
                    similarity > n.similarity || (similarity == n.similarity && peer.id < n.id)
                });
                if closer {
                    p.nearest = Some(Nearest {
                        id: peer.id,
                        similarity,
                        measure,
                    });
                    p.nearest_content = Some(peer.content.clone());
                }
                if !peer.pinned && similarity >= threshold {
                    p.neighbours.push((peer.id, similarity));
                }
            }
        }
        if p.history_at().is_some() {
            // History states nothing about now: it weakens no memory.
            p.neighbours.clear();
        }
        let moved_in = self.keep_prior_links(scope, &mut p, peers, earlier)?;
        let hash = text::content_hash(&p.content);
        let mut verdict = match moved_in {
            Some(reason) => Verdict::Reject {
                reason,
                nearest: None,
            },
            None => self.judge(scope, &p)?,
        };
        let key = (p.project.clone(), hash.clone());
        if !matches!(verdict, Verdict::Reject { .. })
            && let Some(held) = peers
                .held
                .get(&key)
                .or_else(|| earlier.and_then(|e| e.held.get(&key)))
        {
            verdict = Verdict::Reject {
                reason: format!(
                    "duplicate of held candidate {held}, which waits for a person's decision"
                ),
                nearest: None,
            };
        }
        let mut outcome = CaptureOutcome {
            verdict: verdict.clone(),
            memory_id: None,
            held_id: None,
            redactions: p.redactions.clone(),
            interference: Vec::new(),
        };
        // What the store checks when it writes: another writer's copy of this text
        // stored meanwhile makes the batch be judged again (see [`BatchWrite`]).
        let identical_seen = std::mem::take(&mut p.identical_seen);
        let write = match verdict {
            Verdict::Reject { .. } => None,
            Verdict::Review { nearest } => {
                let project = p.project.clone();
                let held = self.held_candidate(scope, p, nearest, None);
                outcome.held_id = Some(held.id);
                peers.held.insert((project, hash), held.id);
                Some(BatchWrite::Held {
                    candidate: held,
                    identical_seen,
                })
            }
            Verdict::Admit | Verdict::Redact => {
                let admission = Self::admission(&verdict, &p);
                let neighbours = std::mem::take(&mut p.neighbours);
                let keys = p.keys.clone();
                let vector = p.embedding.vector.clone();
                let record = self.record(scope, p, admission);
                outcome.memory_id = Some(record.memory.id);
                peers.add(&record.memory, keys, vector);
                Some(BatchWrite::Memory {
                    record,
                    neighbours,
                    identical_seen,
                })
            }
        };
        Ok(Planned { outcome, write })
    }

    /// For an imported memory's own record ([`crate::PriorMemory`]): its id is kept unless
    /// this store has it — in this workspace that is the same memory imported before (a
    /// duplicate, said as such), elsewhere it gets a new id; the memory that superseded it
    /// is linked when already stored or earlier in the import, and dropped otherwise.
    fn keep_prior_links(
        &self,
        scope: &Scope,
        p: &mut Prepared,
        peers: &Peers,
        earlier: Option<&Peers>,
    ) -> Result<Option<String>> {
        let Some(prior) = p.prior.as_mut() else {
            return Ok(None);
        };
        // By id, not by a walk of the group: an import checks every item (5,000 a group).
        let in_peers =
            |id: MemoryId| peers.ids.contains(&id) || earlier.is_some_and(|e| e.ids.contains(&id));
        let planned_here = in_peers(prior.id);
        if planned_here || self.store.id_in_use(prior.id)? {
            // Forgotten here counts as stored: an import never brings back what a person
            // retired.
            if planned_here
                || self.store.get(&scope.workspace, prior.id)?.is_some()
                || self
                    .store
                    .get_forgotten(&scope.workspace, prior.id)?
                    .is_some()
            {
                return Ok(Some(format!(
                    "memory {} is already stored here (imported before)",
                    prior.id
                )));
            }
            prior.id = MemoryId::new_at(p.now);
        }
        if let Some(target) = prior.superseded_by
            && !in_peers(target)
            && !self.store.id_in_use(target)?
        {
            prior.superseded_by = None;
        }
        Ok(None)
    }

    /// Writes a judged batch in one transaction (with a sync page's records, when given)
    /// and indexes the stored memories' entities. Returns each item's outcome.
    pub(super) fn commit_batch(
        &self,
        scope: &Scope,
        plan: BatchPlan,
        synced: Option<SyncedPage>,
    ) -> Result<Vec<Result<CaptureOutcome>>> {
        let mut items = plan.items;
        let writes: Vec<BatchWrite> = items
            .iter_mut()
            .filter_map(|item| item.as_mut().ok().and_then(|p| p.write.take()))
            .collect();
        if writes.is_empty() && synced.is_none() {
            return Ok(items.into_iter().map(|i| i.map(|p| p.outcome)).collect());
        }
        let model = self.config.model;
        let mut applied = self
            .store
            .write_batch(
                &writes,
                synced.as_ref(),
                &|state| model::interfere(state, &model),
                &scope.actor,
            )?
            .into_iter();
        let stored: Vec<Memory> = writes
            .into_iter()
            .filter_map(|write| match write {
                BatchWrite::Memory { record, .. } => Some(record.memory),
                BatchWrite::Held { .. } => None,
            })
            .collect();
        let outcomes = items
            .into_iter()
            .map(|item| {
                item.map(|planned| {
                    let mut outcome = planned.outcome;
                    if outcome.memory_id.is_some() || outcome.held_id.is_some() {
                        outcome.interference = applied.next().unwrap_or_default();
                    }
                    outcome
                })
            })
            .collect();
        if !stored.is_empty() {
            self.index_stored(&scope.workspace, &stored);
        }
        Ok(outcomes)
    }
}

/// How many times a batch is judged when another writer keeps storing its texts between
/// its judgement and its write: each time the gate sees what the others stored (so the
/// next judgement calls their copies duplicates); past this many the caller gets the
/// store's refusal.
const RACE_ATTEMPTS: usize = 4;

/// Runs `attempt` — judge a batch, then write it — again when the store refused the
/// write because another writer stored one of its texts meanwhile ([`BatchWrite`]).
pub(super) fn judged_again_when_raced<T>(mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    let mut attempts = 1;
    loop {
        match attempt() {
            Err(Error::Store(raced)) if raced.is_raced() && attempts < RACE_ATTEMPTS => {
                attempts += 1;
                tracing::debug!(%raced, attempts, "judging a batch again");
            }
            outcome => return outcome,
        }
    }
}

/// Refuses a batch of more than [`MAX_BATCH`] items, naming the limit.
fn check_batch_size(items: &[NewMemory]) -> Result<()> {
    if items.len() > MAX_BATCH {
        return Err(Error::invalid(
            "memories",
            format!("{} items; at most {MAX_BATCH} per batch", items.len()),
        ));
    }
    Ok(())
}

/// The batch's items that will be stored, as neighbours of the items after them.
#[derive(Default)]
struct Peers {
    items: Vec<Peer>,
    /// The ids of `items`.
    ids: HashSet<MemoryId>,
    /// Near-duplicate key → items having it (how the store finds lexical neighbours).
    by_key: HashMap<i64, Vec<usize>>,
    /// (project, content hash) of an item held earlier in the batch → its held id.
    held: HashMap<(Option<String>, String), HeldId>,
}

struct Peer {
    id: MemoryId,
    project: Option<String>,
    content: String,
    shingles: text::Shingles,
    vector: Vec<f32>,
    pinned: bool,
    valid_from: Timestamp,
    valid_to: Option<Timestamp>,
    source: String,
    source_id: Option<String>,
    kind: Kind,
}

impl Peers {
    fn add(&mut self, memory: &Memory, keys: Vec<i64>, vector: Vec<f32>) {
        let index = self.items.len();
        self.ids.insert(memory.id);
        for key in keys {
            self.by_key.entry(key).or_default().push(index);
        }
        self.items.push(Peer {
            id: memory.id,
            project: memory.project.clone(),
            content: memory.content.clone(),
            shingles: text::Shingles::of(&memory.content),
            vector,
            pinned: memory.state.pinned,
            valid_from: memory.valid_from,
            valid_to: memory.valid_to,
            source: memory.source.clone(),
            source_id: super::capture::source_id(&memory.metadata).map(str::to_owned),
            kind: memory.kind.clone(),
        });
    }

    /// The earlier items the store would have compared `p` with, had they been stored:
    /// in its project (any, when it has none), not retired by its `now`, comparable
    /// (same speaker, both or neither a question); found through shared near-duplicate
    /// keys for the lexical measure (as the store finds them), all of them for cosine
    /// (as a vector index would). Each with its similarity by the gate's measure; another
    /// event of the same source at another time only when it is a copy (`duplicate` or
    /// above).
    fn similar(&self, p: &Prepared, measure: Measure, duplicate: f64) -> Vec<(usize, f64)> {
        // The store filters by project and validity before it picks (its query's WHERE),
        // so the same look-alikes in other projects never crowd out those in this one.
        let history_at = p.history_at();
        let candidate = |peer: &Peer| {
            (p.project.is_none() || peer.project == p.project)
                && match history_at {
                    None => peer.valid_to.is_none_or(|to| to > p.now),
                    Some(at) => peer.valid_from <= at && peer.valid_to.is_none_or(|to| to > at),
                }
        };
        // As many as the store would offer ([`COMPARE_NEIGHBOURS`]), chosen as it chooses
        // them: most shared keys (newest first among equals), or highest cosine — so a
        // large batch of look-alikes costs what the same items sent alone would.
        let indices: Vec<usize> = match measure {
            Measure::Lexical => {
                let mut shared: HashMap<usize, usize> = HashMap::new();
                for index in p
                    .keys
                    .iter()
                    .filter_map(|key| self.by_key.get(key))
                    .flatten()
                {
                    if candidate(&self.items[*index]) {
                        *shared.entry(*index).or_default() += 1;
                    }
                }
                let mut found: Vec<(usize, usize)> = shared.into_iter().collect();
                found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
                found.truncate(COMPARE_NEIGHBOURS);
                found.into_iter().map(|(index, _)| index).collect()
            }
            Measure::Cosine => {
                let mut scored: Vec<(usize, f64)> = self
                    .items
                    .iter()
                    .enumerate()
                    .filter(|(_, peer)| candidate(peer))
                    .map(|(index, peer)| (index, cosine(&p.embedding.vector, &peer.vector)))
                    .collect();
                scored.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
                scored.truncate(COMPARE_NEIGHBOURS);
                scored.into_iter().map(|(index, _)| index).collect()
            }
        };
        let own = (measure == Measure::Lexical).then(|| text::Shingles::of(&p.content));
        let origin = gate::Origin {
            source: &p.source,
            source_id: super::capture::source_id(&p.metadata),
            kind: p.kind.as_str(),
            at: p.valid_from,
        };
        indices
            .into_iter()
            .filter_map(|i| {
                let peer = &self.items[i];
                if !gate::comparable(&p.content, &peer.content) {
                    return None;
                }
                let similarity = match measure {
                    Measure::Cosine => cosine(&p.embedding.vector, &peer.vector),
                    Measure::Lexical => own
                        .as_ref()
                        .map_or(0.0, |own| own.similarity(&peer.shingles)),
                };
                // As the store's comparison: another event of the same source, at another
                // time, is no version of this one unless it is a copy.
                if similarity < duplicate
                    && gate::distinct_events_of_one_source(
                        origin,
                        gate::Origin {
                            source: &peer.source,
                            source_id: peer.source_id.as_deref(),
                            kind: peer.kind.as_str(),
                            at: peer.valid_from,
                        },
                    )
                {
                    return None;
                }
                Some((i, similarity))
            })
            .collect()
    }
}
