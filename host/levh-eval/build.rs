//! Embeds the golden scenarios (`fixtures/eval/*.json`) and the conversational benchmark
//! sets (`fixtures/benchmark/{conversational,chat,worknotes}/*.json`) shipped with levh, so `levh eval run` and
//! `levh benchmark --dataset conversational` work from an installed binary, and a new
//! file needs no code change.

use std::path::{Path, PathBuf};

/// Writes `OUT_DIR/<out>`: an array expression of `(file name, contents)` for every JSON
/// file in `dir`, in name order.
fn embed(dir: &Path, out: &str) {
    println!("cargo::rerun-if-changed={}", dir.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join(out);
    if !dir.is_dir() {
        // A set not written yet embeds as empty (and is not offered).
        std::fs::write(&out, "[]").unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut code = String::from("[\n");
    for path in &files {
        println!("cargo::rerun-if-changed={}", path.display());
        let name = path.file_name().expect("a file name").to_string_lossy();
        let absolute = path.canonicalize().expect("an existing file");
        code.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            absolute.display().to_string()
        ));
    }
    code.push(']');
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

fn main() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    embed(&fixtures.join("eval"), "builtin_scenarios.rs");
    embed(
        &fixtures.join("benchmark/conversational"),
        "builtin_conversations.rs",
    );
    embed(&fixtures.join("benchmark/chat"), "builtin_chat.rs");
    embed(
        &fixtures.join("benchmark/worknotes"),
        "builtin_worknotes.rs",
    );
}
