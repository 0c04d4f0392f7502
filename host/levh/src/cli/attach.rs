//! `levh attach ID FILE`: keeps a file with a memory — its text (PDF, HTML, Markdown,
//! plain text) through the gate as an `attachment` memory that recall finds.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use levh_api::Operation;

use crate::context::Context;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory to attach the file to.
    id: String,
    /// The file.
    file: PathBuf,
    /// The name to keep it under (default: the file's own).
    #[arg(long)]
    name: Option<String>,
}

pub fn run(context: &Context, args: Args, json: bool) -> Result<ExitCode> {
    let size = std::fs::metadata(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?
        .len();
    // Refused before it is read: the limit is what keeps the read bounded.
    if size > levh_api::attachments::MAX_ATTACHMENT_BYTES as u64 {
        anyhow::bail!(
            "{} is {size} bytes, more than the {} an attachment may be",
            args.file.display(),
            levh_api::attachments::MAX_ATTACHMENT_BYTES
        );
    }
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let name = match args.name {
        Some(name) => name,
        None => args
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into()),
    };
    let view = context.run(Operation::AttachFile, |levh, scope| {
        levh_api::attachments::attach(levh, scope, &args.id, &name, &bytes)
    })?;
    if json {
        output::json(&view)?;
        return Ok(if view.attachment.is_some() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        });
    }
    match &view.attachment {
        Some(a) => output::line(format!(
            "attached {} ({}, {} bytes, {} characters of text) as memory {}",
            a.name, a.media_type, a.bytes, view.text_chars, a.memory_id
        )),
        None => {
            output::line(format!(
                "not attached: the gate's verdict on its text was {}{}",
                serde_json::to_value(view.capture.verdict)?
                    .as_str()
                    .unwrap_or("?"),
                view.capture
                    .reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ));
            return Ok(ExitCode::from(2));
        }
    }
    Ok(ExitCode::SUCCESS)
}
