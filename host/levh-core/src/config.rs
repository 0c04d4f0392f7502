//! Every number of the memory model and of ranking, with SPEC §3/§4 defaults and a
//! `LEVH_*` override each. The source of overrides is a lookup function, so this crate
//! stays free of I/O: the binary passes environment-then-config-file lookups.

use serde::Serialize;

/// A configuration value that could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{key}={value:?}: {message}")]
pub struct ConfigError {
    /// The variable at fault, e.g. `LEVH_GAIN`.
    pub key: String,
    /// The value given.
    pub value: String,
    /// Why it was refused.
    pub message: String,
}

/// The decay and reinforcement parameters (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelConfig {
    /// Stability of a new memory, in hours (`LEVH_STABILITY_HOURS`, 168).
    pub initial_stability_hours: f64,
    /// Reinforcement gain (`LEVH_GAIN`, 0.5).
    pub gain: f64,
    /// Ceiling on stability, in hours (`LEVH_MAX_STABILITY_HOURS`, 8760).
    pub max_stability_hours: f64,
    /// Multiplier applied by unhelpful feedback (`LEVH_WEAKEN_FACTOR`, 0.5).
    pub weaken_factor: f64,
    /// Floor on stability after weakening, in hours (`LEVH_MIN_STABILITY_HOURS`, 1).
    pub min_stability_hours: f64,
    /// Cosine similarity from which a new memory interferes with an older one
    /// (`LEVH_INTERFERENCE_THRESHOLD`, 0.80). Used when the embedder is semantic. The
    /// gate's review threshold caps it: whatever was close enough to hold the new memory
    /// for review is close enough to be weakened by it once admitted. The default sits
    /// below the review line because a sentence model scores many one-fact updates under
    /// it (MiniLM: "The deploy branch is main." → "… prod." 0.86, labelled updates in
    /// `fixtures/gate/` from 0.71), which the gate admits directly: they still weaken the
    /// fact they revise. Labelled distinct facts that share words score at most 0.68.
    pub interference_threshold: f64,
    /// Shingle similarity from which a new memory interferes with an older one when no
    /// semantic model is loaded (`LEVH_INTERFERENCE_LEXICAL_THRESHOLD`, 0.50; capped by
    /// the gate's lexical review threshold the same way).
    pub interference_lexical_threshold: f64,
    /// Multiplier applied to the older memory's stability (`LEVH_INTERFERENCE_FACTOR`, 0.6).
    pub interference_factor: f64,
    /// Retention below which a memory counts as fading (`LEVH_FADING_THRESHOLD`, 0.35).
    pub fading_threshold: f64,
    /// Stability of working memory — what an agent stores in a session — in hours
    /// (`LEVH_WORKING_STABILITY_HOURS`, 24): it fades within days unless promoted, when it
    /// gets the stability of any new memory.
    pub working_stability_hours: f64,
    /// Importance from which a memory stored in a session is long-term at once
    /// (`LEVH_PROMOTE_IMPORTANCE`, 0.7); an importance set this high later promotes it.
    pub promote_importance: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            initial_stability_hours: 168.0,
            gain: 0.5,
            max_stability_hours: 8760.0,
            weaken_factor: 0.5,
            min_stability_hours: 1.0,
            interference_threshold: 0.80,
            interference_lexical_threshold: 0.50,
            interference_factor: 0.6,
            fading_threshold: 0.35,
            working_stability_hours: 24.0,
            promote_importance: 0.7,
        }
    }
}

/// The H-score weights (SPEC §4): H = α(1−sim) + β(1−ret) + γ(1−imp) + δ(1−freq).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RankingWeights {
    /// Weight of dissimilarity (`LEVH_HSCORE_ALPHA`, 0.4).
    pub alpha: f64,
    /// Weight of forgetting (`LEVH_HSCORE_BETA`, 0.2).
    pub beta: f64,
    /// Weight of unimportance (`LEVH_HSCORE_GAMMA`, 0.3).
    pub gamma: f64,
    /// Weight of rarity of recall (`LEVH_HSCORE_DELTA`, 0.1).
    pub delta: f64,
}

impl Default for RankingWeights {
    fn default() -> Self {
        Self {
            alpha: 0.4,
            beta: 0.2,
            gamma: 0.3,
            delta: 0.1,
        }
    }
}

/// How recall gathers candidates and fuses their evidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RecallConfig {
    /// Candidates taken from each of the lexical and vector sides before ranking
    /// (`LEVH_RECALL_CANDIDATES`, 100; at least 5 × the requested limit is always used).
    pub candidates: usize,
    /// A candidate found only by the vector side must be at least this similar to the
    /// query to be returned, so that a small store does not return — and reinforce —
    /// memories unrelated to the query. `LEVH_RECALL_MIN_SIMILARITY` sets one floor for
    /// every embedder; unset, each kind of embedder has its own ([`Self::floor`]).
    pub min_similarity: Option<f64>,
    /// How lexical and semantic evidence are fused.
    pub fusion: crate::rank::FusionConfig,
    /// Whether the event log keeps each recall's query text (secrets redacted) for the
    /// recall report (`LEVH_LOG_QUERIES`, off: the log stays content-free and the report
    /// counts queries without saying what they were).
    pub log_queries: bool,
}

/// The floor for a language model's cosine. MiniLM scores true paraphrases low — "where
/// is the team retreat this quarter" against "The quarterly offsite will be held in Lisbon
/// in May" is 0.25 — while unrelated sentences sit around 0 to 0.15; see the README's
/// "Recall quality" section for the measurement.
pub const SEMANTIC_FLOOR: f64 = 0.2;

/// The floor for the hash embedder's cosine: its vectors share features only through
/// shared words and word pieces, so a vector-only candidate needs a good deal of them.
pub const HASH_FLOOR: f64 = 0.3;

impl RecallConfig {
    /// The least cosine of a vector-only candidate, for a semantic embedder or not.
    pub fn floor(&self, semantic: bool) -> f64 {
        self.min_similarity
            .unwrap_or(if semantic { SEMANTIC_FLOOR } else { HASH_FLOOR })
    }
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            candidates: 100,
            min_similarity: None,
            fusion: crate::rank::FusionConfig::default(),
            log_queries: false,
        }
    }
}

/// All engine configuration.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Config {
    /// The memory model.
    pub model: ModelConfig,
    /// Ranking weights.
    pub ranking: RankingWeights,
    /// Candidate gathering.
    pub recall: RecallConfig,
    /// The admission gate.
    pub gate: crate::GateConfig,
    /// Consolidation of aged, related memories.
    pub consolidation: ConsolidationConfig,
}

/// When memories are consolidated and what counts as related (SPEC §10).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConsolidationConfig {
    /// Only memories recorded at least this many days ago (`LEVH_CONSOLIDATE_AFTER_DAYS`, 30).
    pub after_days: f64,
    /// How often `levh serve` consolidates, in hours; 0 never (`LEVH_CONSOLIDATE_EVERY_HOURS`,
    /// 0: off until asked for — on the labelled sets about half the pairs a run merges
    /// belong to different threads, so a person should look at `--dry-run` first).
    pub every_hours: f64,
    /// Similarity from which two memories are related, with a semantic embedder: the mean
    /// of their vectors' cosine and their TF-IDF cosine (`LEVH_CONSOLIDATE_SIMILARITY`,
    /// 0.125). Chosen by `levh eval consolidation` across the sets in
    /// `fixtures/consolidation/`, each set's threshold chosen on the other two (README).
    pub semantic_similarity: f64,
    /// The same with the hash embedder: cosine of the two texts' TF-IDF word weights
    /// (`LEVH_CONSOLIDATE_LEXICAL_SIMILARITY`, 0.025: every pair of a cluster shares an
    /// uncommon word).
    pub lexical_similarity: f64,
}

impl Default for ConsolidationConfig {
    fn default() -> Self {
        Self {
            after_days: 30.0,
            every_hours: 0.0,
            semantic_similarity: 0.125,
            lexical_similarity: 0.025,
        }
    }
}

impl ConsolidationConfig {
    /// The threshold for the measure in use.
    pub fn threshold(&self, semantic: bool) -> f64 {
        if semantic {
            self.semantic_similarity
        } else {
            self.lexical_similarity
        }
    }
}

/// Allowed range of a numeric setting.
#[derive(Clone, Copy)]
enum Range {
    /// > 0
    Positive,
    /// 0 ..= 1
    Unit,
    /// 0 < x <= 1
    Factor,
    /// >= 0
    NonNegative,
}

fn read(
    lookup: &dyn Fn(&str) -> Option<String>,
    key: &str,
    range: Range,
    target: &mut f64,
) -> Result<(), ConfigError> {
    let Some(raw) = lookup(key) else {
        return Ok(());
    };
    let error = |message: &str| ConfigError {
        key: key.to_owned(),
        value: raw.clone(),
        message: message.to_owned(),
    };
    let value: f64 = raw.trim().parse().map_err(|_| error("not a number"))?;
    if !value.is_finite() {
        return Err(error("not a finite number (too large, or NaN)"));
    }
    let ok = match range {
        Range::Positive => value > 0.0,
        Range::Unit => (0.0..=1.0).contains(&value),
        Range::Factor => value > 0.0 && value <= 1.0,
        Range::NonNegative => value >= 0.0,
    };
    if !ok {
        return Err(error(match range {
            Range::Positive => "must be greater than 0",
            Range::Unit => "must be between 0 and 1",
            Range::Factor => "must be greater than 0 and at most 1",
            Range::NonNegative => "must be 0 or more",
        }));
    }
    *target = value;
    Ok(())
}

impl Config {
    /// Defaults overridden by whatever `lookup` knows (`LEVH_*` names).
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        let m = &mut config.model;
        read(
            lookup,
            "LEVH_STABILITY_HOURS",
            Range::Positive,
            &mut m.initial_stability_hours,
        )?;
        read(lookup, "LEVH_GAIN", Range::NonNegative, &mut m.gain)?;
        read(
            lookup,
            "LEVH_MAX_STABILITY_HOURS",
            Range::Positive,
            &mut m.max_stability_hours,
        )?;
        read(
            lookup,
            "LEVH_WEAKEN_FACTOR",
            Range::Factor,
            &mut m.weaken_factor,
        )?;
        read(
            lookup,
            "LEVH_MIN_STABILITY_HOURS",
            Range::Positive,
            &mut m.min_stability_hours,
        )?;
        read(
            lookup,
            "LEVH_INTERFERENCE_THRESHOLD",
            Range::Unit,
            &mut m.interference_threshold,
        )?;
        read(
            lookup,
            "LEVH_INTERFERENCE_LEXICAL_THRESHOLD",
            Range::Unit,
            &mut m.interference_lexical_threshold,
        )?;
        read(
            lookup,
            "LEVH_INTERFERENCE_FACTOR",
            Range::Factor,
            &mut m.interference_factor,
        )?;
        read(
            lookup,
            "LEVH_FADING_THRESHOLD",
            Range::Unit,
            &mut m.fading_threshold,
        )?;
        read(
            lookup,
            "LEVH_WORKING_STABILITY_HOURS",
            Range::Positive,
            &mut m.working_stability_hours,
        )?;
        read(
            lookup,
            "LEVH_PROMOTE_IMPORTANCE",
            Range::Unit,
            &mut m.promote_importance,
        )?;
        let c = &mut config.consolidation;
        read(
            lookup,
            "LEVH_CONSOLIDATE_AFTER_DAYS",
            Range::NonNegative,
            &mut c.after_days,
        )?;
        read(
            lookup,
            "LEVH_CONSOLIDATE_EVERY_HOURS",
            Range::NonNegative,
            &mut c.every_hours,
        )?;
        read(
            lookup,
            "LEVH_CONSOLIDATE_SIMILARITY",
            Range::Unit,
            &mut c.semantic_similarity,
        )?;
        read(
            lookup,
            "LEVH_CONSOLIDATE_LEXICAL_SIMILARITY",
            Range::Unit,
            &mut c.lexical_similarity,
        )?;
        let r = &mut config.ranking;
        read(
            lookup,
            "LEVH_HSCORE_ALPHA",
            Range::NonNegative,
            &mut r.alpha,
        )?;
        read(lookup, "LEVH_HSCORE_BETA", Range::NonNegative, &mut r.beta)?;
        read(
            lookup,
            "LEVH_HSCORE_GAMMA",
            Range::NonNegative,
            &mut r.gamma,
        )?;
        read(
            lookup,
            "LEVH_HSCORE_DELTA",
            Range::NonNegative,
            &mut r.delta,
        )?;
        let mut candidates = config.recall.candidates as f64;
        read(
            lookup,
            "LEVH_RECALL_CANDIDATES",
            Range::Positive,
            &mut candidates,
        )?;
        config.recall.candidates = candidates.round().max(1.0) as usize;
        if lookup("LEVH_RECALL_MIN_SIMILARITY").is_some() {
            let mut floor = 0.0;
            read(
                lookup,
                "LEVH_RECALL_MIN_SIMILARITY",
                Range::Unit,
                &mut floor,
            )?;
            config.recall.min_similarity = Some(floor);
        }
        if let Some(raw) = lookup("LEVH_LOG_QUERIES") {
            config.recall.log_queries = match raw.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" | "" => false,
                _ => {
                    return Err(ConfigError {
                        key: "LEVH_LOG_QUERIES".into(),
                        value: raw.clone(),
                        message: "expected 1/true/yes/on or 0/false/no/off".into(),
                    });
                }
            };
        }
        let f = &mut config.recall.fusion;
        if let Some(raw) = lookup("LEVH_FUSION") {
            f.method = raw.parse().map_err(|message| ConfigError {
                key: "LEVH_FUSION".into(),
                value: raw.clone(),
                message,
            })?;
        }
        read(
            lookup,
            "LEVH_FUSION_SEMANTIC_WEIGHT",
            Range::Unit,
            &mut f.semantic_weight,
        )?;
        read(
            lookup,
            "LEVH_FUSION_HASH_WEIGHT",
            Range::Unit,
            &mut f.hash_weight,
        )?;
        read(
            lookup,
            "LEVH_FUSION_RRF_K",
            Range::NonNegative,
            &mut f.rrf_k,
        )?;
        read(
            lookup,
            "LEVH_FUSION_TEMPORAL_BOOST",
            Range::Unit,
            &mut f.temporal_boost,
        )?;
        let g = &mut config.gate;
        let mut min_chars = g.min_chars as f64;
        read(
            lookup,
            "LEVH_GATE_MIN_CHARS",
            Range::Positive,
            &mut min_chars,
        )?;
        let mut max_chars = g.max_chars as f64;
        read(
            lookup,
            "LEVH_GATE_MAX_CHARS",
            Range::Positive,
            &mut max_chars,
        )?;
        for (key, value) in [
            ("LEVH_GATE_MIN_CHARS", min_chars),
            ("LEVH_GATE_MAX_CHARS", max_chars),
        ] {
            if value.fract() != 0.0 || value > 1e9 {
                return Err(ConfigError {
                    key: key.into(),
                    value: value.to_string(),
                    message: "must be a whole number of characters".into(),
                });
            }
        }
        g.min_chars = min_chars as usize;
        g.max_chars = max_chars as usize;
        if g.min_chars > g.max_chars {
            return Err(ConfigError {
                key: "LEVH_GATE_MIN_CHARS".into(),
                value: g.min_chars.to_string(),
                message: "must not exceed LEVH_GATE_MAX_CHARS".into(),
            });
        }
        read(
            lookup,
            "LEVH_GATE_REJECT_SIMILARITY",
            Range::Unit,
            &mut g.reject_similarity,
        )?;
        read(
            lookup,
            "LEVH_GATE_REVIEW_SIMILARITY",
            Range::Unit,
            &mut g.review_similarity,
        )?;
        read(
            lookup,
            "LEVH_GATE_LEXICAL_REJECT",
            Range::Unit,
            &mut g.lexical_reject_similarity,
        )?;
        read(
            lookup,
            "LEVH_GATE_LEXICAL_REVIEW",
            Range::Unit,
            &mut g.lexical_review_similarity,
        )?;
        read(
            lookup,
            "LEVH_GATE_LEXICAL_AGREEMENT",
            Range::Unit,
            &mut g.lexical_agreement,
        )?;
        for (review, reject, key) in [
            (
                g.review_similarity,
                g.reject_similarity,
                "LEVH_GATE_REVIEW_SIMILARITY",
            ),
            (
                g.lexical_review_similarity,
                g.lexical_reject_similarity,
                "LEVH_GATE_LEXICAL_REVIEW",
            ),
        ] {
            if review > reject {
                return Err(ConfigError {
                    key: key.into(),
                    value: review.to_string(),
                    message: format!("must not exceed the duplicate threshold ({reject})"),
                });
            }
        }
        if lookup("LEVH_GATE_HELD_EXPIRY_HOURS").is_some() {
            let mut hours = 0.0;
            read(
                lookup,
                "LEVH_GATE_HELD_EXPIRY_HOURS",
                Range::Positive,
                &mut hours,
            )?;
            g.held_expiry_hours = Some(hours);
        }

        if config.model.min_stability_hours > config.model.max_stability_hours {
            return Err(ConfigError {
                key: "LEVH_MIN_STABILITY_HOURS".into(),
                value: config.model.min_stability_hours.to_string(),
                message: "must not exceed LEVH_MAX_STABILITY_HOURS".into(),
            });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_numbers() {
        let c = Config::default();
        assert_eq!(c.model.initial_stability_hours, 168.0);
        assert_eq!(c.model.gain, 0.5);
        assert_eq!(c.model.max_stability_hours, 8760.0);
        assert_eq!(c.model.weaken_factor, 0.5);
        assert_eq!(c.model.interference_threshold, 0.80);
        assert_eq!(c.model.interference_lexical_threshold, 0.50);
        assert_eq!(c.model.interference_factor, 0.6);
        assert_eq!(c.model.fading_threshold, 0.35);
        assert_eq!(
            (
                c.ranking.alpha,
                c.ranking.beta,
                c.ranking.gamma,
                c.ranking.delta
            ),
            (0.4, 0.2, 0.3, 0.1)
        );
    }

    #[test]
    fn overrides_apply_and_bad_values_name_the_variable() {
        let c = Config::from_lookup(&|k| (k == "LEVH_GAIN").then(|| "1.0".to_owned())).unwrap();
        assert_eq!(c.model.gain, 1.0);
        let err = Config::from_lookup(&|k| (k == "LEVH_WEAKEN_FACTOR").then(|| "2".to_owned()))
            .unwrap_err();
        assert!(
            err.to_string().starts_with("LEVH_WEAKEN_FACTOR=\"2\""),
            "{err}"
        );
        let err = Config::from_lookup(&|k| (k == "LEVH_HSCORE_ALPHA").then(|| "x".to_owned()))
            .unwrap_err();
        assert!(err.to_string().contains("not a number"), "{err}");
    }

    #[test]
    fn the_gate_settings_are_read_and_checked() {
        let c = Config::from_lookup(&|k| match k {
            "LEVH_GATE_MIN_CHARS" => Some("50".into()),
            "LEVH_GATE_LEXICAL_REVIEW" => Some("0.6".into()),
            "LEVH_GATE_HELD_EXPIRY_HOURS" => Some("48".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(c.gate.min_chars, 50);
        assert_eq!(c.gate.lexical_review_similarity, 0.6);
        assert_eq!(c.gate.held_expiry_hours, Some(48.0));
        for (key, value, says) in [
            ("LEVH_GATE_MIN_CHARS", "abc", "not a number"),
            ("LEVH_GATE_MIN_CHARS", "2.5", "whole number"),
            ("LEVH_GATE_MAX_CHARS", "0", "greater than 0"),
            ("LEVH_GATE_REVIEW_SIMILARITY", "0.99", "duplicate threshold"),
            ("LEVH_GATE_LEXICAL_REJECT", "1.5", ""),
            ("LEVH_GATE_MAX_CHARS", "1e999", "not a finite number"),
        ] {
            let err = Config::from_lookup(&|k| (k == key).then(|| value.to_owned())).unwrap_err();
            assert!(err.to_string().starts_with(key), "{key}={value}: {err}");
            assert!(err.to_string().contains(says), "{key}={value}: {err}");
        }
    }
}
