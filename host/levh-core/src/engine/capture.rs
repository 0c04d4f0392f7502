//! Writing through the gate: preparing a memory (redaction, embedding, the nearest
//! neighbours), the gate's verdict, storing or holding it; content updates; secrets
//! already stored.

use super::*;

/// Why content that shows nothing is refused.
const NOTHING_VISIBLE: &str =
    "has nothing visible (only whitespace, zero-width or control characters)";

impl Levh {
    /// Validates, redacts, embeds and compares a candidate. Reads only. `replaces` is the
    /// memory an update would change: it is left out of the comparison (an edit resembles
    /// what it edits), every other memory counts.
    pub(super) fn prepare(
        &self,
        scope: &Scope,
        new: NewMemory,
        replaces: Option<MemoryId>,
    ) -> Result<Prepared> {
        let draft = self.draft(scope, new, replaces.is_some())?;
        let embedding = self.embed_one(&draft.content)?;
        self.compared(scope, draft, embedding, replaces)
    }

    /// A draft with its vector, compared with what is stored.
    pub(super) fn compared(
        &self,
        scope: &Scope,
        draft: Draft,
        embedding: Embedding,
        replaces: Option<MemoryId>,
    ) -> Result<Prepared> {
        let keys = text::near_duplicate_keys(&draft.content);
        // First, so that a copy another writer stores after this read and before the
        // comparison below is one the store finds unseen at the write (and refuses).
        let identical_seen = self.store.identical_memories(
            &MemoryFilter {
                project: draft.project.clone(),
                ..MemoryFilter::workspace(scope.workspace.clone())
            },
            &text::content_hash(&draft.content),
        )?;
        let Comparison {
            nearest,
            nearest_content,
            neighbours,
        } = self.compare(
            scope,
            draft.project.as_deref(),
            &draft.content,
            &embedding.vector,
            &keys,
            draft.now,
            history_at(draft.valid_from, draft.valid_to, draft.now),
            replaces,
            gate::Origin {
                source: &draft.source,
                source_id: source_id(&draft.metadata),
                kind: draft.kind.as_str(),
                at: draft.valid_from,
            },
        )?;
        Ok(Prepared {
            content: draft.content,
            redactions: draft.redactions,
            embedding,
            keys,
            nearest,
            nearest_content,
            neighbours,
            project: draft.project,
            kind: draft.kind,
            source: draft.source,
            importance: draft.importance,
            pinned: draft.pinned,
            valid_from: draft.valid_from,
            valid_to: draft.valid_to,
            metadata: draft.metadata,
            session_id: draft.session_id,
            now: draft.now,
            prior: draft.prior,
            identical_seen,
        })
    }

    /// Validates and redacts a candidate: everything before its vector. Reads only (the
    /// session it names). `update` is true for new content of an existing memory.
    pub(super) fn draft(&self, scope: &Scope, new: NewMemory, update: bool) -> Result<Draft> {
        let importance = check_importance(new.importance.unwrap_or(DEFAULT_IMPORTANCE))?;
        // Every stored string is redacted, not only the content: labels and metadata are
        // listed (sources, projects, exports) and sent to every client.
        let mut field_redactions = Vec::new();
        let project = check_label("project", new.project)?
            .map(|project| redact_into(&project, &mut field_redactions));
        let source = check_label("source", new.source)?
            .map(|source| redact_into(&source, &mut field_redactions))
            .unwrap_or_else(|| scope.actor.surface.to_string());
        let metadata = new.metadata.unwrap_or_else(|| serde_json::json!({}));
        if !metadata.is_object() {
            return Err(Error::invalid("metadata", "must be a JSON object"));
        }
        if !update {
            // An update carries the memory's stored metadata, which predates any cap.
            check_metadata_size(&metadata)?;
        }
        let (metadata, metadata_redactions) = gate::secrets::redact_json(&metadata);
        field_redactions.extend(metadata_redactions);
        if let Some(session) = &new.session_id
            && !self.store.session_exists(&scope.workspace, session)?
        {
            return Err(Error::invalid(
                "session_id",
                format!(
                    "no session {session} in this workspace (create_session or POST /api/sessions opens one)"
                ),
            ));
        }
        let now = self.clock.now();
        let valid_from = new.valid_from.unwrap_or(now);
        if let Some(valid_to) = new.valid_to
            && valid_to <= valid_from
        {
            return Err(Error::invalid(
                "valid_to",
                format!("{valid_to} is not after valid_from {valid_from}"),
            ));
        }
        // NULs carry nothing a person wrote; content with nothing visible at all is the
        // gate's to reject as empty.
        let content = text::without_nul(&new.content);
        // Redact first: neither the store nor the embedder ever sees a secret.
        let (content, mut redactions) = gate::secrets::redact(content.trim());
        redactions.extend(field_redactions);
        Ok(Draft {
            content,
            redactions,
            project,
            kind: new.kind.unwrap_or_default(),
            source,
            importance,
            pinned: new.pinned,
            valid_from,
            valid_to: new.valid_to,
            metadata,
            session_id: new.session_id,
            now,
            prior: new.prior,
        })
    }

    /// The nearest existing memory valid now in the same workspace (and project, when the
    /// candidate has one), and the unpinned ones close enough to interfere with. Cosine
    /// when the embedder is semantic; word shingles when it is not (a hash vector's cosine
    /// means little), with candidates found through near-duplicate keys so the cost does
    /// not grow with the store. `exclude` is never a neighbour (the memory being updated).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn compare(
        &self,
        scope: &Scope,
        project: Option<&str>,
        content: &str,
        vector: &[f32],
        keys: &[i64],
        now: Timestamp,
        history_at: Option<Timestamp>,
        exclude: Option<MemoryId>,
        origin: gate::Origin<'_>,
    ) -> Result<Comparison> {
        // Against the memories not retired now — or, for history, those valid at its start.
        let filter = MemoryFilter {
            project: project.map(str::to_owned),
            not_retired_at: history_at.is_none().then_some(now),
            valid_at: history_at,
            ..MemoryFilter::workspace(scope.workspace.clone())
        };
        let (measure, threshold) = self.measure();
        // The same text stored, read from the rows: an index (approximate, or refreshed
        // from the store's changes) may not have another writer's latest memory yet, and
        // missing a copy would admit it twice.
        let exact = self
            .store
            .identical_memories(&filter, &text::content_hash(content))?;
        let scored: Vec<(ComparedText, f64)> = match measure {
            Measure::Cosine => {
                let near = self.index.nearest(
                    &filter,
                    self.embedder.model_id(),
                    vector,
                    COMPARE_NEIGHBOURS,
                )?;
                let mut cosine: HashMap<MemoryId, f64> = near
                    .into_iter()
                    .map(|(id, cos)| (id, f64::from(cos)))
                    .collect();
                for id in exact {
                    // The same text has the same vector.
                    cosine.entry(id).or_insert(1.0);
                }
                let ids: Vec<MemoryId> = cosine.keys().copied().collect();
                self.store
                    .compared_texts(&scope.workspace, &ids)?
                    .into_iter()
                    .map(|m| {
                        let s = cosine[&m.id];
                        (m, s)
                    })
                    .collect()
            }
            Measure::Lexical => {
                let mut ids = self
                    .store
                    .near_duplicates(&filter, keys, COMPARE_NEIGHBOURS)?;
                for id in exact {
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                let own = text::Shingles::of(content);
                self.store
                    .compared_texts(&scope.workspace, &ids)?
                    .into_iter()
                    .map(|m| {
                        let s = own.similarity(&text::Shingles::of(&m.content));
                        (m, s)
                    })
                    .collect()
            }
        };
        // Only memories the candidate could copy or revise count (not another speaker's
        // words, not the question it answers): they neither make it a duplicate nor
        // interfere with it.
        let (duplicate, _) = self.config.gate.thresholds(measure);
        let scored: Vec<(ComparedText, f64)> = scored
            .into_iter()
            .filter(|(m, similarity)| {
                Some(m.id) != exclude
                    && gate::comparable(content, &m.content)
                    && !(*similarity < duplicate
                        && gate::distinct_events_of_one_source(
                            origin,
                            gate::Origin {
                                source: &m.source,
                                source_id: m.source_id.as_deref(),
                                kind: &m.kind,
                                at: m.valid_from,
                            },
                        ))
            })
            .collect();
        // The nearest is the closest memory the gate could hold the candidate over:
        // with a model, one that also agrees in words ([`gate::decide`]) comes before a
        // closer one that only shares the tone.
        let review = self.config.gate.thresholds(measure).1;
        let holdable = |(m, similarity): &(ComparedText, f64)| {
            measure == Measure::Lexical
                || (*similarity >= review
                    && text::content_agreement(content, &m.content)
                        >= self.config.gate.lexical_agreement)
        };
        // Judged once per neighbour, not once per comparison of the search below.
        let holdable: Vec<bool> = scored.iter().map(holdable).collect();
        let closest = scored
            .iter()
            .zip(&holdable)
            .max_by(|(a, a_holdable), (b, b_holdable)| {
                a_holdable
                    .cmp(b_holdable)
                    .then(a.1.total_cmp(&b.1))
                    .then(b.0.id.cmp(&a.0.id))
            })
            .map(|(closest, _)| closest);
        let nearest = closest.map(|(m, similarity)| Nearest {
            id: m.id,
            similarity: *similarity,
            measure,
        });
        let neighbours = scored
            .iter()
            .filter(|(m, similarity)| !m.pinned && *similarity >= threshold)
            .map(|(m, similarity)| (m.id, *similarity))
            .collect();
        Ok(Comparison {
            nearest,
            nearest_content: closest.map(|(m, _)| m.content.clone()),
            neighbours,
        })
    }

    /// How the gate measures closeness with this embedder, and the similarity from which
    /// an older memory is a neighbour (interference, or the gate's review).
    pub(super) fn measure(&self) -> (Measure, f64) {
        let (gate, model) = (&self.config.gate, &self.config.model);
        if self.embedder.is_semantic() {
            (
                Measure::Cosine,
                model.interference_threshold.min(gate.review_similarity),
            )
        } else {
            (
                Measure::Lexical,
                model
                    .interference_lexical_threshold
                    .min(gate.lexical_review_similarity),
            )
        }
    }

    /// What the gate would decide for `new`, without storing anything.
    pub fn evaluate(&self, scope: &Scope, new: NewMemory) -> Result<Evaluation> {
        let prepared = self.prepare(scope, new, None)?;
        let verdict = gate::decide(
            &self.config.gate,
            &prepared.content,
            &prepared.redactions,
            prepared.nearest,
            prepared.nearest_content.as_deref(),
        );
        Ok(Evaluation {
            verdict,
            content: prepared.content,
            redactions: prepared.redactions,
            nearest: prepared.nearest,
        })
    }

    /// The one write path: every surface stores through here. The gate decides; admitted
    /// and redacted content is stored, reviewed content is held for a person, rejected
    /// content is not stored. There is no way around the gate. A capture is a batch of
    /// one ([`Levh::capture_batch`]), so a batch judges each item exactly as this does.
    pub fn capture(&self, scope: &Scope, new: NewMemory) -> Result<CaptureOutcome> {
        self.capture_batch(scope, vec![new])?
            .pop()
            .unwrap_or_else(|| Err(Error::invalid("content", "nothing to store")))
    }

    /// Why the gate let a prepared candidate in, as the memory records it.
    pub(super) fn admission(verdict: &Verdict, p: &Prepared) -> AdmissionRecord {
        let mut reasons = vec![match p.nearest {
            Some(n) => format!(
                "nearest {} at {} similarity {:.2}",
                n.id,
                n.measure.as_str(),
                n.similarity
            ),
            None => "nothing similar stored".to_owned(),
        }];
        if !p.redactions.is_empty() {
            let kinds: Vec<&str> = p.redactions.iter().map(|r| r.kind.as_str()).collect();
            reasons.push(format!("redacted: {}", kinds.join(", ")));
        }
        AdmissionRecord {
            verdict: match verdict {
                Verdict::Redact => crate::AdmissionVerdict::Redact,
                Verdict::Review { .. } => crate::AdmissionVerdict::Review,
                // Admit; a rejected candidate never gets this far.
                _ => crate::AdmissionVerdict::Admit,
            },
            reasons,
            decided_by: "gate".into(),
        }
    }

    /// The gate's verdict on a prepared candidate. Held candidates are neighbours too: the
    /// same text again, while the first copy waits for a person, is a duplicate of that
    /// copy — never a second row to decide.
    pub(super) fn judge(&self, scope: &Scope, p: &Prepared) -> Result<Verdict> {
        let verdict = gate::decide(
            &self.config.gate,
            &p.content,
            &p.redactions,
            p.nearest,
            p.nearest_content.as_deref(),
        );
        if matches!(verdict, Verdict::Reject { .. }) {
            return Ok(verdict);
        }
        Ok(
            match self.store.waiting_held(
                &scope.workspace,
                p.project.as_deref(),
                &text::content_hash(&p.content),
            )? {
                Some(waiting) => Verdict::Reject {
                    reason: format!(
                        "duplicate of held candidate {}, which waits for a person's decision",
                        waiting.id
                    ),
                    nearest: None,
                },
                None => verdict,
            },
        )
    }

    /// Puts a prepared candidate in the held queue; `updates` names the memory it would
    /// change when it is an update.
    pub(super) fn hold(
        &self,
        scope: &Scope,
        p: Prepared,
        nearest: Nearest,
        updates: Option<MemoryId>,
    ) -> Result<HeldId> {
        let held = self.held_candidate(scope, p, nearest, updates);
        self.store.insert_held(&held, &scope.actor)?;
        Ok(held.id)
    }

    /// The held candidate a prepared candidate becomes.
    pub(super) fn held_candidate(
        &self,
        scope: &Scope,
        p: Prepared,
        nearest: Nearest,
        updates: Option<MemoryId>,
    ) -> HeldCandidate {
        HeldCandidate {
            id: HeldId::new_at(p.now),
            workspace: scope.workspace.clone(),
            project: p.project,
            content_hash: text::content_hash(&p.content),
            content: p.content,
            kind: p.kind,
            source: p.source,
            importance: p.importance,
            pinned: p.pinned,
            valid_from: p.valid_from,
            valid_to: p.valid_to,
            metadata: p.metadata,
            session_id: p.session_id,
            redactions: p.redactions,
            reason: match updates {
                Some(target) => format!("update of {target}: {}", gate::review_reason(&nearest)),
                None => gate::review_reason(&nearest),
            },
            nearest: Some(nearest),
            status: HeldStatus::Held,
            created_at: p.now,
            expires_at: self
                .config
                .gate
                .held_expiry_hours
                .map(|hours| add_hours(p.now, hours)),
            decision: None,
            memory_id: None,
            updates,
        }
    }

    /// A memory record from a prepared candidate.
    pub(super) fn record(
        &self,
        scope: &Scope,
        p: Prepared,
        admission: AdmissionRecord,
    ) -> NewMemoryRecord {
        let model = self.config.model;
        let mut state = MemoryState {
            importance: p.importance,
            pinned: p.pinned,
            stability_hours: model.initial_stability_hours.min(model.max_stability_hours),
            last_recalled_at: None,
            recall_count: 0,
            created_at: p.now,
        };
        let mut id = MemoryId::new_at(p.now);
        let mut source = p.source;
        let mut superseded_by = None;
        // What an agent stores in a session is working memory first (SPEC §3): it fades
        // fast and stays out of other sessions' recall until something promotes it.
        // Pinned or important from the start, it is long-term at once; an import brings
        // a memory back as it was (`prior`).
        let working = p.session_id.is_some()
            && p.prior.is_none()
            && !p.pinned
            && p.importance < model.promote_importance;
        if working {
            state.stability_hours = model
                .working_stability_hours
                .clamp(model.min_stability_hours, model.max_stability_hours);
        }
        let mut forgotten_at = None;
        if let Some(prior) = p.prior {
            id = prior.id;
            forgotten_at = prior.forgotten_at.map(crate::within_range);
            state.stability_hours = prior
                .stability_hours
                .clamp(model.min_stability_hours, model.max_stability_hours);
            state.recall_count = prior.recall_count;
            state.last_recalled_at = prior.last_recalled_at.map(crate::within_range);
            state.created_at = crate::within_range(prior.created_at);
            superseded_by = prior.superseded_by;
            if let Some(prior_source) = prior.source {
                source = gate::secrets::redact(&prior_source).0;
            }
        }
        let memory = Memory {
            id,
            workspace: scope.workspace.clone(),
            project: p.project,
            content_hash: text::content_hash(&p.content),
            content: p.content,
            kind: p.kind,
            source,
            state,
            valid_from: p.valid_from,
            valid_to: p.valid_to,
            superseded_by,
            admission,
            metadata: p.metadata,
            session_id: p.session_id,
            embedding_model: Some(p.embedding.model.clone()),
            embedding_dimension: Some(p.embedding.vector.len() as u32),
        };
        NewMemoryRecord {
            memory,
            embedding: Some(p.embedding),
            near_duplicate_keys: p.keys,
            working,
            forgotten_at,
        }
    }

    /// New content for an existing memory, judged by the gate like a capture against every
    /// other memory (the memory itself aside): a duplicate of another memory is rejected,
    /// content close to another one is held for a person (the held candidate names the
    /// memory it would change), anything else is applied in place with secrets redacted —
    /// the memory keeps its id, model state and history. Content that could never be
    /// stored (nothing visible, too short, too long) is an error naming `content`.
    pub fn update_content(
        &self,
        scope: &Scope,
        id: MemoryId,
        content: &str,
    ) -> Result<ContentUpdate> {
        self.update_content_from(scope, id, content, None)
    }

    /// [`Levh::update_content`], recording the connector whose sync changed the item.
    pub(super) fn update_content_from(
        &self,
        scope: &Scope,
        id: MemoryId,
        content: &str,
        connector: Option<&str>,
    ) -> Result<ContentUpdate> {
        let content = text::without_nul(content);
        if !text::has_visible(&content) {
            return Err(Error::invalid("content", NOTHING_VISIBLE));
        }
        let length = gate::secrets::redact(content.trim()).0.chars().count();
        let gate_config = &self.config.gate;
        if length < gate_config.min_chars.max(1) {
            return Err(Error::invalid(
                "content",
                format!(
                    "too short ({length} characters; at least {} needed)",
                    gate_config.min_chars
                ),
            ));
        }
        if length > gate_config.max_chars {
            return Err(Error::invalid(
                "content",
                format!(
                    "too long ({length} characters; at most {})",
                    gate_config.max_chars
                ),
            ));
        }
        // Missing ids are refused before anything is embedded.
        let memory = self.get(scope, id)?;
        let new = NewMemory {
            content: content.into_owned(),
            project: memory.project.clone(),
            kind: Some(memory.kind.clone()),
            source: Some(memory.source.clone()),
            importance: Some(memory.state.importance),
            pinned: memory.state.pinned,
            valid_from: Some(memory.valid_from),
            valid_to: memory.valid_to,
            metadata: Some(memory.metadata.clone()),
            // The session is the memory's own; checking it again would refuse an edit
            // of a memory whose session has since been purged.
            session_id: None,
            prior: None,
        };
        let p = self.prepare(scope, new, Some(id))?;
        let verdict = self.judge(scope, &p)?;
        let mut update = ContentUpdate {
            verdict: verdict.clone(),
            memory: None,
            held_id: None,
            redactions: p.redactions.clone(),
        };
        match verdict {
            Verdict::Reject { .. } => {}
            Verdict::Review { nearest } => {
                let mut p = p;
                p.session_id = memory.session_id.clone();
                update.held_id = Some(self.hold(scope, p, nearest, Some(id))?);
            }
            Verdict::Admit | Verdict::Redact => {
                self.apply_content(scope, id, &p, connector)?;
                update.memory = Some(self.get(scope, id)?);
            }
        }
        Ok(update)
    }

    /// Writes already-judged content over memory `id`, with an `update` event naming the
    /// connector when a sync made it.
    pub(super) fn apply_content(
        &self,
        scope: &Scope,
        id: MemoryId,
        p: &Prepared,
        connector: Option<&str>,
    ) -> Result<()> {
        let kinds: Vec<&str> = p.redactions.iter().map(|r| r.kind.as_str()).collect();
        let mut detail = serde_json::json!({ "redacted": kinds });
        if let Some(connector) = connector {
            detail["connector"] = connector.into();
        }
        let replaced = self.store.replace_content(
            &scope.workspace,
            id,
            &p.content,
            Some(&p.embedding),
            &p.keys,
            EventKind::Update,
            detail,
            self.clock.now(),
            &scope.actor,
        )?;
        if replaced {
            self.index_entities_of(&scope.workspace, &[id]);
            Ok(())
        } else {
            Err(Error::NotFound(id))
        }
    }

    /// Memories holding secrets that today's patterns recognise (stored before a pattern
    /// existed, or written to the database by other means), in any stored field: content,
    /// project, source, metadata.
    pub fn audit_secrets(&self, scope: &Scope) -> Result<Vec<SecretFinding>> {
        Ok(self
            .store
            .contents(&scope.workspace)?
            .into_iter()
            .filter_map(|stored| {
                let finding = SecretScan::of(&stored);
                (!finding.kinds.is_empty()).then(|| SecretFinding {
                    memory_id: stored.id,
                    kinds: finding.kinds.into_iter().map(|r| r.kind).collect(),
                    fields: finding.fields,
                })
            })
            .collect())
    }

    /// Secrets that today's patterns recognise in what levh keeps outside memories' own
    /// fields: memories' kinds, held candidates, synced items' ids, tokens' labels.
    pub fn audit_secret_places(&self, scope: &Scope) -> Result<Vec<SecretPlace>> {
        Ok(self
            .store
            .placed_texts(&scope.workspace)?
            .into_iter()
            .filter_map(|placed| {
                let (_, kinds) = scrub_placed(&placed);
                (!kinds.is_empty()).then(|| SecretPlace {
                    place: placed.place.to_string(),
                    kinds,
                })
            })
            .collect())
    }

    /// Strips the secrets [`Levh::audit_secret_places`] finds: a kind becomes `note`, a
    /// synced item's id keeps a digest beside its redacted text (so the next sync still
    /// knows the item), everything else is redacted in place. Each change is a `redact`
    /// event naming the place.
    pub fn redact_secret_places(&self, scope: &Scope) -> Result<Vec<SecretPlace>> {
        let now = self.clock.now();
        let mut done = Vec::new();
        for placed in self.store.placed_texts(&scope.workspace)? {
            let (replacement, kinds) = scrub_placed(&placed);
            if kinds.is_empty() {
                continue;
            }
            self.store.rewrite_placed_text(
                &scope.workspace,
                &placed.place,
                &replacement,
                now,
                &scope.actor,
            )?;
            done.push(SecretPlace {
                place: placed.place.to_string(),
                kinds,
            });
        }
        Ok(done)
    }

    /// Strips recognised secrets from stored memories — content re-embedded, labels and
    /// metadata rewritten — and records a `redact` event per field changed. Returns what
    /// was redacted.
    pub fn redact_secrets(&self, scope: &Scope) -> Result<Vec<SecretFinding>> {
        let now = self.clock.now();
        let mut findings = Vec::new();
        for stored in self.store.contents(&scope.workspace)? {
            let scan = SecretScan::of(&stored);
            if scan.kinds.is_empty() {
                continue;
            }
            let kinds: Vec<String> = scan.kinds.into_iter().map(|r| r.kind).collect();
            if let Some(content) = &scan.content {
                let embedding = self.embed_one(content)?;
                let keys = text::near_duplicate_keys(content);
                self.store.replace_content(
                    &scope.workspace,
                    stored.id,
                    content,
                    Some(&embedding),
                    &keys,
                    EventKind::Redact,
                    serde_json::json!({ "kinds": kinds, "field": "content" }),
                    now,
                    &scope.actor,
                )?;
            }
            if scan.fields.iter().any(|f| f != "content") {
                self.store.replace_fields(
                    &scope.workspace,
                    stored.id,
                    scan.project.as_deref(),
                    &scan.source,
                    &scan.metadata,
                    EventKind::Redact,
                    serde_json::json!({ "kinds": kinds, "fields": scan.fields }),
                    now,
                    &scope.actor,
                )?;
            }
            self.index_entities_of(&scope.workspace, &[stored.id]);
            findings.push(SecretFinding {
                memory_id: stored.id,
                kinds,
                fields: scan.fields,
            });
        }
        Ok(findings)
    }
}

/// The secrets in one memory's stored fields, and those fields redacted.
/// What a placed text becomes without its secrets, and the kinds found.
fn scrub_placed(placed: &crate::PlacedText) -> (String, Vec<String>) {
    use crate::{HeldField, TextPlace};
    let kinds_of = |found: Vec<Redaction>| found.into_iter().map(|r| r.kind).collect::<Vec<_>>();
    match &placed.place {
        TextPlace::MemoryKind(_)
        | TextPlace::Held {
            field: HeldField::Kind,
            ..
        } => (
            Kind::NOTE.to_owned(),
            kinds_of(gate::secrets::detect(&placed.text)),
        ),
        TextPlace::Held {
            field: HeldField::Metadata,
            ..
        } => match serde_json::from_str::<serde_json::Value>(&placed.text) {
            Ok(value) => {
                let (redacted, found) = gate::secrets::redact_json(&value);
                (redacted.to_string(), kinds_of(found))
            }
            Err(_) => {
                let (redacted, found) = gate::secrets::redact(&placed.text);
                (redacted, kinds_of(found))
            }
        },
        TextPlace::SyncedItem { .. } => (
            gate::secrets::kept_source_id(&placed.text),
            kinds_of(gate::secrets::detect(&placed.text)),
        ),
        _ => {
            let (redacted, found) = gate::secrets::redact(&placed.text);
            (redacted, kinds_of(found))
        }
    }
}

struct SecretScan {
    kinds: Vec<Redaction>,
    fields: Vec<String>,
    /// The content redacted, when it held a secret.
    content: Option<String>,
    project: Option<String>,
    source: String,
    metadata: serde_json::Value,
}

impl SecretScan {
    fn of(stored: &crate::StoredText) -> Self {
        let mut kinds = Vec::new();
        let mut fields = Vec::new();
        let mut note = |field: &str, found: Vec<Redaction>| {
            if !found.is_empty() {
                fields.push(field.to_owned());
                kinds.extend(found);
            }
        };
        let (content, found) = gate::secrets::redact(&stored.content);
        let content = (!found.is_empty()).then_some(content);
        note("content", found);
        let project = stored.project.as_deref().map(|project| {
            let (redacted, found) = gate::secrets::redact(project);
            note("project", found);
            redacted
        });
        let (source, found) = gate::secrets::redact(&stored.source);
        note("source", found);
        let (metadata, found) = gate::secrets::redact_json(&stored.metadata);
        note("metadata", found);
        Self {
            kinds,
            fields,
            content,
            project,
            source,
            metadata,
        }
    }
}

/// The item id a connector gave a memory (its metadata's `source_id`), if any.
pub(super) fn source_id(metadata: &serde_json::Value) -> Option<&str> {
    metadata
        .get("source_id")
        .and_then(serde_json::Value::as_str)
}
