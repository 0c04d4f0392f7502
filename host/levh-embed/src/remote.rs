//! Embedders that call a server: Ollama (`POST /api/embed`) and any OpenAI-compatible
//! `POST /v1/embeddings` (OpenAI, vLLM, LM Studio, llama.cpp's server, ...).
//!
//! Both are blocking (the engine's embed path is synchronous) and send texts in batches.
//! The dimension is whatever the model returns: it is learned from the first answer (or
//! set up front with `LEVH_EMBED_DIMENSION`), and an answer of another length is refused.

use std::sync::OnceLock;
use std::time::Duration;

use levh_core::{EmbedError, Embedder};
use serde::Deserialize;
use serde_json::json;

use crate::EmbedderError;

/// Texts per request: keeps requests and answers small enough for any server.
const BATCH_SIZE: usize = 32;

/// Answers larger than this are refused (32 vectors of 4096 floats as JSON are ~3 MB).
const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // Error statuses are read like any answer, so their body can be quoted.
        .http_status_as_error(false)
        .build()
        .into()
}

/// POSTs `body` as JSON (with the key as a bearer token) and reads the answer's text, at
/// most `limit` bytes; an error status is an error quoting the answer's start.
pub(crate) fn post_json(
    agent: &ureq::Agent,
    endpoint: &str,
    api_key: Option<&str>,
    body: &serde_json::Value,
    limit: u64,
) -> Result<String, String> {
    let mut request = agent.post(endpoint);
    if let Some(key) = api_key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut response = request.send_json(body).map_err(|e| e.to_string())?;
    let status = response.status();
    let text = response
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_string()
        .map_err(|e| format!("reading the answer: {e}"))?;
    if !status.is_success() {
        let mut excerpt: String = text.chars().take(300).collect();
        if excerpt.len() < text.len() {
            excerpt.push('…');
        }
        return Err(format!("HTTP {status}: {excerpt}"));
    }
    Ok(text)
}

/// Which protocol a [`RemoteEmbedder`] speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `POST {url}/api/embed` with `{model, input}` → `{embeddings}`.
    Ollama,
    /// `POST {url}/embeddings` with `{model, input}` → `{data: [{index, embedding}]}`,
    /// `url` ending in `/v1`.
    OpenAi,
}

/// An embedder behind an HTTP API.
#[derive(Debug)]
pub struct RemoteEmbedder {
    protocol: Protocol,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    id: String,
    dimension: OnceLock<usize>,
    agent: ureq::Agent,
}

impl RemoteEmbedder {
    /// An Ollama embedder: `url` like `http://127.0.0.1:11434`, `model` like
    /// `nomic-embed-text`.
    pub fn ollama(url: &str, model: &str) -> Self {
        Self::new(
            Protocol::Ollama,
            format!("{}/api/embed", url.trim_end_matches('/')),
            model,
            None,
        )
    }

    /// An OpenAI-compatible embedder: `url` like `https://api.openai.com/v1`.
    pub fn openai(url: &str, model: &str, api_key: Option<String>) -> Self {
        Self::new(
            Protocol::OpenAi,
            format!("{}/embeddings", url.trim_end_matches('/')),
            model,
            api_key,
        )
    }

    fn new(protocol: Protocol, endpoint: String, model: &str, api_key: Option<String>) -> Self {
        let prefix = match protocol {
            Protocol::Ollama => "ollama",
            Protocol::OpenAi => "openai",
        };
        Self {
            protocol,
            endpoint,
            model: model.to_owned(),
            api_key,
            id: format!("{prefix}/{model}"),
            dimension: OnceLock::new(),
            agent: agent(Duration::from_secs(120)),
        }
    }

    /// Fixes the dimension up front (otherwise learned from the first answer).
    pub fn with_dimension(self, dimension: usize) -> Self {
        let _ = self.dimension.set(dimension);
        self
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedderError> {
        let body = json!({ "model": self.model, "input": texts });
        let http = |message: String| EmbedderError::Http {
            url: self.endpoint.clone(),
            message,
        };
        let text = post_json(
            &self.agent,
            &self.endpoint,
            self.api_key.as_deref(),
            &body,
            MAX_ANSWER_BYTES,
        )
        .map_err(http)?;
        let vectors = match self.protocol {
            Protocol::Ollama => {
                #[derive(Deserialize)]
                struct Answer {
                    embeddings: Vec<Vec<f32>>,
                }
                serde_json::from_str::<Answer>(&text)
                    .map_err(|e| http(format!("unexpected answer ({e})")))?
                    .embeddings
            }
            Protocol::OpenAi => {
                #[derive(Deserialize)]
                struct Item {
                    index: usize,
                    embedding: Vec<f32>,
                }
                #[derive(Deserialize)]
                struct Answer {
                    data: Vec<Item>,
                }
                let mut items = serde_json::from_str::<Answer>(&text)
                    .map_err(|e| http(format!("unexpected answer ({e})")))?
                    .data;
                // The API does not promise input order; `index` does.
                items.sort_by_key(|item| item.index);
                items.into_iter().map(|item| item.embedding).collect()
            }
        };
        if vectors.len() != texts.len() {
            return Err(http(format!(
                "{} texts sent, {} vectors returned",
                texts.len(),
                vectors.len()
            )));
        }
        Ok(vectors)
    }

    fn check_dimension(&self, vectors: &mut [Vec<f32>]) -> Result<(), EmbedderError> {
        for vector in vectors.iter_mut() {
            if vector.is_empty() || vector.iter().any(|x| !x.is_finite()) {
                return Err(EmbedderError::Http {
                    url: self.endpoint.clone(),
                    message: "a returned vector is empty or not finite".into(),
                });
            }
            let expected = *self.dimension.get_or_init(|| vector.len());
            if vector.len() != expected {
                return Err(EmbedderError::Http {
                    url: self.endpoint.clone(),
                    message: format!(
                        "model {} returned a {}-d vector, expected {expected}-d",
                        self.model,
                        vector.len()
                    ),
                });
            }
            // Stored vectors are compared by dot product: they must be unit length,
            // whatever the server does.
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(())
    }
}

impl Embedder for RemoteEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    /// 0 until the first answer, unless set with [`RemoteEmbedder::with_dimension`].
    fn dimension(&self) -> usize {
        self.dimension.get().copied().unwrap_or(0)
    }
    fn is_semantic(&self) -> bool {
        true
    }
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH_SIZE) {
            let mut answer = self.request(batch).map_err(EmbedError::new)?;
            self.check_dimension(&mut answer).map_err(EmbedError::new)?;
            vectors.extend(answer);
        }
        Ok(vectors)
    }
}
