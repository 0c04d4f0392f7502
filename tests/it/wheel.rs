//! The prebuilt levh, as a user without Rust gets it: the wheel `levh-rs` installed with
//! pip into a fresh virtual environment whose PATH has no cargo and no rustc, then run —
//! `levh --version`, `levh doctor`, and MCP `initialize` + `tools/list` through the
//! official Python SDK — and the release archive beside it verified by its checksum.
//!
//! `scripts/build-wheel.sh` builds both; `.ci/run` runs it into `.cache/wheel` before the
//! tests (`LEVH_WHEEL_DIR` names another directory). Without a wheel there the tests say
//! on stderr why they were skipped, and pass (fail where `LEVH_REQUIRE_TEST_ASSETS` is set).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{json, levh, repository_root, skip};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The target the archive is named after: the only one the wheel is built for.
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// What `scripts/build-wheel.sh` wrote: the wheel and the archive of this version.
struct Built {
    directory: PathBuf,
    wheel: PathBuf,
    archive: PathBuf,
}

fn built() -> Option<Built> {
    let directory = std::env::var_os("LEVH_WHEEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join(".cache/wheel"));
    let wheels: Vec<PathBuf> = std::fs::read_dir(&directory)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| {
                    let name = file_name(path);
                    name.starts_with(&format!("levh_rs-{VERSION}-")) && name.ends_with(".whl")
                })
                .collect()
        })
        .unwrap_or_default();
    let archive = directory.join(format!("levh-{VERSION}-{TARGET}.tar.gz"));
    match wheels.as_slice() {
        [wheel] if archive.is_file() => Some(Built {
            wheel: wheel.clone(),
            archive,
            directory,
        }),
        [_, _, ..] => panic!(
            "more than one levh-rs {VERSION} wheel in {}",
            directory.display()
        ),
        _ => {
            skip(&format!(
                "wheel tests: no levh_rs-{VERSION}-*.whl and levh-{VERSION}-{TARGET}.tar.gz in {} \
                 (build them with `scripts/build-wheel.sh .cache/wheel`, as .ci/run does, or set \
                 LEVH_WHEEL_DIR)",
                directory.display()
            ));
            None
        }
    }
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("")
}

fn succeeded(what: &str, output: Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A fresh virtual environment with the wheel installed by pip from the file alone, and
/// a PATH of its `bin` and the system's — no `~/.cargo/bin`, no rustup.
struct Installed {
    _root: tempfile::TempDir,
    bin: PathBuf,
    path: String,
}

impl Installed {
    fn new(wheel: &Path) -> Self {
        let root = tempfile::tempdir().unwrap();
        let venv = root.path().join("venv");
        // The Python `.ci/run` makes its environments with; the wheel needs none of it.
        succeeded(
            "python3 -m venv",
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .output()
                .expect("running python3 -m venv"),
        );
        let bin = venv.join("bin");
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let installed = Self {
            _root: root,
            bin,
            path,
        };
        succeeded(
            "pip install --no-index",
            installed
                .command("pip")
                .args([
                    "install",
                    "--no-index",
                    "--disable-pip-version-check",
                    "--quiet",
                ])
                .arg(wheel)
                .output()
                .expect("running pip"),
        );
        installed
    }

    /// An executable of the environment, run with only its PATH.
    fn command(&self, name: &str) -> Command {
        let mut command = Command::new(self.bin.join(name));
        command
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.bin.parent().unwrap());
        command
    }

    /// Whether `sh` finds `name` on the environment's PATH.
    fn finds(&self, name: &str) -> bool {
        Command::new("/bin/sh")
            .args(["-c", &format!("command -v {name}")])
            .env_clear()
            .env("PATH", &self.path)
            .status()
            .expect("running /bin/sh")
            .success()
    }
}

/// The wheel is all a machine without Rust needs: both executables start, `doctor` finds
/// a well store, and the official MCP Python SDK spawns each of them and lists levh's tools.
#[test]
fn the_wheel_installed_without_a_rust_toolchain_runs_doctor_and_serves_mcp() {
    let Some(built) = built() else { return };
    let installed = Installed::new(&built.wheel);
    for tool in ["cargo", "rustc", "rustup"] {
        assert!(
            !installed.finds(tool),
            "{tool} is on the test's PATH {}",
            installed.path
        );
    }

    for executable in ["levh", "levh-rs"] {
        let version = succeeded(
            &format!("{executable} --version"),
            installed
                .command(executable)
                .arg("--version")
                .output()
                .unwrap(),
        );
        assert_eq!(version.trim(), format!("levh {VERSION}"), "{executable}");
    }

    let home = tempfile::tempdir().unwrap();
    let doctor = succeeded(
        "levh doctor",
        installed
            .command("levh")
            .arg("doctor")
            .env("LEVH_HOME", home.path())
            .env("LEVH_EMBEDDER", "hash")
            .output()
            .unwrap(),
    );
    for check in ["✓ store", "✓ schema", "✓ fts5"] {
        assert!(doctor.contains(check), "no {check:?} in:\n{doctor}");
    }

    let Some(python) = python_sdk() else { return };
    // The tools of the default profile, as this checkout's levh lists them: the wheel
    // holds this checkout's build, not an older one.
    let profiles = json(levh(home.path()).args(["mcp", "profiles", "--json"]));
    let work = profiles
        .as_array()
        .unwrap()
        .iter()
        .find(|profile| profile["profile"] == "work")
        .expect("the work profile");
    let mut expected: Vec<Value> = work["tools"].as_array().unwrap().clone();
    expected.sort_by_key(|tool| tool.to_string());
    for executable in ["levh", "levh-rs"] {
        let output = Command::new(&python)
            .arg(repository_root().join("scripts/mcp-python-list-tools.py"))
            .arg(installed.bin.join(executable))
            .args(["mcp", "stdio"])
            .env_clear()
            .env("PATH", &installed.path)
            .env("LEVH_HOME", home.path())
            .env("LEVH_EMBEDDER", "hash")
            .output()
            .expect("running the Python MCP client");
        let answer: Value =
            serde_json::from_str(&succeeded(&format!("MCP through {executable}"), output)).unwrap();
        assert_eq!(answer["server"]["name"], "levh", "{answer}");
        assert_eq!(answer["server"]["version"], VERSION, "{answer}");
        let mut tools = answer["tools"].as_array().unwrap().clone();
        tools.sort_by_key(|tool| tool.to_string());
        assert_eq!(tools, expected, "{executable}");
        assert!(tools.iter().any(|tool| tool == "store_memory"), "{answer}");
    }
}

/// uv, where `.ci/run` installs it (`LEVH_UV` names another `uv`).
fn uv() -> Option<PathBuf> {
    let path = std::env::var_os("LEVH_UV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join(".cache/uv/bin/uv"));
    if path.is_file() {
        return Some(path);
    }
    skip(&format!(
        "uvx wheel test: no {} (install with `python3 -m venv .cache/uv && .cache/uv/bin/pip \
         install uv==0.13.9`, as .ci/run does, or set LEVH_UV)",
        path.display()
    ));
    None
}

/// What `levh mcp config` prints as the runner's form works: `uvx levh-rs mcp stdio`
/// (the package found by its name, here in the wheel's directory instead of PyPI, with no
/// network) serves MCP to the official SDK, and `uv tool install levh-rs` puts `levh`
/// and `levh-rs` on a PATH — links into uv's tool environment, which `levh-rs` follows
/// to the `levh` beside it. No Rust toolchain on the PATH of either.
#[test]
fn uvx_levh_rs_serves_mcp_and_uv_tool_install_puts_both_executables_on_the_path() {
    let Some(built) = built() else { return };
    let Some(uv) = uv() else { return };
    let Some(python) = python_sdk() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let uv_bin = uv.parent().unwrap().to_path_buf();
    let tool_bin = scratch.path().join("bin");
    let path = format!("{}:{}:/usr/bin:/bin", tool_bin.display(), uv_bin.display());
    let uv_env = |command: &mut Command| {
        command
            .env_clear()
            .env("PATH", &path)
            .env("HOME", scratch.path())
            .env("UV_CACHE_DIR", scratch.path().join("cache"))
            .env("UV_TOOL_DIR", scratch.path().join("tools"))
            .env("UV_TOOL_BIN_DIR", &tool_bin)
            .env("UV_PYTHON_DOWNLOADS", "never");
    };
    let package_source = [
        "--offline".to_owned(),
        "--no-index".to_owned(),
        "--find-links".to_owned(),
        built.directory.display().to_string(),
    ];
    let home = tempfile::tempdir().unwrap();

    let mut client = Command::new(&python);
    client
        .arg(repository_root().join("scripts/mcp-python-list-tools.py"))
        .arg(uv_bin.join("uvx"))
        .args(&package_source)
        .args(["levh-rs", "mcp", "stdio"]);
    uv_env(&mut client);
    // The script hands the server PATH and the LEVH_ and UV_ variables.
    let output = client
        .env("LEVH_HOME", home.path())
        .env("LEVH_EMBEDDER", "hash")
        .output()
        .expect("running the Python MCP client");
    let answer: Value =
        serde_json::from_str(&succeeded("MCP through uvx levh-rs", output)).unwrap();
    assert_eq!(answer["server"]["name"], "levh", "{answer}");
    assert_eq!(answer["server"]["version"], VERSION, "{answer}");
    assert!(
        answer["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool == "store_memory"),
        "{answer}"
    );

    let mut install = Command::new(&uv);
    install
        .args(["tool", "install"])
        .args(&package_source)
        .arg("levh-rs");
    uv_env(&mut install);
    succeeded("uv tool install levh-rs", install.output().unwrap());
    for executable in ["levh", "levh-rs"] {
        let linked = tool_bin.join(executable);
        assert!(
            std::fs::symlink_metadata(&linked).is_ok(),
            "uv tool install left no {}",
            linked.display()
        );
        let mut run = Command::new(&linked);
        run.arg("--version");
        uv_env(&mut run);
        let version = succeeded(&format!("uv tool's {executable}"), run.output().unwrap());
        assert_eq!(version.trim(), format!("levh {VERSION}"), "{executable}");
    }
}

/// The official MCP Python SDK, where `.ci/run` installs it (`MCP_PYTHON` names another
/// interpreter that has it).
fn python_sdk() -> Option<PathBuf> {
    let path = std::env::var_os("MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join(".cache/python-mcp/bin/python"));
    if path.is_file() {
        return Some(path);
    }
    skip(&format!(
        "wheel MCP test: no {} (install with `python3 -m venv .cache/python-mcp && \
         .cache/python-mcp/bin/pip install mcp==2.3.0`, as .ci/run does, or set MCP_PYTHON)",
        path.display()
    ));
    None
}

/// pip installs a wheel only where its tags match: one for any Python 3 (`py3-none`, the
/// binary is no extension module) on manylinux x86_64, and the WHEEL file inside says the
/// same as the file name.
#[test]
fn the_wheel_is_tagged_for_any_python_on_manylinux_x86_64() {
    let Some(built) = built() else { return };
    let name = file_name(&built.wheel);
    let tag = name
        .strip_prefix(&format!("levh_rs-{VERSION}-"))
        .and_then(|rest| rest.strip_suffix(".whl"))
        .unwrap();
    let platform = tag.strip_prefix("py3-none-").unwrap_or_else(|| {
        panic!("{name}: not tagged py3-none (for any Python 3, no extension module)")
    });
    let glibc = platform
        .strip_prefix("manylinux_2_")
        .and_then(|rest| rest.strip_suffix("_x86_64"))
        .and_then(|minor| minor.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("{name}: platform {platform} is not manylinux_2_N_x86_64"));
    // Debian 12 (glibc 2.36), on which it is built, must be able to install it.
    assert!(glibc <= 36, "{name} needs glibc 2.{glibc}");

    let wheel_file = succeeded(
        "reading the wheel's WHEEL file",
        Command::new("python3")
            .args([
                "-c",
                "import sys, zipfile; \
                 print(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())",
            ])
            .arg(&built.wheel)
            .arg(format!("levh_rs-{VERSION}.dist-info/WHEEL"))
            .output()
            .unwrap(),
    );
    let tags: Vec<&str> = wheel_file
        .lines()
        .filter_map(|line| line.strip_prefix("Tag: "))
        .collect();
    assert_eq!(tags, [tag], "{wheel_file}");
    assert!(
        wheel_file.contains("Root-Is-Purelib: false"),
        "{wheel_file}"
    );
}

/// The archive verifies against its `.sha256` as a user checks it, a changed byte does
/// not, and it holds the very binary of the wheel with the README and the licence.
#[test]
fn the_release_archive_verifies_and_holds_the_wheels_binary() {
    let Some(built) = built() else { return };
    let archive_name = file_name(&built.archive).to_owned();
    let checked = succeeded(
        "sha256sum -c",
        Command::new("sha256sum")
            .args(["-c", &format!("{archive_name}.sha256")])
            .current_dir(&built.directory)
            .output()
            .unwrap(),
    );
    assert_eq!(checked.trim(), format!("{archive_name}: OK"));

    let tampered = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(&built.archive).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(tampered.path().join(&archive_name), bytes).unwrap();
    std::fs::copy(
        built.directory.join(format!("{archive_name}.sha256")),
        tampered.path().join(format!("{archive_name}.sha256")),
    )
    .unwrap();
    let refused = Command::new("sha256sum")
        .args(["-c", &format!("{archive_name}.sha256")])
        .current_dir(tampered.path())
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "a changed archive passed its checksum"
    );

    let unpacked = tempfile::tempdir().unwrap();
    succeeded(
        "tar -xzf",
        Command::new("tar")
            .arg("-xzf")
            .arg(&built.archive)
            .arg("-C")
            .arg(unpacked.path())
            .output()
            .unwrap(),
    );
    let folder = unpacked
        .path()
        .join(archive_name.trim_end_matches(".tar.gz"));
    let mut entries: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["LICENSE", "README.md", "levh"]);
    let version = succeeded(
        "the archive's levh --version",
        Command::new(folder.join("levh"))
            .arg("--version")
            .output()
            .unwrap(),
    );
    assert_eq!(version.trim(), format!("levh {VERSION}"));

    let installed = Installed::new(&built.wheel);
    assert!(
        std::fs::read(folder.join("levh")).unwrap()
            == std::fs::read(installed.bin.join("levh")).unwrap(),
        "the archive's binary is not the wheel's"
    );
}
