//! Building the native client a provider's settings call for.
//!
//! Invariant: an operator's capability declarations for a provider win over the built-in
//! guesses, for every model of that provider.

use std::sync::Arc;

use crate::anthropic::AnthropicProvider;
use crate::gemini::GeminiProvider;
use crate::openai::OpenAiProvider;
use crate::{
    Capabilities, CapabilityOverrides, ModelProvider, ModelRequest, ModelStream, ProviderError,
    ProviderKind, ProviderSettings,
};

/// The client for `settings.kind`, reaching the gateway at `settings.base_url`.
pub fn connect(settings: ProviderSettings) -> Result<Arc<dyn ModelProvider>, ProviderError> {
    let overrides = settings.capabilities.clone();
    let client: Arc<dyn ModelProvider> = match settings.kind {
        ProviderKind::Openai => Arc::new(OpenAiProvider::new(settings)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(settings)?),
        ProviderKind::Gemini => Arc::new(GeminiProvider::new(settings)?),
    };
    if overrides.is_empty() {
        return Ok(client);
    }
    Ok(Arc::new(Declared {
        inner: client,
        overrides,
    }))
}

/// A client whose capabilities an operator declared.
#[derive(Debug)]
struct Declared {
    inner: Arc<dyn ModelProvider>,
    overrides: CapabilityOverrides,
}

impl ModelProvider for Declared {
    fn capabilities(&self, model: &str) -> Capabilities {
        self.overrides.apply(model, self.inner.capabilities(model))
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.inner.stream(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_capabilities_win() {
        let mut settings = ProviderSettings::new("gw", ProviderKind::Openai, "http://127.0.0.1:9");
        settings.capabilities = CapabilityOverrides {
            vision_models: vec!["local-vl".into()],
            pdf_models: vec![],
            context_window: Some(32_000),
        };
        let provider = connect(settings).unwrap();
        let caps = provider.capabilities("local-vl");
        assert!(caps.vision && !caps.pdf);
        assert_eq!(caps.context_window, 32_000);
        assert!(!provider.capabilities("local-text").vision);
    }
}
