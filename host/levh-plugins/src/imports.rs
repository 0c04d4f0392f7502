//! What a component imports, checked before it is installed or run: against the plugin
//! API versions this levh serves, against what the host links at all, and against what
//! its own manifest asks for. Each refusal is a sentence a plugin's author can act on,
//! never wasmtime's linker text.

use wasmtime::component::{Component, Linker};

use crate::wit::ApiVersion;
use crate::{Capability, Manifest};

/// The package every levh import and export belongs to.
const LEVH_PACKAGE: &str = "levh:plugin/";
/// The package of the HTTP imports a network connector uses.
const WASI_HTTP: &str = "wasi:http/";

/// The names a component imports and exports (`levh:plugin/host@0.1.2`,
/// `wasi:http/types@0.2.12`, ...).
pub(crate) fn interface_names(component: &Component, engine: &wasmtime::Engine) -> Interfaces {
    let ty = component.component_type();
    Interfaces {
        imports: ty
            .imports(engine)
            .map(|(name, _)| name.to_owned())
            .collect(),
        exports: ty
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect(),
    }
}

/// A component's import and export names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Interfaces {
    pub(crate) imports: Vec<String>,
    pub(crate) exports: Vec<String>,
}

/// The plugin API version of a levh interface name (`levh:plugin/host@0.1.3` → `0.1.3`).
fn levh_version(name: &str) -> Option<&str> {
    name.strip_prefix(LEVH_PACKAGE)?
        .split_once('@')
        .map(|(_, v)| v)
}

/// The sentence for a component built against a plugin API this levh does not serve.
fn built_for(version: &str, name: &str) -> String {
    format!(
        "it was built for plugin API {version} (it uses `{name}`); this levh serves {} — \
         update levh, or build it against an SDK for {}",
        ApiVersion::served_range(),
        ApiVersion::NEWEST,
    )
}

/// Refuses a component whose levh interfaces are of another minor version (0.2 where this
/// levh serves 0.1): a check of names, before anything is linked.
pub(crate) fn check_api_versions(interfaces: &Interfaces) -> Result<(), String> {
    for name in interfaces.imports.iter().chain(&interfaces.exports) {
        if let Some(version) = levh_version(name)
            && ApiVersion::for_guest(version).is_err()
        {
            return Err(built_for(version, name));
        }
    }
    Ok(())
}

/// Why a component that failed to instantiate cannot link here, in words its author can
/// act on: an import the host does not link for plugins, or one a newer 0.1 patch added
/// (a newer patch that uses nothing new links and runs: patches only add imports).
/// `None` when its imports link and the failure was something else. Asked only after a
/// failure, so a component that runs is type-checked once, by its instantiation.
pub(crate) fn why_unlinkable<T>(
    component: &Component,
    linker: &Linker<T>,
    interfaces: &Interfaces,
) -> Option<String> {
    let error = linker.instantiate_pre(component).err()?;
    let text = format!("{error:#}");
    // wasmtime names the import in backquotes; find it among the component's own.
    let missing = interfaces
        .imports
        .iter()
        .find(|name| text.contains(&format!("`{name}`")));
    Some(match missing {
        Some(name) => match levh_version(name) {
            Some(version) if !ApiVersion::serves(version) => built_for(version, name),
            _ => format!(
                "it imports `{name}`, which levh does not offer to plugins (they get WASI 0.2, \
                 wasi:http when their manifest asks for a host, and levh:plugin {})",
                ApiVersion::served_range()
            ),
        },
        None => format!("its imports do not match what levh offers to plugins: {text}"),
    })
}

/// Refuses a connector whose imports and manifest disagree: HTTP imported but no host
/// asked for (every sync would fail to link, since a connector without hosts runs
/// without wasi:http).
pub(crate) fn check_against_manifest(
    interfaces: &Interfaces,
    manifest: &Manifest,
) -> Result<(), String> {
    let imports_http = interfaces
        .imports
        .iter()
        .any(|name| name.starts_with(WASI_HTTP));
    let asks_for_a_host = manifest
        .capabilities
        .iter()
        .any(|c| matches!(c, Capability::HttpHost(_)));
    if imports_http && !asks_for_a_host {
        return Err(
            "it imports wasi:http but asks for no http host in its manifest — add an http-host \
             capability naming the host it calls, or build it without the SDK's `http` feature"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interfaces(imports: &[&str], exports: &[&str]) -> Interfaces {
        Interfaces {
            imports: imports.iter().map(|s| (*s).to_owned()).collect(),
            exports: exports.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn manifest(capabilities: Vec<Capability>) -> Manifest {
        Manifest {
            id: "x".into(),
            version: "1.0.0".into(),
            description: "x".into(),
            api_version: "0.1.2".into(),
            config: Vec::new(),
            capabilities,
        }
    }

    #[test]
    fn the_words_for_a_newer_plugin_api_name_the_versions_served() {
        assert_eq!(levh_version("levh:plugin/host@0.1.3"), Some("0.1.3"));
        assert_eq!(levh_version("wasi:io/streams@0.2.6"), None);
        let refusal = built_for("0.1.3", "levh:plugin/host@0.1.3");
        assert!(
            refusal.starts_with(
                "it was built for plugin API 0.1.3 (it uses `levh:plugin/host@0.1.3`); this levh serves 0.1.0–0.1.2"
            ),
            "{refusal}"
        );
    }

    #[test]
    fn http_imported_without_a_host_in_the_manifest_is_refused() {
        let http = interfaces(&["wasi:http/types@0.2.6", "levh:plugin/host@0.1.2"], &[]);
        let refusal = check_against_manifest(&http, &manifest(Vec::new())).unwrap_err();
        assert!(
            refusal.starts_with("it imports wasi:http but asks for no http host"),
            "{refusal}"
        );
        let asks = manifest(vec![Capability::HttpHost("api.example.com".into())]);
        assert_eq!(check_against_manifest(&http, &asks), Ok(()));
        let no_http = interfaces(&["levh:plugin/host@0.1.2"], &[]);
        assert_eq!(
            check_against_manifest(&no_http, &manifest(Vec::new())),
            Ok(())
        );
    }
}
