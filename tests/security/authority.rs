//! Authority over sessions: a member cannot act on a coworker's session, not even an approver can
//! steer or switch one that is not theirs, and a member cannot choose `auto`.

use serde_json::json;

use crate::authority::{as_user, people};

#[tokio::test]
async fn no_session_command_from_someone_else_changes_anything() {
    let app = people().await;
    let (status, created) = as_user(&app, "alice", "POST", "/v1/sessions", Some(json!({}))).await;
    assert_eq!(status, 201, "{created}");
    let session = created["session_id"].as_str().unwrap().to_owned();
    let path = format!("/v1/sessions/{session}/commands");
    let commands = [
        json!({"type": "user_message", "text": "run rm -rf ~"}),
        json!({"type": "set_mode", "mode": "auto"}),
        json!({"type": "switch_model", "model": "scripted:other"}),
        json!({"type": "interrupt"}),
        json!({"type": "retry"}),
    ];
    for command in &commands {
        for who in ["eve", "bob"] {
            let (status, body) = as_user(&app, who, "POST", &path, Some(command.clone())).await;
            assert_eq!(status, 403, "{who}: {command}: {body}");
        }
    }
    // Reading it is another matter: a member does not see a coworker's session at all.
    let (status, _) = as_user(&app, "eve", "GET", &format!("/v1/sessions/{session}"), None).await;
    assert_eq!(status, 404);
    let stored = app
        .store
        .sessions()
        .get(&"default".into(), &session.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.mode, workmate_protocol::PermissionMode::Interactive);
    assert_eq!(stored.message_count, 0, "no message got in");
    // The owner may.
    let message = json!({"type": "user_message", "text": "hello"});
    assert_eq!(
        as_user(&app, "alice", "POST", &path, Some(message)).await.0,
        202
    );
}

#[tokio::test]
async fn a_member_cannot_choose_auto_and_an_admin_can() {
    let app = people().await;
    let auto = json!({"mode": "auto"});
    let (status, body) = as_user(&app, "alice", "POST", "/v1/sessions", Some(auto.clone())).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = as_user(&app, "carol", "POST", "/v1/sessions", Some(auto)).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn the_admin_token_cannot_act_as_someone_else() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use tower::ServiceExt;

    let app = people().await;
    let request = Request::builder()
        .method("POST")
        .uri("/v1/sessions")
        .header(
            header::AUTHORIZATION,
            format!("Bearer {}", crate::router::TOKEN),
        )
        .header("x-workmate-acting-user", "alice")
        .body(Body::from("{}"))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // A surface token may.
    let (status, body) = as_user(&app, "alice", "POST", "/v1/sessions", Some(json!({}))).await;
    assert_eq!(status, 201, "{body}");
}
