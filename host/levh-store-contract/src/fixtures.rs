//! What the contract's functions build their memories from.

use levh_core::{
    AdmissionRecord, AdmissionVerdict, Embedding, Kind, Memory, MemoryId, MemoryState,
    NewMemoryRecord, Timestamp, Workspace, text,
};

use crate::Contracted;

/// A backend's store as a test holds it, with whatever must outlive it (a directory).
pub trait Opened {
    /// The store under test.
    fn store(&self) -> &dyn Contracted;
}

/// A fixed instant `second`s after 2023-11-14 22:13:20 UTC.
pub fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).expect("a time in range")
}

/// A memory of `workspace` and `project`, recorded and valid from `at(second)`, with a
/// vector of model `test-model` when given.
pub fn record(
    content: &str,
    second: i64,
    workspace: &str,
    project: Option<&str>,
    vector: Option<Vec<f32>>,
) -> NewMemoryRecord {
    let now = at(second);
    NewMemoryRecord {
        memory: Memory {
            id: MemoryId::new_at(now),
            workspace: Workspace::new(workspace).expect("a valid workspace"),
            project: project.map(str::to_owned),
            content_hash: text::content_hash(content),
            content: content.to_owned(),
            kind: Kind::default(),
            source: "contract".into(),
            state: MemoryState {
                importance: 0.5,
                pinned: false,
                stability_hours: 168.0,
                last_recalled_at: None,
                recall_count: 0,
                created_at: now,
            },
            valid_from: now,
            valid_to: None,
            superseded_by: None,
            admission: AdmissionRecord {
                verdict: AdmissionVerdict::Admit,
                reasons: vec![],
                decided_by: "contract".into(),
            },
            metadata: serde_json::json!({}),
            session_id: None,
            embedding_model: vector.as_ref().map(|_| "test-model".to_owned()),
            embedding_dimension: vector.as_ref().map(|v| v.len() as u32),
        },
        embedding: vector.map(|vector| Embedding {
            model: "test-model".into(),
            vector,
        }),
        near_duplicate_keys: text::near_duplicate_keys(content),
        working: false,
        forgotten_at: None,
    }
}

/// A unit vector along `direction` (normalised), as embedders give them.
pub(crate) fn unit(direction: &[f32]) -> Vec<f32> {
    let norm = direction.iter().map(|x| x * x).sum::<f32>().sqrt();
    direction.iter().map(|x| x / norm).collect()
}
