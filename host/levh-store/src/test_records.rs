//! The memory record the store's unit tests insert: everything fixed but what a test
//! varies (content, time, labels, vector).

use levh_core::{
    AdmissionRecord, Embedding, Kind, Memory, MemoryId, MemoryState, NewMemoryRecord, Timestamp,
    Workspace, text,
};

/// A memory of `workspace` and `project` written at `at`, with `embedding` (model, vector).
pub(crate) fn record(
    content: String,
    at: Timestamp,
    workspace: &str,
    project: &str,
    embedding: Option<(&str, Vec<f32>)>,
) -> NewMemoryRecord {
    NewMemoryRecord {
        memory: Memory {
            id: MemoryId::new_at(at),
            workspace: Workspace::new(workspace).expect("a valid workspace"),
            project: Some(project.to_owned()),
            content_hash: text::content_hash(&content),
            content,
            kind: Kind::default(),
            source: "test".into(),
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
                decided_by: "test".into(),
            },
            metadata: serde_json::json!({}),
            session_id: None,
            embedding_model: embedding.as_ref().map(|(model, _)| (*model).to_owned()),
            embedding_dimension: embedding.as_ref().map(|(_, v)| v.len() as u32),
        },
        embedding: embedding.map(|(model, vector)| Embedding {
            model: model.to_owned(),
            vector,
        }),
        near_duplicate_keys: vec![],
        working: false,
        forgotten_at: None,
    }
}
