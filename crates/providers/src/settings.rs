//! How one configured provider is reached: `[providers.NAME]` in the configuration.

use std::time::Duration;

use secrecy::SecretString;

/// Which wire format a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`).
    Openai,
    /// Anthropic Messages (`POST {base_url}/v1/messages`).
    Anthropic,
    /// Gemini (`POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`).
    Gemini,
}

/// Everything a native client needs to reach the company's model gateway.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    /// The provider's name in model ids (`NAME:model`).
    pub name: String,
    /// Its wire format.
    pub kind: ProviderKind,
    /// The gateway's base URL, e.g. `https://llm-gateway.internal/openai/v1`.
    pub base_url: String,
    /// The API key, if the gateway needs one. Never logged.
    pub api_key: Option<SecretString>,
    /// Extra headers sent with every call (gateway tenant or cost-centre headers).
    pub headers: Vec<(String, String)>,
    /// How long to wait for the connection and for the first byte of the answer.
    pub connect_timeout: Duration,
    /// The longest a whole call may take, streaming included.
    pub request_timeout: Duration,
    /// What operators declared about this provider's models, over the built-in guesses.
    pub capabilities: CapabilityOverrides,
}

/// An operator's additions to the capability matrix for one provider.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapabilityOverrides {
    /// Models (bare ids) that read images.
    pub vision_models: Vec<String>,
    /// Models (bare ids) that read PDF documents.
    pub pdf_models: Vec<String>,
    /// The context window of every model of the provider, in tokens.
    pub context_window: Option<u32>,
}

impl CapabilityOverrides {
    /// Whether nothing was declared.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// `guessed` with the declarations for `model` applied.
    pub fn apply(&self, model: &str, guessed: crate::Capabilities) -> crate::Capabilities {
        let mut caps = guessed;
        caps.vision |= self.vision_models.iter().any(|m| m == model);
        caps.pdf |= self.pdf_models.iter().any(|m| m == model);
        if let Some(window) = self.context_window {
            caps.context_window = window;
        }
        caps
    }
}

impl ProviderSettings {
    /// Settings with the usual timeouts (10 s to connect, 10 min per call).
    pub fn new(name: impl Into<String>, kind: ProviderKind, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind,
            base_url: base_url.into(),
            api_key: None,
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(600),
            capabilities: CapabilityOverrides::default(),
        }
    }

    /// `base_url` joined with `path`, with exactly one slash between them.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }
}
