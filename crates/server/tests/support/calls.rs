//! What a wiremock fake of a chat platform received, and waiting until it has received enough:
//! the one way the platform tests (Slack, Feishu) look at the calls workmate made.
//!
//! Invariant: calls are listed in the order the fake received them, and a wait fails with the
//! calls it saw last, so a failing test shows what was sent instead.

use std::time::Duration;

use serde_json::Value;
use wiremock::MockServer;
use workmate_test_support::eventually_ok;

/// How long a test waits for the calls it expects.
const PATIENCE: Duration = Duration::from_secs(10);

/// One request a fake received.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) method: String,
    pub(crate) path: String,
    /// The JSON body; null when the body is empty or not JSON.
    pub(crate) body: Value,
}

/// Every request `fake` received on a path starting with `prefix`, in order.
pub(crate) async fn calls(fake: &MockServer, prefix: &str) -> Vec<Call> {
    fake.received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path().starts_with(prefix))
        .map(|r| Call {
            method: r.method.to_string(),
            path: r.url.path().to_owned(),
            body: serde_json::from_slice(&r.body).unwrap_or(Value::Null),
        })
        .collect()
}

/// Polls `fake` until `check` holds on the [`calls`] under `prefix`, and returns them; fails
/// after 10 s, saying `what` was awaited and which calls there were.
pub(crate) async fn wait_for(
    fake: &MockServer,
    prefix: &str,
    what: &str,
    check: impl Fn(&[Call]) -> bool,
) -> Vec<Call> {
    let check = &check;
    eventually_ok(what, PATIENCE, || async move {
        let seen = calls(fake, prefix).await;
        if check(&seen) { Ok(seen) } else { Err(seen) }
    })
    .await
}
