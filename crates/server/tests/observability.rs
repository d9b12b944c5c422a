//! `deploy/observability/`: every series the Grafana dashboard and the alert rules name is one
//! `/metrics` exposes, and the dashboard is valid JSON.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use workmate_server::metrics::Metrics;

/// A registry with a sample in every family: a request, a recovery, a failed scheduler tick, and
/// a turn whose tool call waited for an approval and whose model reported tokens.
fn exercised() -> Metrics {
    use workmate_engine::TickObserver;
    use workmate_engine::observe::{EngineObserver, ModelCallOutcome};
    use workmate_protocol::{
        Actor, ApprovalChoice, Event, EventKind, InboxItemKind, Resolution, Surface, TokenUsage,
        ToolStatus, TurnEndStatus, Visibility,
    };
    let metrics = Metrics::new();
    metrics.observe_request(
        "POST",
        Some("/v1/platforms/slack/events"),
        200,
        Duration::ZERO,
    );
    metrics.turn_recovered("resumed");
    workmate_chat::IntakeObserver::delivery(&metrics, Surface::Feishu, "stored", Duration::ZERO);
    metrics.tick_finished(None, Duration::ZERO);
    let engine = metrics.engine();
    let event = |kind: EventKind| Event {
        tenant_id: "t".into(),
        session_id: "s".into(),
        seq: 1,
        turn_id: None,
        at_ms: 0,
        kind,
    };
    for kind in [
        EventKind::InboxItemParked {
            item_id: "i".into(),
            item_kind: InboxItemKind::Approval,
            tool_call_id: None,
            title: "Run?".into(),
            visibility: Visibility::Inline,
            requested_by: None,
        },
        EventKind::InboxItemResolved {
            item_id: "i".into(),
            item_kind: InboxItemKind::Approval,
            tool_call_id: None,
            resolution: Resolution::Approval {
                choice: ApprovalChoice::Once,
            },
            resolved_by: Actor::new("u"),
            via: Surface::Slack,
        },
        EventKind::ToolFinished {
            tool_call_id: "c".into(),
            name: "run_shell".into(),
            status: ToolStatus::Ok,
            result_preview: None,
            reason: None,
            display: None,
            standing_rule: None,
        },
        EventKind::TurnEnd {
            status: TurnEndStatus::Completed,
            iterations: 1,
        },
    ] {
        engine.event(&event(kind));
    }
    let usage = TokenUsage {
        model: "gw:m".into(),
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
    };
    engine.model_call("gw:m", Duration::ZERO, ModelCallOutcome::Ok, Some(&usage));
    metrics
}

/// The sample names the registry exposes: each family's name with the suffixes its type gives
/// its samples.
fn exposed() -> BTreeSet<String> {
    let text = exercised().render((0, 0)).unwrap();
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        let suffixes: &[&str] = match kind {
            "counter" => &["_total", "_created"],
            "histogram" => &["_bucket", "_sum", "_count", "_created"],
            _ => &[""],
        };
        for suffix in suffixes {
            names.insert(format!("{name}{suffix}"));
        }
    }
    names
}

/// Every `workmate_…` name in `text`.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("workmate_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        out.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    out
}

#[test]
fn the_dashboard_and_the_alerts_name_only_exposed_series() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/observability");
    let exposed = exposed();
    assert!(exposed.contains("workmate_turns_total"), "{exposed:?}");
    let dashboard = std::fs::read_to_string(dir.join("workmate-dashboard.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    assert!(parsed["panels"].as_array().is_some_and(|p| p.len() >= 10));
    let rules = std::fs::read_to_string(dir.join("workmate-alerts.yml")).unwrap();
    let mut used = named(&dashboard);
    used.extend(named(&rules));
    assert!(used.len() >= 15, "{used:?}");
    let unknown: Vec<&String> = used.iter().filter(|n| !exposed.contains(*n)).collect();
    assert!(
        unknown.is_empty(),
        "not on /metrics: {unknown:?}; exposed: {exposed:?}"
    );
}
