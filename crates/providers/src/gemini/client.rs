//! The Gemini client: one `streamGenerateContent?alt=sse` call per model request.
//!
//! Invariants: the API key travels only in the `x-goog-api-key` header, marked sensitive, and
//! is never logged; the call runs in a task of its own that stops (dropping the connection) as
//! soon as the stream's consumer goes away; every failure arrives on the stream.

use std::sync::Arc;

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use secrecy::ExposeSecret;

use super::request;
use super::streaming::{CallIds, Reply};
use crate::http::{SseDecoder, client, error_from_response, transport_error};
use crate::{
    Capabilities, ModelProvider, ModelRequest, ModelStream, ProviderError, ProviderErrorKind,
    ProviderKind, ProviderSettings, StreamEvent, StreamSender, capabilities,
};

/// A model gateway speaking Gemini's `generateContent` API.
#[derive(Debug)]
pub struct GeminiProvider {
    settings: ProviderSettings,
    http: reqwest::Client,
    /// The key as a header value, built once and marked sensitive so it never shows in a debug
    /// print.
    api_key: Option<HeaderValue>,
    ids: Arc<CallIds>,
}

impl GeminiProvider {
    /// A client for the gateway described by `settings`; fails when the HTTP client cannot be
    /// built or a header (the key included) is not a valid header value.
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let http = client(&settings)?;
        let api_key = match &settings.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(key.expose_secret()).map_err(|_| {
                    ProviderError::new(
                        ProviderErrorKind::Access,
                        format!(
                            "provider {}: the API key is not a valid header value",
                            settings.name
                        ),
                    )
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        Ok(Self {
            settings,
            http,
            api_key,
            ids: Arc::default(),
        })
    }
}

impl ModelProvider for GeminiProvider {
    fn capabilities(&self, model: &str) -> Capabilities {
        capabilities::guess(ProviderKind::Gemini, model)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let model = request
            .model
            .strip_prefix("models/")
            .unwrap_or(&request.model);
        let routed = format!("{}:{model}", self.settings.name);
        if model.is_empty()
            || !model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._@".contains(c))
        {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::BadRequest,
                format!("{routed}: not a Gemini model name"),
            ));
        }
        let body = match serde_json::to_vec(&request::build(&request)) {
            Ok(body) => body,
            Err(e) => {
                return ModelStream::failed(ProviderError::new(
                    ProviderErrorKind::Other,
                    format!("{routed}: cannot encode the request: {e}"),
                ));
            }
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ModelStream::failed(ProviderError::new(
                ProviderErrorKind::Other,
                "the Gemini provider must be called inside a tokio runtime",
            ));
        };
        let mut call = self
            .http
            .post(self.settings.url(&format!(
                "v1beta/models/{model}:streamGenerateContent?alt=sse"
            )))
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.api_key {
            call = call.header("x-goog-api-key", key.clone());
        }
        tracing::debug!(
            provider = %self.settings.name,
            session = %request.session_id,
            model = %model,
            "Gemini call started."
        );
        let (tx, stream) = ModelStream::channel();
        runtime.spawn(run(call, routed, Arc::clone(&self.ids), tx));
        stream
    }
}

/// Runs one call, ending with `Completed` or an error; abandons it when the consumer goes away.
async fn run(call: reqwest::RequestBuilder, model: String, ids: Arc<CallIds>, tx: StreamSender) {
    tokio::select! {
        result = exchange(call, &model, &ids, &tx) => {
            if let Err(error) = result {
                tracing::debug!(model = %model, kind = ?error.kind, "Gemini call failed.");
                tx.send(Err(error)).await;
            }
        }
        () = tx.closed() => {}
    }
}

/// Sends the request and streams the answer into `tx`. `Ok` when the reply was delivered or the
/// consumer left.
async fn exchange(
    call: reqwest::RequestBuilder,
    model: &str,
    ids: &CallIds,
    tx: &StreamSender,
) -> Result<(), ProviderError> {
    let mut response = call.send().await.map_err(|e| transport_error(model, &e))?;
    if !response.status().is_success() {
        return Err(error_from_response(model, response).await);
    }
    let mut decoder = SseDecoder::default();
    let mut reply = Reply::new(model, ids);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(model, &e))?
    {
        for event in decoder.push(&chunk) {
            if !forward(tx, reply.push(&event.data)?).await {
                return Ok(());
            }
        }
    }
    if let Some(event) = decoder.finish()
        && !forward(tx, reply.push(&event.data)?).await
    {
        return Ok(());
    }
    let turn = reply.finish()?;
    tx.send(Ok(StreamEvent::Completed(turn))).await;
    Ok(())
}

/// Delivers deltas; `false` when the consumer is gone.
async fn forward(tx: &StreamSender, events: Vec<StreamEvent>) -> bool {
    for event in events {
        if !tx.send(Ok(event)).await {
            return false;
        }
    }
    true
}
