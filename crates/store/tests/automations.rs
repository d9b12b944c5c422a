//! Claims fire each due automation once, leases let a dead process's run be adopted, and a
//! finished run releases the automation with its next due time. Wakes fire once.

use workmate_protocol::{AutomationId, RunId, SessionId, TenantId, UserId};
use workmate_store::{
    Claim, NewAutomation, NewWake, RunEnd, RunStatus, RunTrigger, Store, WakeKind,
};

use crate::support::tenant_with_session;

async fn digest(store: &Store, tenant: &TenantId, next_run_ms: i64) -> AutomationId {
    let new = NewAutomation {
        title: "Sales digest".into(),
        instructions: "Post the sales digest".into(),
        schedule: serde_json::json!({"kind": "cron", "cron": "0 9 * * 1-5", "timezone": "Asia/Shanghai"}),
        owner: UserId::from("u_alice"),
        origin_session_id: None,
        enabled: true,
        next_run_ms: Some(next_run_ms),
        settings: serde_json::json!({}),
    };
    store.automations().create(tenant, &new).await.unwrap().id
}

fn claim(run: &RunId, trigger: RunTrigger, now_ms: i64) -> Claim<'_> {
    Claim {
        run,
        trigger,
        now_ms,
        lease_until_ms: now_ms + 90_000,
    }
}

backend_matrix! {
    async fn a_due_automation_is_claimed_once_and_released_by_its_run(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "auto").await;
        let automations = ctx.store.automations();
        let id = digest(&ctx.store, &tenant, 1_000).await;
        let not_yet = digest(&ctx.store, &tenant, 50_000).await;

        let due = automations.due(2_000, 100).await.unwrap();
        assert!(due.iter().any(|a| a.id == id) && !due.iter().any(|a| a.id == not_yet));
        let (first, second) = (RunId::new(), RunId::new());
        let run = automations.claim(&tenant, &id, &claim(&first, RunTrigger::Schedule, 2_000)).await.unwrap().expect("the first claim wins");
        assert!(automations.claim(&tenant, &id, &claim(&second, RunTrigger::Schedule, 2_000)).await.unwrap().is_none(), "a second claim loses");
        assert!(automations.claim(&tenant, &id, &claim(&second, RunTrigger::Manual, 2_000)).await.unwrap().is_none(), "a manual run waits for the running one");
        assert!(automations.claim(&tenant, &not_yet, &claim(&second, RunTrigger::Schedule, 2_000)).await.unwrap().is_none(), "not due yet");
        assert!(!automations.due(2_000, 100).await.unwrap().iter().any(|a| a.id == id), "a held automation is not due");

        let session = SessionId::new();
        automations.set_run_session(&tenant, &run.id, &session).await.unwrap();
        assert!(automations.renew(&tenant, &id, &run.id, 200_000).await.unwrap());
        let end = RunEnd { status: RunStatus::Ok, result_text: Some("posted".into()), error: None, artifacts: vec!["digest.md".into()], next_run_ms: Some(86_401_000) };
        assert!(automations.finish(&tenant, &id, &run, &end).await.unwrap());
        assert!(!automations.finish(&tenant, &id, &run, &end).await.unwrap(), "a finished run stays finished");
        assert!(!automations.renew(&tenant, &id, &run.id, 300_000).await.unwrap(), "nothing to renew after the end");

        let after = automations.get(&tenant, &id).await.unwrap().unwrap();
        assert_eq!((after.run_count, after.next_run_ms, after.running_run_id), (1, Some(86_401_000), None));
        assert_eq!(after.last_status, Some(RunStatus::Ok));
        let runs = automations.runs(&tenant, &id, 10).await.unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].status, runs[0].result_text.as_deref(), runs[0].session_id.clone()), (RunStatus::Ok, Some("posted"), session));
        assert_eq!(runs[0].artifacts, vec!["digest.md".to_owned()]);
    }

    async fn a_run_whose_lease_lapsed_is_adopted_by_one_process(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "auto").await;
        let automations = ctx.store.automations();
        let id = digest(&ctx.store, &tenant, 1_000).await;
        let run = RunId::new();
        automations.claim(&tenant, &id, &claim(&run, RunTrigger::Schedule, 1_000)).await.unwrap().unwrap();
        assert!(automations.orphaned(50_000, 100).await.unwrap().iter().all(|a| a.id != id), "the lease still holds");
        let orphaned = automations.orphaned(100_000, 100).await.unwrap();
        assert!(orphaned.iter().any(|a| a.id == id && a.running_run_id.as_ref() == Some(&run)));
        assert!(automations.adopt(&tenant, &id, &run, 100_000, 190_000).await.unwrap());
        assert!(!automations.adopt(&tenant, &id, &run, 100_000, 190_000).await.unwrap(), "one adopter");
        assert!(automations.claim(&tenant, &id, &claim(&RunId::new(), RunTrigger::Catchup, 100_000)).await.unwrap().is_none(), "never a second run");
    }

    async fn deleting_an_automation_removes_its_runs(ctx: Ctx) {
        let (tenant, _) = tenant_with_session(&ctx.store, "auto").await;
        let automations = ctx.store.automations();
        let id = digest(&ctx.store, &tenant, 1_000).await;
        let mut changed = automations.get(&tenant, &id).await.unwrap().unwrap();
        changed.enabled = false;
        changed.title = "Weekly digest".into();
        let saved = automations.update(&changed).await.unwrap().unwrap();
        assert_eq!((saved.enabled, saved.title.as_str()), (false, "Weekly digest"));
        assert!(automations.claim(&tenant, &id, &claim(&RunId::new(), RunTrigger::Schedule, 5_000)).await.unwrap().is_none(), "a paused automation is not claimed");
        automations.claim(&tenant, &id, &claim(&RunId::new(), RunTrigger::Manual, 5_000)).await.unwrap().expect("a paused automation still runs by hand");
        assert_eq!(automations.list(&tenant, 10).await.unwrap().len(), 1);
        assert!(automations.delete(&tenant, &id).await.unwrap());
        assert!(!automations.delete(&tenant, &id).await.unwrap());
        assert!(automations.runs(&tenant, &id, 10).await.unwrap().is_empty());
    }

    async fn wakes_become_ready_by_time_job_or_event_and_fire_once(ctx: Ctx) {
        let (tenant, session) = tenant_with_session(&ctx.store, "wakes").await;
        let wakes = ctx.store.wakes();
        let wake = |kind, fire_at_ms, job_id: Option<&str>, event_key: Option<&str>| NewWake { session_id: session.id.clone(), kind, fire_at_ms, job_id: job_id.map(Into::into), event_key: event_key.map(Into::into), note: "check the build".into() };
        let timer = wakes.create(&tenant, &wake(WakeKind::Timer, Some(10_000), None, None)).await.unwrap();
        let job = wakes.create(&tenant, &wake(WakeKind::Completion, None, Some("run-1"), None)).await.unwrap();
        let event = wakes.create(&tenant, &wake(WakeKind::Event, None, None, Some("deploy.done"))).await.unwrap();
        let ready_ids = |ready: Vec<workmate_store::Wake>| ready.into_iter().filter(|w| w.tenant_id == tenant).map(|w| w.id).collect::<Vec<_>>();
        assert!(ready_ids(wakes.ready(9_999, 100).await.unwrap()).is_empty());
        assert_eq!(ready_ids(wakes.ready(10_000, 100).await.unwrap()), vec![timer.id.clone()]);
        assert_eq!(wakes.complete_job(&tenant, "run-1").await.unwrap(), 1);
        assert_eq!(wakes.complete_job(&tenant, "run-1").await.unwrap(), 0, "a repeated signal changes nothing");
        assert_eq!(wakes.fire_event(&tenant, "deploy.done").await.unwrap(), 1);
        assert_eq!(ready_ids(wakes.ready(0, 100).await.unwrap()), vec![job.id.clone(), event.id.clone()]);
        assert!(wakes.mark_fired(&tenant, &job.id).await.unwrap());
        assert!(!wakes.mark_fired(&tenant, &job.id).await.unwrap(), "fires once");
        assert_eq!(wakes.pending(&tenant, &session.id).await.unwrap().len(), 2);
    }
}
