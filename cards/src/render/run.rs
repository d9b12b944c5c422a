//! The card an automation run posts to its thread when it ends: what ran, how it went, what it
//! said, and the files it left.

use serde::{Deserialize, Serialize};

use crate::ir::{Block, Card, Inline, RichText};
use crate::markdown::markdown_to_blocks;

/// An ended run, as its result card shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunResult {
    /// The automation's title.
    pub title: String,
    /// Whether the run ended well.
    pub ok: bool,
    /// Why it started: `schedule`, `catchup` or `manual`.
    pub trigger: String,
    /// How long it took, in milliseconds.
    pub took_ms: Option<i64>,
    /// Its final answer (markdown).
    pub summary: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Files it produced or changed.
    pub artifacts: Vec<String>,
}

/// The result card: title, outcome line, summary, error and artifacts.
pub fn run_card(run: &RunResult) -> Card {
    let mut blocks = vec![Block::Heading {
        text: format!("⏰ {}", run.title),
    }];
    let outcome = if run.ok { "✅ Done" } else { "❌ Failed" };
    let trigger = match run.trigger.as_str() {
        "manual" => "run by hand",
        "catchup" => "catch-up run (missed while the service was down)",
        _ => "scheduled run",
    };
    let mut line = format!("{outcome} · {trigger}");
    if let Some(took) = run.took_ms {
        line.push_str(&format!(" · took {}", duration(took)));
    }
    blocks.push(Block::Context(vec![Inline::Text(line)]));
    if let Some(summary) = run.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        blocks.extend(markdown_to_blocks(summary));
    }
    if let Some(error) = run.error.as_deref().filter(|e| !e.trim().is_empty()) {
        blocks.push(Block::Quote(RichText(vec![
            Inline::Bold("Error: ".into()),
            Inline::Text(error.to_owned()),
        ])));
    }
    if !run.artifacts.is_empty() {
        blocks.push(Block::Text(RichText(vec![Inline::Bold("Files".into())])));
        blocks.push(Block::List {
            ordered: false,
            items: run
                .artifacts
                .iter()
                .map(|path| RichText(vec![Inline::Code(path.clone())]))
                .collect(),
        });
    }
    Card { blocks }
}

fn duration(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_run_says_why_and_lists_its_files() {
        let card = run_card(&RunResult {
            title: "Sales digest".into(),
            ok: false,
            trigger: "catchup".into(),
            took_ms: Some(75_000),
            summary: Some("Drafted **half** the digest.".into()),
            error: Some("the gateway is over quota".into()),
            artifacts: vec!["digest.md".into()],
        });
        let text = serde_json::to_string(&card).unwrap();
        for expected in [
            "⏰ Sales digest",
            "❌ Failed · catch-up run",
            "took 1 min 15 s",
            "over quota",
            "digest.md",
            "half",
        ] {
            assert!(text.contains(expected), "{expected} missing from {text}");
        }
    }
}
