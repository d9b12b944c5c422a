//! Trace context across the intake: a delivery is stored with the W3C `traceparent` of the span
//! that accepted it, and the worker that runs it (later, perhaps in another process) continues
//! that trace; a card update continues the trace of the turn it shows. So a chat turn is one
//! trace from the platform's request to the card update.
//!
//! Invariant: without a span exporter the context is empty and nothing is stored; a stored value
//! that does not parse starts a new trace, never an error.

use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceState};
use opentelemetry::{Context, SpanId, TraceId};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The key of the `traceparent` in a stored delivery's payload.
pub(crate) const PAYLOAD_KEY: &str = "_traceparent";

/// The current span's context as a W3C `traceparent`, when it has one.
pub(crate) fn current_traceparent() -> Option<String> {
    let context = tracing::Span::current().context();
    let span = context.span();
    let found = span.span_context();
    found.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            found.trace_id(),
            found.span_id(),
            found.trace_flags().to_u8()
        )
    })
}

/// Makes `span` a child of the span `traceparent` names, when it names one.
pub(crate) fn continue_trace(span: &tracing::Span, traceparent: Option<&str>) {
    let Some(parent) = traceparent.and_then(parse) else {
        return;
    };
    continue_with(span, Context::new().with_remote_span_context(parent));
}

/// Makes `span` a child of the span whose context is `parent`.
pub(crate) fn continue_with(span: &tracing::Span, parent: Context) {
    // A span that is not exported cannot take a parent; it stays a root.
    let _ = span.set_parent(parent);
}

fn parse(traceparent: &str) -> Option<SpanContext> {
    let mut parts = traceparent.trim().split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if version != "00" || trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
        return None;
    }
    let context = SpanContext::new(
        TraceId::from_hex(trace).ok()?,
        SpanId::from_hex(span).ok()?,
        TraceFlags::new(u8::from_str_radix(flags, 16).ok()?),
        true,
        TraceState::default(),
    );
    context.is_valid().then_some(context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_parses_or_is_ignored() {
        let found = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(
            found.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(found.is_remote());
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-xyz-00f067aa0ba902b7-01",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert_eq!(current_traceparent(), None, "no exporter, no context");
    }
}
