//! levh-connector-sdk: everything a connector needs to be a levh plugin.
//!
//! A connector implements [`Guest`] (two functions: `manifest` and `sync`) and exports
//! itself with [`export_connector!`]. It parses; the host stores, embeds, redacts and
//! decides. Files come through read-only directories the user granted (the host passes
//! their guest paths in the config), and nothing else is reachable.
//!
//! ```text
//! struct Notes;
//! impl levh_connector_sdk::Guest for Notes { /* manifest(), sync() */ }
//! levh_connector_sdk::export_connector!(Notes);
//! ```

#[cfg(feature = "http")]
pub mod http;

/// The generated bindings of the `connector` world.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "connector",
        path: "../../wit/levh-plugin@0.1.0",
        default_bindings_module: "levh_connector_sdk::bindings",
        pub_export_macro: true,
        export_macro_name: "export_connector",
    });
}

pub use bindings::levh::plugin::host::{Level, log};
pub use bindings::levh::plugin::types::{
    Capability, Config, ConfigKey, ConfigType, Error, Item, ItemError, Manifest, Page, Person,
};
pub use bindings::{Guest, export_connector};

/// The plugin API version this SDK implements; stamped into every manifest.
pub const API_VERSION: &str = "0.1.0";

/// A setting for a manifest's `config` list.
pub fn setting(
    name: &str,
    value_type: ConfigType,
    required: bool,
    default: Option<&str>,
    help: &str,
) -> ConfigKey {
    ConfigKey {
        name: name.into(),
        value_type,
        help: help.into(),
        required,
        default_value: default.map(str::to_owned),
    }
}

/// Looks up a config value.
pub fn config_value<'a>(config: &'a Config, key: &str) -> Option<&'a str> {
    config
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A required config value, or the `invalid-config` error naming it.
pub fn required<'a>(config: &'a Config, key: &str) -> Result<&'a str, Error> {
    config_value(config, key)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| Error::InvalidConfig(format!("`{key}` is required")))
}

/// An optional integer config value, or the `invalid-config` error naming it.
pub fn integer(config: &Config, key: &str, default: u64) -> Result<u64, Error> {
    match config_value(config, key) {
        None => Ok(default),
        Some(text) => text.trim().parse().map_err(|_| {
            Error::InvalidConfig(format!("`{key}` must be a whole number, got {text:?}"))
        }),
    }
}

/// Logs through the host, which tags the line with the plugin's id.
pub fn info(message: &str) {
    log(Level::Info, message);
}
