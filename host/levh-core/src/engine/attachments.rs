//! Files attached to memories: the file's derived text becomes a memory of its own (kind
//! `attachment`, through the gate like any capture, so recall finds it), the file is kept
//! content-addressed by the store, and purging either memory takes the file too.

use serde::Serialize;

use super::*;

/// Kind of an attachment's text memory.
pub const ATTACHMENT_KIND: &str = "attachment";

/// A file to attach, with the text derived from it.
#[derive(Debug, Clone, Copy)]
pub struct AttachmentFile<'a> {
    /// Its name as given.
    pub name: &'a str,
    /// `application/pdf`, `text/html`, `text/markdown` or `text/plain`.
    pub media_type: &'a str,
    /// SHA-256 of `bytes`, hex.
    pub sha256: &'a str,
    /// The file.
    pub bytes: &'a [u8],
    /// Its text.
    pub text: &'a str,
}

/// What attaching did.
#[derive(Debug, Clone, Serialize)]
pub struct Attached {
    /// The gate's verdict on the file's text.
    pub outcome: CaptureOutcome,
    /// The attachment, when the text was stored (admit; a redacted text is refused before).
    pub attachment: Option<crate::Attachment>,
}

impl Levh {
    /// Attaches a file to a live memory. Its text must hold no secret (the file is kept
    /// as it is, so a secret in it is refused, not redacted: the error names the kinds
    /// found, in the text or the name); then the text is captured through the gate as an
    /// `attachment` memory in the owner's project, and the file kept when it is stored.
    /// A held or rejected text keeps nothing (the outcome says why).
    pub fn attach(
        &self,
        scope: &Scope,
        owner: MemoryId,
        file: AttachmentFile<'_>,
    ) -> Result<Attached> {
        let owner = self.get(scope, owner)?;
        let (_, in_text) = gate::secrets::redact(file.text);
        let (name, in_name) = gate::secrets::redact(file.name);
        let mut kinds: Vec<String> = in_text.into_iter().chain(in_name).map(|r| r.kind).collect();
        kinds.sort();
        kinds.dedup();
        if !kinds.is_empty() {
            return Err(Error::invalid(
                "file",
                format!(
                    "'{}' holds a secret ({}): levh keeps an attached file as it is, so it was not attached; remove the secret and attach it again",
                    name,
                    kinds.join(", ")
                ),
            ));
        }
        let heading = format!("{name} (attached to {})", owner.id);
        // The text a memory may hold, whole characters: the file itself keeps the rest.
        let room = self
            .config
            .gate
            .max_chars
            .saturating_sub(heading.chars().count() + 1);
        let body: String = file.text.chars().take(room).collect();
        let new = NewMemory {
            content: format!("{heading}\n{body}"),
            project: owner.project.clone(),
            kind: Some(Kind::new(ATTACHMENT_KIND)?),
            source: Some(ATTACHMENT_KIND.to_owned()),
            importance: Some(owner.state.importance),
            metadata: Some(serde_json::json!({
                "attachment": {
                    "name": name,
                    "media_type": file.media_type,
                    "sha256": file.sha256,
                    "bytes": file.bytes.len(),
                    "attached_to": owner.id,
                }
            })),
            ..NewMemory::default()
        };
        let outcome = self.capture(scope, new)?;
        let attachment = match outcome.memory_id {
            Some(memory_id) => {
                let attachment = crate::Attachment {
                    memory_id,
                    attached_to: owner.id,
                    sha256: file.sha256.to_owned(),
                    name,
                    media_type: file.media_type.to_owned(),
                    bytes: file.bytes.len() as u64,
                };
                self.store
                    .save_attachment(&scope.workspace, &attachment, file.bytes)?
                    .then_some(attachment)
            }
            None => None,
        };
        Ok(Attached {
            outcome,
            attachment,
        })
    }

    /// The live attachments of a memory, oldest first.
    pub fn attachments(&self, scope: &Scope, owner: MemoryId) -> Result<Vec<crate::Attachment>> {
        Ok(self.store.attachments(&scope.workspace, owner)?)
    }
}
