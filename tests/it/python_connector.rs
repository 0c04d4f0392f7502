//! A connector written in Python (`examples/python-connector`), built by these tests with
//! componentize-py against `wit/levh-plugin@0.1.1`: installed, granted and synced through
//! the real `levh` binary, and held by the same sandbox as the Rust hostile guest
//! (plugins.rs), probed from CPython's own file, socket and environment calls.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use levh_plugins::{
    Capability, Connector, Grants, GuestErrorKind, Limits, PluginError, PluginHost,
};
use serde_json::Value;

use crate::plugins::{Sandbox, sandbox};
use crate::support::{json, levh, ok, repository_root};

/// componentize-py, as `.ci/run` installs it under `.cache/componentize-py`
/// (`COMPONENTIZE_PY` names another).
fn componentize_py() -> Option<PathBuf> {
    let path = std::env::var_os("COMPONENTIZE_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join(".cache/componentize-py/bin/componentize-py"));
    if path.is_file() {
        return Some(path);
    }
    crate::support::skip(&format!(
        "Python connector test: no {} (install with `python3 -m venv .cache/componentize-py && \
         .cache/componentize-py/bin/pip install componentize-py==0.25.1`, as .ci/run does, or \
         set COMPONENTIZE_PY)",
        path.display()
    ));
    None
}

/// The example Python connector as a component, built once per test run (componentize-py
/// takes seconds) with the script the README tells its author to use.
fn python_connector() -> Option<&'static Path> {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let componentize_py = componentize_py()?;
    Some(BUILT.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-connector/python_notes.wasm");
        let output = Command::new(repository_root().join("scripts/build-python-connector.sh"))
            .arg(&out)
            .env("COMPONENTIZE_PY", componentize_py)
            .output()
            .expect("running scripts/build-python-connector.sh");
        assert!(
            output.status.success(),
            "building the Python connector failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        out
    }))
}

/// One plugin host with the Python connector loaded, for the sandbox tests: compiling
/// the component (an interpreter inside) is the slow part, so it is done once.
fn loaded() -> Option<&'static (PluginHost, Connector)> {
    static LOADED: OnceLock<(PluginHost, Connector)> = OnceLock::new();
    let path = python_connector()?;
    Some(LOADED.get_or_init(|| {
        let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-connector/cache");
        // The Rust hostile guest's limits, with time for a loaded CI machine: a call
        // itself takes milliseconds.
        let limits = Limits {
            memory_bytes: 96 << 20,
            call_timeout: Duration::from_secs(10),
            output_bytes: 16 << 20,
        };
        let host = PluginHost::with_limits(Some(cache), limits).unwrap();
        let bytes = std::fs::read(path).unwrap();
        let connector = host.load_connector("python_notes.wasm", &bytes).unwrap();
        (host, connector)
    }))
}

/// Runs the connector's `mode` probe with the sandbox's directory granted.
fn probe(mode: &str, sandbox: &Sandbox) -> Option<Result<levh_plugins::SyncPage, PluginError>> {
    let (host, connector) = loaded()?;
    let config = vec![
        ("mode".to_owned(), mode.to_owned()),
        (
            "directory".to_owned(),
            sandbox.granted.display().to_string(),
        ),
    ];
    let grants = Grants {
        read_paths: vec![sandbox.granted.clone()],
        ..Grants::default()
    };
    Some(host.sync(connector, &config, None, &grants))
}

#[test]
fn its_manifest_asks_to_read_one_directory_on_the_0_1_1_api() {
    let Some((_, connector)) = loaded() else {
        return;
    };
    let manifest = &connector.manifest;
    assert_eq!(
        (manifest.id.as_str(), manifest.version.as_str()),
        ("python-notes", "0.1.0")
    );
    assert_eq!(manifest.api_version, "0.1.1");
    assert_eq!(
        manifest.capabilities,
        [Capability::ReadPath("directory".into())]
    );
    let keys: Vec<(&str, bool)> = manifest
        .config
        .iter()
        .map(|k| (k.name.as_str(), k.required))
        .collect();
    assert_eq!(
        keys,
        [("directory", true), ("page_size", false), ("mode", false)]
    );
}

#[test]
fn reading_inside_the_grant_is_allowed() {
    let sandbox = sandbox();
    let Some(result) = probe("read-granted", &sandbox) else {
        return;
    };
    let page = result.unwrap();
    assert_eq!(page.items[0].content, "inside the grant");
}

#[test]
fn reading_outside_the_grant_is_refused_every_way() {
    let sandbox = sandbox();
    let Some(result) = probe("read-outside", &sandbox) else {
        return;
    };
    let text = result.unwrap_err().to_string();
    assert_eq!(
        text,
        "python-notes 0.1.0: denied: every read outside the grant failed"
    );
}

#[test]
fn writing_is_refused_even_inside_the_grant() {
    let sandbox = sandbox();
    let Some(result) = probe("write", &sandbox) else {
        return;
    };
    let err = result.unwrap_err();
    assert!(
        matches!(
            &err,
            PluginError::Guest {
                kind: GuestErrorKind::Denied,
                ..
            }
        ),
        "{err:?}"
    );
    // CPython's own words for the read-only preopen, with the sandbox path.
    assert_eq!(
        err.to_string(),
        "python-notes 0.1.0: denied: write refused: [Errno 63] Operation not permitted: \
         '/grant/directory/planted.txt'"
    );
    assert!(!sandbox.granted.join("planted.txt").exists());
}

#[test]
fn sockets_are_refused() {
    let sandbox = sandbox();
    let Some(result) = probe("socket", &sandbox) else {
        return;
    };
    let text = result.unwrap_err().to_string();
    assert_eq!(
        text,
        "python-notes 0.1.0: denied: socket refused: [Errno 2] Permission denied"
    );
}

#[test]
fn it_sees_no_environment_and_no_arguments() {
    std::env::var("PATH").unwrap();
    let sandbox = sandbox();
    let Some(result) = probe("env", &sandbox) else {
        return;
    };
    // `os.environ` and `sys.argv`, as Python prints them.
    assert_eq!(result.unwrap().items[0].content, "{} []");
}

#[test]
fn sync_fails_when_directory_not_granted() {
    let Some((host, connector)) = loaded() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "private").unwrap();
    let config = vec![("directory".to_owned(), dir.path().display().to_string())];
    let err = host
        .sync(connector, &config, None, &Grants::default())
        .unwrap_err();
    assert!(matches!(err, PluginError::Denied { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("python-notes 0.1.0: denied: read-path `directory`")
            && text.contains("levh connector grant python-notes"),
        "{text}"
    );
}

#[test]
fn its_errors_reach_the_host_as_their_wit_case() {
    let sandbox = sandbox();
    let Some(result) = probe("no-such-mode", &sandbox) else {
        return;
    };
    let err = result.unwrap_err();
    assert!(
        matches!(
            &err,
            PluginError::Guest {
                kind: GuestErrorKind::InvalidConfig,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "python-notes 0.1.0: invalid-config: unknown mode no-such-mode"
    );
}

/// Notes as a person keeps them: a text file, a CSV log (one good row dated, one without
/// text, one without an id), a file that is neither, and a file that is not UTF-8.
fn notes(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("oat.txt"), "Buy oat milk for the office\n").unwrap();
    std::fs::write(
        dir.join("sub/log.csv"),
        "id,date,title,text\n\
         standup,2026-03-02,Standup,The standup moved to 9:45\n\
         empty,,,\n\
         ,2026-03-04,,The retro is on Friday in the lake room\n",
    )
    .unwrap();
    std::fs::write(dir.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    std::fs::write(dir.join("latin1.txt"), b"caf\xe9").unwrap();
}

#[test]
fn a_python_connector_is_added_granted_and_synced_and_a_second_sync_changes_nothing() {
    let Some(wasm) = python_connector() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let dir = tempfile::tempdir().unwrap();
    notes(dir.path());
    let folder = dir.path().canonicalize().unwrap();

    let added = json(
        levh(home)
            .args(["connector", "add", "--yes", "--json"])
            .arg(wasm),
    );
    assert_eq!(added["installed"], "python-notes", "{added}");
    let granted = ok(levh(home)
        .args(["connector", "grant", "python-notes"])
        .arg(&folder));
    assert!(
        String::from_utf8_lossy(&granted.stdout).contains("python-notes may read"),
        "{granted:?}"
    );

    // Two items a page: its cursor carries the sync across pages. Its log lines come
    // back tagged with its id.
    let sync = |log: &str| {
        let output = levh(home)
            .env("LEVH_LOG", log)
            .args(["sync", "python-notes", "--json", "--config"])
            .arg(format!("directory={}", folder.display()))
            .args(["--config", "page_size=2"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        (report, String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (report, stderr) = sync("info");
    assert_eq!(
        (
            &report["status"],
            &report["pages"],
            &report["admitted"],
            &report["failed"],
            &report["skipped"]
        ),
        (
            &Value::from("ok"),
            &Value::from(2),
            &Value::from(3),
            &Value::from(2),
            &Value::from(1)
        ),
        "{report}"
    );
    assert_eq!(
        report["errors"],
        serde_json::json!([
            "latin1.txt: not UTF-8",
            "sub/log.csv:3: no `text` in this row"
        ]),
        "{report}"
    );
    let skipped = crate::support::not_stored_as(&report, "skipped");
    assert_eq!(
        skipped,
        [("logo.png", "not a .txt or .csv file")],
        "{report}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("2 notes on this page, 1 after it"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("plugin=\"python-notes\""), "{line}");

    let memories = json(levh(home).args(["list", "--json"]));
    let memory = |source_id: &str| {
        memories["memories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metadata"]["source_id"] == source_id)
            .unwrap_or_else(|| panic!("{source_id} not stored: {memories}"))
            .clone()
    };
    let standup = memory("sub/log.csv#standup");
    assert_eq!(standup["source"], "connector:python-notes", "{standup}");
    assert!(
        standup["content"]
            .as_str()
            .unwrap()
            .contains("The standup moved to 9:45"),
        "{standup}"
    );
    assert_eq!(standup["valid_from"], "2026-03-02T00:00:00Z", "{standup}");
    // The address names the file on this machine, not the sandbox's path to it.
    assert_eq!(
        standup["metadata"]["source_uri"],
        format!("file:{}#standup", folder.join("sub/log.csv").display()),
        "{standup}"
    );
    memory("sub/log.csv#line-4");
    assert!(
        memory("oat.txt")["content"]
            .as_str()
            .unwrap()
            .contains("Buy oat milk")
    );

    let hits = json(levh(home).args(["recall", "when is the retro", "--json"]))["results"].clone();
    assert!(
        hits[0]["content"].as_str().unwrap().contains("lake room"),
        "{hits}"
    );

    let (again, _) = sync("warn");
    assert_eq!(
        (
            again["admitted"].as_u64(),
            again["updated"].as_u64(),
            again["unchanged"].as_u64()
        ),
        (Some(0), Some(0), Some(3)),
        "{again}"
    );
}
