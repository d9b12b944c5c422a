//! `workmate models` (what is configured, and what each model can take) and `workmate models
//! check` (one small call per configured model, reporting what works).
//!
//! Invariant: listing reads only the configuration; checking sends one short prompt per listed
//! model and reports every outcome, so an operator sees all failures at once, never a secret.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use workmate_protocol::{Message, SessionId, UserContent};
use workmate_providers::{ModelRequest, ProviderKind, ProviderSettings, StreamEvent, capabilities};

use crate::config::{Config, GatewayProvider};
use crate::engine::DEMO_MODEL;

/// How long a check waits for one model.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

/// The configured providers and their models, one per line.
pub fn list(config: &Config) -> String {
    let mut out = String::new();
    let script = config.providers.scripted_script.as_ref().map_or_else(
        || "bundled demo script (workmate demo)".to_owned(),
        |p| p.display().to_string(),
    );
    let _ = writeln!(out, "scripted   scripted   {script}");
    let _ = writeln!(out, "  {DEMO_MODEL:<40} tools vision pdf  context 128000");
    for gateway in &config.providers.gateways {
        let _ = writeln!(
            out,
            "{:<10} {:<10} {}",
            gateway.name,
            kind_name(gateway.kind),
            gateway.base_url
        );
        if gateway.models.is_empty() {
            let _ = writeln!(
                out,
                "  (no models listed: add models = [\"…\"] to [providers.{}])",
                gateway.name
            );
        }
        for model in &gateway.models {
            let caps = gateway
                .capabilities
                .apply(model, capabilities::guess(gateway.kind, model));
            let flags = [
                ("tools", caps.tools),
                ("vision", caps.vision),
                ("pdf", caps.pdf),
            ]
            .iter()
            .map(|(name, on)| if *on { *name } else { "-" })
            .collect::<Vec<_>>()
            .join(" ");
            let id = format!("{}:{model}", gateway.name);
            let _ = writeln!(out, "  {id:<40} {flags}  context {}", caps.context_window);
        }
    }
    let _ = writeln!(
        out,
        "default model for new sessions: {}",
        config.engine.default_model
    );
    out
}

/// Calls every listed model once; the report, and whether all of them answered.
pub async fn check(config: &Config) -> (String, bool) {
    let mut out = String::new();
    let mut all_ok = true;
    if config.providers.gateways.is_empty() {
        let _ = writeln!(
            out,
            "no gateway providers are configured; add a [providers.NAME] section"
        );
        return (out, true);
    }
    for gateway in &config.providers.gateways {
        if gateway.models.is_empty() {
            let _ = writeln!(out, "{:<40} skipped: no models listed", gateway.name);
            continue;
        }
        for model in &gateway.models {
            let id = format!("{}:{model}", gateway.name);
            let started = Instant::now();
            match tokio::time::timeout(CHECK_TIMEOUT, call_once(gateway, model)).await {
                Ok(Ok(reply)) => {
                    let _ = writeln!(
                        out,
                        "{id:<40} ok ({} ms): {reply}",
                        started.elapsed().as_millis()
                    );
                }
                Ok(Err(error)) => {
                    all_ok = false;
                    let _ = writeln!(out, "{id:<40} FAILED: {error}");
                }
                Err(_) => {
                    all_ok = false;
                    let _ = writeln!(
                        out,
                        "{id:<40} FAILED: no answer within {} s",
                        CHECK_TIMEOUT.as_secs()
                    );
                }
            }
        }
    }
    (out, all_ok)
}

/// The settings a gateway's client is built from.
pub fn settings(gateway: &GatewayProvider) -> ProviderSettings {
    let mut settings =
        ProviderSettings::new(gateway.name.clone(), gateway.kind, gateway.base_url.clone());
    settings.api_key.clone_from(&gateway.api_key);
    settings.headers.clone_from(&gateway.headers);
    settings.request_timeout = gateway.timeout;
    settings.capabilities.clone_from(&gateway.capabilities);
    settings
}

async fn call_once(gateway: &GatewayProvider, model: &str) -> Result<String, String> {
    let provider = workmate_providers::connect(settings(gateway)).map_err(|e| e.to_string())?;
    let request = ModelRequest {
        session_id: SessionId::new(),
        model: model.to_owned(),
        messages: vec![Message::User {
            content: UserContent::Text("Reply with the single word OK.".into()),
            ts: 0,
            author: None,
            display: None,
        }],
        tools: Vec::new(),
    };
    let mut stream = provider.stream(request);
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(StreamEvent::TextDelta(delta)) => text.push_str(&delta),
            Ok(StreamEvent::Completed(turn)) => {
                return Ok(first_words(if turn.text.is_empty() {
                    &text
                } else {
                    &turn.text
                }));
            }
            Ok(StreamEvent::ReasoningDelta(_)) => {}
            Err(error) => return Err(error.to_string()),
        }
    }
    Ok(first_words(&text))
}

fn first_words(text: &str) -> String {
    let short: String = text
        .split_whitespace()
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    if short.is_empty() {
        "(empty answer)".into()
    } else {
        short
    }
}

fn kind_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Gemini => "gemini",
    }
}
