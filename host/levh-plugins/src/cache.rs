//! The precompiled-component cache: compiling a component takes 60–430 ms, loading a
//! compiled one well under a millisecond. Entries are keyed by the component's sha256
//! and the engine's compatibility hash, so a levh upgrade never loads stale code.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Lowercase hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn compile(
    engine: &Engine,
    cache_dir: Option<&Path>,
    sha256: &str,
    bytes: &[u8],
) -> anyhow::Result<Component> {
    let Some(dir) = cache_dir else {
        return Ok(Component::new(engine, bytes)?);
    };
    let mut hasher = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let path = dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish()));
    if path.exists() {
        match load(engine, &path) {
            Ok(component) => return Ok(component),
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "ignoring an unreadable cached component")
            }
        }
    }
    let compiled = engine.precompile_component(bytes)?;
    std::fs::create_dir_all(dir)?;
    // Write then rename, so a concurrent reader never sees half a file.
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, &compiled)?;
    std::fs::rename(&temporary, &path)?;
    load(engine, &path)
}

#[allow(unsafe_code)]
fn load(engine: &Engine, path: &Path) -> anyhow::Result<Component> {
    // SAFETY: wasmtime requires the file to be one it produced. These files are written
    // only by `compile` above, into levh's private cache directory, under a name that
    // includes the engine's compatibility hash; wasmtime additionally checks the header
    // and refuses files from another engine configuration.
    Ok(unsafe { Component::deserialize_file(engine, path) }?)
}
