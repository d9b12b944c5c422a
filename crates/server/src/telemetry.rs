//! Logging and tracing for the binary.
//!
//! Invariants: logs go to stderr only (stdout carries command output), in the configured format,
//! filtered by the one resolved `[log] level` directive; every line passes through the
//! process-wide DLP rules ([`workmate_dlp::global`]) before it is written, so a key or token that
//! reaches a log statement is written redacted. With `[tracing] otlp_endpoint`, spans are also
//! exported over OTLP/HTTP (JSON) in batches, on the workspace's own HTTP client; the returned
//! [`Telemetry`] flushes what is left when it is dropped.

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::pin::Pin;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;

use crate::config::{LogConfig, LogFormat, TracingConfig};
use crate::error::StartupError;

/// Keeps the span exporter; dropping it exports the spans not yet sent.
#[derive(Debug)]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            // Nowhere left to report a failed last export.
            let _ = provider.shutdown();
        }
    }
}

/// Installs the global subscriber: logs, and spans when an OTLP endpoint is configured
/// (exported from `runtime`). Call once, before anything logs.
pub fn init(
    log: &LogConfig,
    tracing_config: &TracingConfig,
    runtime: &tokio::runtime::Handle,
) -> Result<Telemetry, StartupError> {
    let failed = |e: String| StartupError::Telemetry(e);
    let filter = EnvFilter::try_new(&log.level).map_err(|e| failed(e.to_string()))?;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(RedactedStderr)
        .with_ansi(std::io::stderr().is_terminal());
    let fmt = match log.format {
        LogFormat::Text => fmt.boxed(),
        LogFormat::Json => fmt.json().flatten_event(true).boxed(),
    };
    let provider = match &tracing_config.otlp_endpoint {
        Some(endpoint) => Some(otlp(endpoint, &tracing_config.service_name, runtime)?),
        None => None,
    };
    let spans = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer("workmate")));
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .with(spans)
        .try_init()
        .map_err(|e| failed(e.to_string()))?;
    Ok(Telemetry { provider })
}

/// A batch exporter of spans to `<endpoint>/v1/traces`.
fn otlp(
    endpoint: &str,
    service: &str,
    runtime: &tokio::runtime::Handle,
) -> Result<SdkTracerProvider, StartupError> {
    // The collector is the operator's: a fixed destination.
    let client = workmate_net::fixed_client(
        workmate_net::CONNECT_TIMEOUT,
        Some(workmate_net::CALL_TIMEOUT),
        reqwest::header::HeaderMap::new(),
    )
    .map_err(StartupError::Telemetry)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(format!("{endpoint}/v1/traces"))
        .with_http_client(OtlpHttp {
            client,
            runtime: runtime.clone(),
        })
        .build()
        .map_err(|e| StartupError::Telemetry(format!("[tracing] otlp_endpoint: {e}")))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service.to_owned())
                .build(),
        )
        .build())
}

/// The OTLP exporter's HTTP client: the workspace's reqwest client, its requests run on the
/// server's runtime (the exporter works from its own thread).
#[derive(Debug)]
struct OtlpHttp {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

type Exported = Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError>;

impl opentelemetry_http::HttpClient for OtlpHttp {
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: http::Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Exported> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let client = self.client.clone();
        let runtime = self.runtime.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let sending = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body);
            let (status, body) = runtime
                .spawn(async move {
                    let response = sending.send().await?;
                    let status = response.status();
                    Ok::<_, reqwest::Error>((status, response.bytes().await?))
                })
                .await??;
            Ok(http::Response::builder().status(status).body(body)?)
        })
    }
}

/// Stderr through the DLP rules: one event is collected, redacted, then written at once.
#[derive(Clone, Copy, Debug)]
pub struct RedactedStderr;

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = RedactedLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedLine(Vec::with_capacity(256))
    }
}

/// One log event on its way to stderr.
#[derive(Debug)]
pub struct RedactedLine(Vec<u8>);

impl Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let redacted = workmate_dlp::global().text(&text);
        // Nowhere to report a failed write of a log line.
        let _ = std::io::stderr()
            .lock()
            .write_all(redacted.value.as_bytes());
    }
}
