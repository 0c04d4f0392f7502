//! Files attached to memories (`levh attach`, MCP `attach_file`, REST
//! `POST /api/memories/{id}/attachments`): the file's text derived by a kept library
//! (`levh-extract`), refused when it holds a secret, captured through the gate as an
//! `attachment` memory that recall searches, the file kept by its digest.

use base64::Engine as _;
use levh_core::{AttachmentFile, Levh, Scope};
use sha2::{Digest, Sha256};

use crate::requests::{AttachArgs, memory_id};
use crate::views::{AttachedView, AttachmentList, AttachmentView, CaptureView};
use crate::{Error, Result};

/// Largest file levh attaches: the file is read whole, and its text is embedded.
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

/// Attaches `bytes`, a file called `name`, to memory `id`.
pub fn attach(
    levh: &Levh,
    scope: &Scope,
    id: &str,
    name: &str,
    bytes: &[u8],
) -> Result<AttachedView> {
    let owner = memory_id("id", id)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 255 || name.contains(['/', '\\', '\0']) {
        return Err(Error::invalid(format!(
            "invalid name: '{}' is not a file name (1..255 characters, no path)",
            name.escape_debug()
        )));
    }
    if bytes.len() > MAX_ATTACHMENT_BYTES {
        return Err(Error::invalid(format!(
            "invalid file: '{name}' is {} bytes, more than the {MAX_ATTACHMENT_BYTES} an attachment may be",
            bytes.len()
        )));
    }
    let extracted = levh_extract::extract(name, bytes)
        .map_err(|e| Error::invalid(format!("invalid file: {e}")))?;
    let sha256 = format!("{:x}", Sha256::digest(bytes));
    let attached = levh.attach(
        scope,
        owner,
        AttachmentFile {
            name,
            media_type: extracted.media_type.as_str(),
            sha256: &sha256,
            bytes,
            text: &extracted.text,
        },
    )?;
    Ok(AttachedView {
        capture: CaptureView::new(&attached.outcome, "attachment".into()),
        attachment: attached.attachment.as_ref().map(AttachmentView::of),
        text_chars: extracted.text.chars().count(),
    })
}

/// [`attach`] with the file as base64 (MCP and REST carry JSON).
pub fn attach_encoded(
    levh: &Levh,
    scope: &Scope,
    id: &str,
    args: AttachArgs,
) -> Result<AttachedView> {
    // Four characters carry three bytes: a text this long cannot be a file levh takes.
    if args.content_base64.len() > MAX_ATTACHMENT_BYTES / 3 * 4 + 4 {
        return Err(Error::invalid(format!(
            "invalid content_base64: more than the {MAX_ATTACHMENT_BYTES} bytes an attachment may be"
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(args.content_base64.trim())
        .map_err(|e| Error::invalid(format!("invalid content_base64: {e}")))?;
    attach(levh, scope, id, &args.name, &bytes)
}

/// The attachments of memory `id`, oldest first.
pub fn list(levh: &Levh, scope: &Scope, id: &str) -> Result<AttachmentList> {
    let owner = memory_id("id", id)?;
    levh.get(scope, owner)?;
    Ok(AttachmentList {
        attachments: levh
            .attachments(scope, owner)?
            .iter()
            .map(AttachmentView::of)
            .collect(),
    })
}
