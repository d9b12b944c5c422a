//! Offboarding: `POST /v1/users/{id}/deprovision` and the SCIM-style `PATCH /v1/users/{id}`
//! revoke everything a user holds in one audited transaction, and every surface refuses them.

use serde_json::{Value, json};
use workmate_protocol::{EventKind, Resolution, SessionId, TenantId, ToolStatus};
use workmate_store::{InboxItemState, NewAutomation};

use crate::api::{authed, call};
use crate::authority::{as_user, asks, people};
use crate::router::TOKEN;

/// Alice's automation, with a granted and a requested standing rule.
async fn alices_automation(app: &crate::router::App) -> workmate_protocol::AutomationId {
    let tenant = TenantId::from("default");
    let rule = json!({"tool": "post_message", "target": "#ops"});
    let new = NewAutomation {
        title: "Nightly digest".into(),
        instructions: "Post the digest".into(),
        schedule: json!({"kind": "cron", "cron": "0 9 * * 1-5", "timezone": "UTC"}),
        owner: "alice".into(),
        origin_session_id: None,
        enabled: true,
        next_run_ms: Some(4_102_444_800_000),
        settings: json!({"standing_rules": [rule.clone()], "requested_rules": [rule]}),
    };
    app.store
        .automations()
        .create(&tenant, &new)
        .await
        .unwrap()
        .id
}

/// Gives the session a standing grant, as an "always allow" answer would.
async fn grant(app: &crate::router::App, tenant: &TenantId, session: &SessionId) {
    let mut step = workmate_store::StepWrite::new(tenant.clone(), session.clone(), None);
    step.change.grants = Some(json!({"tools": ["web_fetch"]}));
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.store.writer().submit(
        step,
        Box::new(move |outcome| {
            let _ = tx.send(outcome);
        }),
    );
    assert!(rx.await.unwrap().is_ok());
}

#[tokio::test]
async fn deprovisioning_revokes_everything_at_once_and_every_surface_refuses_the_user() {
    let app = people().await;
    let tenant = TenantId::from("default");
    let (session, item) = asks(&app, "alice").await;
    let automation = alices_automation(&app).await;
    let session_id = SessionId::from(session.as_str());
    grant(&app, &tenant, &session_id).await;

    // A member may not, and nobody may deprovision someone who does not exist.
    let (status, _) = as_user(&app, "eve", "POST", "/v1/users/alice/deprovision", None).await;
    assert_eq!(status, 403);
    let (status, _) = authed(&app, "POST", "/v1/users/nobody/deprovision", None).await;
    assert_eq!(status, 404);

    let (status, done) = authed(&app, "POST", "/v1/users/alice/deprovision", None).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["automations_paused"], 1, "{done}");
    assert_eq!(done["rules_revoked"], 2, "{done}");
    assert_eq!(done["sessions_cleared"], 1, "{done}");
    assert_eq!(done["items_dismissed"], 1, "{done}");

    // The user is deactivated; the surface acting for them is refused.
    let user = app
        .store
        .tenants()
        .get_user(&tenant, &"alice".into())
        .await
        .unwrap()
        .unwrap();
    assert!(user.is_disabled());
    let (status, refused) = as_user(&app, "alice", "GET", "/v1/sessions", None).await;
    assert_eq!(status, 403, "{refused}");
    // Their automation is paused and holds no rule.
    let paused = app
        .store
        .automations()
        .get(&tenant, &automation)
        .await
        .unwrap()
        .unwrap();
    assert!(!paused.enabled);
    assert_eq!(paused.settings["standing_rules"], json!([]));
    assert_eq!(paused.settings["requested_rules"], json!([]));
    // Their session's grants are gone.
    let record = app
        .store
        .sessions()
        .get(&tenant, &session_id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        record.grants.as_object().is_none_or(|g| g.is_empty()),
        "{}",
        record.grants
    );
    // Their pending prompt is dismissed, and the waiting turn goes on with a denial.
    let stored = app
        .store
        .inbox()
        .get(&tenant, &item.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.state, InboxItemState::Resolved);
    assert_eq!(
        stored.resolution,
        Some(Resolution::Dismissed {
            reason: "owner offboarded".into()
        })
    );
    crate::support::eventually(
        "the session's turn ends for the offboarding",
        crate::support::PATIENCE,
        || async {
            let events = app
                .store
                .events()
                .list_after(&tenant, &session_id, 0, 1000)
                .await
                .unwrap();
            events
                .iter()
                .any(|e| {
                    matches!(
                        e.kind,
                        EventKind::ToolFinished {
                            status: ToolStatus::Denied,
                            ..
                        }
                    )
                })
                .then_some(())
        },
    )
    .await;
    // It is audited.
    let audit = app.store.audit().recent(&tenant, 50).await.unwrap();
    let record = audit
        .iter()
        .find(|r| r.stage == "user_deprovisioned")
        .expect("an audit record");
    assert_eq!(record.actor.as_deref(), Some("admin"));
    assert_eq!(record.detail["user"], "alice");

    // Again: nothing more changes, and the attempt is audited too.
    let (status, again) = authed(&app, "POST", "/v1/users/alice/deprovision", None).await;
    assert_eq!(status, 200);
    assert_eq!(again["already_deactivated"], true);
    assert_eq!(again["items_dismissed"], 0);
}

#[tokio::test]
async fn the_scim_patch_deactivates_and_reactivates() {
    let app = people().await;
    let scim = json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "active", "value": false}],
    });
    let (status, done) = call(&app, "PATCH", "/v1/users/eve", Some(scim), Some(TOKEN)).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["active"], false);
    let (status, _) = as_user(&app, "eve", "GET", "/v1/sessions", None).await;
    assert_eq!(status, 403);
    let (status, back) = authed(
        &app,
        "PATCH",
        "/v1/users/eve",
        Some(json!({"active": true})),
    )
    .await;
    assert_eq!(
        (status, back["reactivated"].clone()),
        (axum::http::StatusCode::OK, Value::Bool(true))
    );
    let (status, _) = as_user(&app, "eve", "GET", "/v1/sessions", None).await;
    assert_eq!(status, 200);
    let (status, bad) = authed(
        &app,
        "PATCH",
        "/v1/users/eve",
        Some(json!({"displayName": "E"})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    // An admin cannot deactivate themselves.
    let (status, _) = authed(&app, "POST", "/v1/users/admin/deprovision", None).await;
    assert_eq!(status, 403);
}
