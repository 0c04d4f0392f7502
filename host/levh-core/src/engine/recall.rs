//! Recall: candidates from the lexical index and the vectors, fused relevance, the
//! H-score, packing into a token budget; related memories and score breakdowns.

use super::*;

impl Levh {
    /// Hybrid recall (SPEC §4): filter, gather lexical ∪ vector candidates, fuse their
    /// evidence into one relevance, rank by H-score, pack into the budget, then reinforce
    /// exactly what is returned.
    pub fn recall(&self, scope: &Scope, request: &RecallRequest) -> Result<RecallOutput> {
        let query = check_query(&request.query)?;
        if request.limit == 0 || request.limit > MAX_RECALL_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("{} is outside 1..{MAX_RECALL_LIMIT}", request.limit),
            ));
        }
        if request.max_tokens == Some(0) {
            return Err(Error::invalid("max_tokens", "must be at least 1"));
        }
        if let Some(floor) = request.min_similarity
            && !(floor.is_finite() && (0.0..=1.0).contains(&floor))
        {
            return Err(Error::invalid(
                "min_similarity",
                format!("{floor} is outside 0..1"),
            ));
        }
        let now = self.clock.now();
        let filter = MemoryFilter {
            workspace: scope.workspace.clone(),
            project: check_label("project", request.project.clone())?,
            kind: request.kind.clone(),
            source: check_label("source", request.source.clone())?,
            created_after: request.since,
            created_before: request.until,
            valid_at: None,
            not_retired_at: None,
            known_at: request.known_at,
            pinned: None,
            listed_after: None,
            working_except: Some(request.session_id.clone()),
            forgotten: false,
            entity: None,
            order: crate::ListOrder::Created,
        }
        // What levh knew at `known_at` is judged valid at that time too, unless an
        // `as_of` says which world time.
        .read_at(request.as_of.or(request.known_at), now);
        let floor = request
            .min_similarity
            .unwrap_or_else(|| self.config.recall.floor(self.embedder.is_semantic()));
        let pool = self.config.recall.candidates.max(request.limit * 5);
        let mut hits = self.score_candidates(scope, &filter, query, pool, floor, now)?;
        let candidates = hits.len();
        let mut warnings = Vec::new();
        let ranked_by = match &self.scorer {
            Some(scorer) if !hits.is_empty() => {
                match apply_scorer(scorer.as_ref(), query, &mut hits, now) {
                    Ok(()) => scorer.id().to_owned(),
                    Err(why) => {
                        let warning = format!(
                            "scorer `{}` failed ({why}); ranked by the built-in H-score instead",
                            scorer.id()
                        );
                        warnings.push(warning);
                        H_SCORE.to_owned()
                    }
                }
            }
            Some(scorer) => scorer.id().to_owned(),
            None => H_SCORE.to_owned(),
        };
        hits.sort_by(|a, b| {
            let policy = match (a.policy_score, b.policy_score) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => std::cmp::Ordering::Equal,
            };
            policy
                .then(a.score.score.total_cmp(&b.score.score))
                .then(b.score.relevance.total_cmp(&a.score.relevance))
                .then(b.id.cmp(&a.id))
        });
        hits.truncate(request.limit);
        // Whole memories only for what is returned, in rank order (one deleted since
        // ranking is left out).
        let ids: Vec<MemoryId> = hits.iter().map(|hit| hit.id).collect();
        let mut memories: HashMap<MemoryId, Memory> = self
            .store
            .get_many(&scope.workspace, &ids)?
            .into_iter()
            .map(|memory| (memory.id, memory))
            .collect();
        let hits: Vec<RecallHit> = hits
            .into_iter()
            .filter_map(|hit| {
                Some(RecallHit {
                    memory: memories.remove(&hit.id)?,
                    score: hit.score,
                    relevance: hit.relevance,
                    policy_score: hit.policy_score,
                    lexical_match: hit.lexical_match,
                })
            })
            .collect();

        let (hits, tokens, omitted_by_budget) = pack(hits, request.max_tokens, request.compact);

        let reinforce = request.reinforce && request.as_of.is_none() && request.known_at.is_none();
        let mut reinforced = Vec::new();
        if reinforce && !hits.is_empty() {
            let ids: Vec<MemoryId> = hits.iter().map(|h| h.memory.id).collect();
            let config = self.config.model;
            let updated = self.store.update_states(
                &scope.workspace,
                &ids,
                EventKind::RecallReinforce,
                &scope.actor,
                now,
                &mut |m| Some(model::reinforce(&m.state, &config, now)),
            )?;
            reinforced = updated.into_iter().map(|m| m.id).collect();
        }
        Ok(RecallOutput {
            hits,
            candidates,
            reinforced,
            tokens,
            omitted_by_budget,
            ranked_by,
            warnings,
        })
    }

    /// Logs what a recall answered (a `recall` event): the operation that asked, the ids
    /// returned in rank order, the tokens and bytes of their content, the project — and
    /// the query itself, secrets redacted, only when the operator opted in
    /// ([`crate::RecallConfig::log_queries`]); otherwise its length in words. The recall
    /// has answered either way: a log that cannot be written is reported, not fatal.
    pub fn log_recall(
        &self,
        scope: &Scope,
        operation: &str,
        query: &str,
        project: Option<&str>,
        output: &RecallOutput,
    ) {
        let returned: Vec<String> = output
            .hits
            .iter()
            .map(|hit| hit.memory.id.to_string())
            .collect();
        let bytes: usize = output.hits.iter().map(|hit| hit.memory.content.len()).sum();
        let mut detail = serde_json::json!({
            "operation": operation,
            "returned": returned,
            "tokens": output.tokens,
            "bytes": bytes,
            "candidates": output.candidates,
            "project": project,
            "words": query.split_whitespace().count(),
        });
        if self.config.recall.log_queries {
            detail["query"] = gate::secrets::redact(query).0.into();
        }
        if let Err(error) = self.log_event(scope, EventKind::Recall, &detail) {
            tracing::warn!(%error, "the recall was answered but not logged");
        }
    }

    /// Appends an event that changes no memory (a recall's answer, an MCP session's start
    /// or end) to the log, now, with its content-free `detail`.
    pub fn log_event(
        &self,
        scope: &Scope,
        kind: EventKind,
        detail: &serde_json::Value,
    ) -> Result<()> {
        Ok(self.store.log_event(
            &scope.workspace,
            kind,
            &scope.actor,
            self.clock.now(),
            detail,
        )?)
    }

    /// Every candidate of a query — the lexical top `pool` ∪ the vector top `pool` whose
    /// cosine reaches `floor` — with its fused relevance and H-score, unsorted. Only what
    /// ranking needs is read of each ([`crate::RankingRow`]).
    pub(super) fn score_candidates(
        &self,
        scope: &Scope,
        filter: &MemoryFilter,
        query: &str,
        pool: usize,
        floor: f64,
        now: Timestamp,
    ) -> Result<Vec<Candidate>> {
        let model_id = self.embedder.model_id();
        let query_vector = self.embed_one(query)?.vector;
        let workspace = &scope.workspace;
        // The two sides are independent until they are fused: the lexical candidates
        // and what ranking reads of them are fetched on a second thread while the vector
        // index searches (on a busy server this only moves work; on a quiet one a core
        // that would idle shortens every recall). Not knowing yet what the vector side
        // finds, it reads every lexical candidate's vector; those both sides found keep
        // the index's cosine.
        let (lexical_side, vector) = std::thread::scope(|threads| {
            let lexical_side = threads.spawn(|| -> Result<_> {
                let lexical = self.store.lexical_candidates(filter, query, pool)?;
                let ids: Vec<MemoryId> = lexical.iter().map(|(id, _)| *id).collect();
                let vectors = self.store.embeddings(workspace, &ids, model_id)?;
                let rows = self.store.ranking_rows(workspace, &ids)?;
                Ok((lexical, vectors, rows))
            });
            let vector = self.index.nearest(filter, model_id, &query_vector, pool);
            let lexical_side = lexical_side
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (lexical_side, vector)
        });
        let (lexical, lexical_vectors, mut rows) = lexical_side?;
        let vector = vector?;

        let mut evidence: HashMap<MemoryId, rank::Evidence> = HashMap::new();
        for (rank, (id, cos)) in vector.into_iter().enumerate() {
            let e = evidence.entry(id).or_default();
            e.cosine = f64::from(cos);
            e.vector_rank = Some(rank + 1);
        }
        let best_bm25 = lexical.iter().map(|(_, s)| *s).fold(0.0, f64::max);
        for (rank, (id, bm25)) in lexical.iter().enumerate() {
            evidence.entry(*id).or_default().lexical = Some((*bm25, rank + 1));
        }
        for (id, vector) in lexical_vectors {
            if let Some(e) = evidence.get_mut(&id)
                && e.vector_rank.is_none()
            {
                e.cosine = cosine(&query_vector, &vector);
            }
        }
        // A memory only the vector side found must be close enough, so that a small
        // store does not answer — and reinforce — what has nothing to do with the query.
        evidence.retain(|_, e| e.lexical.is_some() || e.cosine >= floor);
        let vector_only: Vec<MemoryId> = evidence
            .iter()
            .filter(|(_, e)| e.lexical.is_none())
            .map(|(id, _)| *id)
            .collect();
        rows.extend(self.store.ranking_rows(workspace, &vector_only)?);

        let period = temporal::named_period(query);
        let semantic = self.embedder.is_semantic();
        let fusion = self.config.recall.fusion;
        let weights = self.config.ranking;
        Ok(rows
            .into_iter()
            .map(|row| {
                let mut e = evidence.get(&row.id).copied().unwrap_or_default();
                e.in_named_period = period.as_ref().is_some_and(|p| p.contains(row.valid_from));
                let relevance = rank::fuse(&fusion, semantic, best_bm25, &e);
                let score = rank::h_score(
                    &weights,
                    relevance.value,
                    model::retention(&row.state, now),
                    row.state.importance,
                    rank::frequency(row.state.recall_count),
                );
                Candidate {
                    id: row.id,
                    state: row.state,
                    lexical_match: e.lexical.is_some(),
                    score,
                    relevance,
                    policy_score: None,
                }
            })
            .collect())
    }

    /// Memories valid now whose stored vectors are closest to this memory's, closest first.
    pub fn related(&self, scope: &Scope, id: MemoryId, limit: usize) -> Result<Vec<RelatedMemory>> {
        if limit == 0 || limit > MAX_RECALL_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("{limit} is outside 1..{MAX_RECALL_LIMIT}"),
            ));
        }
        let memory = self.get(scope, id)?;
        let vector = self.vector_of(scope, &memory)?;
        let filter =
            MemoryFilter::workspace(scope.workspace.clone()).read_at(None, self.clock.now());
        let near: Vec<(MemoryId, f32)> = self
            .index
            .nearest(&filter, self.embedder.model_id(), &vector, limit + 1)?
            .into_iter()
            .filter(|(other, _)| *other != id)
            .take(limit)
            .collect();
        let near: Vec<(MemoryId, f64)> = near
            .into_iter()
            .map(|(id, cos)| (id, f64::from(cos)))
            .collect();
        let mut related: Vec<RelatedMemory> = self
            .with_scores(&scope.workspace, &near)?
            .into_iter()
            .map(|(memory, similarity)| RelatedMemory { memory, similarity })
            .collect();
        related.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        Ok(related)
    }

    /// Memories valid now in `memory`'s project that match `query` best (full-text rank,
    /// best first, `memory` itself left out): with its content words, the ones a new
    /// memory may contradict. Nothing is embedded or scored, so it is cheap enough for
    /// every store.
    pub fn lexical_neighbours(
        &self,
        scope: &Scope,
        memory: &Memory,
        query: &str,
        limit: usize,
    ) -> Result<Vec<Memory>> {
        let id = memory.id;
        let filter = MemoryFilter {
            project: memory.project.clone(),
            ..MemoryFilter::workspace(scope.workspace.clone())
        }
        .read_at(None, self.clock.now());
        let ranked: Vec<MemoryId> = self
            .store
            .lexical_candidates(&filter, query, limit + 1)?
            .into_iter()
            .map(|(other, _)| other)
            .filter(|&other| other != id)
            .take(limit)
            .collect();
        // One read for all of them (a round trip each is most of the cost on a database
        // server), put back in rank order. The candidates' query already left forgotten
        // memories out.
        let mut found: HashMap<MemoryId, Memory> = self
            .store
            .get_many(&scope.workspace, &ranked)?
            .into_iter()
            .map(|memory| (memory.id, memory))
            .collect();
        Ok(ranked
            .iter()
            .filter_map(|other| found.remove(other))
            .collect())
    }

    /// A memory's H-score and its four terms, now, with the relevance's parts when a query
    /// is given. With a query, relevance is what
    /// recall would fuse for this memory among the query's candidates (default filters,
    /// the embedder's floor); a memory that would not be a candidate gets its cosine
    /// alone. Without a query relevance is taken as 1, so the score shows the memory's
    /// standing on its own.
    pub fn score_breakdown(
        &self,
        scope: &Scope,
        id: MemoryId,
        query: Option<&str>,
    ) -> Result<(rank::HScore, Option<rank::Relevance>)> {
        let memory = self.get(scope, id)?;
        let now = self.clock.now();
        let relevance = match query.map(check_query).transpose()? {
            None => None,
            Some(query) => {
                let filter = MemoryFilter::workspace(scope.workspace.clone()).read_at(None, now);
                let floor = self.config.recall.floor(self.embedder.is_semantic());
                let pool = self.config.recall.candidates;
                let hits = self.score_candidates(scope, &filter, query, pool, floor, now)?;
                match hits.into_iter().find(|hit| hit.id == id) {
                    Some(hit) => Some(hit.relevance),
                    None => {
                        let query_vector = self.embed_one(query)?.vector;
                        let vector = self.vector_of(scope, &memory)?;
                        Some(rank::Relevance::cosine_only(cosine(&query_vector, &vector)))
                    }
                }
            }
        };
        let score = rank::h_score(
            &self.config.ranking,
            relevance.map_or(1.0, |r| r.value),
            model::retention(&memory.state, now),
            memory.state.importance,
            rank::frequency(memory.state.recall_count),
        );
        Ok((score, relevance))
    }

    /// A memory's stored vector of the current model, or a fresh embedding of its content
    /// when it has none yet (stored under another model, not re-embedded).
    pub(super) fn vector_of(&self, scope: &Scope, memory: &Memory) -> Result<Vec<f32>> {
        let model_id = self.embedder.model_id();
        match self
            .store
            .embeddings(&scope.workspace, &[memory.id], model_id)?
            .pop()
        {
            Some((_, vector)) => Ok(vector),
            None => Ok(self.embed_one(&memory.content)?.vector),
        }
    }

    /// The memories behind scored ids, each with its score (ids no longer found are left
    /// out; the order is the store's, callers sort).
    pub(super) fn with_scores(
        &self,
        workspace: &Workspace,
        scored: &[(MemoryId, f64)],
    ) -> Result<Vec<(Memory, f64)>> {
        let score: HashMap<MemoryId, f64> = scored.iter().copied().collect();
        let ids: Vec<MemoryId> = scored.iter().map(|(id, _)| *id).collect();
        Ok(self
            .store
            .get_many(workspace, &ids)?
            .into_iter()
            .map(|memory| {
                let value = score[&memory.id];
                (memory, value)
            })
            .collect())
    }
}

/// Keeps hits, best first, while their estimated tokens fit the budget; a hit that does
/// not fit is skipped and smaller ones after it may still go in.
fn pack(
    hits: Vec<RecallHit>,
    max_tokens: Option<usize>,
    compact: bool,
) -> (Vec<RecallHit>, usize, usize) {
    let cost = |hit: &RecallHit| {
        if compact {
            text::estimate_tokens(&text::preview(&hit.memory.content, PREVIEW_CHARS))
        } else {
            text::estimate_tokens(&hit.memory.content)
        }
    };
    let Some(budget) = max_tokens else {
        let tokens = hits.iter().map(cost).sum();
        return (hits, tokens, 0);
    };
    let (mut kept, mut used, mut omitted) = (Vec::new(), 0, 0);
    for hit in hits {
        let tokens = cost(&hit);
        if used + tokens <= budget {
            used += tokens;
            kept.push(hit);
        } else {
            omitted += 1;
        }
    }
    (kept, used, omitted)
}
