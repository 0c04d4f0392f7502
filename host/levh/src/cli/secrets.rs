//! `levh audit-secrets` and `levh redact-secrets`: find and strip secrets stored before a
//! pattern existed — in memories and everywhere else levh keeps text. Adapters over
//! levh-api's operations: `--json` prints the same view as REST and MCP.

use std::process::ExitCode;

use anyhow::Result;
use levh_api::Operation;

use crate::context::Context;
use crate::output;

pub fn audit(context: &Context, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::AuditSecrets, levh_api::secrets::audit)?;
    if json {
        output::json(&view)?;
    } else if view.findings.is_empty() && view.elsewhere.is_empty() {
        output::line("nothing stored holds a recognised secret");
    } else {
        print(&view, "");
        output::line(format!(
            "{} memories and {} other places hold secrets; `levh redact-secrets` strips them",
            view.findings.len(),
            view.elsewhere.len()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn redact(context: &Context, json: bool) -> Result<ExitCode> {
    let view = context.run(Operation::RedactSecrets, levh_api::secrets::redact)?;
    if json {
        output::json(&view)?;
    } else if view.findings.is_empty() && view.elsewhere.is_empty() {
        output::line("nothing to redact");
    } else {
        print(&view, "redacted ");
    }
    Ok(ExitCode::SUCCESS)
}

fn print(view: &levh_api::views::SecretsView, prefix: &str) {
    for f in &view.findings {
        output::line(format!(
            "{prefix}{}  {}  (in {})",
            f.memory_id,
            f.kinds.join(", "),
            f.fields.join(", ")
        ));
    }
    for p in &view.elsewhere {
        output::line(format!("{prefix}{}  {}", p.place, p.kinds.join(", ")));
    }
}
