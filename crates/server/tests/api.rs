//! The sessions and inbox API in process: auth, the demo flow end to end, errors, and the event
//! stream's replay.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::router::{App, TOKEN, app};
use crate::support::{PATIENCE, eventually};

/// One request, with `token` as bearer if given; the status and the JSON body (null if none).
pub(crate) async fn call(
    app: &App,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let body = match body {
        Some(json) => {
            request = request.header(header::CONTENT_TYPE, "application/json");
            Body::from(json.to_string())
        }
        None => Body::empty(),
    };
    let response = app
        .router
        .clone()
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The session's messages once `done` holds on them (polled, with the admin token).
pub(crate) async fn messages_once(
    app: &App,
    session: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    eventually("the session's messages", PATIENCE, || async {
        let (_, body) = authed(
            app,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        )
        .await;
        let messages = body["messages"].as_array()?.clone();
        done(&messages).then_some(messages)
    })
    .await
}

/// One request with the admin token.
pub(crate) async fn authed(
    app: &App,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    call(app, method, path, body, Some(TOKEN)).await
}

#[tokio::test]
async fn the_api_needs_the_admin_token() {
    let app = app().await;
    for (method, path) in [
        ("POST", "/v1/sessions"),
        ("GET", "/v1/inbox"),
        ("GET", "/v1/sessions/x/messages"),
    ] {
        let (status, body) = call(&app, method, path, None, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
        assert!(body["error"].as_str().unwrap().contains("Bearer"), "{body}");
        let (status, _) = call(&app, method, path, None, Some("wrong-token")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, _) = call(&app, "GET", "/v1/contract", None, None).await;
    assert_eq!(status, StatusCode::OK, "the contract is public");
}

#[tokio::test]
async fn the_demo_report_runs_end_to_end_over_the_api() {
    let app = app().await;
    let (status, created) = authed(&app, "POST", "/v1/sessions", None).await;
    assert_eq!(status, StatusCode::CREATED);
    let session = created["session_id"].as_str().unwrap().to_owned();

    let message =
        json!({"type": "user_message", "text": "write this week's report and save it as a file"});
    let (status, accepted) = authed(
        &app,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    assert_eq!(
        (status, accepted["accepted"].as_str()),
        (StatusCode::ACCEPTED, Some("turn_started"))
    );

    let item = eventually("a pending approval in the inbox", PATIENCE, || async {
        let (_, listed) = authed(&app, "GET", "/v1/inbox?state=pending", None).await;
        listed["items"]
            .as_array()
            .and_then(|items| items.first().cloned())
    })
    .await;
    assert_eq!(item["title"], "Run `write_file`?");
    assert_eq!(item["requested_by"], "admin");
    let id = item["id"].as_str().unwrap();

    let approve = json!({"resolution": {"type": "approval", "choice": "once"}});
    let (status, resolved) = authed(
        &app,
        "POST",
        &format!("/v1/inbox/{id}/resolve"),
        Some(approve.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{resolved}");
    assert_eq!(resolved["item"]["resolved_by"], "admin");
    let (status, again) = authed(
        &app,
        "POST",
        &format!("/v1/inbox/{id}/resolve"),
        Some(approve),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        again["detail"]["resolved_by"], "admin",
        "the loser learns who won: {again}"
    );

    let messages = eventually("the session's messages", PATIENCE, || async {
        let (_, body) = authed(
            &app,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        )
        .await;
        let messages = body["messages"].as_array()?.clone();
        (messages.len() >= 4).then_some(messages)
    })
    .await;
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["user", "assistant", "tool", "assistant"]);
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("weekly-report.md")
    );
    let file = app
        .dir
        .path()
        .join("workspaces/default")
        .join(&session)
        .join("weekly-report.md");
    assert!(
        std::fs::read_to_string(file)
            .unwrap()
            .starts_with("# Weekly report")
    );

    // The event stream replays the story, each state event with its seq as the SSE id.
    let stream = sse_until(
        &app,
        &format!("/v1/sessions/{session}/events?from_seq=1"),
        None,
        "event: turn_end",
    )
    .await;
    assert!(
        stream.starts_with("event: session_created\ndata: "),
        "{stream}"
    );
    assert!(stream.contains("\nid: 1\n"), "{stream}");
    for kind in [
        "turn_start",
        "permission_required",
        "inbox_item_parked",
        "inbox_item_resolved",
        "tool_finished",
    ] {
        assert!(
            stream.contains(&format!("event: {kind}\n")),
            "{kind} missing"
        );
    }
    // Resuming after seq 1 starts at seq 2.
    let resumed = sse_until(
        &app,
        &format!("/v1/sessions/{session}/events"),
        Some("1"),
        "event: turn_end",
    )
    .await;
    assert!(
        resumed.starts_with("event: turn_start\n") && resumed.contains("\nid: 2\n"),
        "{resumed}"
    );
}

/// Reads an event stream until `marker` appears.
async fn sse_until(app: &App, path: &str, last_event_id: Option<&str>, marker: &str) -> String {
    let mut request = Request::builder()
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let response = app
        .router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let mut body = response.into_body();
    let mut text = String::new();
    while !text.contains(marker) {
        let frame = tokio::time::timeout(Duration::from_secs(20), body.frame())
            .await
            .expect("more events")
            .unwrap()
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    text
}

#[tokio::test]
async fn bad_requests_say_what_is_wrong() {
    let app = app().await;
    let (_, created) = authed(
        &app,
        "POST",
        "/v1/sessions",
        Some(json!({"title": "t", "mode": "plan"})),
    )
    .await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    assert_eq!(created["mode"], "plan");
    let commands = format!("/v1/sessions/{session}/commands");
    let cases = [
        (
            json!({"text": "no type"}),
            StatusCode::BAD_REQUEST,
            "needs a \"type\"",
        ),
        (
            json!({"type": "launch"}),
            StatusCode::BAD_REQUEST,
            "unknown command type",
        ),
        (
            json!({"type": "user_message"}),
            StatusCode::BAD_REQUEST,
            "invalid user_message command",
        ),
        (
            json!({"type": "user_message", "text": "  "}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "empty",
        ),
        (
            json!({"type": "retry"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "nothing to retry",
        ),
    ];
    for (body, status, says) in cases {
        let (got, answer) = authed(&app, "POST", &commands, Some(body.clone())).await;
        assert_eq!(got, status, "{body} → {answer}");
        assert!(
            answer["error"].as_str().unwrap().contains(says),
            "{body} → {answer}"
        );
    }
    let (status, _) = authed(
        &app,
        "POST",
        "/v1/sessions/nope/commands",
        Some(json!({"type": "interrupt"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = authed(&app, "GET", "/v1/sessions/nope/messages", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = authed(
        &app,
        "POST",
        "/v1/inbox/nope/resolve",
        Some(json!({"resolution": {"type": "answer", "text": "x"}})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, answer) =
        authed(&app, "POST", "/v1/sessions", Some(json!({"colour": "red"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
}
