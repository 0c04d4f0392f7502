//! `levh tune`: recall's settings fitted to a user's own labelled conversations, with the
//! gain measured on questions the fit never saw.
//!
//! The dataset (the conversational benchmark's format) is stored once through the gate on
//! a throwaway store; then every question is ranked under each setting of a small grid —
//! the fusion weight (the vector side's share of relevance for this embedder) and the
//! boost of a memory in a period the question names. Cross-validation decides: the
//! conversations are split into folds (the questions, when there is one conversation);
//! for each fold the setting with the best MRR on the *other* folds is scored on it, and
//! the current settings are scored on it too. The report is the difference, summed over
//! every question: a setting that only fits the questions it was chosen on shows no gain.
//!
//! The H-score's other terms (retention, importance, recall frequency) are not searched:
//! a set stored at once has every memory equally new, important and unrecalled, so those
//! terms rank nothing in it and any weight for them would be a guess.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Result, bail};
use levh_core::{Config, Embedder};
use serde::{Deserialize, Serialize};

use crate::conversational::{Dataset, KindScore, ingest_for_tuning, rank_for_tuning};

/// The fusion weights tried (the vector side's share of relevance).
pub const WEIGHTS: [f64; 9] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// The temporal boosts tried.
pub const TEMPORAL_BOOSTS: [f64; 4] = [0.0, 0.05, 0.1, 0.2];

/// One setting of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// The vector side's share of relevance for this embedder.
    pub fusion_weight: f64,
    /// Added to the relevance of a memory in a period the question names.
    pub temporal_boost: f64,
}

/// What `levh tune` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TuneReport {
    /// The dataset.
    pub dataset: String,
    /// `semantic` or `lexical`.
    pub measure: String,
    /// Questions asked.
    pub questions: usize,
    /// Folds of the cross-validation, and what they split (`conversations` or `questions`).
    pub folds: usize,
    /// What the folds split.
    pub split_by: String,
    /// The settings in force when tuning ran.
    pub current: Setting,
    /// The best setting on every question (what `--write` saves).
    pub chosen: Setting,
    /// The current settings on every question (nothing fitted: the baseline).
    pub current_score: KindScore,
    /// The chosen setting on every question (fitted on them: optimistic).
    pub chosen_score: KindScore,
    /// Every question scored by a setting chosen without it, fold by fold.
    pub held_out_tuned: KindScore,
    /// `held_out_tuned.mrr - current_score.mrr`: the gain to expect on new questions.
    pub held_out_gain: f64,
    /// The setting each fold chose on the others, in fold order: when they disagree the
    /// data do not pin the setting down.
    pub fold_choices: Vec<Setting>,
    /// Evidence turns the gate did not store (they cannot be found by any setting).
    pub evidence_not_stored: usize,
}

impl TuneReport {
    /// Whether the chosen setting is worth saving: it gains on held-out questions.
    pub fn worth_saving(&self) -> bool {
        self.held_out_gain > 0.0 && self.chosen != self.current
    }
}

/// Stores `dataset` once and cross-validates the grid with `folds` folds (at least 2).
pub fn tune(
    dataset: &Dataset,
    embedder: Arc<dyn Embedder>,
    config: Config,
    folds: usize,
) -> Result<TuneReport> {
    if folds < 2 {
        bail!("--folds must be at least 2 (got {folds}): one fold leaves nothing to fit on");
    }
    let semantic = embedder.is_semantic();
    let measure = crate::measure_name(embedder.as_ref()).to_owned();
    let current = Setting {
        fusion_weight: config.recall.fusion.vector_weight(semantic),
        temporal_boost: config.recall.fusion.temporal_boost,
    };
    let mut grid: Vec<Setting> = WEIGHTS
        .iter()
        .flat_map(|&fusion_weight| {
            TEMPORAL_BOOSTS.iter().map(move |&temporal_boost| Setting {
                fusion_weight,
                temporal_boost,
            })
        })
        .collect();
    if !grid.contains(&current) {
        grid.push(current);
    }

    let ingested = ingest_for_tuning(dataset, embedder, config)?;
    // Every question's rank under every setting, in one order.
    let mut ranks: Vec<Vec<Option<usize>>> = Vec::with_capacity(grid.len());
    let mut conversations: Vec<String> = Vec::new();
    for setting in &grid {
        let mut tuned = config;
        if semantic {
            tuned.recall.fusion.semantic_weight = setting.fusion_weight;
        } else {
            tuned.recall.fusion.hash_weight = setting.fusion_weight;
        }
        tuned.recall.fusion.temporal_boost = setting.temporal_boost;
        let outcomes = rank_for_tuning(dataset, &ingested, tuned)?;
        if conversations.is_empty() {
            conversations = outcomes.iter().map(|o| o.conversation.clone()).collect();
        }
        ranks.push(outcomes.iter().map(|o| o.rank).collect());
    }
    let questions = conversations.len();
    if questions == 0 {
        bail!(
            "dataset {} has no question to tune on",
            dataset.manifest.name
        );
    }

    // Folds: whole conversations when there are enough, so a fold's questions are about
    // turns the fit never ranked; otherwise questions dealt round-robin.
    let mut distinct: Vec<&String> = conversations.iter().collect();
    distinct.dedup();
    let (fold_of, folds, split_by): (Vec<usize>, usize, &str) = if distinct.len() >= folds {
        let index: HashMap<&String, usize> = distinct
            .iter()
            .enumerate()
            .map(|(i, c)| (*c, i % folds))
            .collect();
        (
            conversations.iter().map(|c| index[c]).collect(),
            folds,
            "conversations",
        )
    } else {
        let folds = folds.min(questions);
        (
            (0..questions).map(|q| q % folds).collect(),
            folds,
            "questions",
        )
    };

    let mrr_over = |setting: usize, keep: &dyn Fn(usize) -> bool| -> f64 {
        let (sum, n) = ranks[setting]
            .iter()
            .enumerate()
            .filter(|(q, _)| keep(*q))
            .fold((0.0, 0usize), |(sum, n), (_, r)| {
                (sum + r.map_or(0.0, |r| 1.0 / r as f64), n + 1)
            });
        sum / n.max(1) as f64
    };
    // The best setting by MRR on the kept questions; ties go to the current setting, then
    // to the earlier in the grid, so a flat response changes nothing.
    let current_index = grid
        .iter()
        .position(|s| *s == current)
        .expect("in the grid");
    let best_on = |keep: &dyn Fn(usize) -> bool| -> usize {
        let mut best = (current_index, mrr_over(current_index, keep));
        for setting in 0..grid.len() {
            let mrr = mrr_over(setting, keep);
            if mrr > best.1 + 1e-12 {
                best = (setting, mrr);
            }
        }
        best.0
    };

    let mut held_out_tuned = vec![None; questions];
    let mut fold_choices = Vec::with_capacity(folds);
    for fold in 0..folds {
        let choice = best_on(&|q| fold_of[q] != fold);
        fold_choices.push(grid[choice]);
        for q in (0..questions).filter(|&q| fold_of[q] == fold) {
            held_out_tuned[q] = ranks[choice][q];
        }
    }
    let chosen = best_on(&|_| true);
    let held_out_tuned = KindScore::of_ranks("all", &held_out_tuned);
    let current_score = KindScore::of_ranks("all", &ranks[current_index]);
    Ok(TuneReport {
        dataset: dataset.manifest.name.clone(),
        measure,
        questions,
        folds,
        split_by: split_by.to_owned(),
        current,
        chosen: grid[chosen],
        chosen_score: KindScore::of_ranks("all", &ranks[chosen]),
        held_out_gain: held_out_tuned.mrr - current_score.mrr,
        current_score,
        held_out_tuned,
        fold_choices,
        evidence_not_stored: ingested.evidence_not_stored(),
    })
}
