//! An erratic scorer: the query picks the misbehaviour (`panic`, `loop`, `short`, `nan`);
//! any other query gets a well-formed inverse-similarity ranking (the least similar
//! first), which the tests can tell apart from the H-score's.

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_scorer_sdk::{Candidate, Guest, Manifest};

    struct Erratic;

    impl Guest for Erratic {
        fn manifest() -> Manifest {
            levh_scorer_sdk::manifest("erratic", "0.0.1", "misbehaves when asked to")
        }

        fn score(query: String, candidates: Vec<Candidate>) -> Vec<f32> {
            if query.contains("panic") {
                panic!("the erratic scorer was asked to panic");
            }
            if query.contains("loop") {
                #[allow(clippy::empty_loop)]
                loop {}
            }
            if query.contains("short") {
                return vec![0.0];
            }
            if query.contains("nan") {
                return candidates.iter().map(|_| f32::NAN).collect();
            }
            candidates.iter().map(|c| c.similarity).collect()
        }
    }

    levh_scorer_sdk::export_scorer!(Erratic);
}
