//! Texts kept outside memories' content, as a secret audit reads and rewrites them.

use levh_core::sync::{ItemOutcome, SyncedItem};
use levh_core::{Actor, HeldField, Role, TextPlace, Workspace};

use crate::held::candidate;
use crate::{Contracted, at, record};

/// Every text kept outside memories' content — a memory's kind, a held candidate's
/// fields, a synced item's id, a token's label — is listed with its place, and each can
/// be rewritten in place (a held candidate's hash follows its content), logged as a
/// redaction; a place that is gone says so.
pub fn texts_outside_contents_are_listed_and_rewritten_in_place(store: &dyn Contracted) {
    let workspace = Workspace::default();
    let new = record("a memory with an odd kind", 0, "default", None, None);
    store.insert(&new, &[], &|_| None, &Actor::cli()).unwrap();
    let held = candidate("held text with sk-secret", 10, None);
    store.insert_held(&held, &Actor::cli()).unwrap();
    let item = SyncedItem {
        content_hash: "h".into(),
        memory_id: None,
        held_id: None,
        verdict: ItemOutcome::Reject,
    };
    store
        .record_synced_item(&workspace, "mail", "<id-sk-secret@x>", &item, at(20))
        .unwrap();
    let token = store
        .issue_token(&workspace, Role::Viewer, Some("label sk-secret"), at(30))
        .unwrap();

    let texts = store.placed_texts(&workspace).unwrap();
    let text_at = |place: &TextPlace| {
        texts
            .iter()
            .find(|t| &t.place == place)
            .map(|t| t.text.clone())
    };
    assert_eq!(
        text_at(&TextPlace::MemoryKind(new.memory.id)).as_deref(),
        Some("note")
    );
    let held_place = |field| TextPlace::Held { id: held.id, field };
    assert_eq!(
        text_at(&held_place(HeldField::Content)),
        Some(held.content.clone())
    );
    assert_eq!(
        text_at(&held_place(HeldField::Project)).as_deref(),
        Some("atlas")
    );
    let metadata: serde_json::Value =
        serde_json::from_str(&text_at(&held_place(HeldField::Metadata)).unwrap()).unwrap();
    assert_eq!(metadata, held.metadata);
    let synced = TextPlace::SyncedItem {
        connector: "mail".into(),
        source_id: "<id-sk-secret@x>".into(),
    };
    assert_eq!(text_at(&synced).as_deref(), Some("<id-sk-secret@x>"));
    let label = TextPlace::TokenLabel(token.info.id.clone());
    assert_eq!(text_at(&label).as_deref(), Some("label sk-secret"));
    assert_eq!(texts.len(), 1 + 5 + 1 + 1);

    let start = store.last_event_seq().unwrap();
    let rewrite = |place: &TextPlace, text: &str| {
        store
            .rewrite_placed_text(&workspace, place, text, at(40), &Actor::cli())
            .unwrap()
    };
    assert!(rewrite(
        &held_place(HeldField::Content),
        "held text with [REDACTED:key]"
    ));
    let hash = levh_core::text::content_hash("held text with [REDACTED:key]");
    assert_eq!(
        store
            .waiting_held(&workspace, Some("atlas"), &hash)
            .unwrap()
            .map(|h| h.id),
        Some(held.id)
    );
    assert!(rewrite(
        &held_place(HeldField::Metadata),
        r#"{"from":"[REDACTED:key]"}"#
    ));
    assert_eq!(
        store
            .get_held(&workspace, held.id)
            .unwrap()
            .unwrap()
            .metadata,
        serde_json::json!({ "from": "[REDACTED:key]" })
    );
    assert!(rewrite(&synced, "<id-[REDACTED:key]@x>"));
    assert!(
        store
            .synced_item(&workspace, "mail", "<id-sk-secret@x>")
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store
            .synced_item(&workspace, "mail", "<id-[REDACTED:key]@x>")
            .unwrap(),
        Some(item)
    );
    assert!(rewrite(&label, "label [REDACTED:key]"));
    assert_eq!(
        store.workspace_tokens(&workspace).unwrap()[0]
            .label
            .as_deref(),
        Some("label [REDACTED:key]")
    );
    assert!(rewrite(&TextPlace::MemoryKind(new.memory.id), "decision"));
    assert_eq!(
        store
            .get(&workspace, new.memory.id)
            .unwrap()
            .unwrap()
            .kind
            .as_str(),
        "decision"
    );
    assert!(!rewrite(&TextPlace::TokenLabel("tok_gone".into()), "x"));
    let logged = store.events_after(start, 10).unwrap();
    assert_eq!(logged.len(), 5);
    assert!(logged.iter().all(|e| e.kind == "redact"));
    assert_eq!(logged[4].memory_id, Some(new.memory.id));
}
