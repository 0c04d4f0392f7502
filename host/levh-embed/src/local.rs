//! The `local` embedder: a sentence-transformers model (all-MiniLM-L6-v2 by default)
//! exported to ONNX, run with ONNX Runtime through `ort`, tokenised with `tokenizers`.
//!
//! Nothing is loaded when the embedder is built: the runtime library and the model are
//! opened on the first [`Embedder::embed`] call, so `levh mcp stdio` answers `initialize`
//! in milliseconds and a broken model only fails the calls that need it.
//!
//! The pooling is what sentence-transformers does for this model: mean of
//! `last_hidden_state` over the attention mask, then L2 normalisation; texts are truncated
//! at 256 tokens (the model's `max_seq_length`) and each batch is padded to its longest
//! text. The model's shipped `tokenizer.json` pads and truncates everything to 128 tokens
//! instead, so both settings are overridden here — otherwise long texts are silently cut
//! and short ones pay for 128 positions.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use levh_core::{EmbedError, Embedder};
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::EmbedderError;

/// The model's `max_seq_length` in sentence-transformers.
pub const MAX_TOKENS: usize = 256;

/// Texts per model run: bounds the memory a large backfill needs, and 32 is where the
/// throughput of this model on a CPU stops improving.
pub const BATCH_SIZE: usize = 32;

/// The file in a model directory that names the model (written by `levh models install`
/// and by `scripts/fetch-test-assets.sh`).
pub const MANIFEST: &str = "levh-model.toml";

/// Files a model directory must hold.
pub const MODEL_FILES: [&str; 2] = ["model.onnx", "tokenizer.json"];

/// A model directory and a runtime library that were found on disk. Locating reads only
/// two small text files (the manifest and `config.json`); nothing is loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalModel {
    /// Directory holding `model.onnx`, `tokenizer.json` and (optionally) `config.json`
    /// and `levh-model.toml`.
    pub dir: PathBuf,
    /// The ONNX Runtime shared library (`libonnxruntime.so.*`).
    pub runtime: PathBuf,
    /// The id recorded with every vector this model makes.
    pub id: String,
    /// Vector dimension.
    pub dimension: usize,
}

#[derive(Debug, serde::Deserialize)]
struct Manifest {
    id: Option<String>,
    dimension: Option<usize>,
}

#[derive(Debug, serde::Deserialize)]
struct ModelConfig {
    hidden_size: Option<usize>,
}

impl LocalModel {
    /// Checks that the model files and the runtime library exist and reads the model's id
    /// and dimension: from `levh-model.toml` when present, else the directory's name and
    /// `config.json`'s `hidden_size`.
    pub fn locate(dir: &Path, runtime: &Path) -> Result<Self, EmbedderError> {
        for file in MODEL_FILES {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(EmbedderError::ModelMissing {
                    path,
                    hint: "run `levh models install`, or point LEVH_MODEL_DIR at a directory holding model.onnx and tokenizer.json",
                });
            }
        }
        if !runtime.is_file() {
            return Err(EmbedderError::ModelMissing {
                path: runtime.to_owned(),
                hint: "run `levh models install`, or point ORT_DYLIB_PATH at libonnxruntime.so.<version>",
            });
        }
        let (id, dimension) = Self::identity(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            runtime: runtime.to_owned(),
            id,
            dimension,
        })
    }

    /// The id (`local/<name>`) and dimension of the model in `dir`.
    pub fn identity(dir: &Path) -> Result<(String, usize), EmbedderError> {
        let manifest_path = dir.join(MANIFEST);
        let manifest = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => toml::from_str::<Manifest>(&text).map_err(|e| EmbedderError::Model {
                path: manifest_path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Manifest {
                id: None,
                dimension: None,
            },
            Err(e) => {
                return Err(EmbedderError::Model {
                    path: manifest_path,
                    message: e.to_string(),
                });
            }
        };
        let dimension = match manifest.dimension {
            Some(dimension) => dimension,
            None => {
                let config_path = dir.join("config.json");
                let text =
                    std::fs::read_to_string(&config_path).map_err(|e| EmbedderError::Model {
                        path: config_path.clone(),
                        message: format!(
                            "{e} (the dimension comes from config.json's hidden_size or {MANIFEST}'s dimension)"
                        ),
                    })?;
                serde_json::from_str::<ModelConfig>(&text)
                    .map_err(|e| EmbedderError::Model {
                        path: config_path.clone(),
                        message: e.to_string(),
                    })?
                    .hidden_size
                    .ok_or_else(|| EmbedderError::Model {
                        path: config_path,
                        message: "no hidden_size".into(),
                    })?
            }
        };
        if dimension == 0 {
            return Err(EmbedderError::Model {
                path: dir.join(MANIFEST),
                message: "dimension 0".into(),
            });
        }
        // Not the folder's name: the same model copied under another name would lose
        // its vectors, and two models in folders of one name would share them.
        let name = match manifest.id {
            Some(id) => id,
            None => fingerprint_id(&dir.join("model.onnx"))?,
        };
        // The prefix keeps a local model's vectors apart from a remote model that
        // happens to carry the same name.
        Ok((format!("local/{name}"), dimension))
    }
}

/// The id of a model nothing names (`onnx-` and the start of its weights' sha256): the
/// same file gets the same id from any folder on any machine, and two different models
/// never share one. Reading it hashes the file; a `levh-model.toml` with an `id` skips
/// that.
pub fn fingerprint_id(model: &Path) -> Result<String, EmbedderError> {
    use sha2::Digest as _;
    let mut file = std::fs::File::open(model).map_err(|e| EmbedderError::Model {
        path: model.to_owned(),
        message: e.to_string(),
    })?;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| EmbedderError::Model {
        path: model.to_owned(),
        message: e.to_string(),
    })?;
    let digest = hasher.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("onnx-{hex}"))
}

/// The runtime library, opened once per process. ONNX Runtime allows one environment per
/// process: a second `init_from` would keep using the first library, so the path it was
/// opened from is remembered and a different one is refused with a clear error.
static RUNTIME: Mutex<Option<(PathBuf, ort::environment::Environment)>> = Mutex::new(None);

fn with_runtime<T>(
    path: &Path,
    f: impl FnOnce(&ort::environment::Environment) -> Result<T, EmbedderError>,
) -> Result<T, EmbedderError> {
    let mut runtime = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if runtime.is_none() {
        let started = Instant::now();
        let environment = ort::init_from(path)
            .map_err(|e| EmbedderError::Runtime {
                path: path.to_owned(),
                message: e.to_string(),
            })?
            .with_name("levh")
            .with_telemetry(false)
            .build()
            .map_err(|e| EmbedderError::Runtime {
                path: path.to_owned(),
                message: e.to_string(),
            })?;
        tracing::debug!(path = %path.display(), elapsed = ?started.elapsed(), "ONNX Runtime loaded");
        *runtime = Some((path.to_owned(), environment));
    }
    let Some((loaded_from, environment)) = runtime.as_ref() else {
        unreachable!("set above")
    };
    if loaded_from != path {
        return Err(EmbedderError::Runtime {
            path: path.to_owned(),
            message: format!(
                "this process already loaded ONNX Runtime from {}; one process can use only one",
                loaded_from.display()
            ),
        });
    }
    f(environment)
}

/// Whether the runtime library at `path` opens (loading it into this process if it is
/// not already). For `levh models status`.
pub fn check_runtime(path: &Path) -> Result<(), EmbedderError> {
    with_runtime(path, |_| Ok(()))
}

/// The loaded model.
#[derive(Debug)]
struct Loaded {
    tokenizer: Tokenizer,
    /// One session per core ([`sessions_for_this_machine`]), each running on the calling
    /// thread alone: a text takes a free one, a batch is dealt across them.
    sessions: Vec<Mutex<Session>>,
    /// BERT exports take `token_type_ids`; some exports drop it.
    token_types: bool,
    output: String,
}

/// The `local` embedder. See the module docs.
#[derive(Debug)]
pub struct LocalEmbedder {
    model: LocalModel,
    loaded: OnceLock<Arc<Loaded>>,
    /// Serialises loading, so concurrent first calls load once.
    loading: Mutex<()>,
}

impl LocalEmbedder {
    /// An embedder for a located model. Loads nothing.
    pub fn new(model: LocalModel) -> Self {
        Self {
            model,
            loaded: OnceLock::new(),
            loading: Mutex::new(()),
        }
    }

    /// The model it runs.
    pub fn model(&self) -> &LocalModel {
        &self.model
    }

    /// Whether the model has been loaded (by an embed call or [`Self::load`]).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// Loads the runtime and the model now. A failed load is not remembered: the next
    /// call tries again (the files may have been fixed meanwhile).
    pub fn load(&self) -> Result<(), EmbedderError> {
        self.loaded().map(|_| ())
    }

    fn loaded(&self) -> Result<Arc<Loaded>, EmbedderError> {
        if let Some(loaded) = self.loaded.get() {
            return Ok(loaded.clone());
        }
        let _guard = self.loading.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(loaded) = self.loaded.get() {
            return Ok(loaded.clone());
        }
        let loaded = Arc::new(self.load_now()?);
        Ok(self.loaded.get_or_init(|| loaded).clone())
    }

    fn load_now(&self) -> Result<Loaded, EmbedderError> {
        let started = Instant::now();
        let model_path = self.model.dir.join("model.onnx");
        let sessions = (0..sessions_for_this_machine())
            .map(|_| {
                with_runtime(&self.model.runtime, |environment| {
                    Session::builder(environment)
                        .and_then(|builder| Ok(builder.with_intra_threads(1)?))
                        .and_then(|builder| Ok(builder.with_intra_op_spinning(false)?))
                        .and_then(|mut builder| builder.commit_from_file(&model_path))
                        .map_err(|e| EmbedderError::Model {
                            path: model_path.clone(),
                            message: e.to_string(),
                        })
                })
            })
            .collect::<Result<Vec<Session>, _>>()?;
        let session = &sessions[0];
        let tokenizer_path = self.model.dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| EmbedderError::Model {
                path: tokenizer_path.clone(),
                message: e.to_string(),
            })?;
        let padding = match tokenizer.get_padding() {
            // Keep the file's pad token and id; only the strategy changes.
            Some(padding) => PaddingParams {
                strategy: PaddingStrategy::BatchLongest,
                ..padding.clone()
            },
            None => PaddingParams::default(),
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedderError::Model {
                path: tokenizer_path.clone(),
                message: e.to_string(),
            })?;
        let inputs: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        for required in ["input_ids", "attention_mask"] {
            if !inputs.contains(&required) {
                return Err(EmbedderError::Model {
                    path: model_path,
                    message: format!(
                        "the model has no `{required}` input (inputs: {})",
                        inputs.join(", ")
                    ),
                });
            }
        }
        let token_types = inputs.contains(&"token_type_ids");
        let output = session
            .outputs()
            .iter()
            .map(|o| o.name().to_owned())
            .find(|name| name == "last_hidden_state")
            .or_else(|| session.outputs().first().map(|o| o.name().to_owned()))
            .ok_or_else(|| EmbedderError::Model {
                path: model_path.clone(),
                message: "the model has no outputs".into(),
            })?;
        tracing::info!(
            model = %self.model.id,
            elapsed = ?started.elapsed(),
            "local embedding model loaded"
        );
        Ok(Loaded {
            tokenizer,
            sessions: sessions.into_iter().map(Mutex::new).collect(),
            token_types,
            output,
        })
    }

    fn embed_batch(&self, loaded: &Loaded, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let encodings = loaded
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedderError::Inference(format!("tokenising: {e}")))?;
        let batch = encodings.len();
        let length = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(batch * length);
        let mut mask = Vec::with_capacity(batch * length);
        let mut types = Vec::with_capacity(batch * length);
        for encoding in &encodings {
            ids.extend(encoding.get_ids().iter().map(|&x| i64::from(x)));
            mask.extend(encoding.get_attention_mask().iter().map(|&x| i64::from(x)));
            types.extend(encoding.get_type_ids().iter().map(|&x| i64::from(x)));
        }
        let shape = [batch as i64, length as i64];
        let tensor = |data: Vec<i64>| {
            Tensor::from_array((shape, data))
                .map_err(|e| EmbedderError::Inference(format!("building an input tensor: {e}")))
        };
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = vec![
            ("input_ids".into(), tensor(ids)?.into()),
            ("attention_mask".into(), tensor(mask.clone())?.into()),
        ];
        if loaded.token_types {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let mut session = loaded.free_session();
        let outputs = session
            .run(inputs)
            .map_err(|e| EmbedderError::Inference(e.to_string()))?;
        let (output_shape, hidden) = outputs[loaded.output.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|e| EmbedderError::Inference(format!("reading {}: {e}", loaded.output)))?;
        let width = self.model.dimension;
        if output_shape.len() != 3
            || output_shape[0] != batch as i64
            || output_shape[1] != length as i64
            || output_shape[2] != width as i64
        {
            return Err(EmbedderError::Inference(format!(
                "the model's {} has shape {output_shape:?}, expected [{batch}, {length}, {width}]",
                loaded.output
            )));
        }
        Ok((0..batch)
            .map(|row| {
                mean_pool(
                    &hidden[row * length * width..(row + 1) * length * width],
                    &mask[row * length..(row + 1) * length],
                    width,
                )
            })
            .collect())
    }
}

/// Sessions of the model a process keeps: one per core, at most four. Each runs one
/// thread without spinning: ONNX Runtime's default (a pool of every core, threads
/// spinning while they wait) made one text 17 ms instead of 9 on 2 cores as soon as
/// anything else ran (a server's own requests, an index build), and a batch of 32 82
/// texts/s instead of 127 (measured with Python onnxruntime 1.31.1 on the test model, the
/// int8 MiniLM, 40-token texts, two builds running beside it; the README's "Embedding
/// throughput" has the quiet machine's figures).
fn sessions_for_this_machine() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4))
}

impl Loaded {
    /// A session no other thread is using, else the first one once it is free.
    fn free_session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.sessions
            .iter()
            .find_map(|session| session.try_lock().ok())
            .unwrap_or_else(|| self.sessions[0].lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Mean of the token vectors the mask keeps, L2-normalised (a zero vector stays zero).
fn mean_pool(hidden: &[f32], mask: &[i64], width: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; width];
    let mut count = 0.0f32;
    for (token, &keep) in hidden.chunks_exact(width).zip(mask) {
        if keep != 0 {
            sum.iter_mut().zip(token).for_each(|(s, x)| *s += x);
            count += 1.0;
        }
    }
    // sentence-transformers clamps the count at 1e-9; with at least [CLS] and [SEP]
    // always present it is never zero, but a bad tokenizer must not produce NaN.
    let count = count.max(1e-9);
    sum.iter_mut().for_each(|s| *s /= count);
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        sum.iter_mut().for_each(|x| *x /= norm);
    }
    sum
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.model.id
    }
    fn dimension(&self) -> usize {
        self.model.dimension
    }
    fn is_semantic(&self) -> bool {
        true
    }
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let loaded = self.loaded().map_err(EmbedError::new)?;
        let batches: Vec<&[&str]> = texts.chunks(BATCH_SIZE).collect();
        let workers = loaded.sessions.len().min(batches.len());
        if workers <= 1 {
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in batches {
                vectors.extend(self.embed_batch(&loaded, batch).map_err(EmbedError::new)?);
            }
            return Ok(vectors);
        }
        // Batches dealt across the sessions, each on a thread of its own; the vectors
        // come back in the texts' order.
        let mut done: Vec<Option<Result<Vec<Vec<f32>>, EmbedderError>>> =
            (0..batches.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|first| {
                    let (batches, loaded) = (&batches, &loaded);
                    scope.spawn(move || {
                        (first..batches.len())
                            .step_by(workers)
                            .map(|n| (n, self.embed_batch(loaded, batches[n])))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for handle in handles {
                // A panicked thread leaves its batches `None`: reported below.
                if let Ok(results) = handle.join() {
                    results.into_iter().for_each(|(n, r)| done[n] = Some(r));
                }
            }
        });
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in done {
            let batch = batch.unwrap_or_else(|| {
                Err(EmbedderError::Inference(
                    "an embedding thread panicked".into(),
                ))
            });
            vectors.extend(batch.map_err(EmbedError::new)?);
        }
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding_and_normalises() {
        // two tokens kept, one padding token that must not count
        let hidden = [1.0, 0.0, 3.0, 0.0, 100.0, 100.0];
        let v = mean_pool(&hidden, &[1, 1, 0], 2);
        assert!((v[0] - 1.0).abs() < 1e-6 && v[1].abs() < 1e-6, "{v:?}");
        let v = mean_pool(&[1.0, 1.0], &[1], 2);
        assert!((v[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    }

    #[test]
    fn a_fully_masked_text_gives_zeros_not_nan() {
        assert_eq!(mean_pool(&[1.0, 2.0], &[0], 2), vec![0.0, 0.0]);
    }

    #[test]
    fn locating_a_directory_without_the_model_names_the_missing_file() {
        let dir = std::env::temp_dir().join("levh-embed-no-model");
        std::fs::create_dir_all(&dir).unwrap();
        let error = LocalModel::locate(&dir, Path::new("/nonexistent/libonnxruntime.so"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("model.onnx"), "{error}");
        assert!(error.contains("levh models install"), "{error}");
    }
}
