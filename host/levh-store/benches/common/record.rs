//! The memory record both store benches insert: everything fixed but what a bench varies
//! (content, time, vector and near-duplicate keys), so `recall` and `ann` measure the same
//! shape of row.

use levh_core::{
    AdmissionRecord, Embedding, Kind, Memory, MemoryId, MemoryState, NewMemoryRecord, Timestamp,
    Workspace, text,
};

/// Memory `n` (project `project-{n % 10}`) with a vector of `model`.
pub fn record(
    content: String,
    at: Timestamp,
    n: u64,
    model: &str,
    vector: Vec<f32>,
    near_duplicate_keys: Vec<i64>,
) -> NewMemoryRecord {
    let dimension = vector.len() as u32;
    NewMemoryRecord {
        memory: Memory {
            id: MemoryId::new_at(at),
            workspace: Workspace::default(),
            project: Some(format!("project-{}", n % 10)),
            content_hash: text::content_hash(&content),
            content,
            kind: Kind::default(),
            source: "bench".into(),
            state: MemoryState {
                importance: 0.5,
                pinned: false,
                stability_hours: 168.0,
                last_recalled_at: None,
                recall_count: 0,
                created_at: at,
            },
            valid_from: at,
            valid_to: None,
            superseded_by: None,
            admission: AdmissionRecord {
                verdict: levh_core::AdmissionVerdict::Admit,
                reasons: vec![],
                decided_by: "bench".into(),
            },
            metadata: serde_json::json!({}),
            session_id: None,
            embedding_model: Some(model.to_owned()),
            embedding_dimension: Some(dimension),
        },
        embedding: Some(Embedding {
            model: model.to_owned(),
            vector,
        }),
        near_duplicate_keys,
        working: false,
        forgotten_at: None,
    }
}
