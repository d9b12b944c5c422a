//! Building the native client a provider's settings call for.

use std::sync::Arc;

use crate::anthropic::AnthropicProvider;
use crate::gemini::GeminiProvider;
use crate::openai::OpenAiProvider;
use crate::{ModelProvider, ProviderError, ProviderKind, ProviderSettings};

/// The client for `settings.kind`, reaching the gateway at `settings.base_url`.
pub fn connect(settings: ProviderSettings) -> Result<Arc<dyn ModelProvider>, ProviderError> {
    Ok(match settings.kind {
        ProviderKind::Openai => Arc::new(OpenAiProvider::new(settings)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(settings)?),
        ProviderKind::Gemini => Arc::new(GeminiProvider::new(settings)?),
    })
}
