//! `levh audit-secrets` and `levh redact-secrets`: find and strip secrets stored before a
//! pattern existed.

use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;

use crate::context::Context;
use crate::output;

pub fn audit(context: &Context, json: bool) -> Result<ExitCode> {
    let findings = context.levh.audit_secrets(&context.scope)?;
    if json {
        output::json(&json!({ "findings": findings }))?;
    } else if findings.is_empty() {
        output::line("no stored memory holds a recognised secret");
    } else {
        for f in &findings {
            output::line(format!(
                "{}  {}  (in {})",
                f.memory_id,
                f.kinds.join(", "),
                f.fields.join(", ")
            ));
        }
        output::line(format!(
            "{} memories hold secrets; `levh redact-secrets` strips them",
            findings.len()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn redact(context: &Context, json: bool) -> Result<ExitCode> {
    let findings = context.levh.redact_secrets(&context.scope)?;
    if json {
        output::json(&json!({ "redacted": findings }))?;
    } else if findings.is_empty() {
        output::line("nothing to redact");
    } else {
        for f in &findings {
            output::line(format!(
                "redacted {}  {}  (in {})",
                f.memory_id,
                f.kinds.join(", "),
                f.fields.join(", ")
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}
