//! What a model can take, when nobody configured it (spec §6.5 heuristics).
//!
//! Invariant: an unknown model gets the conservative answer (tools, no images, no PDF), so a
//! guess can only under-use a model, never send it something it cannot read.

use crate::{Capabilities, ProviderKind};

/// The capabilities of `model` (the bare id) on a provider of `kind`.
pub fn guess(kind: ProviderKind, model: &str) -> Capabilities {
    let name = model.to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    let rich = |context_window| Capabilities {
        tools: true,
        vision: true,
        pdf: true,
        context_window,
    };
    match kind {
        ProviderKind::Anthropic => rich(200_000),
        ProviderKind::Gemini => rich(1_000_000),
        ProviderKind::Openai if name.starts_with("claude") => rich(200_000),
        ProviderKind::Openai if name.starts_with("gemini") => rich(1_000_000),
        ProviderKind::Openai if name.starts_with("gpt-5") || name.starts_with("gpt-4") => {
            rich(128_000)
        }
        ProviderKind::Openai if ["o1", "o3", "o4"].iter().any(|p| name.starts_with(p)) => {
            Capabilities {
                tools: true,
                vision: false,
                pdf: false,
                context_window: 128_000,
            }
        }
        ProviderKind::Openai => Capabilities::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_models_get_the_conservative_answer() {
        let unknown = guess(ProviderKind::Openai, "some-local-model");
        assert!(unknown.tools && !unknown.vision && !unknown.pdf);
        assert!(guess(ProviderKind::Openai, "gpt-5.6-sol").vision);
        assert!(guess(ProviderKind::Anthropic, "claude-opus-4-8").pdf);
        assert!(
            guess(ProviderKind::Openai, "vendor/claude-sonnet").vision,
            "gateway paths are ignored"
        );
    }
}
