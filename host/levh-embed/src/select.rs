//! Choosing the embedder from the configuration.
//!
//! | setting | meaning | default |
//! |---|---|---|
//! | `LEVH_EMBEDDER` | `local`, `ollama`, `openai` or `hash` | `local` when a model and runtime are installed, else `hash` |
//! | `LEVH_MODEL_DIR` | the local model's directory | `$LEVH_HOME/models/local` |
//! | `ORT_DYLIB_PATH` | the ONNX Runtime library | the `libonnxruntime` file in `$LEVH_HOME/models/onnxruntime` |
//! | `LEVH_OLLAMA_URL`, `LEVH_OLLAMA_MODEL` | Ollama server and model | `http://127.0.0.1:11434`, `nomic-embed-text` |
//! | `LEVH_OPENAI_URL`, `LEVH_OPENAI_MODEL` | OpenAI-compatible base URL and model | `https://api.openai.com/v1`, `text-embedding-3-small` |
//! | `LEVH_OPENAI_API_KEY` (or `OPENAI_API_KEY`) | the key, from the environment only | none |
//! | `LEVH_EMBED_DIMENSION` | a remote model's dimension, if known up front | learned from the first answer |

use std::path::{Path, PathBuf};
use std::sync::Arc;

use levh_core::Embedder;

use crate::{EmbedderError, HashEmbedder, LocalEmbedder, LocalModel, RemoteEmbedder};

/// Which kind of embedder is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The deterministic, non-semantic hash embedder.
    Hash,
    /// The local ONNX model.
    Local,
    /// An Ollama server.
    Ollama,
    /// An OpenAI-compatible server.
    OpenAi,
}

impl Mode {
    /// The name used in `LEVH_EMBEDDER`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Hash => "hash",
            Mode::Local => "local",
            Mode::Ollama => "ollama",
            Mode::OpenAi => "openai",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = EmbedderError;
    fn from_str(text: &str) -> Result<Self, EmbedderError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "hash" => Ok(Mode::Hash),
            "local" => Ok(Mode::Local),
            "ollama" => Ok(Mode::Ollama),
            "openai" => Ok(Mode::OpenAi),
            other => Err(EmbedderError::Config {
                key: "LEVH_EMBEDDER",
                message: format!("'{other}' is not an embedder: use local, ollama, openai or hash"),
            }),
        }
    }
}

/// The chosen embedder.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The embedder the engine uses.
    pub embedder: Arc<dyn Embedder>,
    /// Its kind.
    pub mode: Mode,
    /// Whether the mode was chosen by default (no `LEVH_EMBEDDER`).
    pub automatic: bool,
    /// Why a better embedder is not in use, and how to get one (for `levh doctor`).
    pub warning: Option<String>,
    /// The local embedder, when that is the mode (to check or preload it).
    pub local: Option<Arc<LocalEmbedder>>,
}

/// Where `levh models install` puts the model.
pub fn installed_model_dir(home: &Path) -> PathBuf {
    home.join("models").join("local")
}

/// Where `levh models install` puts ONNX Runtime.
pub fn installed_runtime_dir(home: &Path) -> PathBuf {
    home.join("models").join("onnxruntime")
}

/// The ONNX Runtime library in a directory: the `libonnxruntime.so.<version>` (or
/// `.dylib`, `onnxruntime.dll`) file, not its provider plugins.
pub fn runtime_library_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.is_file()
                && path.file_name().is_some_and(|name| {
                    let name = name.to_string_lossy();
                    (name.starts_with("libonnxruntime.") || name == "onnxruntime.dll")
                        && !name.ends_with(".partial")
                })
        })
        .collect();
    // With both `libonnxruntime.so` and `libonnxruntime.so.1.31.1`, take the versioned
    // file (the other is usually a link to it).
    found.sort_by_key(|path| std::cmp::Reverse(path.as_os_str().len()));
    found.into_iter().next()
}

/// Where the local model and runtime are expected, from the settings.
pub fn local_paths(
    lookup: &dyn Fn(&str) -> Option<String>,
    home: &Path,
) -> (PathBuf, Option<PathBuf>) {
    let dir = lookup("LEVH_MODEL_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| installed_model_dir(home));
    let runtime = lookup("ORT_DYLIB_PATH")
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .or_else(|| runtime_library_in(&installed_runtime_dir(home)));
    (dir, runtime)
}

fn locate_local(
    lookup: &dyn Fn(&str) -> Option<String>,
    home: &Path,
) -> Result<LocalModel, EmbedderError> {
    let (dir, runtime) = local_paths(lookup, home);
    // Without a runtime, `locate` still checks the model files first and then names
    // where the runtime was expected, so the error points at the first thing missing.
    let runtime = runtime.unwrap_or_else(|| installed_runtime_dir(home).join("libonnxruntime.so"));
    LocalModel::locate(&dir, &runtime)
}

/// Picks the embedder. Builds it only: nothing is loaded and no server is called, so this
/// is cheap enough for every start-up. An explicitly chosen mode that cannot work is an
/// error; the default falls back to `hash` with a warning.
pub fn select(
    lookup: &dyn Fn(&str) -> Option<String>,
    home: &Path,
) -> Result<Selection, EmbedderError> {
    let chosen = lookup("LEVH_EMBEDDER")
        .filter(|mode| !mode.trim().is_empty())
        .map(|mode| mode.parse::<Mode>())
        .transpose()?;
    let setting = |key: &str, default: &str| {
        lookup(key)
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let dimension = lookup("LEVH_EMBED_DIMENSION")
        .map(|text| {
            text.trim()
                .parse::<usize>()
                .ok()
                .filter(|d| *d > 0)
                .ok_or(EmbedderError::Config {
                    key: "LEVH_EMBED_DIMENSION",
                    message: format!("'{text}' is not a positive whole number"),
                })
        })
        .transpose()?;
    let with_dimension = |embedder: RemoteEmbedder| match dimension {
        Some(d) => embedder.with_dimension(d),
        None => embedder,
    };
    let remote = |mode: Mode, embedder: RemoteEmbedder| Selection {
        embedder: Arc::new(with_dimension(embedder)),
        mode,
        automatic: false,
        warning: None,
        local: None,
    };
    Ok(match chosen {
        Some(Mode::Hash) => Selection {
            embedder: Arc::new(HashEmbedder::default()),
            mode: Mode::Hash,
            automatic: false,
            warning: Some("LEVH_EMBEDDER=hash: recall matches words, not meaning".into()),
            local: None,
        },
        // A model that cannot be used never stops levh from starting (an MCP client
        // would get no `initialize` at all): the hash embedder stands in, and the warning
        // says why (stderr, `levh doctor`).
        Some(Mode::Local) => match locate_local(lookup, home) {
            Ok(model) => {
                let local = Arc::new(LocalEmbedder::new(model));
                Selection {
                    embedder: local.clone(),
                    mode: Mode::Local,
                    automatic: false,
                    warning: None,
                    local: Some(local),
                }
            }
            Err(why) => {
                let warning = format!(
                    "LEVH_EMBEDDER=local, but the model cannot be used ({why}); the hash \
                     embedder stands in (recall matches words, not meaning) until it is fixed"
                );
                tracing::warn!("{warning}");
                Selection {
                    embedder: Arc::new(HashEmbedder::default()),
                    mode: Mode::Hash,
                    automatic: false,
                    warning: Some(warning),
                    local: None,
                }
            }
        },
        Some(Mode::Ollama) => remote(
            Mode::Ollama,
            RemoteEmbedder::ollama(
                &setting("LEVH_OLLAMA_URL", "http://127.0.0.1:11434"),
                &setting("LEVH_OLLAMA_MODEL", "nomic-embed-text"),
            ),
        ),
        Some(Mode::OpenAi) => {
            // The key comes from the environment only, never from config.toml, so it is
            // not left in a file next to the database.
            let key = ["LEVH_OPENAI_API_KEY", "OPENAI_API_KEY"]
                .iter()
                .find_map(|name| std::env::var(name).ok().filter(|k| !k.is_empty()));
            remote(
                Mode::OpenAi,
                RemoteEmbedder::openai(
                    &setting("LEVH_OPENAI_URL", "https://api.openai.com/v1"),
                    &setting("LEVH_OPENAI_MODEL", "text-embedding-3-small"),
                    key,
                ),
            )
        }
        None => match locate_local(lookup, home) {
            Ok(model) => {
                let local = Arc::new(LocalEmbedder::new(model));
                Selection {
                    embedder: local.clone(),
                    mode: Mode::Local,
                    automatic: true,
                    warning: None,
                    local: Some(local),
                }
            }
            Err(why) => Selection {
                embedder: Arc::new(HashEmbedder::default()),
                mode: Mode::Hash,
                automatic: true,
                warning: Some(format!(
                    "no local embedding model ({why}); recall matches words, not meaning. \
                     Install one with `levh models install`, or set LEVH_EMBEDDER=ollama|openai"
                )),
                local: None,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup_from(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn without_a_model_the_default_is_hash_with_a_warning_that_says_how_to_install() {
        let home = std::env::temp_dir().join("levh-embed-select-empty-home");
        let selection = select(&lookup_from(&[]), &home).unwrap();
        assert_eq!(selection.mode, Mode::Hash);
        assert!(selection.automatic);
        let warning = selection.warning.unwrap();
        assert!(warning.contains("levh models install"), "{warning}");
    }

    /// A model that cannot be used never stops levh from starting: the hash embedder
    /// stands in and the warning names the missing file.
    #[test]
    fn an_explicit_local_mode_without_a_model_falls_back_to_hash_naming_the_file() {
        let home = std::env::temp_dir().join("levh-embed-select-empty-home");
        let selection = select(&lookup_from(&[("LEVH_EMBEDDER", "local")]), &home).unwrap();
        assert_eq!(selection.mode, Mode::Hash);
        assert!(!selection.automatic);
        let warning = selection.warning.unwrap();
        assert!(warning.contains("model.onnx is missing"), "{warning}");
        assert!(warning.contains("stands in"), "{warning}");
    }

    #[test]
    fn an_unknown_mode_is_refused_with_the_choices() {
        let error = select(
            &lookup_from(&[("LEVH_EMBEDDER", "bert")]),
            Path::new("/nonexistent"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("LEVH_EMBEDDER") && error.contains("ollama"),
            "{error}"
        );
    }

    #[test]
    fn remote_modes_record_the_model_in_the_id() {
        let selection = select(
            &lookup_from(&[
                ("LEVH_EMBEDDER", "ollama"),
                ("LEVH_OLLAMA_MODEL", "all-minilm"),
            ]),
            Path::new("/nonexistent"),
        )
        .unwrap();
        assert_eq!(selection.embedder.model_id(), "ollama/all-minilm");
        assert_eq!(selection.embedder.dimension(), 0);
    }
}
