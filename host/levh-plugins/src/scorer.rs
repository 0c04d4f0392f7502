//! Scorer plugins: ranking policies that replace the H-score step of recall.
//!
//! A scorer gets nothing but its inputs: no grants, no config, and a short deadline,
//! because it runs inside every recall. Whatever goes wrong (a trap, a timeout, the
//! wrong number of scores) is an error the engine answers by falling back to the H-score.

use std::sync::Arc;
use std::time::Duration;

use levh_core::rank::Features;
use wasmtime::Store;
use wasmtime::component::Component;

use crate::sandbox::{self, PluginState, Prepared};
use crate::wit::v0_1::levh::plugin::types::Candidate;
use crate::wit::v0_1::scorer::Scorer as ScorerWorld;
use crate::{Limits, Manifest, PluginError, PluginHost, SCORER, check_manifest, not_a};

/// The longest a scorer may take over one recall: it sits on the user's critical path.
pub const SCORE_TIMEOUT: Duration = Duration::from_secs(2);

/// A scorer ready to run: compiled, its manifest read and checked.
#[derive(Clone)]
pub struct Scorer {
    component: Component,
    /// What it declared.
    pub manifest: Manifest,
    /// sha256 of its bytes.
    pub sha256: String,
}

impl std::fmt::Debug for Scorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scorer")
            .field("manifest", &self.manifest)
            .field("sha256", &self.sha256)
            .finish()
    }
}

impl PluginHost {
    /// Compiles (or loads from the cache) a scorer component and reads its manifest.
    /// Scorers may not ask for capabilities: they rank numbers and need nothing else.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn load_scorer(&self, what: &str, bytes: &[u8]) -> Result<Scorer, PluginError> {
        let (component, sha256) = self.compile(SCORER, what, bytes)?;
        let refused = |reason: String| PluginError::Refused {
            what: what.to_owned(),
            kind: SCORER,
            reason,
        };
        let interfaces = crate::imports::interface_names(&component, &self.engine);
        crate::imports::check_api_versions(&interfaces).map_err(refused)?;
        let prepared = self.prepared_for_manifest(what);
        let manifest: Manifest = self.runtime.block_on(async {
            let (mut store, instance) = self
                .instantiate_scorer(&component, &prepared)
                .await
                .map_err(|e| {
                    match crate::imports::why_unlinkable(&component, &self.linker, &interfaces) {
                        Some(reason) => refused(reason),
                        None => not_a(SCORER, what, e),
                    }
                })?;
            let manifest = instance
                .call_manifest(&mut store)
                .await
                .map_err(|e| sandbox::trapped(&prepared, &store, e))?;
            Ok::<_, PluginError>(manifest.into())
        })?;
        check_manifest(SCORER, what, &manifest)?;
        if let Some(capability) = manifest.capabilities.first() {
            return Err(PluginError::Refused {
                what: what.to_owned(),
                kind: SCORER,
                reason: format!("it asks to {capability}; scorers get no capabilities"),
            });
        }
        Ok(Scorer {
            component,
            manifest,
            sha256,
        })
    }

    /// Scores recall candidates: one number per candidate, lower first. Checks the
    /// answer's length and that every score is a number.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn score(
        &self,
        scorer: &Scorer,
        query: &str,
        candidates: &[Features],
    ) -> Result<Vec<f64>, PluginError> {
        let m = &scorer.manifest;
        let prepared = Prepared {
            plugin: m.id.clone(),
            version: m.version.clone(),
            grants: Vec::new(),
            limits: Limits {
                call_timeout: self.limits.call_timeout.min(SCORE_TIMEOUT),
                ..self.limits
            },
            fixed_now: self.fixed_now,
            http: None,
        };
        let wit_candidates: Vec<Candidate> = candidates
            .iter()
            .map(|c| Candidate {
                similarity: c.relevance as f32,
                retention: c.retention as f32,
                importance: c.importance as f32,
                frequency: c.frequency as f32,
                age_hours: c.age_hours as f32,
                pinned: c.pinned,
            })
            .collect();
        let scores = self.runtime.block_on(async {
            let (mut store, instance) = self
                .instantiate_scorer(&scorer.component, &prepared)
                .await?;
            instance
                .call_score(&mut store, query, &wit_candidates)
                .await
                .map_err(|e| sandbox::trapped(&prepared, &store, e))
        })?;
        let wrong = |reason: String| PluginError::Trapped {
            plugin: m.id.clone(),
            version: m.version.clone(),
            reason,
        };
        if scores.len() != candidates.len() {
            return Err(wrong(format!(
                "returned {} scores for {} candidates",
                scores.len(),
                candidates.len()
            )));
        }
        if let Some(bad) = scores.iter().position(|s| !s.is_finite()) {
            return Err(wrong(format!(
                "returned {} for candidate {bad}, not a number",
                scores[bad]
            )));
        }
        Ok(scores.into_iter().map(f64::from).collect())
    }

    async fn instantiate_scorer(
        &self,
        component: &Component,
        prepared: &Prepared,
    ) -> Result<(Store<PluginState>, ScorerWorld), PluginError> {
        let mut store = self.new_store(prepared)?;
        let instance = ScorerWorld::instantiate_async(&mut store, component, &self.linker)
            .await
            .map_err(|e| sandbox::trapped(prepared, &store, e))?;
        Ok((store, instance))
    }
}

/// A scorer plugin as the engine's ranking policy.
#[derive(Debug)]
pub struct ScorerPolicy {
    host: Arc<PluginHost>,
    scorer: Scorer,
}

impl ScorerPolicy {
    /// The policy that runs `scorer` on `host`.
    pub fn new(host: Arc<PluginHost>, scorer: Scorer) -> Self {
        Self { host, scorer }
    }
}

impl levh_core::rank::Scorer for ScorerPolicy {
    fn id(&self) -> &str {
        &self.scorer.manifest.id
    }

    fn score(&self, query: &str, candidates: &[Features]) -> Result<Vec<f64>, String> {
        self.host
            .score(&self.scorer, query, candidates)
            .map_err(|e| e.to_string())
    }
}
