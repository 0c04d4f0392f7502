//! `levh show ID`: a memory, or a forgotten one marked as such (it is retired from every
//! read but kept for history until purged; saying "no memory" of it misled).

use std::process::ExitCode;

use anyhow::Result;
use levh_core::MemoryId;

use crate::context::Context;
use crate::output;

pub fn run(context: &Context, id: MemoryId, json: bool) -> Result<ExitCode> {
    let (config, now) = (&context.levh.config().model, context.levh.now());
    let (memory, forgotten) = match context.levh.get(&context.scope, id) {
        Ok(memory) => (memory, None),
        Err(levh_core::Error::NotFound(_)) => {
            match context.levh.get_forgotten(&context.scope, id)? {
                Some((memory, at)) => (memory, Some(at)),
                None => return Err(levh_core::Error::NotFound(id).into()),
            }
        }
        Err(other) => return Err(other.into()),
    };
    if json {
        let mut view = output::memory_view(&memory, config, now);
        if let (Some(at), Some(object)) = (forgotten, view.as_object_mut()) {
            object.insert("forgotten_at".into(), at.to_string().into());
        }
        output::json(&view)?;
    } else {
        if let Some(at) = forgotten {
            output::line(format!(
                "forgotten at {at}: retired from every read, kept for history (`levh purge {id}` erases it)"
            ));
        }
        output::print_memory(&memory, config, now);
    }
    Ok(ExitCode::SUCCESS)
}
