//! The provider: one streamed `POST {base_url}/chat/completions` per model call.
//!
//! Invariants: the API key goes only into the `Authorization` header (reqwest marks it
//! sensitive) and never into a log or an error; every network wait is raced against the
//! consumer going away, so an abandoned call stops at once and drops its connection; a stream
//! ends with exactly one `Completed` or one error, unless its consumer left first.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use secrecy::{ExposeSecret, SecretString};
use workmate_protocol::ToolSpec;

use super::request;
use super::streaming::Accumulator;
use crate::http::{self, SseDecoder};
use crate::{
    AssistantTurn, Capabilities, ModelProvider, ModelRequest, ModelStream, ProviderError,
    ProviderErrorKind, ProviderKind, ProviderSettings, StreamEvent, StreamSender, capabilities,
};

/// An OpenAI-compatible Chat Completions backend (the gateway's `/v1` endpoint, vLLM, Ollama,
/// compatible vendors), streamed over SSE.
#[derive(Debug)]
pub struct OpenAiProvider {
    /// The configured provider name, for logs.
    name: String,
    /// `{base_url}/chat/completions`.
    url: String,
    api_key: Option<SecretString>,
    http: reqwest::Client,
}

impl OpenAiProvider {
    /// A provider reaching `settings.base_url`; fails when the URL is not http(s), a configured
    /// header is invalid, or the HTTP client cannot be built.
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let base = settings.base_url.trim();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ProviderError::new(
                ProviderErrorKind::Other,
                format!(
                    "provider {}: base_url {:?} must be an http:// or https:// URL",
                    settings.name, settings.base_url
                ),
            ));
        }
        let http = http::client(&settings)?;
        Ok(Self {
            url: settings.url("chat/completions"),
            name: settings.name,
            api_key: settings.api_key,
            http,
        })
    }
}

impl ModelProvider for OpenAiProvider {
    fn capabilities(&self, model: &str) -> Capabilities {
        capabilities::guess(ProviderKind::Openai, model)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let body = match serde_json::to_vec(&request::build(&request)) {
            Ok(body) => body,
            Err(error) => {
                return ModelStream::failed(ProviderError::new(
                    ProviderErrorKind::Other,
                    format!("{}: cannot encode the request: {error}", request.model),
                ));
            }
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                "the OpenAI provider must be called inside a tokio runtime",
            ));
        };
        tracing::debug!(
            provider = %self.name,
            model = %request.model,
            session = %request.session_id,
            messages = request.messages.len(),
            tools = request.tools.len(),
            "Chat Completions call started."
        );
        let call = Call {
            http: self.http.clone(),
            url: self.url.clone(),
            api_key: self.api_key.clone(),
            body,
            model: request.model,
            tools: request.tools,
        };
        let (tx, stream) = ModelStream::channel();
        runtime.spawn(call.run(tx));
        stream
    }
}

/// Everything one call needs, owned by its task.
struct Call {
    http: reqwest::Client,
    url: String,
    api_key: Option<SecretString>,
    body: Vec<u8>,
    model: String,
    tools: Vec<ToolSpec>,
}

impl Call {
    async fn run(mut self, tx: StreamSender) {
        let body = std::mem::take(&mut self.body);
        let outcome = self.drive(body, &tx).await;
        match outcome {
            Ok(Some(turn)) => {
                tracing::debug!(
                    model = %self.model,
                    tool_calls = turn.tool_calls.len(),
                    finish_reason = ?turn.finish_reason,
                    "Chat Completions call finished."
                );
                tx.send(Ok(StreamEvent::Completed(turn))).await;
            }
            Ok(None) => tracing::debug!(model = %self.model, "Chat Completions call abandoned."),
            Err(error) => {
                tracing::debug!(model = %self.model, kind = ?error.kind, "Chat Completions call failed.");
                tx.send(Err(error)).await;
            }
        }
    }

    /// Streams the reply; `Ok(None)` when the consumer went away first.
    async fn drive(
        &self,
        body: Vec<u8>,
        tx: &StreamSender,
    ) -> Result<Option<AssistantTurn>, ProviderError> {
        let mut builder = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key.expose_secret());
        }
        let mut response = tokio::select! {
            sent = builder.send() => sent.map_err(|e| http::transport_error(&self.model, &e))?,
            () = tx.closed() => return Ok(None),
        };
        if !response.status().is_success() {
            return tokio::select! {
                error = http::error_from_response(&self.model, response) => Err(error),
                () = tx.closed() => Ok(None),
            };
        }
        let mut decoder = SseDecoder::default();
        let mut reply = Accumulator::new(self.model.as_str());
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => {
                    chunk.map_err(|e| http::transport_error(&self.model, &e))?
                }
                () = tx.closed() => return Ok(None),
            };
            let (events, ended) = match chunk {
                Some(bytes) => (decoder.push(&bytes), false),
                None => (decoder.finish().into_iter().collect(), true),
            };
            for event in events {
                for delta in reply.push(&event)? {
                    if !tx.send(Ok(delta)).await {
                        return Ok(None);
                    }
                }
                if reply.is_done() {
                    return reply.finish(&self.tools).map(Some);
                }
            }
            if ended {
                return reply.finish(&self.tools).map(Some);
            }
        }
    }
}
