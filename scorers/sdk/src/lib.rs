//! levh-scorer-sdk: everything a scoring policy needs to be a levh plugin.
//!
//! A scorer replaces the H-score step of recall. It implements [`Guest`] (`manifest` and
//! `score`) and exports itself with [`export_scorer!`]. It sees each candidate's features
//! (similarity, retention, importance, frequency, age, pinned), never its content, and
//! returns one score per candidate; lower ranks first. It gets no files, no network and
//! no clock it could use to leak anything: it only computes.
//!
//! ```text
//! struct Recency;
//! impl levh_scorer_sdk::Guest for Recency { /* manifest(), score() */ }
//! levh_scorer_sdk::export_scorer!(Recency);
//! ```

/// The generated bindings of the `scorer` world. Deliberately of the 0.1.0 package: 0.1.1
/// added nothing a scorer uses, and scorers built against it show that a guest of an older
/// 0.1 release runs on this host's 0.1.1 bindings.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "scorer",
        path: "../../wit/levh-plugin@0.1.0",
        default_bindings_module: "levh_scorer_sdk::bindings",
        pub_export_macro: true,
        export_macro_name: "export_scorer",
    });
}

pub use bindings::levh::plugin::host::{Level, log};
pub use bindings::levh::plugin::types::{Candidate, Manifest};
pub use bindings::{Guest, export_scorer};

/// The plugin API version this SDK implements; stamped into every manifest.
pub const API_VERSION: &str = "0.1.0";

/// A scorer's manifest: scorers take no config and ask for no capabilities.
pub fn manifest(id: &str, version: &str, description: &str) -> Manifest {
    Manifest {
        id: id.into(),
        version: version.into(),
        description: description.into(),
        api_version: API_VERSION.into(),
        config: Vec::new(),
        capabilities: Vec::new(),
    }
}
