//! Picks the provider for a `provider:model` id.
//!
//! Invariant: the text before the first `:` selects a provider only when it is a registered
//! provider name, and only then is it stripped; any other id (`qwen2.5-coder:32b`) goes whole to
//! the default provider.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{Capabilities, ModelProvider, ProviderError, ProviderErrorKind};

/// Named providers and the one that takes ids without a known prefix.
#[derive(Debug, Clone)]
pub struct ProviderRouter {
    providers: BTreeMap<String, Arc<dyn ModelProvider>>,
    default: String,
}

impl ProviderRouter {
    /// An empty router whose unprefixed ids go to the provider registered as `default`.
    pub fn new(default: &str) -> Self {
        Self {
            providers: BTreeMap::new(),
            default: default.to_owned(),
        }
    }

    /// Registers (or replaces) the provider called `name`.
    pub fn register(&mut self, name: impl Into<String>, provider: Arc<dyn ModelProvider>) {
        self.providers.insert(name.into(), provider);
    }

    /// The name of the provider that takes ids without a known prefix.
    pub fn default_provider(&self) -> &str {
        &self.default
    }

    /// The registered provider names, in order.
    pub fn provider_names(&self) -> impl Iterator<Item = &str> {
        self.providers.keys().map(String::as_str)
    }

    /// The provider for `model_id` and the model id to hand it (the prefix removed when it named
    /// the provider).
    pub fn resolve(
        &self,
        model_id: &str,
    ) -> Result<(Arc<dyn ModelProvider>, String), ProviderError> {
        if let Some((prefix, bare)) = model_id.split_once(':')
            && let Some(provider) = self.providers.get(prefix)
        {
            return Ok((Arc::clone(provider), bare.to_owned()));
        }
        match self.providers.get(&self.default) {
            Some(provider) => Ok((Arc::clone(provider), model_id.to_owned())),
            None => Err(ProviderError::new(
                ProviderErrorKind::Access,
                self.unconfigured(model_id),
            )),
        }
    }

    /// What `model_id` can take; the defaults (tools only) when no provider takes it, since the
    /// call itself will report that.
    pub fn capabilities(&self, model_id: &str) -> Capabilities {
        match self.resolve(model_id) {
            Ok((provider, bare)) => provider.capabilities(&bare),
            Err(_) => Capabilities::default(),
        }
    }

    fn unconfigured(&self, model_id: &str) -> String {
        let known: Vec<&str> = self.provider_names().collect();
        let choices = if known.is_empty() {
            "none is configured".to_owned()
        } else {
            format!("configured: {}", known.join(", "))
        };
        format!(
            "no model provider is configured for {model_id}; configure the default provider \
             `{}`, or prefix the model id with a configured provider name and a colon ({choices})",
            self.default
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelRequest, ModelStream};

    /// A provider that reports its name through the context window.
    #[derive(Debug)]
    struct Named(u32);

    impl ModelProvider for Named {
        fn capabilities(&self, model: &str) -> Capabilities {
            let vision = model.contains(':');
            Capabilities {
                context_window: self.0,
                vision,
                ..Capabilities::default()
            }
        }

        fn stream(&self, _request: ModelRequest) -> ModelStream {
            ModelStream::failed(ProviderError::new(ProviderErrorKind::Other, "unused"))
        }
    }

    fn router() -> ProviderRouter {
        let mut router = ProviderRouter::new("openai");
        router.register("openai", Arc::new(Named(1)));
        router.register("scripted", Arc::new(Named(2)));
        router.register("ollama", Arc::new(Named(3)));
        router
    }

    fn which(router: &ProviderRouter, id: &str) -> (u32, String) {
        let (provider, bare) = router.resolve(id).unwrap();
        (provider.capabilities("").context_window, bare)
    }

    #[test]
    fn a_registered_prefix_is_stripped() {
        let router = router();
        assert_eq!(which(&router, "scripted:demo"), (2, "demo".into()));
        assert_eq!(
            which(&router, "ollama:qwen2.5-coder:32b"),
            (3, "qwen2.5-coder:32b".into())
        );
    }

    #[test]
    fn other_ids_go_whole_to_the_default() {
        let router = router();
        assert_eq!(
            which(&router, "qwen2.5-coder:32b"),
            (1, "qwen2.5-coder:32b".into())
        );
        assert_eq!(which(&router, "gpt-5.5"), (1, "gpt-5.5".into()));
        assert_eq!(which(&router, "openai:gpt-5.5"), (1, "gpt-5.5".into()));
        assert_eq!(which(&router, ":x"), (1, ":x".into()));
    }

    #[test]
    fn capabilities_use_the_bare_model() {
        let router = router();
        assert!(router.capabilities("ollama:qwen2.5-coder:32b").vision);
        assert!(!router.capabilities("ollama:llama3").vision);
        assert_eq!(router.capabilities("scripted:demo").context_window, 2);
    }

    #[test]
    fn a_missing_default_is_an_access_error_that_says_what_to_configure() {
        let mut router = ProviderRouter::new("openai");
        let err = router.resolve("gpt-5.5").err().unwrap();
        assert_eq!(err.kind, ProviderErrorKind::Access);
        assert!(
            err.message
                .starts_with("no model provider is configured for gpt-5.5; ")
        );
        assert!(err.message.contains("`openai`") && err.message.contains("none is configured"));

        router.register("scripted", Arc::new(Named(2)));
        assert_eq!(which(&router, "scripted:demo"), (2, "demo".into()));
        let err = router.resolve("ollama:llama3").err().unwrap();
        assert!(err.message.contains("ollama:llama3") && err.message.contains("scripted"));
        assert_eq!(router.capabilities("gpt-5.5"), Capabilities::default());
        assert_eq!(router.provider_names().collect::<Vec<_>>(), ["scripted"]);
        assert_eq!(router.default_provider(), "openai");
    }
}
