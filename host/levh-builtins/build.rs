//! Compiles every crate under `connectors/` and `scorers/` (those with a `levh.toml`)
//! to a `wasm32-wasip2` component with the size-optimised `guest` profile, and embeds the
//! bytes, so an installed `levh` has its built-ins with no extra step.
//!
//! The guests are built by a nested cargo into their own target directory (the outer
//! build holds the lock on the usual one), with the outer build's flags removed.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!(
        "cargo:rerun-if-changed={}",
        root.join("connectors").display()
    );
    println!("cargo:rerun-if-changed={}", root.join("scorers").display());
    println!("cargo:rerun-if-changed={}", root.join("wit").display());

    let connectors = guests(&root.join("connectors"));
    let scorers = guests(&root.join("scorers"));
    let packages: Vec<&str> = connectors
        .iter()
        .chain(&scorers)
        .map(|g| g.package.as_str())
        .collect();
    if !packages.is_empty() {
        check_target();
        build(&root, &packages);
    }

    let target_dir = root
        .join("target")
        .join("guests")
        .join(TARGET)
        .join("guest");
    let mut code = String::new();
    embed(
        &mut code,
        "CONNECTORS",
        "Built-in connectors: (id, component bytes).",
        &connectors,
        &target_dir,
        &out_dir,
    );
    embed(
        &mut code,
        "SCORERS",
        "Built-in scorers: (id, component bytes).",
        &scorers,
        &target_dir,
        &out_dir,
    );
    std::fs::write(out_dir.join("builtins.rs"), code).expect("writing builtins.rs");
}

/// Copies each built component next to the generated code and lists it in a static.
fn embed(
    code: &mut String,
    name: &str,
    doc: &str,
    guests: &[Guest],
    target_dir: &Path,
    out_dir: &Path,
) {
    code.push_str(&format!(
        "/// {doc}\npub static {name}: &[(&str, &[u8])] = &[\n"
    ));
    for guest in guests {
        let file = format!("{}.wasm", guest.package.replace('-', "_"));
        let built = target_dir.join(&file);
        let embedded = out_dir.join(&file);
        std::fs::copy(&built, &embedded)
            .unwrap_or_else(|e| panic!("copying {}: {e}", built.display()));
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            guest.id,
            embedded.display().to_string()
        ));
    }
    code.push_str("];\n");
}

struct Guest {
    id: String,
    package: String,
}

/// Crates with a `levh.toml` next to their `Cargo.toml`, in name order.
fn guests(dir: &Path) -> Vec<Guest> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let (Ok(manifest), Ok(cargo)) = (
            std::fs::read_to_string(path.join("levh.toml")),
            std::fs::read_to_string(path.join("Cargo.toml")),
        ) else {
            continue;
        };
        let manifest: toml::Table = manifest
            .parse()
            .unwrap_or_else(|e| panic!("{}/levh.toml: {e}", path.display()));
        let cargo: toml::Table = cargo
            .parse()
            .unwrap_or_else(|e| panic!("{}/Cargo.toml: {e}", path.display()));
        let id = manifest
            .get("id")
            .and_then(|v| v.as_str())
            .expect("levh.toml has an id")
            .to_owned();
        let package = cargo
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|v| v.as_str())
            .expect("Cargo.toml has a package name")
            .to_owned();
        found.push(Guest { id, package });
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn check_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output();
    let installed = libdir
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|dir| dir.is_dir());
    if !installed {
        panic!(
            "\n\nlevh's built-in connectors are WebAssembly components and need the {TARGET} target.\n\
             Install it with:\n\n    rustup target add {TARGET}\n\nthen build again.\n"
        );
    }
}

fn build(root: &Path, packages: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root).args([
        "build",
        "--target",
        TARGET,
        "--profile",
        "guest",
        "--target-dir",
        "target/guests",
    ]);
    for package in packages {
        command.args(["-p", package]);
    }
    // The outer build's settings are for the host, not for the guests.
    for (key, _) in std::env::vars() {
        let keep = key == "CARGO_HOME"
            || key == "CARGO_MAKEFLAGS"
            || key.starts_with("CARGO_REGISTRIES_")
            || key.starts_with("CARGO_NET_")
            || key.starts_with("CARGO_HTTP_")
            || key.starts_with("CARGO_SOURCE_");
        if (key.starts_with("CARGO_") && !keep)
            || matches!(
                key.as_str(),
                "RUSTFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "TARGET"
                    | "HOST"
                    | "OUT_DIR"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "RUSTC"
                    | "RUSTDOC"
                    | "RUSTC_LINKER"
            )
        {
            command.env_remove(&key);
        }
    }
    let status = command
        .status()
        .expect("running cargo for the built-in connectors");
    assert!(
        status.success(),
        "building the built-in connectors for {TARGET} failed (see above)"
    );
}
