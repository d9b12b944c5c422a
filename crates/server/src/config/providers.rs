//! `[providers.NAME]`: the model gateways workmate talks to.
//!
//! Invariants: every configured provider has a known kind and an http(s) base URL; its key comes
//! from the file or from the environment variable it names, never both, and is kept as a secret;
//! `[providers.scripted] script` configures the offline scripted model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use workmate_providers::ProviderKind;

use super::validate::RawProvider;
use super::{ConfigError, Source};

/// The default time a model call may take, streaming included.
const DEFAULT_TIMEOUT_MS: i64 = 600_000;

/// A gateway provider: `[providers.NAME]` with `kind = "openai" | "anthropic" | "gemini"`.
#[derive(Clone, Debug)]
pub struct GatewayProvider {
    /// The name used in model ids (`NAME:model`).
    pub name: String,
    /// The wire format.
    pub kind: ProviderKind,
    /// The gateway's base URL.
    pub base_url: String,
    /// The key, from `api_key` or the variable `api_key_env` names.
    pub api_key: Option<SecretString>,
    /// Extra headers (`[providers.NAME.headers]`).
    pub headers: Vec<(String, String)>,
    /// `timeout_ms`: the longest one call may take.
    pub timeout: Duration,
    /// `models`: the models offered through it (bare ids), for `workmate models`.
    pub models: Vec<String>,
    /// `vision_models`, `pdf_models`, `context_window`: additions to the capability matrix.
    pub capabilities: workmate_providers::CapabilityOverrides,
}

/// `[providers.*]`.
#[derive(Clone, Debug, Default)]
pub struct ProvidersConfig {
    /// `[providers.scripted] script`: the script file of the scripted provider.
    pub scripted_script: Option<PathBuf>,
    /// The gateway providers, by name.
    pub gateways: Vec<GatewayProvider>,
}

/// Checks every `[providers.NAME]` section.
pub(crate) fn validate_providers(
    raw: &BTreeMap<String, RawProvider>,
    env: &[(String, String)],
    origin: impl Fn(&str, &str) -> Source,
) -> Result<ProvidersConfig, ConfigError> {
    let mut config = ProvidersConfig::default();
    for (name, provider) in raw {
        let fail = |key: &str, problem: String| ConfigError::Provider {
            name: name.clone(),
            origin: origin(name, key),
            problem,
        };
        let kind =
            provider
                .kind
                .as_deref()
                .unwrap_or(if name == "scripted" { "scripted" } else { "" });
        if kind == "scripted" {
            config.scripted_script = Some(script(provider, &fail)?);
            continue;
        }
        let kind = match kind {
            "openai" => ProviderKind::Openai,
            "anthropic" => ProviderKind::Anthropic,
            "gemini" => ProviderKind::Gemini,
            "" => {
                return Err(fail(
                    "kind",
                    "set kind = \"openai\", \"anthropic\" or \"gemini\" (or \"scripted\")".into(),
                ));
            }
            other => {
                return Err(fail(
                    "kind",
                    format!("kind {other:?} is not one of openai, anthropic, gemini, scripted"),
                ));
            }
        };
        let base_url = provider.base_url.clone().unwrap_or_default();
        let parsed = url::Url::parse(&base_url).map_err(|e| {
            fail(
                "base_url",
                format!(
                    "base_url {base_url:?} is not a URL ({e}); e.g. https://llm-gateway.internal/v1"
                ),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(fail(
                "base_url",
                format!("base_url {base_url:?} must be http:// or https://"),
            ));
        }
        let api_key = match (&provider.api_key, &provider.api_key_env) {
            (Some(_), Some(_)) => {
                return Err(fail(
                    "api_key",
                    "set api_key or api_key_env, not both".into(),
                ));
            }
            (Some(key), None) => Some(SecretString::from(key.clone())),
            (None, Some(variable)) => {
                let value = env
                    .iter()
                    .find(|(k, _)| k == variable)
                    .map(|(_, v)| v.clone());
                let value = value.ok_or_else(|| {
                    fail(
                        "api_key_env",
                        format!(
                            "the environment variable {variable} that api_key_env names is not set"
                        ),
                    )
                })?;
                Some(SecretString::from(value))
            }
            (None, None) => None,
        };
        let timeout = provider.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let timeout = u64::try_from(timeout)
            .ok()
            .filter(|ms| (1_000..=3_600_000).contains(ms))
            .ok_or_else(|| {
                fail(
                    "timeout_ms",
                    format!("{timeout} is not between 1000 and 3600000"),
                )
            })?;
        config.gateways.push(GatewayProvider {
            name: name.clone(),
            kind,
            base_url,
            api_key,
            headers: provider
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            timeout: Duration::from_millis(timeout),
            models: provider.models.clone().unwrap_or_default(),
            capabilities: workmate_providers::CapabilityOverrides {
                vision_models: provider.vision_models.clone().unwrap_or_default(),
                pdf_models: provider.pdf_models.clone().unwrap_or_default(),
                context_window: match provider.context_window {
                    None => None,
                    Some(window) => Some(
                        u32::try_from(window)
                            .ok()
                            .filter(|w| *w >= 1_000)
                            .ok_or_else(|| {
                                fail(
                                    "context_window",
                                    format!("{window} is not a token count of at least 1000"),
                                )
                            })?,
                    ),
                },
            },
        });
    }
    Ok(config)
}

fn script(
    provider: &RawProvider,
    fail: &dyn Fn(&str, String) -> ConfigError,
) -> Result<PathBuf, ConfigError> {
    let path = provider.script.clone().unwrap_or_default();
    if path.trim().is_empty() {
        return Err(fail(
            "script",
            "the script path is empty; set [providers.scripted] script = \"FILE\"".into(),
        ));
    }
    let path = PathBuf::from(path);
    if !path.is_file() {
        return Err(fail(
            "script",
            format!(
                "{} is not a readable file; set [providers.scripted] script / WORKMATE__PROVIDERS__SCRIPTED__SCRIPT",
                path.display()
            ),
        ));
    }
    Ok(path)
}
