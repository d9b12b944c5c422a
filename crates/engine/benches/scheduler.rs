//! Scheduler tick cost: 100,000 enabled automations, of which 1,000 are due each round. Run with
//! `cargo bench -p workmate-engine --bench scheduler`; docs/benchmarks.md explains the figures.
//!
//! Invariant: figures are printed, never asserted. The bench stops only if a tick did not fire
//! the due automations, because its timing would then describe nothing.

// A bench is a reporting binary: it prints its table and stops at once on a broken setup.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{
    EngineConfig, EngineParts, NoObserver, Scheduler, SchedulerConfig, SessionHub, TickReport,
};
use workmate_protocol::{TenantId, UserId};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::test_support::ManualClock;
use workmate_store::{ConnectOptions, NewAutomation, RunTrigger, Store};
use workmate_tools::ToolRegistry;
use workmate_tools::automations::{AutomationSettings, Schedule};

/// Enabled automations in the store.
const TOTAL: usize = 100_000;
/// Automations due in each measured tick.
const DUE: usize = 1_000;
/// Measured rounds (each: one tick that fires `DUE`, then one idle tick).
const ROUNDS: usize = 5;
/// 2026-12-01T10:30:00Z: every hourly automation is due at 10:00.
const START_MS: i64 = 1_796_121_000_000;
const HOUR_MS: i64 = 3_600_000;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir =
            std::env::temp_dir().join(format!("workmate-bench-sched-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("bench.db").display());
        println!(
            "Scheduler tick: {TOTAL} enabled automations, {DUE} due per round, {ROUNDS} rounds"
        );
        println!();
        measure("sqlite-file", &url, &dir).await;
        if let Ok(server) = std::env::var("WORKMATE_TEST_POSTGRES_URL") {
            let url = workmate_store::test_support::fresh_database(&server)
                .await
                .unwrap();
            measure("postgres", &url, &dir).await;
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}

async fn measure(label: &str, url: &str, dir: &std::path::Path) {
    let clock = ManualClock::at_ms(START_MS);
    let options = ConnectOptions {
        clock: clock.clone(),
        ..ConnectOptions::default()
    };
    let store = Store::connect(url, options).await.unwrap();
    store.migrate().await.unwrap();
    let tenant = TenantId::from("t_bench");
    store.tenants().ensure(&tenant, "Bench").await.unwrap();

    let seeding = Instant::now();
    seed(&store, &tenant).await;
    println!(
        "{label}: seeded {TOTAL} automations in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );

    let mut providers = ProviderRouter::new("scripted");
    let script = r#"{"conversations": [{"when": "*", "turns": [{"text": "Done."}]}]}"#;
    providers.register(
        "scripted",
        Arc::new(ScriptedProvider::from_json(script).unwrap()),
    );
    let hub = SessionHub::new(EngineParts {
        store: store.clone(),
        providers,
        tools: ToolRegistry::new(),
        permissions: PermissionConfig::default(),
        config: EngineConfig {
            default_model: "scripted:bench".into(),
            workspaces_dir: dir.join("workspaces"),
            ..EngineConfig::default()
        },
        clock: clock.clone(),
    });
    let scheduler = Scheduler::new(
        hub.clone(),
        Arc::new(NoObserver),
        SchedulerConfig::default(),
    );

    let mut firing = Vec::new();
    let mut idle = Vec::new();
    for _ in 0..ROUNDS {
        let (took, report) = timed_tick(&scheduler).await;
        assert_eq!(
            report.fired, DUE,
            "a tick must fire every due automation: {report:?}"
        );
        firing.push((took, report));
        settle(&scheduler).await;
        let (took, report) = timed_tick(&scheduler).await;
        assert_eq!(report.fired, 0, "{report:?}");
        idle.push((took, report));
        clock.advance_ms(HOUR_MS);
    }
    print_row(label, "tick, 1,000 due", &firing);
    print_row(label, "tick, none due", &idle);
    println!();
    hub.shutdown().await;
    store.close().await;
}

async fn timed_tick(scheduler: &Scheduler) -> (Duration, TickReport) {
    let started = Instant::now();
    let report = scheduler.tick(RunTrigger::Schedule).await.unwrap();
    (started.elapsed(), report)
}

async fn settle(scheduler: &Scheduler) {
    let deadline = Instant::now() + Duration::from_secs(600);
    while scheduler.running() > 0 {
        assert!(Instant::now() < deadline, "runs did not end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn print_row(label: &str, what: &str, samples: &[(Duration, TickReport)]) {
    let mut ms: Vec<f64> = samples
        .iter()
        .map(|(d, _)| d.as_secs_f64() * 1000.0)
        .collect();
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    let rows = samples.iter().map(|(_, r)| r.rows).max().unwrap_or(0);
    println!(
        "{label:12} {what:18} mean {mean:8.1} ms  p50 {:8.1} ms  max {:8.1} ms  rows touched {rows}",
        ms[ms.len() / 2],
        ms[ms.len() - 1],
    );
}

/// `TOTAL - DUE` automations due next year and `DUE` hourly ones due now, created through the
/// store as the API would (in parallel, so the seeding is not the slow part of the bench).
async fn seed(store: &Store, tenant: &TenantId) {
    let yearly = Schedule::cron("0 9 1 1 *", "UTC").unwrap();
    let hourly = Schedule::cron("0 * * * *", "UTC").unwrap();
    let next_year = yearly.next_after(START_MS, 0, None);
    let this_hour = Some(START_MS - 30 * 60_000);
    let mut tasks = tokio::task::JoinSet::new();
    let workers = 8;
    for worker in 0..workers {
        let store = store.clone();
        let tenant = tenant.clone();
        let (yearly, hourly) = (yearly.clone(), hourly.clone());
        tasks.spawn(async move {
            for i in (worker..TOTAL).step_by(workers) {
                let due = i < DUE;
                let new = NewAutomation {
                    title: format!("Automation {i}"),
                    instructions: "Say done.".into(),
                    schedule: if due {
                        hourly.to_json()
                    } else {
                        yearly.to_json()
                    },
                    owner: UserId::from("u_bench"),
                    origin_session_id: None,
                    enabled: true,
                    next_run_ms: if due { this_hour } else { next_year },
                    settings: AutomationSettings::default().to_json(),
                };
                store.automations().create(&tenant, &new).await.unwrap();
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}
