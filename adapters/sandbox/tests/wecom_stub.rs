//! A stand-in for workmate's WeCom callback route: it takes only callbacks signed and encrypted
//! with the test's Token and EncodingAESKey (for the smart robot: receive id empty), records
//! their plaintext, and answers each with what the test's script says, sealed as workmate seals
//! it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use workmate_wecom::callback::{CallbackAuth, Query};

use crate::support::{WECOM_KEY, WECOM_TOKEN, get};

/// What the stub answers a callback's plaintext: `None` for an empty body.
pub(crate) type Script = Arc<dyn Fn(&Value) -> Option<Value> + Send + Sync>;

/// The callbacks received, in order.
#[derive(Clone, Default)]
pub(crate) struct Received(Arc<Mutex<Vec<Value>>>);

impl Received {
    pub(crate) fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }

    /// The received callbacks of `msgtype`.
    pub(crate) fn of(&self, msgtype: &str) -> Vec<Value> {
        self.all()
            .into_iter()
            .filter(|c| c["msgtype"] == msgtype)
            .collect()
    }
}

#[derive(Clone)]
struct Stub {
    received: Received,
    script: Script,
    /// Seals the answers: the test's secrets, or others to test the sandbox's check.
    seal_with: Arc<CallbackAuth>,
}

async fn callback(State(stub): State<Stub>, RawQuery(query): RawQuery, body: Bytes) -> Response {
    let auth = CallbackAuth::new(WECOM_TOKEN, WECOM_KEY, "").unwrap();
    let Ok(query) = Query::parse(query.as_deref().unwrap_or_default()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Ok(plaintext) = auth.open_json(&query, &body) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let plaintext: Value = serde_json::from_str(&plaintext).unwrap();
    stub.received.0.lock().unwrap().push(plaintext.clone());
    match (stub.script)(&plaintext) {
        None => String::new().into_response(),
        Some(answer) => stub
            .seal_with
            .seal_json(&answer.to_string(), 1_700_000_000, "4242")
            .into_response(),
    }
}

/// Serves the stub; its base URL and what it receives.
pub(crate) async fn recording_workmate(script: Script) -> (String, Received) {
    recording_workmate_sealing_with(script, WECOM_TOKEN).await
}

/// [`recording_workmate`], sealing its answers with the Token `token`.
pub(crate) async fn recording_workmate_sealing_with(
    script: Script,
    token: &str,
) -> (String, Received) {
    let received = Received::default();
    let stub = Stub {
        received: received.clone(),
        script,
        seal_with: Arc::new(CallbackAuth::new(token, WECOM_KEY, "").unwrap()),
    };
    let app = Router::new()
        .route("/v1/platforms/wecom/callback", post(callback))
        .with_state(stub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), received)
}

/// The sandbox's WeCom chat as the page sees it.
pub(crate) async fn wecom_state(app: &Router) -> Value {
    let (status, _, state) = get(app, "/sandbox/wecom/state").await;
    assert_eq!(status, StatusCode::OK);
    serde_json::from_str(&state).unwrap()
}

/// The messages of the first thread (a message and what answered it).
pub(crate) async fn first_thread(app: &Router) -> Vec<Value> {
    let state = wecom_state(app).await;
    state["channels"][0]["threads"][0]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Polls `check` on the first thread until it holds, for at most `within`.
pub(crate) async fn until(
    app: &Router,
    within: Duration,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let check = &check;
    workmate_test_support::eventually_ok(what, within, || async move {
        let thread = first_thread(app).await;
        if check(&thread) {
            Ok(thread)
        } else {
            Err(thread)
        }
    })
    .await
}
