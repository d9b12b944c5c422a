//! One-line previews of tool arguments and results, for cards and events.

/// Longest result preview in a `tool_finished` event.
const RESULT_PREVIEW_CHARS: usize = 300;

/// `"key: value · key: value"`: non-strings as JSON, whitespace collapsed, each value cut to 79
/// characters and the whole to `limit`.
pub(crate) fn args_preview(arguments: &serde_json::Value, limit: usize) -> String {
    let Some(map) = arguments.as_object() else {
        return cut(&collapse(&arguments.to_string()), limit);
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(key, value)| {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{key}: {}", cut(&collapse(&text), 80))
        })
        .collect();
    cut(&parts.join(" · "), limit)
}

/// The first 300 characters of a result, newlines escaped.
pub(crate) fn result_preview(content: &str) -> String {
    cut(&content.replace('\n', "\\n"), RESULT_PREVIEW_CHARS)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().take(limit.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_short_single_lines() {
        let args = serde_json::json!({"path": "a.md", "content": "line one\n  line two", "n": 3});
        assert_eq!(
            args_preview(&args, 240),
            "path: a.md · content: line one line two · n: 3"
        );
        let long = serde_json::json!({"content": "x".repeat(500)});
        let preview = args_preview(&long, 240);
        assert!(preview.chars().count() <= 240 && preview.ends_with('…'));
        assert_eq!(result_preview("a\nb"), "a\\nb");
        assert_eq!(result_preview(&"y".repeat(400)).chars().count(), 300);
    }
}
