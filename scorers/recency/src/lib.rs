//! The `recency` scorer: among relevant memories, the newest wins.
//!
//! For agents whose world changes fast (on-call notes, a project's current state), the
//! latest relevant memory matters more than the most reinforced one. The score (lower is
//! better) is mostly age on a log scale, so an hour-old note beats a day-old one and a
//! week-old one beats a month-old one, plus a similarity term so that an irrelevant new
//! memory does not outrank a relevant one. Pinned rules still come first.

/// Weight of the age term; the rest goes to dissimilarity.
pub const AGE_WEIGHT: f64 = 0.7;
/// Age at which the age term saturates: a year.
pub const HORIZON_HOURS: f64 = 24.0 * 365.0;

/// One candidate's features, as the host sends them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    pub similarity: f64,
    pub age_hours: f64,
    pub pinned: bool,
}

/// Lower is better: 0 for a pinned, perfectly similar memory; about 1 for an unrelated
/// memory a year old.
pub fn score(f: Features) -> f64 {
    let age = (1.0 + f.age_hours.max(0.0)).ln() / (1.0 + HORIZON_HOURS).ln();
    let age = if f.pinned { 0.0 } else { age.min(1.0) };
    let dissimilarity = 1.0 - f.similarity.clamp(0.0, 1.0);
    AGE_WEIGHT * age + (1.0 - AGE_WEIGHT) * dissimilarity
}

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_scorer_sdk::{Candidate, Guest, Manifest};

    struct Recency;

    impl Guest for Recency {
        fn manifest() -> Manifest {
            levh_scorer_sdk::manifest(
                "recency",
                env!("CARGO_PKG_VERSION"),
                "Recency first: among relevant memories, the newest ranks highest",
            )
        }

        fn score(_query: String, candidates: Vec<Candidate>) -> Vec<f32> {
            candidates
                .iter()
                .map(|c| {
                    super::score(super::Features {
                        similarity: f64::from(c.similarity),
                        age_hours: f64::from(c.age_hours),
                        pinned: c.pinned,
                    }) as f32
                })
                .collect()
        }
    }

    levh_scorer_sdk::export_scorer!(Recency);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(similarity: f64, age_hours: f64) -> Features {
        Features {
            similarity,
            age_hours,
            pinned: false,
        }
    }

    #[test]
    fn the_newer_of_two_equally_relevant_memories_ranks_first() {
        assert!(score(f(0.6, 1.0)) < score(f(0.6, 24.0)));
        assert!(score(f(0.6, 24.0 * 7.0)) < score(f(0.6, 24.0 * 30.0)));
    }

    #[test]
    fn a_new_but_unrelated_memory_does_not_beat_a_relevant_recent_one() {
        // a day-old exact match vs. an hour-old unrelated note
        assert!(score(f(1.0, 24.0)) < score(f(0.0, 1.0)));
    }

    #[test]
    fn pinned_memories_lose_their_age_and_scores_stay_in_range() {
        let pinned = Features {
            pinned: true,
            ..f(1.0, 24.0 * 900.0)
        };
        assert_eq!(score(pinned), 0.0);
        assert!((score(f(0.0, 24.0 * 5000.0)) - 1.0).abs() < 1e-12);
        assert_eq!(score(f(1.0, 0.0)), 0.0);
        // nonsense inputs stay bounded
        assert!((0.0..=1.0).contains(&score(f(7.0, -3.0))));
    }
}
