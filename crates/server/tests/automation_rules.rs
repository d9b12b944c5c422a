//! Standing rules asked for with an automation: what can never be one, and a member's that wait
//! for an approver.

use axum::http::StatusCode;
use serde_json::json;

use crate::authority::{as_user, people};
use crate::automations_api::{created_by, hourly, listed, tenant};

#[tokio::test]
async fn rules_that_cannot_be_standing_rules_are_refused() {
    let app = people().await;
    for (permission, says) in [
        (
            json!({"tool": "run_shell", "target": "rm -rf /", "access": "write"}),
            "cannot be a standing rule",
        ),
        (
            json!({"tool": "write_file", "target": "notes.md", "access": "write"}),
            "cannot be a standing rule",
        ),
        (
            json!({"tool": "no_such_tool", "target": "x", "access": "write"}),
            "cannot be a standing rule",
        ),
        (
            json!({"tool": "send_message", "target": "   ", "access": "write"}),
            "cannot be a standing rule",
        ),
        (
            json!({"tool": "send_message", "target": "slack:C01", "access": "admin"}),
            "neither \"read\" nor \"write\"",
        ),
    ] {
        let mut draft = hourly("Refused");
        draft["permissions"] = json!([permission]);
        // Even an admin cannot store them.
        let (status, answer) = as_user(&app, "carol", "POST", "/v1/automations", Some(draft)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{permission} → {answer}");
        assert!(
            answer["error"].as_str().unwrap().contains(says),
            "{permission} → {answer}"
        );
    }
    assert!(listed(&app).await.is_empty(), "nothing was stored");

    // The allowed path: an admin's valid rules apply at once; read entries are disclosed only.
    let mut draft = hourly("Granted");
    draft["permissions"] = json!([
        {"tool": "send_message", "target": " slack:C01 ", "access": "write"},
        {"tool": "send_message", "target": "slack:C01", "access": "write"},
        {"tool": "web_fetch", "target": "https://docs.example.com", "access": "read"},
    ]);
    let view = created_by(&app, "carol", draft).await;
    let entries: Vec<&str> = view["always_allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entry"].as_str().unwrap())
        .collect();
    assert_eq!(entries, ["send_message slack:C01"]);
    assert_eq!(view["requested_rules"], json!([]));
}

#[tokio::test]
async fn a_members_rules_wait_for_an_approver_who_may_deny_them() {
    let app = people().await;
    let mut draft = hourly("Post the digest");
    draft["permissions"] =
        json!([{"tool": "send_message", "target": "slack:C01", "access": "write"}]);
    let view = created_by(&app, "alice", draft).await;
    let id = view["id"].as_str().unwrap().to_owned();
    assert_eq!(view["always_allowed"], json!([]));
    assert_eq!(
        view["requested_rules"][0]["entry"],
        "send_message slack:C01"
    );
    let stored = app
        .store
        .automations()
        .get(&tenant(), &id.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.settings["standing_rules"],
        json!([]),
        "no rule applies yet"
    );

    // Neither the member who asked nor another member may settle them.
    for user in ["alice", "eve"] {
        let (status, answer) = as_user(
            &app,
            user,
            "POST",
            &format!("/v1/automations/{id}/rules/approve"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{user}: {answer}");
        assert!(
            answer["error"].as_str().unwrap().contains("approvers"),
            "{answer}"
        );
    }

    let (status, denied) = as_user(
        &app,
        "bob",
        "POST",
        &format!("/v1/automations/{id}/rules/deny"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{denied}");
    assert_eq!(
        (&denied["always_allowed"], &denied["requested_rules"]),
        (&json!([]), &json!([]))
    );
    // Nothing waits any more, so a late approval has nothing to grant.
    let (status, answer) = as_user(
        &app,
        "carol",
        "POST",
        &format!("/v1/automations/{id}/rules/approve"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("no standing rules waiting"),
        "{answer}"
    );
}
