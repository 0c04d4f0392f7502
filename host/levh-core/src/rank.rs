//! Ranking (SPEC §4): H(x,ψ) = α·(1−similarity) + β·(1−retention) + γ·(1−importance) +
//! δ·(1−frequency). Lower is better; every score can explain its four terms.

use serde::Serialize;

use crate::RankingWeights;

/// Recalls after which frequency saturates at 1.
pub const FREQUENCY_SATURATION: f64 = 100.0;

/// frequency = min(recall_count / 100, 1).
pub fn frequency(recall_count: u32) -> f64 {
    (f64::from(recall_count) / FREQUENCY_SATURATION).min(1.0)
}

/// The four weighted terms of an H-score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HTerms {
    /// α·(1−similarity)
    pub similarity: f64,
    /// β·(1−retention)
    pub retention: f64,
    /// γ·(1−importance)
    pub importance: f64,
    /// δ·(1−frequency)
    pub frequency: f64,
}

/// An H-score with its inputs and terms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HScore {
    /// The sum of the terms; lower ranks first.
    pub score: f64,
    /// Similarity to the query, 0..=1.
    pub similarity: f64,
    /// Retention at recall time.
    pub retention: f64,
    /// Importance.
    pub importance: f64,
    /// Frequency of recall.
    pub frequency: f64,
    /// The weighted terms.
    pub terms: HTerms,
}

/// Scores one candidate. Inputs are clamped to 0..=1 so a stray cosine below zero cannot
/// push the score past its range.
pub fn h_score(
    weights: &RankingWeights,
    similarity: f64,
    retention: f64,
    importance: f64,
    frequency: f64,
) -> HScore {
    let [similarity, retention, importance, frequency] =
        [similarity, retention, importance, frequency].map(|x| x.clamp(0.0, 1.0));
    let terms = HTerms {
        similarity: weights.alpha * (1.0 - similarity),
        retention: weights.beta * (1.0 - retention),
        importance: weights.gamma * (1.0 - importance),
        frequency: weights.delta * (1.0 - frequency),
    };
    HScore {
        score: terms.similarity + terms.retention + terms.importance + terms.frequency,
        similarity,
        retention,
        importance,
        frequency,
        terms,
    }
}

/// What a scoring policy sees of one recall candidate (SPEC §6): the H-score's inputs,
/// plus age and pinning. Never the content: a policy ranks, it does not read memories.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Features {
    /// Similarity to the query, 0..=1.
    pub similarity: f64,
    /// Retention now, 0..=1.
    pub retention: f64,
    /// Importance, 0..=1.
    pub importance: f64,
    /// Frequency of recall, 0..=1.
    pub frequency: f64,
    /// Hours since the memory was recorded.
    pub age_hours: f64,
    /// Pinned memories never fade.
    pub pinned: bool,
}

/// A ranking policy that replaces the H-score step of recall (a scorer plugin). Lower
/// scores rank first, as with the H-score.
pub trait Scorer: Send + Sync + std::fmt::Debug {
    /// The policy's id, shown with every result it ranked.
    fn id(&self) -> &str;

    /// One score per candidate, in order. An error (or a wrong number of scores, or a
    /// score that is not a number) makes recall fall back to the H-score with a warning.
    fn score(&self, query: &str, candidates: &[Features]) -> Result<Vec<f64>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h_score_matches_hand_computed_values() {
        let w = RankingWeights::default();
        // sim .8, ret .5, imp .5, freq .1:
        // .4·.2 + .2·.5 + .3·.5 + .1·.9 = .08 + .10 + .15 + .09 = .42
        let h = h_score(&w, 0.8, 0.5, 0.5, frequency(10));
        assert!((h.score - 0.42).abs() < 1e-12, "{}", h.score);
        assert!((h.terms.similarity - 0.08).abs() < 1e-12);
        assert!((h.terms.frequency - 0.09).abs() < 1e-12);
        // a perfect memory scores 0, the worst scores α+β+γ+δ = 1
        assert_eq!(h_score(&w, 1.0, 1.0, 1.0, 1.0).score, 0.0);
        assert!((h_score(&w, 0.0, 0.0, 0.0, 0.0).score - 1.0).abs() < 1e-12);
    }

    #[test]
    fn frequency_saturates_at_one_hundred_recalls() {
        assert_eq!(frequency(0), 0.0);
        assert_eq!(frequency(50), 0.5);
        assert_eq!(frequency(100), 1.0);
        assert_eq!(frequency(1000), 1.0);
    }

    #[test]
    fn negative_cosine_is_clamped() {
        let h = h_score(&RankingWeights::default(), -0.3, 1.0, 1.0, 1.0);
        assert_eq!(h.similarity, 0.0);
        assert!((h.score - 0.4).abs() < 1e-12);
    }
}
