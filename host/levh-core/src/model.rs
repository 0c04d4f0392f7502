//! The memory model of SPEC §3, as pure functions of a [`MemoryState`], a
//! [`ModelConfig`] and a `now` passed in.
//!
//! ```text
//! retention(t) = 0.5 ^ (hours_since_last_recall / stability_hours)        pinned → 1
//! reinforce:     stability = min(stability × (1 + gain·(0.5 + importance)), max)
//!                last_recalled_at = now; recall_count += 1
//! unhelpful:     stability = max(stability × weaken_factor, min)   (clock NOT reset)
//! interference:  stability = max(stability × interference_factor, min)   (never pinned)
//! ```

use crate::time::{add_hours, hours_between};
use crate::{MemoryState, ModelConfig, Timestamp};

/// Retention at `now`, in 0..=1. Pinned memories never decay. A `now` before the clock
/// start counts as no time elapsed.
pub fn retention(state: &MemoryState, now: Timestamp) -> f64 {
    if state.pinned {
        return 1.0;
    }
    let elapsed = hours_between(state.clock_start(), now).max(0.0);
    0.5f64.powf(elapsed / state.stability_hours)
}

/// Whether the memory is fading at `now` (retention below the configured threshold).
pub fn is_fading(state: &MemoryState, config: &ModelConfig, now: Timestamp) -> bool {
    retention(state, now) < config.fading_threshold
}

/// The state after a recall or an explicit reinforcement (or helpful feedback).
pub fn reinforce(state: &MemoryState, config: &ModelConfig, now: Timestamp) -> MemoryState {
    let growth = 1.0 + config.gain * (0.5 + state.importance);
    MemoryState {
        stability_hours: (state.stability_hours * growth).min(config.max_stability_hours),
        last_recalled_at: Some(now),
        recall_count: state.recall_count.saturating_add(1),
        ..*state
    }
}

/// The state after unhelpful feedback: weaker, with the decay clock left where it was, so
/// retention drops at once instead of being refreshed.
pub fn weaken(state: &MemoryState, config: &ModelConfig) -> MemoryState {
    MemoryState {
        stability_hours: (state.stability_hours * config.weaken_factor)
            .max(config.min_stability_hours),
        ..*state
    }
}

/// The state of an older memory after a newer, very similar one was stored, or `None`
/// when it is pinned (pinned memories are immune).
pub fn interfere(state: &MemoryState, config: &ModelConfig) -> Option<MemoryState> {
    if state.pinned {
        return None;
    }
    Some(MemoryState {
        stability_hours: (state.stability_hours * config.interference_factor)
            .max(config.min_stability_hours),
        ..*state
    })
}

/// Retention predicted at `now + days` for `days` in `0..=horizon_days`, assuming no
/// recall happens in between.
pub fn forgetting_curve(
    state: &MemoryState,
    now: Timestamp,
    horizon_days: u32,
) -> Vec<(u32, Timestamp, f64)> {
    (0..=horizon_days)
        .map(|day| {
            let at = add_hours(now, f64::from(day) * 24.0);
            (day, at, retention(state, at))
        })
        .collect()
}

/// When retention will cross the fading threshold, if it ever will (never when pinned).
pub fn fades_at(state: &MemoryState, config: &ModelConfig) -> Option<Timestamp> {
    if state.pinned {
        return None;
    }
    // 0.5^(h/s) = θ  ⇒  h = s · log2(1/θ)
    let hours = state.stability_hours * (1.0 / config.fading_threshold).log2();
    Some(add_hours(state.clock_start(), hours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(hours: f64) -> Timestamp {
        add_hours(Timestamp::from_second(1_767_225_600).unwrap(), hours)
    }

    fn fresh(importance: f64) -> MemoryState {
        MemoryState {
            importance,
            pinned: false,
            stability_hours: 168.0,
            last_recalled_at: None,
            recall_count: 0,
            created_at: at(0.0),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn retention_is_one_half_after_one_stability_period() {
        let s = fresh(0.5);
        assert!(close(retention(&s, at(0.0)), 1.0));
        assert!(close(retention(&s, at(168.0)), 0.5));
        assert!(close(retention(&s, at(336.0)), 0.25));
    }

    #[test]
    fn one_recall_at_importance_half_multiplies_stability_by_one_and_a_half() {
        let c = ModelConfig::default();
        let s = reinforce(&fresh(0.5), &c, at(10.0));
        assert!(close(s.stability_hours, 252.0), "{}", s.stability_hours);
        assert_eq!(s.last_recalled_at, Some(at(10.0)));
        assert_eq!(s.recall_count, 1);
        // importance 1.0: 168 × (1 + 0.5·1.5) = 294; importance 0: 168 × 1.25 = 210
        assert!(close(
            reinforce(&fresh(1.0), &c, at(0.0)).stability_hours,
            294.0
        ));
        assert!(close(
            reinforce(&fresh(0.0), &c, at(0.0)).stability_hours,
            210.0
        ));
    }

    #[test]
    fn unhelpful_feedback_halves_stability_and_keeps_the_clock() {
        let c = ModelConfig::default();
        let recalled = reinforce(&fresh(0.5), &c, at(10.0));
        let weakened = weaken(&recalled, &c);
        assert!(close(weakened.stability_hours, 126.0));
        assert_eq!(weakened.last_recalled_at, Some(at(10.0)));
        assert_eq!(weakened.recall_count, 1);
        // weakening never goes below one hour
        let mut s = fresh(0.5);
        for _ in 0..20 {
            s = weaken(&s, &c);
        }
        assert!(close(s.stability_hours, 1.0));
    }

    #[test]
    fn stability_is_capped_at_the_maximum() {
        let c = ModelConfig::default();
        let mut s = fresh(1.0);
        for i in 0..40 {
            s = reinforce(&s, &c, at(f64::from(i)));
        }
        assert!(close(s.stability_hours, 8760.0));
    }

    #[test]
    fn pinned_memories_do_not_decay_and_resist_interference() {
        let c = ModelConfig::default();
        let s = MemoryState {
            pinned: true,
            ..fresh(0.1)
        };
        assert_eq!(retention(&s, at(100_000.0)), 1.0);
        assert!(interfere(&s, &c).is_none());
        assert!(fades_at(&s, &c).is_none());
    }

    #[test]
    fn interference_multiplies_stability_by_the_factor() {
        let c = ModelConfig::default();
        let s = interfere(&fresh(0.5), &c).unwrap();
        assert!(close(s.stability_hours, 168.0 * 0.6));
    }

    #[test]
    fn fading_starts_where_retention_crosses_the_threshold() {
        let c = ModelConfig::default();
        let s = fresh(0.5);
        let when = fades_at(&s, &c).unwrap();
        let hours = hours_between(s.created_at, when);
        assert!(close(hours, 168.0 * (1.0f64 / 0.35).log2()));
        assert!(!is_fading(&s, &c, add_hours(when, -1.0)));
        assert!(is_fading(&s, &c, add_hours(when, 1.0)));
    }

    #[test]
    fn the_curve_starts_at_now_and_has_one_point_per_day() {
        let curve = forgetting_curve(&fresh(0.5), at(0.0), 7);
        assert_eq!(curve.len(), 8);
        assert!(close(curve[0].2, 1.0));
        assert!(close(curve[7].2, 0.5));
    }

    fn any_state() -> impl Strategy<Value = MemoryState> {
        (
            0.0f64..=1.0,
            any::<bool>(),
            1.0f64..=8760.0,
            proptest::option::of(0.0f64..1000.0),
            0u32..500,
        )
            .prop_map(
                |(importance, pinned, stability_hours, recalled, recall_count)| MemoryState {
                    importance,
                    pinned,
                    stability_hours,
                    last_recalled_at: recalled.map(at),
                    recall_count,
                    created_at: at(0.0),
                },
            )
    }

    proptest! {
        #[test]
        fn retention_never_rises_without_a_recall(s in any_state(), t1 in 0.0f64..20_000.0, dt in 0.0f64..20_000.0) {
            prop_assert!(retention(&s, at(t1 + dt)) <= retention(&s, at(t1)) + 1e-12);
        }

        #[test]
        fn retention_stays_between_zero_and_one(s in any_state(), t in -1000.0f64..100_000.0) {
            let r = retention(&s, at(t));
            prop_assert!((0.0..=1.0).contains(&r));
        }

        #[test]
        fn negative_feedback_never_resets_the_clock(s in any_state(), t in 0.0f64..20_000.0) {
            let c = ModelConfig::default();
            let w = weaken(&s, &c);
            prop_assert_eq!(w.last_recalled_at, s.last_recalled_at);
            prop_assert_eq!(w.recall_count, s.recall_count);
            prop_assert!(w.stability_hours <= s.stability_hours);
            prop_assert!(retention(&w, at(t)) <= retention(&s, at(t)) + 1e-12);
        }

        #[test]
        fn stability_never_exceeds_the_max(s in any_state(), recalls in 0usize..60, gain in 0.0f64..5.0) {
            let c = ModelConfig { gain, ..ModelConfig::default() };
            let mut state = s;
            for i in 0..recalls {
                state = reinforce(&state, &c, at(i as f64));
                prop_assert!(state.stability_hours <= c.max_stability_hours);
            }
        }

        #[test]
        fn a_recall_never_lowers_retention_or_stability(s in any_state(), t in 1000.0f64..20_000.0) {
            let c = ModelConfig::default();
            let r = reinforce(&s, &c, at(t));
            prop_assert!(r.stability_hours >= s.stability_hours.min(c.max_stability_hours));
            prop_assert!(retention(&r, at(t)) >= retention(&s, at(t)));
        }
    }
}
