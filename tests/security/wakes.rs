//! Review item 14: any member fired any wake event (`POST /v1/wakes/events`), waking other
//! people's sessions gated on it (e.g. `deploy:prod`). A member's event now wakes only their
//! own sessions; an admin's wakes the tenant's.

use axum::http::StatusCode;
use serde_json::json;
use workmate_protocol::{SessionId, TenantId};
use workmate_store::{NewWake, WakeKind};

use crate::authority::{as_user, people};
use crate::router::App;

/// A session of `user` waiting on `deploy:prod`.
async fn waiting(app: &App, user: &str) -> SessionId {
    let (_, created) = as_user(app, user, "POST", "/v1/sessions", None).await;
    let session = SessionId::from(created["session_id"].as_str().unwrap());
    let wake = NewWake {
        session_id: session.clone(),
        kind: WakeKind::Event,
        fire_at_ms: None,
        job_id: None,
        event_key: Some("deploy:prod".into()),
        note: "verify the deploy".into(),
    };
    app.store
        .wakes()
        .create(&TenantId::from("default"), &wake)
        .await
        .unwrap();
    session
}

#[tokio::test]
async fn a_member_wakes_only_their_own_sessions() {
    let app = people().await;
    let alices = waiting(&app, "alice").await;
    let bobs = waiting(&app, "bob").await;
    let fire = json!({"key": "deploy:prod"});

    // Eve, a member with no session waiting, wakes no one's.
    let (status, fired) =
        as_user(&app, "eve", "POST", "/v1/wakes/events", Some(fire.clone())).await;
    assert_eq!((status, fired), (StatusCode::OK, json!({"woken": 0})));
    // Alice wakes her own.
    let (_, fired) = as_user(
        &app,
        "alice",
        "POST",
        "/v1/wakes/events",
        Some(fire.clone()),
    )
    .await;
    assert_eq!(fired, json!({"woken": 1}));
    let due: Vec<SessionId> = app
        .store
        .wakes()
        .ready(i64::MAX, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.session_id)
        .collect();
    assert_eq!(due, [alices], "only Alice's session is due");
    // An admin's event is the tenant's.
    let (_, fired) = as_user(&app, "carol", "POST", "/v1/wakes/events", Some(fire)).await;
    assert_eq!(fired, json!({"woken": 1}));
    let due = app.store.wakes().ready(i64::MAX, 10).await.unwrap();
    assert!(due.iter().any(|w| w.session_id == bobs));
}
