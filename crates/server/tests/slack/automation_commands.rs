//! `/workmate automations …` and `/workmate rules …` over the signed commands route.

use workmate_engine::automations::{AutomationDraft, create};
use workmate_protocol::{AutomationId, UserId};
use workmate_store::{Automation, Role};

use super::commands::{chat_command_audits, set_role, slash};
use super::*;

/// Stores an automation owned by `slack-<owner>` in the Slack workspace's tenant.
pub(super) async fn automation(app: &SlackApp, owner: &str, draft: Value) -> Automation {
    let draft: AutomationDraft = serde_json::from_value(draft).unwrap();
    create(
        &app.store,
        &tenant_of("T1"),
        &UserId::from(format!("slack-{owner}")),
        None,
        draft,
        "test",
    )
    .await
    .unwrap()
}

async fn stored(app: &SlackApp, id: &AutomationId) -> Option<Automation> {
    app.store
        .automations()
        .get(&tenant_of("T1"), id)
        .await
        .unwrap()
}

/// The (command, outcome) pairs of the chat-command audit records, oldest first.
async fn audited(app: &SlackApp) -> Vec<(String, String)> {
    let mut records = chat_command_audits(&app.store).await;
    records.sort_by_key(|r| r.id.clone());
    records
        .iter()
        .map(|r| {
            (
                r.detail["command"].as_str().unwrap().to_owned(),
                r.detail["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_owner_lists_runs_pauses_resumes_and_deletes_an_automation() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "automations").await;
    assert!(text.contains("No automations yet"), "{text}");
    slash(&app, "U2", "whoami").await;
    app.store
        .tenants()
        .set_settings(&tenant_of("T1"), &json!({"timezone": "Asia/Shanghai"}))
        .await
        .unwrap();
    let digest = automation(
        &app,
        "U1",
        json!({"title": "Sales digest", "instructions": "Post the digest.", "cron": "0 9 * * 1-5",
               "timezone": "Europe/Berlin",
               "target": {"surface": "slack", "chat_id": "C1", "thread_id": THREAD}}),
    )
    .await;
    let id = digest.id.as_str();

    // Anyone lists; without a zone from Slack, times are in the tenant's zone.
    let text = slash(&app, "U2", "automations").await;
    assert!(
        text.starts_with("1 automation (next runs in Asia/Shanghai):"),
        "{text}"
    );
    let line = text.lines().nth(1).unwrap();
    assert!(
        line.starts_with(&format!("• “Sales digest” `{id}`: ")),
        "{line}"
    );
    assert!(
        line.contains("(Europe/Berlin); enabled; next run "),
        "{line}"
    );
    assert!(line.ends_with(" CST"), "{line}");

    // When Slack knows the viewer's zone, their list shows their own local times.
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/users.info"))
        .and(wiremock::matchers::body_string_contains("user=U2"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(json!({"ok": true, "user": {"id": "U2", "tz": "America/New_York"}})),
        )
        .mount(&app.fake)
        .await;
    let text = slash(&app, "U2", "automations").await;
    assert!(
        text.starts_with("1 automation (next runs in America/New_York):"),
        "{text}"
    );
    assert!(text.lines().nth(1).unwrap().ends_with(" EST"), "{text}");

    // A member who does not own it is refused, and nothing changes.
    for action in ["pause", "resume", "run", "delete"] {
        let text = slash(&app, "U2", &format!("automations {action} {id}")).await;
        assert!(
            text.contains("only the owner of “Sales digest” (slack-U1) or an admin"),
            "{action}: {text}"
        );
    }
    let unchanged = stored(&app, &digest.id).await.unwrap();
    assert!(unchanged.enabled);
    assert_eq!(unchanged.next_run_ms, digest.next_run_ms);
    assert!(unchanged.running_run_id.is_none(), "no run was started");

    let text = slash(&app, "U1", &format!("automations pause {id}")).await;
    assert_eq!(
        text,
        "Paused “Sales digest”. It will not run until resumed."
    );
    let paused = stored(&app, &digest.id).await.unwrap();
    assert_eq!((paused.enabled, paused.next_run_ms), (false, None));
    let text = slash(&app, "U1", "automations").await;
    assert!(text.contains("; paused; no next run"), "{text}");

    let text = slash(&app, "U1", &format!("automations resume {id}")).await;
    assert!(
        text.starts_with("Resumed “Sales digest”. Next run: "),
        "{text}"
    );
    assert!(text.ends_with(" CST."), "{text}");
    let resumed = stored(&app, &digest.id).await.unwrap();
    assert!(resumed.enabled);
    assert_eq!(resumed.next_run_ms, digest.next_run_ms, "recomputed");

    let text = slash(&app, "U1", &format!("automations run {id}")).await;
    assert!(
        text.starts_with("Started a run of “Sales digest” now (run "),
        "{text}"
    );
    assert!(
        text.ends_with("Its cards and result are posted in its thread."),
        "{text}"
    );
    let running = stored(&app, &digest.id).await.unwrap();
    let run = running.running_run_id.expect("a run is going");
    assert!(text.contains(run.as_str()), "{text}");
    // The script's run asks for approval, so the run is still going.
    let text = slash(&app, "U1", &format!("automations run {id}")).await;
    assert!(
        text.starts_with("Did not start “Sales digest”: ") && text.contains("running now"),
        "{text}"
    );

    let text = slash(&app, "U1", "automations pause nope-404").await;
    assert!(
        text.contains("No automation nope-404 in this workspace"),
        "{text}"
    );

    set_role(&app.store, "U2", Role::Admin).await;
    let text = slash(&app, "U2", &format!("automations delete {id}")).await;
    assert_eq!(text, "Deleted “Sales digest” and its run history.");
    assert!(stored(&app, &digest.id).await.is_none());

    let outcomes = audited(&app).await;
    let expected: Vec<(&str, &str)> = vec![
        ("automations", "ok"),
        ("whoami", "ok"),
        ("automations", "ok"),
        ("automations", "ok"),
        ("automation_pause", "refused"),
        ("automation_resume", "refused"),
        ("automation_run", "refused"),
        ("automation_delete", "refused"),
        ("automation_pause", "ok"),
        ("automations", "ok"),
        ("automation_resume", "ok"),
        ("automation_run", "ok"),
        ("automation_run", "refused"),
        ("automation_pause", "refused"),
        ("automation_delete", "ok"),
    ];
    let outcomes: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|(c, o)| (c.as_str(), o.as_str()))
        .collect();
    assert_eq!(outcomes, expected, "one audit record per command");
}

#[tokio::test]
async fn rules_are_listed_and_revoked_by_the_owner_or_an_admin() {
    let app = slack_app().await;
    let text = slash(&app, "U1", "rules").await;
    assert!(text.contains("No automation has standing rules"), "{text}");
    slash(&app, "U2", "whoami").await;
    let write =
        |tool: &str, target: &str| json!({"tool": tool, "target": target, "access": "write"});
    let digest = automation(
        &app,
        "U1",
        json!({"title": "Digest", "instructions": "i", "cron": "0 9 * * *",
               "permissions": [write("web_fetch", "https://status.example.com"),
                               write("probe_write", "reports/digest.md")]}),
    )
    .await;
    let backup = automation(
        &app,
        "U1",
        json!({"title": "Backup", "instructions": "i", "cron": "0 3 * * *",
               "permissions": [write("web_fetch", "https://status.example.com")]}),
    )
    .await;
    let rules_of = |automation: Option<Automation>| -> Vec<String> {
        workmate_tools::automations::AutomationSettings::from_json(&automation.unwrap().settings)
            .standing_rules
            .iter()
            .map(|r| r.entry())
            .collect()
    };

    let text = slash(&app, "U2", "rules").await;
    assert!(
        text.contains(&format!(
            "“Digest” `{}`:\n• web_fetch https://status.example.com\n• probe_write reports/digest.md",
            digest.id
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "“Backup” `{}`:\n• web_fetch https://status.example.com",
            backup.id
        )),
        "{text}"
    );

    let text = slash(&app, "U2", "rules revoke probe_write reports/digest.md").await;
    assert!(
        text.contains("only the owner of “Digest” (slack-U1)"),
        "{text}"
    );
    let text = slash(
        &app,
        "U1",
        "rules revoke web_fetch https://status.example.com",
    )
    .await;
    assert!(text.contains("stands on 2 automations"), "{text}");
    assert!(
        text.contains(digest.id.as_str()) && text.contains(backup.id.as_str()),
        "{text}"
    );
    assert_eq!(
        rules_of(stored(&app, &digest.id).await).len(),
        2,
        "nothing revoked"
    );
    assert_eq!(rules_of(stored(&app, &backup.id).await).len(), 1);

    let text = slash(
        &app,
        "U1",
        &format!(
            "rules revoke {}  web_fetch   https://status.example.com",
            digest.id
        ),
    )
    .await;
    assert_eq!(
        text,
        "Revoked “web_fetch https://status.example.com” from “Digest”. Its runs will ask before \
         that call again."
    );
    assert_eq!(
        rules_of(stored(&app, &digest.id).await),
        ["probe_write reports/digest.md"]
    );
    assert_eq!(rules_of(stored(&app, &backup.id).await).len(), 1);

    // Now only one automation holds it; an admin may revoke what they do not own.
    set_role(&app.store, "U2", Role::Admin).await;
    let text = slash(
        &app,
        "U2",
        "rules revoke web_fetch https://status.example.com",
    )
    .await;
    assert!(
        text.starts_with("Revoked “web_fetch https://status.example.com” from “Backup”."),
        "{text}"
    );
    assert!(rules_of(stored(&app, &backup.id).await).is_empty());

    let text = slash(
        &app,
        "U1",
        "rules revoke web_fetch https://status.example.com",
    )
    .await;
    assert!(
        text.contains("No standing rule “web_fetch https://status.example.com”"),
        "{text}"
    );
    let text = slash(&app, "U1", "rules").await;
    assert!(!text.contains("Backup"), "{text}");
    assert!(text.contains("• probe_write reports/digest.md"), "{text}");

    let outcomes = audited(&app).await;
    let revokes: Vec<&str> = outcomes
        .iter()
        .filter(|(c, _)| c == "rules_revoke")
        .map(|(_, o)| o.as_str())
        .collect();
    assert_eq!(revokes, ["refused", "refused", "ok", "ok", "refused"]);
    assert_eq!(outcomes.len(), 9);
}
