//! The engine's metrics: turns, tool calls, approvals, model calls and tokens, fed by the
//! engine's observer hook ([`workmate_engine::observe::EngineObserver`]).
//!
//! Invariants: no label carries a tenant, a session, a user or free text: outcomes and
//! statuses come from the contract's closed sets, and models from the configured gateways; the
//! half-known approval latencies (parked, or answered first) are bounded ([`PARKED_KEPT`]), so an
//! approval answered on another replica, or after the bound was reached, just goes unmeasured.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use workmate_engine::observe::{EngineObserver, ModelCallOutcome};
use workmate_protocol::{Event, EventKind, InboxItemId, Resolution, TokenUsage};

/// Parked prompts whose time is kept for approval latency.
pub const PARKED_KEPT: usize = 10_000;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelOnly {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    direction: &'static str,
}

type Latencies<L> = Family<L, Histogram, fn() -> Histogram>;

fn seconds_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.05, 2.0, 16))
}

/// The engine's series, registered in the process registry.
#[derive(Debug)]
pub struct EngineMetrics {
    turns: Family<OutcomeLabels, Counter>,
    tool_calls: Family<StatusLabels, Counter>,
    approvals: Family<DecisionLabels, Counter>,
    approval_latency: Histogram,
    model_calls: Family<ModelLabels, Counter>,
    model_latency: Latencies<ModelOnly>,
    tokens: Family<TokenLabels, Counter>,
    /// When each prompt was parked, or answered when its answer came first (a person can answer
    /// the stored item before its `inbox_item_parked` event is out).
    parked: Mutex<HashMap<InboxItemId, Seen>>,
}

/// The first half of a prompt's latency to arrive, Unix ms.
#[derive(Clone, Copy, Debug)]
enum Seen {
    Parked(i64),
    Answered(i64),
}

impl EngineMetrics {
    /// The series, registered in `registry`.
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            turns: Family::default(),
            tool_calls: Family::default(),
            approvals: Family::default(),
            approval_latency: seconds_buckets(),
            model_calls: Family::default(),
            model_latency: Family::new_with_constructor(seconds_buckets),
            tokens: Family::default(),
            parked: Mutex::default(),
        };
        registry.register(
            "turns",
            "Turns ended, by outcome (completed, … from turn_end; failed; interrupted)",
            metrics.turns.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls finished, by status (ok, error, denied, interrupted)",
            metrics.tool_calls.clone(),
        );
        registry.register(
            "approvals",
            "Prompts answered, by decision (approved, denied, dismissed, answered)",
            metrics.approvals.clone(),
        );
        registry.register_with_unit(
            "approval_latency",
            "From a prompt parked to its answer, when both happened in this process",
            Unit::Seconds,
            metrics.approval_latency.clone(),
        );
        registry.register(
            "model_calls",
            "Model calls, by model and outcome (ok, error, interrupted)",
            metrics.model_calls.clone(),
        );
        registry.register_with_unit(
            "model_call",
            "Model call duration, request to last streamed item, by model",
            Unit::Seconds,
            metrics.model_latency.clone(),
        );
        registry.register(
            "model_tokens",
            "Tokens reported by models, by model and direction (input, output)",
            metrics.tokens.clone(),
        );
        metrics
    }

    fn approval(&self, item: &InboxItemId, resolution: &Resolution, at_ms: i64) {
        let decision = match resolution {
            Resolution::Approval { choice } if choice.allows() => "approved",
            Resolution::Approval { .. } => "denied",
            Resolution::Dismissed { .. } => "dismissed",
            _ => "answered",
        };
        self.approvals
            .get_or_create(&DecisionLabels { decision })
            .inc();
        self.half(item, Seen::Answered(at_ms));
    }

    /// Records one half of a prompt's latency; with both halves, observes it.
    fn half(&self, item: &InboxItemId, seen: Seen) {
        let other = {
            let mut halves = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
            match halves.remove(item) {
                Some(other) => Some(other),
                None => {
                    if halves.len() >= PARKED_KEPT {
                        halves.clear();
                    }
                    halves.insert(item.clone(), seen);
                    None
                }
            }
        };
        let (parked, answered) = match (other, seen) {
            (Some(Seen::Parked(p)), Seen::Answered(a))
            | (Some(Seen::Answered(a)), Seen::Parked(p)) => (p, a),
            _ => return,
        };
        let waited = u64::try_from(answered.saturating_sub(parked)).unwrap_or(0);
        self.approval_latency
            .observe(Duration::from_millis(waited).as_secs_f64());
    }
}

/// A contract value's wire name (`"completed"`), for a label.
fn wire_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".to_owned())
}

impl EngineObserver for EngineMetrics {
    fn event(&self, event: &Event) {
        let outcome = |outcome: String| OutcomeLabels { outcome };
        match &event.kind {
            EventKind::TurnEnd { status, .. } => {
                self.turns.get_or_create(&outcome(wire_name(status))).inc();
            }
            EventKind::Error { .. } => {
                self.turns.get_or_create(&outcome("failed".into())).inc();
            }
            EventKind::Interrupted { .. } => {
                self.turns
                    .get_or_create(&outcome("interrupted".into()))
                    .inc();
            }
            EventKind::ToolFinished { status, .. } => {
                let status = wire_name(status);
                self.tool_calls
                    .get_or_create(&StatusLabels { status })
                    .inc();
            }
            EventKind::InboxItemParked { item_id, .. } => {
                self.half(item_id, Seen::Parked(event.at_ms));
            }
            EventKind::InboxItemResolved {
                item_id,
                resolution,
                ..
            } => self.approval(item_id, resolution, event.at_ms),
            _ => {}
        }
    }

    fn model_call(
        &self,
        model: &str,
        elapsed: Duration,
        outcome: ModelCallOutcome,
        usage: Option<&TokenUsage>,
    ) {
        self.model_calls
            .get_or_create(&ModelLabels {
                model: model.to_owned(),
                outcome: outcome.as_str(),
            })
            .inc();
        self.model_latency
            .get_or_create(&ModelOnly {
                model: model.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
        if let Some(usage) = usage {
            for (direction, n) in [("input", usage.input), ("output", usage.output)] {
                self.tokens
                    .get_or_create(&TokenLabels {
                        model: model.to_owned(),
                        direction,
                    })
                    .inc_by(n);
            }
        }
    }
}
