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
    // Write then rename, so a concurrent reader never sees half a file. The temporary
    // name is unique per call, not per process: threads of one process (one shared engine
    // serving concurrent requests) compile the same component at once, and a shared name
    // let one thread truncate the file another was renaming into place.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temporary = path.with_extension(format!("tmp{}-{write}", std::process::id()));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen threads compiling the same component into one cache all get a component
    /// (each writes its own temporary file; the last rename wins, with the same bytes).
    #[test]
    fn concurrent_compiles_of_one_component_share_the_cache_safely() {
        let engine = Engine::new(wasmtime::Config::new().wasm_component_model(true)).unwrap();
        // The smallest component there is: the header of an empty one.
        let wasm = b"\0asm\x0d\x00\x01\x00".to_vec();
        let sha = sha256_hex(&wasm);
        // Rounds on fresh caches: each round races its threads to the first write.
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            std::thread::scope(|scope| {
                for _ in 0..16 {
                    scope.spawn(|| compile(&engine, Some(dir.path()), &sha, &wasm).unwrap());
                }
            });
            let leftovers: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x != "cwasm"))
                .collect();
            assert!(leftovers.is_empty(), "{leftovers:?}");
        }
    }
}
