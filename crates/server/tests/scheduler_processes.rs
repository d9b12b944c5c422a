//! Two `workmate serve` processes ticking every second on one Postgres or MariaDB database for
//! 200 ticks: every due automation runs exactly once, whichever process claims it.

use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::crash::{TOKEN, call};
use crate::support::{Server, fresh_database};

/// Ticks each process makes while the automations come due (one second apart).
const TICKS: usize = 200;

fn start(dir: &std::path::Path, url: &str) -> Server {
    let script = dir.join("script.json");
    let turns = json!({"conversations": [{"when": "*", "turns": [{"text": "Counted."}]}]});
    std::fs::write(&script, turns.to_string()).unwrap();
    let script = script.display().to_string();
    let env = [
        ("WORKMATE__DATABASE__URL", url),
        ("WORKMATE__SCHEDULER__TICK_SECONDS", "1"),
        ("WORKMATE__PROVIDERS__SCRIPTED__SCRIPT", script.as_str()),
        ("WORKMATE__ENGINE__DEFAULT_MODEL", "scripted:test"),
        ("WORKMATE__SERVER__ADMIN_TOKEN", TOKEN),
    ];
    Server::start_with(dir, &[], &env)
}

fn runs_of(server: &Server, id: &str) -> Vec<Value> {
    let (status, body) = call(server, "GET", &format!("/v1/automations/{id}/runs"), None);
    assert_eq!(status, 200, "{body}");
    body["runs"].as_array().unwrap().clone()
}

/// One automation comes due every second for [`TICKS`] seconds, while both processes tick once a
/// second; then every automation must have exactly one run, and the two processes together must
/// have finished exactly one run per automation.
fn each_due_automation_runs_once(variable: &str) {
    let url = fresh_database(variable);
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = start(dir_a.path(), &url);
    let b = start(dir_b.path(), &url);

    let first = SystemTime::now() + Duration::from_secs(3);
    let mut ids = Vec::with_capacity(TICKS);
    for i in 0..TICKS {
        let at = first + Duration::from_secs(i as u64);
        let fire_at = chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339();
        let draft = json!({"title": format!("Count {i}"), "instructions": "Count once.",
                           "fire_at": fire_at, "timezone": "UTC"});
        let (status, created) = call(&a, "POST", "/v1/automations", Some(draft));
        assert_eq!(status, 201, "{variable}: {created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }

    let deadline = Instant::now() + Duration::from_secs(TICKS as u64 + 60);
    for id in &ids {
        while !runs_of(&b, id).iter().any(|r| r["status"] == "ok") {
            assert!(
                Instant::now() < deadline,
                "{variable}: {id} never ran: {}",
                a.log_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    // A few more ticks on both sides, to give a double firing every chance to show.
    std::thread::sleep(Duration::from_secs(3));
    for id in &ids {
        let runs = runs_of(&a, id);
        assert_eq!(
            runs.len(),
            1,
            "{variable}: {id} ran {} times: {runs:?}",
            runs.len()
        );
    }
    let finished = |server: &Server| {
        server
            .log_text()
            .matches("Automation run finished.")
            .count()
    };
    assert_eq!(
        finished(&a) + finished(&b),
        TICKS,
        "{variable}: one finished run per automation across both processes"
    );
}

workmate_test_support::needs! { [postgres]
    #[test]
    fn two_serve_processes_on_postgres_run_each_due_automation_once() {
        each_due_automation_runs_once("WORKMATE_TEST_POSTGRES_URL");
    }
}

workmate_test_support::needs! { [mysql]
    #[test]
    fn two_serve_processes_on_mariadb_run_each_due_automation_once() {
        each_due_automation_runs_once("WORKMATE_TEST_MYSQL_URL");
    }
}
