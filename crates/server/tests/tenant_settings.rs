//! `GET` and `PATCH /v1/tenant/settings` in process: reading, changing what the automation service
//! and the engine read, all-or-nothing validation, the admin check and the audit trail.

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_engine::automations::{AutomationDraft, AutomationError, create, tenant_timezone};
use workmate_protocol::{TenantId, UserId};

use crate::api::authed;
use crate::authority::{as_user, people};
use crate::router::App;

const PATH: &str = "/v1/tenant/settings";

fn tenant() -> TenantId {
    TenantId::from("default")
}

async fn stored(app: &App) -> Value {
    app.store
        .tenants()
        .get(&tenant())
        .await
        .unwrap()
        .unwrap()
        .settings
}

/// The `tenant_settings_changed` audit records, oldest first.
async fn changes_audited(app: &App) -> Vec<workmate_store::AuditRecord> {
    let mut records: Vec<_> = app
        .store
        .audit()
        .recent(&tenant(), 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.stage == "tenant_settings_changed")
        .collect();
    records.sort_by_key(|r| r.id.clone());
    records
}

/// A daily draft without a zone, so the tenant's applies.
/// `user` creates the daily automation.
async fn create_as(
    app: &crate::router::App,
    user: &str,
) -> Result<workmate_store::Automation, AutomationError> {
    create(
        &app.store,
        &tenant(),
        &UserId::from(user),
        None,
        daily(),
        "test",
    )
    .await
}

fn daily() -> AutomationDraft {
    serde_json::from_value(
        json!({"title": "Digest", "instructions": "Post it.", "cron": "0 9 * * *"}),
    )
    .unwrap()
}

#[tokio::test]
async fn anyone_of_the_tenant_reads_its_settings() {
    let app = people().await;
    let (status, body) = authed(&app, "GET", PATH, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"tenant_id": "default", "settings": {}}));

    app.store
        .tenants()
        .set_settings(&tenant(), &json!({"timezone": "Europe/Berlin"}))
        .await
        .unwrap();
    let (status, body) = as_user(&app, "alice", "GET", PATH, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["settings"], json!({"timezone": "Europe/Berlin"}));
}

#[tokio::test]
async fn an_admin_sets_the_zone_and_leaves_creating_automations_to_admins() {
    let app = people().await;
    let (status, body) = as_user(
        &app,
        "carol",
        "PATCH",
        PATH,
        Some(json!({"timezone": "Asia/Shanghai", "automation_creators": "admin"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let expected = json!({"timezone": "Asia/Shanghai", "automation_creators": "admin"});
    assert_eq!(body, json!({"tenant_id": "default", "settings": expected}));
    assert_eq!(stored(&app).await, expected);
    assert_eq!(
        tenant_timezone(&app.store, &tenant()).await.unwrap(),
        "Asia/Shanghai"
    );

    // The automation service reads both: a member is refused, an admin's automation gets the zone.
    let refused = create_as(&app, "alice").await;
    match refused {
        Err(AutomationError::Forbidden(reason)) => {
            assert!(reason.contains("only admins"), "{reason}");
        }
        other => panic!("a member created an automation: {other:?}"),
    }
    let made = create_as(&app, "carol").await.unwrap();
    assert_eq!(made.schedule["timezone"], "Asia/Shanghai", "{made:?}");

    // Null restores the default, and members may create again.
    let (status, body) = authed(
        &app,
        "PATCH",
        PATH,
        Some(json!({"automation_creators": null})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["settings"], json!({"timezone": "Asia/Shanghai"}));
    create_as(&app, "alice").await.unwrap();

    let audited = changes_audited(&app).await;
    assert_eq!(audited.len(), 2, "one record per change: {audited:#?}");
    assert_eq!(audited[0].actor.as_deref(), Some("carol"));
    assert_eq!(
        audited[0].detail["keys"],
        json!(["automation_creators", "timezone"])
    );
    assert_eq!(audited[0].detail["values"]["timezone"], "Asia/Shanghai");
    assert_eq!(audited[0].detail["via"], "http");
    assert_eq!(audited[1].actor.as_deref(), Some("admin"));
    assert_eq!(audited[1].detail["keys"], json!(["automation_creators"]));
    assert_eq!(
        audited[1].detail["values"]["automation_creators"],
        Value::Null
    );
}

#[tokio::test]
async fn an_invalid_value_changes_nothing() {
    let app = people().await;
    let before = json!({"timezone": "Europe/Berlin"});
    app.store
        .tenants()
        .set_settings(&tenant(), &before)
        .await
        .unwrap();
    // The valid key is not applied either: a PATCH is all or nothing.
    let (status, body) = authed(
        &app,
        "PATCH",
        PATH,
        Some(json!({"separation_of_duties": true, "timezone": "Mars/Olympus"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("`timezone`"), "{error}");
    assert!(error.contains("Mars/Olympus"), "{error}");

    let (status, body) = authed(
        &app,
        "PATCH",
        PATH,
        Some(json!({"permissions": {"allowed_command": ["git status"]}})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("unknown field `allowed_command`"),
        "{body}"
    );

    for bad in [json!(["timezone"]), json!({})] {
        let (status, body) = authed(&app, "PATCH", PATH, Some(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
    assert_eq!(stored(&app).await, before);
    assert!(changes_audited(&app).await.is_empty());
}

#[tokio::test]
async fn an_unknown_key_is_refused_with_the_known_ones() {
    let app = people().await;
    let (status, body) = authed(&app, "PATCH", PATH, Some(json!({"time_zone": "UTC"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("unknown setting `time_zone`"), "{error}");
    for key in [
        "timezone",
        "automation_creators",
        "separation_of_duties",
        "permissions",
    ] {
        assert!(error.contains(key), "{key} missing from {error}");
    }
    assert_eq!(stored(&app).await, json!({}));
}

#[tokio::test]
async fn only_an_admin_changes_settings() {
    let app = people().await;
    for user in ["alice", "bob"] {
        let (status, body) = as_user(
            &app,
            user,
            "PATCH",
            PATH,
            Some(json!({"separation_of_duties": true})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{user}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("only the tenant's admins"),
            "{body}"
        );
    }
    assert_eq!(stored(&app).await, json!({}));
    assert!(changes_audited(&app).await.is_empty());

    let (status, body) = as_user(
        &app,
        "carol",
        "PATCH",
        PATH,
        Some(json!({"separation_of_duties": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(stored(&app).await, json!({"separation_of_duties": true}));
}
