//! The HTTP side: one `POST /v1/messages` per call, its event stream read into a [`ModelStream`].
//!
//! Invariants: the API key only ever travels in the `x-api-key` header, marked sensitive, and is
//! never logged or shown by `Debug`; every network wait races the consumer going away, so an
//! abandoned call stops at once instead of reading the reply to its end.

use std::fmt;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use secrecy::ExposeSecret;

use super::request;
use super::streaming::TurnReader;
use super::types::API_VERSION;
use crate::http::{SseDecoder, client, error_from_response, transport_error};
use crate::{
    Capabilities, ModelProvider, ModelRequest, ModelStream, ProviderError, ProviderErrorKind,
    ProviderKind, ProviderSettings, StreamSender, capabilities,
};

/// A native Anthropic Messages client (streaming), reached through the company's model gateway.
pub struct AnthropicProvider {
    name: String,
    url: String,
    api_key: Option<HeaderValue>,
    http: reqwest::Client,
}

impl fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// A client for `settings`; fails when they are not for an Anthropic provider, the API key
    /// cannot be a header value, or the HTTP client cannot be built.
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        if settings.kind != ProviderKind::Anthropic {
            return Err(ProviderError::new(
                ProviderErrorKind::Other,
                format!(
                    "provider {}: settings of kind {:?} given to the Anthropic client",
                    settings.name, settings.kind
                ),
            ));
        }
        let api_key = match &settings.api_key {
            None => None,
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose_secret()).map_err(|_| {
                    ProviderError::new(
                        ProviderErrorKind::Access,
                        format!(
                            "provider {}: the API key contains characters a header cannot carry",
                            settings.name
                        ),
                    )
                })?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        Ok(Self {
            http: client(&settings)?,
            url: settings.url("v1/messages"),
            name: settings.name,
            api_key,
        })
    }
}

impl ModelProvider for AnthropicProvider {
    fn capabilities(&self, model: &str) -> Capabilities {
        capabilities::guess(ProviderKind::Anthropic, model)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                "the Anthropic provider must be called inside a tokio runtime",
            ));
        };
        let call = Call {
            http: self.http.clone(),
            url: self.url.clone(),
            api_key: self.api_key.clone(),
            routed: format!("{}:{}", self.name, request.model),
        };
        let (tx, stream) = ModelStream::channel();
        runtime.spawn(async move {
            if let Err(error) = call.run(&request, &tx).await {
                tx.send(Err(error)).await;
            }
        });
        stream
    }
}

/// What one call needs, owned by its task.
struct Call {
    http: reqwest::Client,
    url: String,
    api_key: Option<HeaderValue>,
    /// `provider:model`, the id usage and errors name.
    routed: String,
}

impl Call {
    /// Streams the reply into `tx`. `Ok` when it completed or the consumer went away; `Err` is
    /// the failure still to be delivered.
    async fn run(&self, request: &ModelRequest, tx: &StreamSender) -> Result<(), ProviderError> {
        let body = request::build(&request.model, &request.messages, &request.tools);
        let body = serde_json::to_vec(&body).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Other,
                format!("{}: cannot encode the request: {e}", self.routed),
            )
        })?;
        tracing::debug!(
            model = %self.routed,
            session = %request.session_id,
            messages = request.messages.len(),
            bytes = body.len(),
            "Anthropic call started."
        );
        let mut builder = self
            .http
            .post(&self.url)
            .header("anthropic-version", API_VERSION)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        if let Some(key) = &self.api_key {
            builder = builder.header("x-api-key", key.clone());
        }
        let sent = tokio::select! {
            sent = builder.send() => sent,
            () = tx.closed() => return Ok(()),
        };
        let mut response = sent.map_err(|e| transport_error(&self.routed, &e))?;
        if !response.status().is_success() {
            let error = error_from_response(&self.routed, response).await;
            tracing::warn!(model = %self.routed, kind = error.type_name(), "Anthropic call refused.");
            return Err(error);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut decoder = SseDecoder::default();
        let mut reader = TurnReader::new(self.routed.clone());
        let mut out = Vec::new();
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                () = tx.closed() => return Ok(()),
            };
            let chunk = chunk.map_err(|e| transport_error(&self.routed, &e))?;
            let finished = chunk.is_none();
            let events = match chunk {
                Some(bytes) => decoder.push(&bytes),
                None => decoder.finish().into_iter().collect(),
            };
            for event in &events {
                reader.push(event, &mut out)?;
                for item in out.drain(..) {
                    if !tx.send(Ok(item)).await {
                        return Ok(());
                    }
                }
                if reader.is_done() {
                    return Ok(());
                }
            }
            if finished {
                return Err(reader.ended_early(&content_type));
            }
        }
    }
}
