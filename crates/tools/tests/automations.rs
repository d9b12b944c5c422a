//! The scheduling and self-wake tools, driven as the engine calls them.

use serde_json::{Value, json};
use workmate_protocol::{AutomationId, PermissionMode, RunId, Surface, TenantId, UserId};
use workmate_store::{
    Automation, Claim, NewSession, NewUser, Role, RunEnd, RunStatus, RunTrigger, SessionKey,
    WakeKind, WakeState,
};
use workmate_tools::ToolContext;

use crate::support::{World, err};

/// The world's context, moved into a stored session on `surface` at `chat`/`thread`.
async fn in_session(world: &World, surface: Surface, chat: &str, thread: &str) -> ToolContext {
    let new = NewSession {
        key: SessionKey {
            surface,
            chat_id: chat.to_owned(),
            thread_id: thread.to_owned(),
        },
        owner: world.ctx.user_id.clone(),
        title: None,
        persona: "default".to_owned(),
        model: "test:model".to_owned(),
        mode: PermissionMode::Interactive,
        unattended: false,
    };
    let sessions = world.store.sessions();
    let (session, _) = sessions
        .get_or_create(&world.ctx.tenant_id, &new)
        .await
        .unwrap();
    let mut ctx = world.ctx.clone();
    ctx.session_id = session.id;
    ctx
}

/// The automation `id` as the store holds it.
async fn stored_automation(world: &World, id: &Value) -> Option<Automation> {
    let id = AutomationId::from(id.as_str().unwrap());
    let automations = world.store.automations();
    automations.get(&world.ctx.tenant_id, &id).await.unwrap()
}

/// The session's one pending wake, checked to be the one the tool call answered with.
async fn the_wake_set_by(world: &World, answer: &Value) -> workmate_store::Wake {
    let mut pending = world
        .store
        .wakes()
        .pending(&world.ctx.tenant_id, &world.ctx.session_id)
        .await
        .unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let wake = pending.remove(0);
    assert_eq!(wake.id.as_str(), answer["wake_id"].as_str().unwrap());
    wake
}

/// A daily task created by the agent, as the tool answered.
async fn a_daily_task(world: &World) -> Value {
    world
        .call(
            "create_scheduled_task",
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *"}),
        )
        .await
        .unwrap()
}

async fn task_count(world: &World) -> usize {
    let listed = world.call("list_scheduled_tasks", json!({})).await.unwrap();
    listed["tasks"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_cron_task_is_created_and_listed_with_its_next_run() {
    let world = World::new().await;
    let now = world.store.clock_ms();
    let created = world
        .call(
            "create_scheduled_task",
            json!({
                "title": "Morning digest",
                "instructions": "Summarise yesterday's deploys.",
                "cron": "0 9 * * 1-5",
                "timezone": "Asia/Shanghai",
                "permissions": [
                    {"tool": "web_fetch", "target": "https://status.example.com", "access": "write"},
                    {"tool": "read_file", "target": "notes.md", "access": "read"},
                ],
            }),
        )
        .await
        .unwrap();
    assert_eq!(created["ok"], true);
    assert_eq!(created["title"], "Morning digest");
    let schedule = created["schedule"].as_str().unwrap();
    assert!(schedule.contains("(Asia/Shanghai)"), "{schedule}");
    let next_run_ms = created["next_run_ms"].as_i64().unwrap();
    assert!(next_run_ms > now, "{created}");
    assert!(
        created["next_run"].as_str().unwrap().ends_with("09:00 CST"),
        "{created}"
    );
    assert_eq!(
        created["always_allowed"],
        json!([]),
        "the call that creates a run grants it nothing"
    );
    assert_eq!(
        created["requested_rules"],
        json!([{"entry": "web_fetch https://status.example.com", "tool": "web_fetch", "target": "https://status.example.com"}]),
        "only write access is asked for, and it waits for an approver"
    );

    let waiting = world
        .store
        .inbox()
        .list(
            &world.ctx.tenant_id,
            &workmate_store::InboxFilter::default(),
            10,
        )
        .await
        .unwrap();
    assert!(
        waiting
            .iter()
            .any(|i| i.data["automation_rules"] == created["id"]
                && i.body.contains("status.example.com")),
        "the requested rule waits in the inbox for an approver: {waiting:#?}"
    );

    let stored = stored_automation(&world, &created["id"]).await.unwrap();
    assert_eq!(stored.owner, world.ctx.user_id);
    assert_eq!(
        stored.origin_session_id.as_ref(),
        Some(&world.ctx.session_id)
    );
    assert_eq!(
        stored.settings["target"],
        Value::Null,
        "an API session has no thread to post to"
    );

    let listed = world.call("list_scheduled_tasks", json!({})).await.unwrap();
    let tasks = listed["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0]["id"], created["id"]);
    assert_eq!(tasks[0]["instructions"], "Summarise yesterday's deploys.");
    assert_eq!(tasks[0]["next_run_ms"], next_run_ms);
    assert_eq!(tasks[0]["next_run"], created["next_run"]);

    let bad_access = err(world
        .call(
            "create_scheduled_task",
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *",
                   "permissions": [{"tool": "web_fetch", "target": "x", "access": "admin"}]}),
        )
        .await);
    assert!(bad_access.contains("unknown variant"), "{bad_access}");
    assert_eq!(task_count(&world).await, 1);
}

#[tokio::test]
async fn a_task_created_in_a_slack_thread_posts_there() {
    let world = World::new().await;
    let ctx = in_session(&world, Surface::Slack, "C042", "1700000000.0001").await;
    let created = world
        .call_with(
            &ctx,
            "create_scheduled_task",
            json!({"title": "Reminder", "instructions": "Remind the team.", "fire_at": "2099-01-01T09:00", "timezone": "UTC"}),
        )
        .await
        .unwrap();
    let stored = stored_automation(&world, &created["id"]).await.unwrap();
    assert_eq!(
        stored.settings["target"],
        json!({"surface": "slack", "chat_id": "C042", "thread_id": "1700000000.0001"})
    );
    assert_eq!(stored.origin_session_id.as_ref(), Some(&ctx.session_id));
    assert_eq!(created["schedule"], "Once at Thu 1 Jan 2099 09:00 UTC");
}

#[tokio::test]
async fn invalid_requests_store_nothing() {
    let world = World::new().await;
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
            json!({"title": " ", "instructions": "i", "cron": "0 9 * * *"}),
            "`title` must not be empty",
        ),
    ];
    for (arguments, expected) in cases {
        let message = err(world.call("create_scheduled_task", arguments).await);
        assert!(message.contains(expected), "{expected}: {message}");
    }
    assert_eq!(task_count(&world).await, 0);
}

#[tokio::test]
async fn pausing_clears_the_next_run_and_resuming_recomputes_it() {
    let world = World::new().await;
    let created = world
        .call(
            "create_scheduled_task",
            json!({"title": "Hourly", "instructions": "Check the queue.", "cron": "0 * * * *", "timezone": "UTC"}),
        )
        .await
        .unwrap();
    let id = created["id"].clone();

    let paused = world
        .call("update_scheduled_task", json!({"id": id, "enabled": false}))
        .await
        .unwrap();
    assert_eq!(paused["enabled"], false);
    assert_eq!(paused["next_run_ms"], Value::Null);
    let stored = stored_automation(&world, &id).await.unwrap();
    assert!(!stored.enabled);
    assert_eq!(stored.next_run_ms, None);

    let now = world.store.clock_ms();
    let resumed = world
        .call(
            "update_scheduled_task",
            json!({"id": id, "enabled": true, "cron": "30 * * * *", "title": "Half past"}),
        )
        .await
        .unwrap();
    assert_eq!(resumed["enabled"], true);
    assert_eq!(resumed["title"], "Half past");
    let next = resumed["next_run_ms"].as_i64().unwrap();
    assert!(next > now && next <= now + 3_600_000, "{resumed}");
    assert_eq!(next % 3_600_000, 30 * 60_000, "at half past the hour");
    let stored = stored_automation(&world, &id).await.unwrap();
    assert_eq!(stored.next_run_ms, Some(next));
    assert_eq!(stored.schedule["cron"], "30 * * * *");

    let bad = err(world
        .call("update_scheduled_task", json!({"id": id, "cron": "nope"}))
        .await);
    assert!(bad.contains("use five"), "{bad}");
    let empty = err(world.call("update_scheduled_task", json!({"id": id})).await);
    assert!(empty.contains("nothing to change"), "{empty}");
    let revoke = err(world
        .call(
            "update_scheduled_task",
            json!({"id": id, "revoke": "web_fetch https://x"}),
        )
        .await);
    assert!(revoke.contains("unknown field `revoke`"), "{revoke}");
    let unknown = err(world
        .call(
            "update_scheduled_task",
            json!({"id": "nope", "enabled": true}),
        )
        .await);
    assert!(
        unknown.contains("no scheduled task") && unknown.contains("list_scheduled_tasks"),
        "{unknown}"
    );
}

#[tokio::test]
async fn delete_removes_the_task() {
    let world = World::new().await;
    let created = a_daily_task(&world).await;
    let deleted = world
        .call("delete_scheduled_task", json!({"id": created["id"]}))
        .await
        .unwrap();
    assert_eq!(
        deleted,
        json!({"ok": true, "id": created["id"], "deleted": true})
    );
    assert!(stored_automation(&world, &created["id"]).await.is_none());
    assert_eq!(task_count(&world).await, 0);
    let again = err(world
        .call("delete_scheduled_task", json!({"id": created["id"]}))
        .await);
    assert!(again.contains("list_scheduled_tasks"), "{again}");
}

#[tokio::test]
async fn scheduling_tools_refuse_inside_a_scheduled_run() {
    let world = World::new().await;
    let created = a_daily_task(&world).await;
    let run = in_session(&world, Surface::Scheduler, "automation", "run-1").await;
    let id = &created["id"];
    let calls = [
        (
            "create_scheduled_task",
            json!({"title": "t", "instructions": "i", "cron": "0 9 * * *"}),
        ),
        ("list_scheduled_tasks", json!({})),
        ("update_scheduled_task", json!({"id": id, "enabled": false})),
        ("delete_scheduled_task", json!({"id": id})),
    ];
    for (name, arguments) in calls {
        let message = err(world.call_with(&run, name, arguments).await);
        assert!(
            message.contains("not available inside a scheduled run"),
            "{name}: {message}"
        );
    }
    let stored = stored_automation(&world, &created["id"]).await.unwrap();
    assert!(stored.enabled, "the refused update changed nothing");
    assert_eq!(task_count(&world).await, 1);
}

#[tokio::test]
async fn the_tenant_decides_who_may_create() {
    let world = World::new().await;
    let tenant = &world.ctx.tenant_id;
    let tenants = world.store.tenants();
    tenants.ensure(tenant, "Acme").await.unwrap();
    tenants
        .set_settings(tenant, &json!({"automation_creators": "admin"}))
        .await
        .unwrap();
    for (id, role) in [("ada", Role::Member), ("grace", Role::Admin)] {
        let user = NewUser {
            id: UserId::from(id),
            display_name: id.to_owned(),
            email: None,
            role,
            sso_subject: None,
        };
        tenants.upsert_user(tenant, &user).await.unwrap();
    }
    let arguments = json!({"title": "t", "instructions": "i", "cron": "0 9 * * *"});
    let refused = err(world.call("create_scheduled_task", arguments.clone()).await);
    assert!(refused.contains("only admins"), "{refused}");
    assert_eq!(task_count(&world).await, 0);

    let mut admin = world.ctx.clone();
    admin.user_id = UserId::from("grace");
    let created = world
        .call_with(&admin, "create_scheduled_task", arguments)
        .await
        .unwrap();
    let stored = stored_automation(&world, &created["id"]).await.unwrap();
    assert_eq!(stored.owner, UserId::from("grace"));
}

#[tokio::test]
async fn only_the_owner_or_an_admin_changes_or_deletes_a_task() {
    let world = World::new().await;
    let tenant = &world.ctx.tenant_id;
    let tenants = world.store.tenants();
    tenants.ensure(tenant, "Acme").await.unwrap();
    for (id, role) in [
        ("ada", Role::Member),
        ("bob", Role::Member),
        ("grace", Role::Admin),
    ] {
        let user = NewUser {
            id: UserId::from(id),
            display_name: id.to_owned(),
            email: None,
            role,
            sso_subject: None,
        };
        tenants.upsert_user(tenant, &user).await.unwrap();
    }
    let created = world
        .call(
            "create_scheduled_task",
            json!({"title": "Ada's digest", "instructions": "i", "cron": "0 9 * * *"}),
        )
        .await
        .unwrap();
    let id = &created["id"];
    let mut bob = world.ctx.clone();
    bob.user_id = UserId::from("bob");
    let paused = err(world
        .call_with(
            &bob,
            "update_scheduled_task",
            json!({"id": id, "enabled": false}),
        )
        .await);
    assert!(
        paused.contains("only the owner of “Ada's digest” (ada) or an admin"),
        "{paused}"
    );
    let deleted = err(world
        .call_with(&bob, "delete_scheduled_task", json!({"id": id}))
        .await);
    assert!(deleted.contains("only the owner"), "{deleted}");
    let stored = stored_automation(&world, id).await.unwrap();
    assert!(stored.enabled, "the refused update changed nothing");

    let mut admin = world.ctx.clone();
    admin.user_id = UserId::from("grace");
    let paused = world
        .call_with(
            &admin,
            "update_scheduled_task",
            json!({"id": id, "enabled": false}),
        )
        .await
        .unwrap();
    assert_eq!(paused["enabled"], false);
    world
        .call_with(&admin, "delete_scheduled_task", json!({"id": id}))
        .await
        .unwrap();
    assert!(stored_automation(&world, id).await.is_none());
}

#[tokio::test]
async fn tasks_stay_within_the_tenant() {
    let world = World::new().await;
    let created = a_daily_task(&world).await;
    let mut other = world.ctx.clone();
    other.tenant_id = TenantId::from("globex");
    let listed = world
        .call_with(&other, "list_scheduled_tasks", json!({}))
        .await
        .unwrap();
    assert_eq!(listed, json!({"tasks": []}));
    err(world
        .call_with(
            &other,
            "update_scheduled_task",
            json!({"id": created["id"], "enabled": false}),
        )
        .await);
    err(world
        .call_with(
            &other,
            "delete_scheduled_task",
            json!({"id": created["id"]}),
        )
        .await);
    let stored = stored_automation(&world, &created["id"]).await.unwrap();
    assert!(stored.enabled);
}

#[tokio::test]
async fn sleep_until_refuses_the_past_and_stores_a_timer() {
    let world = World::new().await;
    let past = err(world
        .call("sleep_until", json!({"when": "2020-01-01T00:00:00Z"}))
        .await);
    assert!(past.contains("in the past"), "{past}");
    let unreadable = err(world.call("sleep_until", json!({"when": "soon"})).await);
    assert!(unreadable.contains("RFC 3339"), "{unreadable}");

    let in_an_hour = world.store.clock_ms() / 1000 * 1000 + 3_600_000;
    let when = chrono::DateTime::from_timestamp_millis(in_an_hour).unwrap();
    let naive = when.naive_utc().format("%Y-%m-%dT%H:%M:%S").to_string();
    let set = world
        .call(
            "sleep_until",
            json!({"when": naive, "note": "check the deploy"}),
        )
        .await
        .unwrap();
    assert_eq!(set["ok"], true);
    assert_eq!(set["fire_at"], format!("{naive}Z"), "a naive time is UTC");

    let wake = the_wake_set_by(&world, &set).await;
    assert_eq!(
        (wake.kind, wake.state, wake.fire_at_ms),
        (WakeKind::Timer, WakeState::Pending, Some(in_an_hour))
    );
    assert_eq!(wake.note, "check the deploy");
}

#[tokio::test]
async fn wake_on_waits_for_a_running_job() {
    let world = World::new().await;
    let unknown = err(world.call("wake_on", json!({"job_id": "nope"})).await);
    assert!(unknown.contains("automation run"), "{unknown}");

    let created = a_daily_task(&world).await;
    let automation = AutomationId::from(created["id"].as_str().unwrap());
    let automations = world.store.automations();
    let now = world.store.clock_ms();
    let claim = Claim {
        run: &RunId::new(),
        trigger: RunTrigger::Manual,
        now_ms: now,
        lease_until_ms: now + 60_000,
    };
    let run = automations
        .claim(&world.ctx.tenant_id, &automation, &claim)
        .await
        .unwrap()
        .unwrap();

    let set = world
        .call(
            "wake_on",
            json!({"job_id": run.id, "note": "post the report"}),
        )
        .await
        .unwrap();
    assert_eq!(set["job_id"], run.id.as_str());
    let wake = the_wake_set_by(&world, &set).await;
    assert_eq!(wake.kind, WakeKind::Completion);
    assert_eq!(wake.job_id.as_deref(), Some(run.id.as_str()));
    assert_eq!(wake.note, "post the report");

    let end = RunEnd {
        status: RunStatus::Ok,
        result_text: Some("done".to_owned()),
        error: None,
        artifacts: Vec::new(),
        next_run_ms: None,
    };
    assert!(
        automations
            .finish(&world.ctx.tenant_id, &automation, &run, &end)
            .await
            .unwrap()
    );
    let finished = err(world.call("wake_on", json!({"job_id": run.id})).await);
    assert!(finished.contains("already finished (ok)"), "{finished}");
}

#[tokio::test]
async fn wake_on_event_checks_the_key_and_stores_the_wake() {
    let world = World::new().await;
    for bad in ["", "has space", "a/b", &"k".repeat(201)] {
        let message = err(world.call("wake_on_event", json!({"event_key": bad})).await);
        assert!(message.contains("invalid event key"), "{bad:?}: {message}");
    }
    let long_note = err(world
        .call(
            "wake_on_event",
            json!({"event_key": "deploy:prod", "note": "x".repeat(4_001)}),
        )
        .await);
    assert!(long_note.contains("too long"), "{long_note}");

    let set = world
        .call(
            "wake_on_event",
            json!({"event_key": "deploy:prod", "note": "verify"}),
        )
        .await
        .unwrap();
    assert_eq!(set["event_key"], "deploy:prod");
    let wake = the_wake_set_by(&world, &set).await;
    assert_eq!(wake.kind, WakeKind::Event);
    assert_eq!(wake.event_key.as_deref(), Some("deploy:prod"));

    // The event fires the wake.
    let fired = world
        .store
        .wakes()
        .fire_event(&world.ctx.tenant_id, "deploy:prod")
        .await
        .unwrap();
    assert_eq!(fired, 1);
}
