//! The automations API and the wake-event endpoint in process: the life of an automation, who
//! may create and manage it, runs by hand, and invalid requests.

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_protocol::{PermissionMode, TenantId};
use workmate_store::{NewSession, NewWake, SessionKey, WakeKind};

use crate::api::authed;
use crate::authority::{as_user, people};
use crate::router::App;
use crate::support::{PATIENCE, eventually};

pub(crate) fn tenant() -> TenantId {
    TenantId::from("default")
}

/// The draft of an hourly automation titled `title`.
pub(crate) fn hourly(title: &str) -> Value {
    json!({
        "title": title,
        "instructions": "Say hi.",
        "cron": "0 * * * *",
        "timezone": "Asia/Shanghai",
        "permissions": [{"tool": "web_fetch", "target": "https://status.example.com", "access": "write"}],
    })
}

/// `user` creates `draft`; the created view.
pub(crate) async fn created_by(app: &App, user: &str, draft: Value) -> Value {
    let (status, view) = as_user(app, user, "POST", "/v1/automations", Some(draft)).await;
    assert_eq!(status, StatusCode::CREATED, "{view}");
    view
}

pub(crate) async fn listed(app: &App) -> Vec<Value> {
    let (status, body) = authed(app, "GET", "/v1/automations", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["automations"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_automation_is_created_listed_paused_resumed_and_deleted() {
    let app = people().await;
    let now = app.store.clock_ms();
    let view = created_by(&app, "alice", hourly("Status check")).await;
    let id = view["id"].as_str().unwrap().to_owned();
    assert_eq!(view["owner"], "alice");
    assert_eq!(view["enabled"], true);
    assert!(
        view["schedule"]
            .as_str()
            .unwrap()
            .ends_with("(Asia/Shanghai)"),
        "{view}"
    );
    // Alice is a member: her rule waits for an approver instead of applying.
    assert_eq!(view["always_allowed"], json!([]));
    assert_eq!(
        view["requested_rules"][0]["entry"],
        "web_fetch https://status.example.com"
    );
    let (status, approved) = as_user(
        &app,
        "bob",
        "POST",
        &format!("/v1/automations/{id}/rules/approve"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{approved}");
    assert_eq!(
        approved["always_allowed"][0]["entry"],
        "web_fetch https://status.example.com"
    );
    assert_eq!(approved["requested_rules"], json!([]));
    let next = view["next_run_ms"].as_i64().unwrap();
    assert!(next > now && next <= now + 3_600_000, "{view}");
    assert!(
        view["next_run"].as_str().unwrap().ends_with(" CST"),
        "{view}"
    );

    let (status, body) = authed(&app, "GET", "/v1/automations?tz=Europe/London", None).await;
    assert_eq!(status, StatusCode::OK);
    let automations = body["automations"].as_array().unwrap();
    assert_eq!(automations.len(), 1);
    assert_eq!(automations[0]["id"], id.as_str());
    assert_eq!(automations[0]["next_run_ms"], next);
    let shown = automations[0]["next_run"].as_str().unwrap();
    assert!(
        shown.ends_with(" GMT") || shown.ends_with(" BST"),
        "{shown}"
    );

    let path = format!("/v1/automations/{id}");
    let (status, one) = authed(&app, "GET", &path, None).await;
    assert_eq!(
        (status, &one["title"]),
        (StatusCode::OK, &json!("Status check"))
    );

    let (status, paused) = as_user(
        &app,
        "alice",
        "PATCH",
        &path,
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["enabled"], false);
    assert_eq!(paused["next_run_ms"], Value::Null);
    assert_eq!(paused["next_run"], Value::Null);
    let stored = app
        .store
        .automations()
        .get(&tenant(), &id.as_str().into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.enabled, stored.next_run_ms), (false, None));

    // An admin resumes it on a new schedule and revokes its standing rule.
    let change = json!({"enabled": true, "cron": "30 * * * *", "revoke": "web_fetch https://status.example.com"});
    let (status, resumed) = as_user(&app, "carol", "PATCH", &path, Some(change)).await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!(resumed["enabled"], true);
    let next = resumed["next_run_ms"].as_i64().unwrap();
    assert_eq!(next % 3_600_000, 30 * 60_000, "recomputed at half past");
    assert_eq!(resumed["always_allowed"], json!([]));
    assert_eq!(resumed["owner"], "alice", "the owner stays");

    let (status, body) = as_user(&app, "alice", "DELETE", &path, None).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    let (status, _) = authed(&app, "GET", &path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(listed(&app).await.is_empty());
    for (method, tail) in [
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/run"),
        ("GET", "/runs"),
    ] {
        let body = (method == "PATCH").then(|| json!({"enabled": true}));
        let (status, answer) = authed(&app, method, &format!("{path}{tail}"), body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {tail}: {answer}");
    }
}

#[tokio::test]
async fn only_the_owner_or_an_admin_manages_an_automation() {
    let app = people().await;
    let view = created_by(&app, "alice", hourly("Alice's check")).await;
    let path = format!("/v1/automations/{}", view["id"].as_str().unwrap());
    let attempts = [
        ("PATCH", path.clone(), Some(json!({"enabled": false}))),
        ("DELETE", path.clone(), None),
        ("POST", format!("{path}/run"), None),
    ];
    for (method, target, body) in attempts {
        let (status, answer) = as_user(&app, "eve", method, &target, body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {target}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(
            error.contains("only the owner of “Alice's check” (alice) or an admin"),
            "{error}"
        );
    }
    // An approver is not an admin either; anyone in the tenant may look.
    let (status, _) = as_user(&app, "bob", "PATCH", &path, Some(json!({"title": "x"}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, seen) = as_user(&app, "eve", "GET", &path, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (&seen["title"], &seen["enabled"]),
        (&json!("Alice's check"), &json!(true))
    );

    let (status, renamed) = authed(
        &app,
        "PATCH",
        &path,
        Some(json!({"title": "Renamed by the admin token"})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the admin token acts as an admin: {renamed}"
    );
    assert_eq!(renamed["title"], "Renamed by the admin token");
}

#[tokio::test]
async fn invalid_requests_say_why_and_store_nothing() {
    let app = people().await;
    let cases = [
        (
            json!({"title": "t", "instructions": "i", "cron": "0 0 9 * * 1"}),
            "use five",
        ),
        (
            json!({"title": "t", "instructions": "i", "cron": "61 * * * *"}),
            "not valid",
        ),
        (
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *", "timezone": "Mars/Olympus"}),
            "IANA",
        ),
        (
            json!({"title": "t", "instructions": "i"}),
            "say when it runs",
        ),
        (
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *", "colour": "red"}),
            "unknown field `colour`",
        ),
        (
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *", "target": "C1"}),
            "invalid body",
        ),
    ];
    for (draft, says) in cases {
        let (status, answer) = as_user(
            &app,
            "alice",
            "POST",
            "/v1/automations",
            Some(draft.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{draft} → {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(error.contains(says), "{draft} → {error}");
    }
    assert!(listed(&app).await.is_empty(), "nothing was stored");

    let view = created_by(&app, "alice", hourly("Valid")).await;
    let path = format!("/v1/automations/{}", view["id"].as_str().unwrap());
    for (change, says) in [
        (json!({"cron": "every hour"}), "use five"),
        (json!({"owner": "eve"}), "unknown field `owner`"),
        (
            json!({"revoke": "web_fetch https://elsewhere.example.com"}),
            "no standing rule",
        ),
    ] {
        let (status, answer) = as_user(&app, "alice", "PATCH", &path, Some(change.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{change} → {answer}");
        assert!(answer["error"].as_str().unwrap().contains(says), "{answer}");
    }
    let (_, unchanged) = authed(&app, "GET", &path, None).await;
    assert_eq!(unchanged["schedule_raw"], view["schedule_raw"]);
    assert_eq!(unchanged["always_allowed"], view["always_allowed"]);

    let (status, answer) = authed(&app, "GET", "/v1/automations?tz=Mars/Olympus", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("IANA"),
        "{answer}"
    );
}

#[tokio::test]
async fn the_tenant_can_leave_creating_automations_to_admins() {
    let app = people().await;
    app.store
        .tenants()
        .set_settings(&tenant(), &json!({"automation_creators": "admin"}))
        .await
        .unwrap();
    let (status, answer) = as_user(
        &app,
        "alice",
        "POST",
        "/v1/automations",
        Some(hourly("Mine")),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("only admins"),
        "{answer}"
    );
    assert!(listed(&app).await.is_empty());
    let view = created_by(&app, "carol", hourly("The admin's")).await;
    assert_eq!(view["owner"], "carol");
}

#[tokio::test]
async fn a_run_by_hand_is_refused_while_it_goes_and_listed_newest_first() {
    // The app's script asks to run a shell command, so each run parks an approval and keeps going.
    let app = people().await;
    let view = created_by(&app, "alice", hourly("Parks")).await;
    let id = view["id"].as_str().unwrap().to_owned();
    let run_path = format!("/v1/automations/{id}/run");

    let (status, started) = as_user(&app, "alice", "POST", &run_path, None).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let run = &started["run"];
    assert_eq!(run["automation_id"], id.as_str());
    assert_eq!(
        (&run["trigger"], &run["status"]),
        (&json!("manual"), &json!("running"))
    );
    assert!(!started["session_id"].as_str().unwrap().is_empty());
    assert_eq!(run["session_id"], started["session_id"]);
    let first = run["id"].as_str().unwrap().to_owned();

    // The run's own approval (a member's automation also waits for its rules in the inbox).
    let item = eventually("the run's approval in the inbox", PATIENCE, || async {
        let (_, listed) = authed(&app, "GET", "/v1/inbox?state=pending", None).await;
        listed["items"].as_array().and_then(|items| {
            items
                .iter()
                .find(|i| i["session_id"] == started["session_id"])
                .cloned()
        })
    })
    .await;
    assert_eq!(item["session_id"], started["session_id"]);

    let (status, again) = as_user(&app, "carol", "POST", &run_path, None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert!(
        again["error"].as_str().unwrap().contains("is running now"),
        "{again}"
    );
    assert_eq!(
        again["detail"]["id"],
        first.as_str(),
        "the going run: {again}"
    );

    let runs_path = format!("/v1/automations/{id}/runs");
    let (status, runs) = authed(&app, "GET", &runs_path, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
    assert_eq!(runs["runs"][0]["status"], "running");

    // The admin approves; the run ends and the automation can run again.
    let approve = json!({"resolution": {"type": "approval", "choice": "once"}});
    let resolve = format!("/v1/inbox/{}/resolve", item["id"].as_str().unwrap());
    let (status, _) = authed(&app, "POST", &resolve, Some(approve)).await;
    assert_eq!(status, StatusCode::OK);
    let finished = eventually("the run's end", PATIENCE, || async {
        let (_, runs) = authed(&app, "GET", &runs_path, None).await;
        let run = runs["runs"][0].clone();
        (run["status"] != "running").then_some(run)
    })
    .await;
    assert_eq!(finished["status"], "ok", "{finished}");
    assert_eq!(finished["result_text"], "done");
    assert!(
        finished["finished_at_ms"].as_i64().unwrap() >= finished["started_at_ms"].as_i64().unwrap()
    );
    assert_eq!(finished["error"], Value::Null);
    assert!(finished["artifacts"].is_array());

    let (status, second) = as_user(&app, "carol", "POST", &run_path, None).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{second}");
    let (_, runs) = authed(&app, "GET", &format!("{runs_path}?limit=5"), None).await;
    let ids: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [second["run"]["id"].as_str().unwrap(), first.as_str()],
        "newest first"
    );
    let (_, one) = authed(&app, "GET", &format!("{runs_path}?limit=1"), None).await;
    assert_eq!(one["runs"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn an_event_marks_the_tenants_waiting_sessions_due() {
    let app = people().await;
    let new = NewSession {
        key: SessionKey {
            surface: workmate_protocol::Surface::Http,
            chat_id: "waiting".into(),
            thread_id: String::new(),
        },
        owner: "alice".into(),
        title: None,
        persona: "cowork".into(),
        model: "scripted:test".into(),
        mode: PermissionMode::Interactive,
        unattended: false,
    };
    let (session, _) = app
        .store
        .sessions()
        .get_or_create(&tenant(), &new)
        .await
        .unwrap();
    let wake = NewWake {
        session_id: session.id.clone(),
        kind: WakeKind::Event,
        fire_at_ms: None,
        job_id: None,
        event_key: Some("deploy:prod".into()),
        note: "verify the deploy".into(),
    };
    let stored = app.store.wakes().create(&tenant(), &wake).await.unwrap();
    // The same key in another tenant is not this caller's to fire.
    let other = TenantId::from("globex");
    let (elsewhere, _) = app
        .store
        .sessions()
        .get_or_create(&other, &new)
        .await
        .unwrap();
    let foreign = NewWake {
        session_id: elsewhere.id.clone(),
        ..wake
    };
    app.store.wakes().create(&other, &foreign).await.unwrap();

    for bad in [
        json!({"key": "has space"}),
        json!({"key": ""}),
        json!({"key": "k".repeat(201)}),
    ] {
        let (status, answer) = authed(&app, "POST", "/v1/wakes/events", Some(bad.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            answer["error"]
                .as_str()
                .unwrap()
                .contains("invalid event key"),
            "{answer}"
        );
    }
    let (status, answer) = authed(
        &app,
        "POST",
        "/v1/wakes/events",
        Some(json!({"event": "deploy:prod"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");

    let (status, fired) = authed(
        &app,
        "POST",
        "/v1/wakes/events",
        Some(json!({"key": "deploy:prod"})),
    )
    .await;
    assert_eq!((status, fired), (StatusCode::OK, json!({"woken": 1})));
    let (_, again) = authed(
        &app,
        "POST",
        "/v1/wakes/events",
        Some(json!({"key": "deploy:prod"})),
    )
    .await;
    assert_eq!(again, json!({"woken": 0}), "a wake fires once");
    let (_, other_key) = authed(
        &app,
        "POST",
        "/v1/wakes/events",
        Some(json!({"key": "deploy:staging"})),
    )
    .await;
    assert_eq!(other_key, json!({"woken": 0}));

    let ready = app.store.wakes().ready(i64::MAX, 10).await.unwrap();
    let ids: Vec<_> = ready.iter().map(|w| (&w.tenant_id, &w.id)).collect();
    assert_eq!(
        ids,
        [(&tenant(), &stored.id)],
        "only this tenant's wake is due"
    );
}
