//! Turning raw backend error text into something a person can act on.
//!
//! Invariant: the markers are matched case-insensitively as substrings, and a text that matches
//! none is left alone (`None`), so the raw error surfaces instead of a wrong guess.

/// Marks of an account that is out of quota or credit.
const QUOTA_MARKERS: &[&str] = &[
    "insufficient_quota",
    "exceeded your current quota",
    "credit balance is too low",
    "billing hard limit",
];

/// Marks of a model the account may not use (or that does not exist).
const ACCESS_MARKERS: &[&str] = &[
    "model_not_found",
    "does not exist or you do not have access",
    "does not have access to model",
    "permission_error",
    "permission denied",
];

/// Marks of a prompt larger than the model's context window.
const OVERFLOW_MARKERS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "input length and `max_tokens` exceed",
    "exceeds the maximum number of tokens",
];

/// A friendlier message for a model error (`model` is the routed id the user picked), or `None`
/// when the raw text should be shown as it is.
pub fn friendly_error(model: &str, raw: &str) -> Option<String> {
    let text = raw.to_lowercase();
    if QUOTA_MARKERS.iter().any(|m| text.contains(m)) {
        return Some(format!(
            "Your account is out of quota for {model}. Add credit or raise the billing limit with \
             the provider, or switch to another model."
        ));
    }
    if ACCESS_MARKERS.iter().any(|m| text.contains(m)) || names_missing_model(model, &text) {
        return Some(format!(
            "Your account doesn't have access to {model}. Check the model id and the account's \
             access with the provider, or switch to another model."
        ));
    }
    None
}

/// Anthropic's "not found" names the model: `not_found_error … model: <bare id>`.
fn names_missing_model(model: &str, text: &str) -> bool {
    if !text.contains("not_found_error") {
        return false;
    }
    let model = model.to_lowercase();
    let bare = model
        .split_once(':')
        .map_or(model.as_str(), |(_, bare)| bare);
    text.contains(&format!("model: {bare}")) || text.contains(&format!("model: {model}"))
}

/// Whether an error text says the account is out of quota or credit.
pub fn is_quota(text: &str) -> bool {
    let text = text.to_lowercase();
    QUOTA_MARKERS.iter().any(|m| text.contains(m))
}

/// Whether an error text says the prompt did not fit the model's context window.
pub fn is_context_overflow(text: &str) -> bool {
    let text = text.to_lowercase();
    OVERFLOW_MARKERS.iter().any(|m| text.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_errors_say_the_account_is_out_of_quota() {
        for raw in [
            "Error code: 429 - {'error': {'code': 'insufficient_quota'}}",
            "You exceeded your current quota, please check your plan",
            "Your credit balance is too low to access the Anthropic API.",
            "Billing hard limit has been reached",
        ] {
            let msg = friendly_error("openai:gpt-5.5", raw).unwrap();
            assert!(
                msg.starts_with("Your account is out of quota for openai:gpt-5.5. "),
                "{msg}"
            );
        }
    }

    #[test]
    fn access_errors_say_the_account_lacks_access() {
        for raw in [
            "Error code: 404 - {'error': {'code': 'model_not_found'}}",
            "The model `gpt-9` does not exist or you do not have access to it.",
            "Project does not have access to model gpt-5.5",
            "{\"type\":\"permission_error\"}",
            "403 Permission denied on resource",
        ] {
            let msg = friendly_error("gpt-5.5", raw).unwrap();
            assert!(
                msg.starts_with("Your account doesn't have access to gpt-5.5. "),
                "{msg}"
            );
        }
    }

    #[test]
    fn not_found_counts_only_when_it_names_the_model() {
        let raw =
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}"#;
        assert!(friendly_error("anthropic:claude-x", raw).is_some());
        assert!(friendly_error("anthropic:claude-y", raw).is_none());
        assert!(friendly_error("claude-x", raw).is_some());
        assert!(friendly_error("anthropic:claude-x", "not_found_error: file missing").is_none());
    }

    #[test]
    fn other_errors_are_left_alone() {
        assert_eq!(friendly_error("gpt-5.5", "connection reset by peer"), None);
        assert_eq!(friendly_error("gpt-5.5", ""), None);
    }

    #[test]
    fn overflow_markers_match_case_insensitively() {
        for raw in [
            "Error: context_length_exceeded",
            "This model's Maximum Context Length is 128000 tokens",
            "request exceeds the model's context window",
            "prompt is too long: 210000 tokens > 200000 maximum",
            "Input is too long for requested model.",
            "TOO MANY TOKENS",
            "input length and `max_tokens` exceed context limit",
            "The input exceeds the maximum number of tokens",
        ] {
            assert!(is_context_overflow(raw), "{raw}");
        }
        assert!(!is_context_overflow("rate limit exceeded"));
        assert!(!is_context_overflow(""));
    }
}
