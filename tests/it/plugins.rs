//! The plugin sandbox with real components: the built-in `local_files` connector, and a
//! hostile guest (built by these tests) that tries every way out.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use levh_plugins::{Grants, Limits, PluginError, PluginHost};

/// Builds the hostile guest once per test run, into the guests' own target directory.
fn hostile_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let root = crate::support::repository_root();
        let args = [
            "-p",
            "levh-test-guest-hostile",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "guest",
            "--target-dir",
            "target/guests",
        ];
        let status = crate::support::guest_cargo(&root, &args).status().unwrap();
        assert!(status.success(), "building the hostile test guest failed");
        std::fs::read(root.join("target/guests/wasm32-wasip2/guest/levh_test_guest_hostile.wasm"))
            .unwrap()
    })
}

/// One compile cache for the whole run: the first test compiles the guest, the others
/// load it in a millisecond (the cache itself is under test in the built-in test below).
fn shared_cache() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .to_path_buf()
}

fn host(limits: Limits) -> PluginHost {
    PluginHost::with_limits(Some(shared_cache()), limits).unwrap()
}

fn tight() -> Limits {
    Limits {
        memory_bytes: 96 << 20,
        call_timeout: Duration::from_millis(1500),
        output_bytes: 16 << 20,
    }
}

/// A granted directory holding `inside.txt`, beside an `outside.txt` that is not granted,
/// and a symlink inside pointing out.
pub(crate) struct Sandbox {
    _dir: tempfile::TempDir,
    pub(crate) granted: PathBuf,
}

pub(crate) fn sandbox() -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let granted = dir.path().join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::fs::write(granted.join("inside.txt"), "inside the grant").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "SECRET OUTSIDE THE GRANT").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.path(), granted.join("link-out")).unwrap();
    Sandbox {
        granted: granted.canonicalize().unwrap(),
        _dir: dir,
    }
}

fn config(mode: &str, directory: &Path) -> Vec<(String, String)> {
    vec![
        ("mode".into(), mode.into()),
        ("directory".into(), directory.display().to_string()),
    ]
}

fn run(
    host: &PluginHost,
    mode: &str,
    sandbox: &Sandbox,
) -> Result<levh_plugins::SyncPage, PluginError> {
    let connector = host.load_connector("hostile", hostile_bytes()).unwrap();
    let grants = Grants {
        read_paths: vec![sandbox.granted.clone()],
        ..Grants::default()
    };
    host.sync(&connector, &config(mode, &sandbox.granted), None, &grants)
}

#[test]
fn the_builtin_local_files_connector_reads_a_granted_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "# Standup\nMoved to 9:45").unwrap();
    std::fs::write(dir.path().join("b.txt"), "Buy oat milk").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let host = PluginHost::new(Some(cache.path().to_path_buf())).unwrap();
    let bytes = levh_builtins::connector("local_files").unwrap();
    let connector = host.load_connector("local_files", bytes).unwrap();
    assert_eq!(connector.manifest.id, "local_files");
    assert_eq!(connector.manifest.api_version, "0.1.2");
    let config = vec![("directory".to_owned(), dir.path().display().to_string())];
    let grants = Grants {
        read_paths: vec![dir.path().to_path_buf()],
        ..Grants::default()
    };
    let page = host.sync(&connector, &config, None, &grants).unwrap();
    let titles: Vec<&str> = page.items.iter().map(|i| i.title.as_str()).collect();
    assert_eq!(titles, ["a.md", "b.txt"]);
    assert_eq!(page.items[0].content, "# Standup\nMoved to 9:45");
    assert!(page.done);
    // the compiled component was cached, and a second load uses it
    let cached = std::fs::read_dir(cache.path()).unwrap().count();
    assert_eq!(cached, 1);
    host.load_connector("local_files", bytes).unwrap();
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1);
}

/// In the real WASI sandbox, not only natively: a binary file and symbolic links (one to
/// a file inside the grant, one to a file outside it) are named as skipped, never failed
/// and never followed.
#[test]
fn the_builtin_local_files_connector_names_binary_files_and_links_as_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let granted = dir.path().join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::fs::write(granted.join("a.md"), "Kept as text").unwrap();
    std::fs::write(granted.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "SECRET OUTSIDE THE GRANT").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("a.md", granted.join("again.md")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), granted.join("out.txt"))
            .unwrap();
    }
    let host = host(tight());
    let connector = host
        .load_connector(
            "local_files",
            levh_builtins::connector("local_files").unwrap(),
        )
        .unwrap();
    let config = vec![("directory".to_owned(), granted.display().to_string())];
    let grants = Grants {
        read_paths: vec![granted.clone()],
        ..Grants::default()
    };
    let page = host.sync(&connector, &config, None, &grants).unwrap();
    let titles: Vec<&str> = page.items.iter().map(|i| i.title.as_str()).collect();
    assert_eq!(titles, ["a.md"], "{page:?}");
    assert_eq!(page.errors, [], "nothing failed");
    let skipped: Vec<(&str, &str)> = page
        .skipped
        .iter()
        .map(|s| (s.source_id.as_str(), s.reason.as_str()))
        .collect();
    let expected: &[&str] = if cfg!(unix) {
        &["again.md", "logo.png", "out.txt"]
    } else {
        &["logo.png"]
    };
    assert_eq!(
        skipped.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        expected,
        "{skipped:?}"
    );
    for (id, why) in &skipped {
        let words = if *id == "logo.png" {
            "binary file"
        } else {
            "a symbolic link"
        };
        assert!(why.starts_with(words), "{id}: {why}");
    }
    assert!(!format!("{page:?}").contains("SECRET"));
}

#[test]
fn sync_fails_when_directory_not_granted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "private").unwrap();
    let host = host(tight());
    let connector = host
        .load_connector(
            "local_files",
            levh_builtins::connector("local_files").unwrap(),
        )
        .unwrap();
    let config = vec![("directory".to_owned(), dir.path().display().to_string())];
    let err = host
        .sync(&connector, &config, None, &Grants::default())
        .unwrap_err();
    assert!(matches!(err, PluginError::Denied { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("local_files")
            && text.contains("read-path `directory`")
            && text.contains("levh connector grant"),
        "{text}"
    );
}

#[test]
fn reading_inside_the_grant_is_allowed() {
    let sandbox = sandbox();
    let page = run(&host(tight()), "read-granted", &sandbox).unwrap();
    assert_eq!(page.items[0].content, "inside the grant");
}

#[test]
fn reading_outside_the_grant_is_refused_every_way() {
    let sandbox = sandbox();
    let err = run(&host(tight()), "read-outside", &sandbox).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("denied: every read outside the grant failed"),
        "{text}"
    );
    assert!(!text.contains("SECRET"));
}

/// Through the SDK's reader, each way out of the grant is the typed `denied` naming its
/// path (not the sandbox's errno text), and reaches the host as a denial.
#[test]
fn the_sdks_reader_types_every_read_outside_the_grant_as_denied() {
    let sandbox = sandbox();
    let err = run(&host(tight()), "read-outside-sdk", &sandbox).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            PluginError::Guest {
                kind: levh_plugins::GuestErrorKind::Denied,
                ..
            }
        ),
        "{text}"
    );
    for path in ["/etc/passwd", "/../outside.txt", "/link-out/outside.txt"] {
        assert!(
            text.contains(&format!("{path}: outside the directories levh granted")),
            "{path}: {text}"
        );
    }
    assert!(!text.contains("SECRET"));
}

#[test]
fn writing_is_refused_even_inside_the_grant() {
    let sandbox = sandbox();
    let err = run(&host(tight()), "write", &sandbox).unwrap_err();
    assert!(err.to_string().contains("write refused"), "{err}");
    assert!(!sandbox.granted.join("planted.txt").exists());
}

#[test]
fn sockets_are_refused() {
    let sandbox = sandbox();
    let err = run(&host(tight()), "socket", &sandbox).unwrap_err();
    assert!(err.to_string().contains("socket refused"), "{err}");
}

#[test]
fn a_plugin_sees_no_environment_and_no_arguments() {
    std::env::var("PATH").unwrap();
    let sandbox = sandbox();
    let page = run(&host(tight()), "env", &sandbox).unwrap();
    assert_eq!(page.items[0].content, "[] []");
}

#[test]
fn an_endless_loop_is_stopped_by_the_deadline_and_the_host_carries_on() {
    let sandbox = sandbox();
    let host = host(tight());
    let err = run(&host, "loop", &sandbox).unwrap_err();
    assert!(matches!(err, PluginError::Trapped { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("hostile 6.6.6 stopped: ran past its time limit"),
        "{err}"
    );
    assert_eq!(
        run(&host, "ok", &sandbox).unwrap().items.len(),
        1,
        "the next call is fine"
    );
}

#[test]
fn unbounded_allocation_is_stopped_by_the_memory_cap() {
    let sandbox = sandbox();
    let host = host(tight());
    let err = run(&host, "alloc", &sandbox).unwrap_err();
    assert!(
        err.to_string()
            .contains("hostile 6.6.6 stopped: ran past its memory limit of 96 MiB"),
        "{err}"
    );
    assert_eq!(run(&host, "ok", &sandbox).unwrap().items.len(), 1);
}

#[test]
fn a_gigantic_page_is_refused() {
    let sandbox = sandbox();
    let host = host(Limits {
        memory_bytes: 256 << 20,
        ..tight()
    });
    let err = run(&host, "giant", &sandbox).unwrap_err();
    assert!(err.to_string().contains("over the 16 MiB limit"), "{err}");
    assert_eq!(run(&host, "ok", &sandbox).unwrap().items.len(), 1);
}

#[test]
fn a_panic_becomes_an_error_naming_the_plugin() {
    let sandbox = sandbox();
    let host = host(tight());
    let err = run(&host, "panic", &sandbox).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("hostile 6.6.6 stopped: panicked"),
        "{text}"
    );
    assert!(
        text.contains("the hostile guest panics on purpose (at tests/guests/hostile/src/lib.rs"),
        "{text}"
    );
    assert_eq!(run(&host, "ok", &sandbox).unwrap().items.len(), 1);
}

#[test]
fn files_that_are_not_connectors_are_refused_with_a_reason() {
    let host = host(tight());
    let err = host.load_connector("notes.txt", b"hello").unwrap_err();
    assert!(
        err.to_string()
            .contains("notes.txt is not a levh connector: not a WebAssembly file"),
        "{err}"
    );
    let core_module = b"\0asm\x01\0\0\0";
    let err = host.load_connector("core.wasm", core_module).unwrap_err();
    assert!(err.to_string().contains("core WebAssembly module"), "{err}");
}

/// A component that imports one instance, `name`, exporting `function` when given (it
/// has no exports: the import checks run before anything is instantiated).
fn component_importing(name: &str, function: Option<&str>) -> Vec<u8> {
    use wasm_encoder::{
        Component, ComponentImportSection, ComponentTypeRef, ComponentTypeSection, InstanceType,
        PrimitiveValType,
    };
    let mut instance = InstanceType::new();
    if let Some(function) = function {
        instance
            .ty()
            .function()
            .params(std::iter::empty::<(&str, PrimitiveValType)>())
            .result(None);
        instance.export(function, ComponentTypeRef::Func(0));
    }
    let mut types = ComponentTypeSection::new();
    types.instance(&instance);
    let mut imports = ComponentImportSection::new();
    imports.import(name, ComponentTypeRef::Instance(0));
    let mut component = Component::new();
    component.section(&types).section(&imports);
    component.finish()
}

/// What cannot run is refused when it is installed, with a sentence its author can act
/// on, and "not a levh connector" is kept for files that are not one.
#[test]
fn components_that_cannot_run_here_are_refused_at_install_saying_why() {
    let host = host(tight());
    let refusal = |bytes: &[u8]| {
        host.load_connector("guest.wasm", bytes)
            .unwrap_err()
            .to_string()
    };

    // Built against a plugin API patch newer than this levh, using an import it added.
    let newer = refusal(&component_importing(
        "levh:plugin/host@0.1.3",
        Some("brand-new-call"),
    ));
    assert!(
        newer.starts_with(
            "guest.wasm cannot be installed as a connector: it was built for plugin API 0.1.3 \
             (it uses `levh:plugin/host@0.1.3`); this levh serves 0.1.0–0.1.2"
        ),
        "{newer}"
    );
    // Built against the next minor version.
    let next = refusal(&component_importing("levh:plugin/host@0.2.0", None));
    assert!(next.contains("it was built for plugin API 0.2.0"), "{next}");
    // Importing what levh never links for plugins.
    let foreign = refusal(&component_importing(
        "example:gadget/radio@1.0.0",
        Some("tune"),
    ));
    assert!(
        foreign.starts_with(
            "guest.wasm cannot be installed as a connector: it imports `example:gadget/radio@1.0.0`, \
             which levh does not offer to plugins"
        ),
        "{foreign}"
    );
    for text in [&newer, &next, &foreign] {
        assert!(!text.contains("is not a levh connector"), "{text}");
        assert!(
            !text.contains("matching implementation"),
            "linker words: {text}"
        );
    }

    // Importing wasi:http (the SDK's `http` feature) while asking for no host: every sync
    // would fail to link, so it is refused at install.
    let root = crate::support::repository_root();
    let args = [
        "-p",
        "levh-test-guest-hostile",
        "--features",
        "http",
        "--target",
        "wasm32-wasip2",
        "--profile",
        "guest",
        "--target-dir",
        "target/guests-http",
    ];
    let status = crate::support::guest_cargo(&root, &args).status().unwrap();
    assert!(
        status.success(),
        "building the hostile guest with http failed"
    );
    let bytes = std::fs::read(
        root.join("target/guests-http/wasm32-wasip2/guest/levh_test_guest_hostile.wasm"),
    )
    .unwrap();
    let http = refusal(&bytes);
    assert!(
        http.starts_with(
            "guest.wasm cannot be installed as a connector: it imports wasi:http but asks for no \
             http host in its manifest"
        ),
        "{http}"
    );
    // Without the feature the same guest installs.
    host.load_connector("hostile.wasm", hostile_bytes())
        .unwrap();
}

#[test]
fn a_guest_of_the_older_0_1_0_package_loads_on_the_0_1_1_bindings() {
    // The built-in scorers are built against `wit/levh-plugin@0.1.0` (scorers gained
    // nothing in 0.1.1): their import of `levh:plugin/host@0.1.0` links to the host's
    // 0.1.2 interface by semver; the recall tests with `--scorer recency` run them.
    let cache = tempfile::tempdir().unwrap();
    let host = PluginHost::new(Some(cache.path().to_path_buf())).unwrap();
    let scorer = host
        .load_scorer("recency", levh_builtins::scorer("recency").unwrap())
        .unwrap();
    assert_eq!(scorer.manifest.api_version, "0.1.0");
}
