//! Who sees which sessions and inbox items over HTTP: members their own, approvers and admins the
//! whole tenant's; what is not visible answers 404 on every session and inbox route.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::authority::{as_user, asks, people};
use crate::router::{App, SURFACE_TOKEN};

/// The status of `GET /v1/sessions/{session}/events` as `user` (the stream itself is not read).
async fn events_status(app: &App, user: &str, session: &str) -> StatusCode {
    let request = Request::builder()
        .uri(format!("/v1/sessions/{session}/events"))
        .header(header::AUTHORIZATION, format!("Bearer {SURFACE_TOKEN}"))
        .header("x-workmate-acting-user", user)
        .body(Body::empty())
        .unwrap();
    app.router.clone().oneshot(request).await.unwrap().status()
}

fn ids(listed: &Value, key: &str, id: &str) -> Vec<String> {
    let mut ids: Vec<String> = listed[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {listed}"))
        .iter()
        .map(|v| v[id].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn members_see_their_own_sessions_and_items_and_approvers_see_all() {
    let app = people().await;
    let (alice_session, alice_item) = asks(&app, "alice").await;
    let (eve_session, eve_item) = asks(&app, "eve").await;

    for (user, sessions, items) in [
        (
            "alice",
            vec![alice_session.clone()],
            vec![alice_item.clone()],
        ),
        ("eve", vec![eve_session.clone()], vec![eve_item.clone()]),
        (
            "bob",
            sorted(vec![alice_session.clone(), eve_session.clone()]),
            sorted(vec![alice_item.clone(), eve_item.clone()]),
        ),
        (
            "carol",
            sorted(vec![alice_session.clone(), eve_session.clone()]),
            sorted(vec![alice_item.clone(), eve_item.clone()]),
        ),
    ] {
        let (status, listed) = as_user(&app, user, "GET", "/v1/sessions", None).await;
        assert_eq!(status, StatusCode::OK, "{user}: {listed}");
        assert_eq!(
            ids(&listed, "sessions", "id"),
            sessions,
            "{user}'s sessions"
        );
        let (status, listed) = as_user(&app, user, "GET", "/v1/inbox", None).await;
        assert_eq!(status, StatusCode::OK, "{user}: {listed}");
        assert_eq!(ids(&listed, "items", "id"), items, "{user}'s inbox");
        // Naming a coworker's session in the filter shows nothing more.
        let path = format!("/v1/inbox?session={eve_session}");
        let (_, listed) = as_user(&app, user, "GET", &path, None).await;
        let expected = if user == "alice" {
            vec![]
        } else {
            vec![eve_item.clone()]
        };
        assert_eq!(
            ids(&listed, "items", "id"),
            expected,
            "{user} filtering by eve's session"
        );
    }
}

#[tokio::test]
async fn a_coworkers_session_and_item_answer_404_to_a_member_and_commands_403() {
    let app = people().await;
    let (session, item) = asks(&app, "alice").await;
    let message = json!({"type": "user_message", "text": "hello"});
    let approve = json!({"resolution": {"type": "approval", "choice": "once"}});
    let routes = [
        ("GET", format!("/v1/sessions/{session}"), None),
        (
            "PATCH",
            format!("/v1/sessions/{session}"),
            Some(json!({"unattended": true})),
        ),
        ("GET", format!("/v1/sessions/{session}/messages"), None),
        (
            "POST",
            format!("/v1/inbox/{item}/resolve"),
            Some(approve.clone()),
        ),
    ];
    for (method, path, body) in &routes {
        let (status, answer) = as_user(&app, "eve", method, path, body.clone()).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "eve {method} {path}: {answer}"
        );
    }
    assert_eq!(
        events_status(&app, "eve", &session).await,
        StatusCode::NOT_FOUND
    );
    // A command is refused by the engine's authority rule, with its reason.
    let path = format!("/v1/sessions/{session}/commands");
    let (status, answer) = as_user(&app, "eve", "POST", &path, Some(message)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    // Nothing changed: the item still waits, the session is still attended.
    let (_, shown) = as_user(
        &app,
        "alice",
        "GET",
        &format!("/v1/sessions/{session}"),
        None,
    )
    .await;
    assert_eq!(shown["session"]["unattended"], false, "{shown}");
    assert_eq!(shown["session"]["owner"], "alice", "{shown}");

    // The owner, and an approver, get through on the same routes.
    assert_eq!(events_status(&app, "alice", &session).await, StatusCode::OK);
    assert_eq!(events_status(&app, "bob", &session).await, StatusCode::OK);
    let (status, answer) = as_user(
        &app,
        "bob",
        "GET",
        &format!("/v1/sessions/{session}/messages"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(
        !answer["messages"].as_array().unwrap().is_empty(),
        "{answer}"
    );
    let (status, answer) = as_user(
        &app,
        "alice",
        "PATCH",
        &format!("/v1/sessions/{session}"),
        Some(json!({"unattended": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = as_user(
        &app,
        "bob",
        "POST",
        &format!("/v1/inbox/{item}/resolve"),
        Some(approve),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["item"]["resolved_by"], "bob");
}
