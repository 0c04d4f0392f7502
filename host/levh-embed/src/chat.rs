//! The language model `levh ask` may use to write its answer: any OpenAI-compatible chat
//! endpoint (`POST {LEVH_LLM_URL}/chat/completions`: Ollama's `/v1`, vLLM, llama.cpp's
//! server, LM Studio, a hosted one), configured by `LEVH_LLM_URL`, `LEVH_LLM_MODEL` and
//! optionally `LEVH_LLM_API_KEY`. Without `LEVH_LLM_URL` there is none and levh answers
//! deterministically. Blocking, like the embedders: the application layer is synchronous.

use std::time::Duration;

use levh_core::AnswerModel;
use serde::Deserialize;
use serde_json::json;

/// A reply larger than this is refused.
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// A model writing an answer on a small machine can take a while; not forever.
const TIMEOUT: Duration = Duration::from_secs(120);

/// An OpenAI-compatible chat model.
#[derive(Debug)]
pub struct ChatModel {
    endpoint: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
}

impl ChatModel {
    /// A model at `url` (the API root, e.g. `http://127.0.0.1:11434/v1`) named `model`.
    pub fn new(url: &str, model: &str, api_key: Option<String>) -> Self {
        Self {
            endpoint: format!("{}/chat/completions", url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.trim().is_empty()),
            agent: crate::remote::agent(TIMEOUT),
        }
    }

    /// The model the environment configures: none without `LEVH_LLM_URL`; an error when
    /// the URL is set without `LEVH_LLM_MODEL` or is not an http(s) URL.
    pub fn from_env() -> Result<Option<Self>, String> {
        let Some(url) = std::env::var("LEVH_LLM_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        else {
            return Ok(None);
        };
        let url = url.trim();
        if !url.starts_with("http://") && !url.starts_with("https://") {
            return Err(format!(
                "LEVH_LLM_URL '{url}' is not an http(s) URL (e.g. http://127.0.0.1:11434/v1)"
            ));
        }
        let model = std::env::var("LEVH_LLM_MODEL")
            .ok()
            .filter(|m| !m.trim().is_empty())
            .ok_or("LEVH_LLM_URL is set but LEVH_LLM_MODEL is not: name the model to ask")?;
        Ok(Some(Self::new(
            url,
            model.trim(),
            std::env::var("LEVH_LLM_API_KEY").ok(),
        )))
    }
}

impl AnswerModel for ChatModel {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, String> {
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                { "role": "system", "content": system },
                { "role": "user", "content": user },
            ],
        });
        let failed = |what: String| format!("{}: {what}", self.endpoint);
        let text = crate::remote::post_json(
            &self.agent,
            &self.endpoint,
            self.api_key.as_deref(),
            &body,
            MAX_ANSWER_BYTES,
        )
        .map_err(failed)?;
        #[derive(Deserialize)]
        struct Message {
            content: Option<String>,
        }
        #[derive(Deserialize)]
        struct Choice {
            message: Message,
        }
        #[derive(Deserialize)]
        struct Answer {
            choices: Vec<Choice>,
        }
        let answer: Answer = serde_json::from_str(&text)
            .map_err(|e| failed(format!("not a chat completion ({e})")))?;
        answer
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| failed("the model answered nothing".into()))
    }
}
