//! The throughput row: many sessions playing plain turns at once, in turns per second.

use std::sync::Arc;
use std::time::Instant;

use super::{Backend, Fixture};

/// Sessions driven at once for the throughput row, and plain turns each plays.
const THROUGHPUT_SESSIONS: usize = 100;
const THROUGHPUT_TURNS: usize = 10;
/// Target plain turns per second on the SQLite file and in memory.
const THROUGHPUT_TARGET_FILE: f64 = 5_000.0;
const THROUGHPUT_TARGET_MEMORY: f64 = 20_000.0;

/// Measures and prints the row for `backend`.
pub(super) async fn row(backend: Backend) {
    let label = format!("(e) {THROUGHPUT_SESSIONS} sessions x {THROUGHPUT_TURNS} plain");
    let (turns, seconds) = match throughput(backend).await {
        Ok(done) => done,
        Err(why) => {
            println!("{label:<31} {:<14} failed: {why}", backend.name());
            return;
        }
    };
    let rate = turns as f64 / seconds;
    let target = match backend {
        Backend::SqliteFile => Some(THROUGHPUT_TARGET_FILE),
        Backend::Memory => Some(THROUGHPUT_TARGET_MEMORY),
        Backend::Postgres => None,
    };
    let target = target.map_or_else(
        || "-".to_owned(),
        |goal| {
            let verdict = if rate >= goal { "met" } else { "missed" };
            format!(">= {goal:.0} turns/s ({verdict}, x{:.2})", rate / goal)
        },
    );
    println!(
        "{label:<31} {:<14} {rate:>8.0} turns/s ({turns} turns in {seconds:.2} s)  {target}",
        backend.name(),
    );
}

/// Throughput: [`THROUGHPUT_SESSIONS`] sessions each playing [`THROUGHPUT_TURNS`] plain turns
/// one after another, all sessions at once. Returns the turns played and the wall time, or why a
/// turn failed (reported in the row, so the rest of the bench still runs).
async fn throughput(backend: Backend) -> Result<(usize, f64), String> {
    let mut fixture = Fixture::new(backend).await;
    let mut sessions = Vec::with_capacity(THROUGHPUT_SESSIONS);
    for _ in 0..THROUGHPUT_SESSIONS {
        sessions.push(fixture.session().await);
    }
    let ids: Vec<_> = sessions.iter().map(|(id, _)| id.clone()).collect();
    let fixture = Arc::new(fixture);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (id, mut events) in sessions {
        let fixture = Arc::clone(&fixture);
        tasks.spawn(async move {
            for _ in 0..THROUGHPUT_TURNS {
                let counts = fixture.turn(&id, &mut events, "[plain] go").await;
                assert_eq!(counts.deltas, 20, "a plain turn streams 20 deltas");
            }
        });
    }
    let mut failure = None;
    let joined = tokio::time::timeout(std::time::Duration::from_secs(120), async {
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done
                && failure.is_none()
            {
                failure = Some(if e.is_panic() {
                    let panic = e.into_panic();
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "a session's task failed".to_owned())
                } else {
                    "a session's task was cancelled".to_owned()
                });
            }
        }
    })
    .await;
    if joined.is_err() {
        return Err(format!(
            "turns still unfinished after 120 s{}",
            failure.map_or_else(String::new, |f| format!(" (first failure: {f})"))
        ));
    }
    if let Some(why) = failure {
        return Err(why);
    }
    // The clock stops once every turn's steps are stored.
    fixture.flush_all(&ids).await;
    let seconds = started.elapsed().as_secs_f64();
    Ok((THROUGHPUT_SESSIONS * THROUGHPUT_TURNS, seconds))
}
