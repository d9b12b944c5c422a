//! `/workmate settings [KEY VALUE]` over the signed commands route.

use workmate_store::Role;

use super::automation_commands::automation;
use super::commands::{chat_command_audits, set_role, slash};
use super::*;

/// The Slack workspace tenant's stored settings.
async fn stored(app: &SlackApp) -> Value {
    app.store
        .tenants()
        .get(&tenant_of("T1"))
        .await
        .unwrap()
        .unwrap()
        .settings
}

/// The outcomes of the `settings_set` chat commands, oldest first.
async fn set_outcomes(app: &SlackApp) -> Vec<String> {
    let mut records = chat_command_audits(&app.store).await;
    records.sort_by_key(|r| r.id.clone());
    records
        .iter()
        .filter(|r| r.detail["command"] == "settings_set")
        .map(|r| r.detail["outcome"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn anyone_lists_the_settings_with_their_defaults() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "settings").await;
    assert!(text.starts_with("Workspace settings"), "{text}");
    for line in [
        "\n• timezone: (default: UTC)",
        "\n• automation_creators: (default: member)",
        "\n• separation_of_duties: (default: false)",
        "\n• permissions: (default: ",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text}");
    }

    app.store
        .tenants()
        .set_settings(
            &tenant_of("T1"),
            &json!({"timezone": "Europe/Berlin", "separation_of_duties": true}),
        )
        .await
        .unwrap();
    let text = slash(&app, "U1", "settings").await;
    assert!(text.contains("\n• timezone: Europe/Berlin"), "{text}");
    assert!(text.contains("\n• separation_of_duties: true"), "{text}");

    let audits = chat_command_audits(&app.store).await;
    assert_eq!(audits.len(), 2, "{audits:#?}");
    assert!(
        audits
            .iter()
            .all(|a| a.detail["command"] == "settings" && a.detail["outcome"] == "ok")
    );
    let help = slash(&app, "U1", "help").await;
    assert!(help.contains("• settings <key> <value>: set one"), "{help}");
}

#[tokio::test]
async fn an_admin_sets_settings_and_a_member_is_refused() {
    let app = slack_app().await;
    slash(&app, "U1", "whoami").await;
    set_role(&app.store, "U1", Role::Admin).await;

    let text = slash(&app, "U2", "settings timezone Europe/Berlin").await;
    assert!(
        text.starts_with("Only admins may change workspace settings; you are member."),
        "{text}"
    );
    assert_eq!(stored(&app).await, json!({}));

    let text = slash(&app, "U1", "settings timezone Asia/Shanghai").await;
    assert_eq!(text, "Set `timezone` to Asia/Shanghai.");
    // JSON values are read as JSON, with their spacing as typed.
    let text = slash(
        &app,
        "U1",
        r#"settings permissions {"allowed_commands": ["git  status"]}"#,
    )
    .await;
    assert!(text.starts_with("Set `permissions` to "), "{text}");
    slash(&app, "U1", "settings separation_of_duties true").await;
    assert_eq!(
        stored(&app).await,
        json!({
            "timezone": "Asia/Shanghai",
            "permissions": {"allowed_commands": ["git  status"]},
            "separation_of_duties": true,
        })
    );

    // Invalid values and unknown keys are refused and change nothing.
    let text = slash(&app, "U1", "settings timezone Mars/Olympus").await;
    assert!(text.starts_with("Not changed: `timezone`"), "{text}");
    assert!(text.contains("Mars/Olympus"), "{text}");
    let text = slash(&app, "U1", "settings time_zone UTC").await;
    assert!(
        text.contains("unknown setting `time_zone`; the settings are timezone,"),
        "{text}"
    );
    let text = slash(&app, "U1", "settings permissions git status").await;
    assert!(text.starts_with("Not changed: `permissions`"), "{text}");

    let text = slash(&app, "U1", "settings permissions default").await;
    assert!(text.starts_with("Removed `permissions`"), "{text}");
    assert_eq!(
        stored(&app).await,
        json!({"timezone": "Asia/Shanghai", "separation_of_duties": true})
    );

    assert_eq!(
        set_outcomes(&app).await,
        [
            "refused", "ok", "ok", "ok", "refused", "refused", "refused", "ok"
        ]
    );
    let mut changes: Vec<_> = app
        .store
        .audit()
        .recent(&tenant_of("T1"), 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.stage == "tenant_settings_changed")
        .collect();
    changes.sort_by_key(|r| r.id.clone());
    let keys: Vec<&Value> = changes.iter().map(|r| &r.detail["keys"]).collect();
    assert_eq!(
        keys,
        [
            &json!(["timezone"]),
            &json!(["permissions"]),
            &json!(["separation_of_duties"]),
            &json!(["permissions"]),
        ]
    );
    assert!(
        changes
            .iter()
            .all(|r| r.actor.as_deref() == Some("slack-U1") && r.detail["via"] == "slack")
    );
}

#[tokio::test]
async fn automations_are_shown_in_the_zone_an_admin_set() {
    let app = slack_app().await;
    slash(&app, "U1", "whoami").await;
    set_role(&app.store, "U1", Role::Admin).await;
    automation(
        &app,
        "U1",
        json!({"title": "Sales digest", "instructions": "Post the digest.", "cron": "0 9 * * 1-5",
               "timezone": "Europe/Berlin"}),
    )
    .await;
    // Slack's users.info is not mocked, so the list falls back to the tenant's zone.
    let text = slash(&app, "U2", "automations").await;
    assert!(
        text.starts_with("1 automation (next runs in UTC):"),
        "{text}"
    );

    slash(&app, "U1", "settings timezone Asia/Shanghai").await;
    let text = slash(&app, "U2", "automations").await;
    assert!(
        text.starts_with("1 automation (next runs in Asia/Shanghai):"),
        "{text}"
    );
    assert!(text.lines().nth(1).unwrap().ends_with(" CST"), "{text}");
}
