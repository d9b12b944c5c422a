//! The tenant setting `compaction`: when a conversation is compacted and by which model.

use serde::Deserialize;
use serde_json::Value;

/// The share of the context window at which a conversation is compacted, unless set.
const DEFAULT_THRESHOLD: f64 = 0.8;
/// The most context tokens a conversation may reach before it is compacted, unless set.
const DEFAULT_CAP_TOKENS: u64 = 250_000;
/// The window assumed for a model that reports none.
const FALLBACK_WINDOW: u64 = 128_000;
/// The smallest window or cap accepted: below it no turn fits.
const MIN_TOKENS: u64 = 1_000;

/// How a tenant's conversations are compacted (tenant setting `compaction`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct CompactionSettings {
    /// Whether conversations are compacted when they near the window (by hand they always can be).
    pub(crate) enabled: bool,
    /// The share of the window at which they are, in (0, 1].
    pub(crate) threshold_pct: f64,
    /// The most context tokens before they are, whatever the window.
    pub(crate) cap_tokens: u64,
    /// The `provider:model` that writes summaries (default: the session's own model).
    pub(crate) model: Option<String>,
    /// The window to assume instead of the model's own, in tokens.
    pub(crate) context_window: Option<u64>,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold_pct: DEFAULT_THRESHOLD,
            cap_tokens: DEFAULT_CAP_TOKENS,
            model: None,
            context_window: None,
        }
    }
}

impl CompactionSettings {
    /// The tenant's setting (`compaction` in its settings); an unreadable one is ignored with a
    /// warning (it cannot be stored so: the setting is checked when it is set).
    pub(crate) fn of_tenant(settings: &Value) -> Self {
        let Some(raw) = settings.get("compaction") else {
            return Self::default();
        };
        serde_json::from_value(raw.clone()).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "Ignoring the tenant's unreadable compaction setting.");
            Self::default()
        })
    }

    /// The context tokens at which a conversation with a model of `model_window` tokens is
    /// compacted: the threshold share of the window, at most the cap.
    pub(crate) fn trigger_tokens(&self, model_window: u32) -> u64 {
        let window = self
            .context_window
            .unwrap_or(match u64::from(model_window) {
                0 => FALLBACK_WINDOW,
                known => known,
            });
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a share of a token count far below 2^52"
        )]
        let share = (window as f64 * self.threshold_pct) as u64;
        share.min(self.cap_tokens).max(1)
    }
}

/// `compaction` as stored, or what is wrong with it.
pub(crate) fn parse_setting(value: &Value) -> Result<Value, String> {
    let example = r#"{"threshold_pct": 0.8, "cap_tokens": 250000, "model": "openai:gpt-4o-mini"}"#;
    if !value.is_object() {
        return Err(format!("is an object such as {example}"));
    }
    let settings: CompactionSettings = serde_json::from_value(value.clone())
        .map_err(|e| format!("is not a valid compaction setting: {e}; e.g. {example}"))?;
    if !(settings.threshold_pct > 0.0 && settings.threshold_pct <= 1.0) {
        return Err(format!(
            "has threshold_pct {}: it is the share of the context window, above 0 and at most 1 (e.g. 0.8)",
            settings.threshold_pct
        ));
    }
    if settings.cap_tokens < MIN_TOKENS {
        return Err(format!("has cap_tokens below {MIN_TOKENS}"));
    }
    if settings.context_window.is_some_and(|w| w < MIN_TOKENS) {
        return Err(format!("has context_window below {MIN_TOKENS}"));
    }
    if let Some(model) = &settings.model
        && !model.contains(':')
    {
        return Err(format!(
            "has model {model:?}: name it as provider:model, e.g. openai:gpt-4o-mini"
        ));
    }
    Ok(value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_trigger_is_the_threshold_share_of_the_window_up_to_the_cap() {
        let defaults = CompactionSettings::default();
        assert_eq!(defaults.trigger_tokens(200_000), 160_000);
        assert_eq!(defaults.trigger_tokens(1_000_000), 250_000, "capped");
        assert_eq!(
            defaults.trigger_tokens(0),
            102_400,
            "unknown window: 128,000"
        );
        let small = CompactionSettings::of_tenant(
            &json!({"compaction": {"context_window": 4000, "threshold_pct": 0.5}}),
        );
        assert_eq!(small.trigger_tokens(200_000), 2_000);
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        for (value, says) in [
            (json!(true), "is an object"),
            (json!({"threshold_pct": 80}), "above 0 and at most 1"),
            (json!({"cap_tokens": 10}), "cap_tokens below"),
            (json!({"model": "gpt"}), "provider:model"),
            (json!({"window": 1}), "unknown field"),
        ] {
            let error = parse_setting(&value).unwrap_err();
            assert!(error.contains(says), "{value}: {error}");
        }
        assert!(parse_setting(&json!({"enabled": false})).is_ok());
    }
}
