//! Two `workmate serve` processes ticking every second on one Postgres or MariaDB database:
//! every due automation runs exactly once, whichever process claims it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::crash::{TOKEN, call};
use crate::support::{Server, fresh_database};

/// Automations created, each due once within the next ten seconds.
const AUTOMATIONS: usize = 12;

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

#[test]
fn two_serve_processes_run_each_due_automation_once() {
    for variable in ["WORKMATE_TEST_POSTGRES_URL", "WORKMATE_TEST_MYSQL_URL"] {
        let Some(url) = fresh_database(variable) else {
            continue;
        };
        let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = start(dir_a.path(), &url);
        let b = start(dir_b.path(), &url);

        // Due one after another, half a second apart, so the two processes' ticks interleave.
        let start = std::time::SystemTime::now() + Duration::from_secs(3);
        let mut ids = Vec::new();
        for i in 0..AUTOMATIONS {
            let at = start + Duration::from_millis(500 * i as u64);
            let fire_at = chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339();
            let draft = json!({"title": format!("Count {i}"), "instructions": "Count once.",
                               "fire_at": fire_at, "timezone": "UTC"});
            let (status, created) = call(&a, "POST", "/v1/automations", Some(draft));
            assert_eq!(status, 201, "{variable}: {created}");
            ids.push(created["id"].as_str().unwrap().to_owned());
        }

        // Wait until all have run, then give both processes a few more ticks to misbehave.
        let deadline = Instant::now() + Duration::from_secs(40);
        let runs_of = |server: &Server, id: &str| -> Vec<Value> {
            let (status, body) = call(server, "GET", &format!("/v1/automations/{id}/runs"), None);
            assert_eq!(status, 200, "{body}");
            body["runs"].as_array().unwrap().clone()
        };
        while !ids
            .iter()
            .all(|id| runs_of(&b, id).iter().any(|r| r["status"] == "ok"))
        {
            assert!(
                Instant::now() < deadline,
                "{variable}: not every automation ran: {}",
                a.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_secs(3));
        for id in &ids {
            let runs = runs_of(&a, id);
            assert_eq!(
                runs.len(),
                1,
                "{variable}: {id} ran {} times: {runs:?}",
                runs.len()
            );
            assert_eq!(runs[0]["status"], "ok");
        }
        let claimed_in = |server: &Server| {
            server
                .log_text()
                .matches("Automation run finished.")
                .count()
        };
        assert_eq!(
            claimed_in(&a) + claimed_in(&b),
            AUTOMATIONS,
            "{variable}: one finish per automation"
        );
    }
}
