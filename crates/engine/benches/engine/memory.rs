//! The memory row: resident memory per live session, measured in a fresh child process.

use super::{Backend, Fixture, MEMORY_CHILD};

/// Live sessions opened for the memory figure.
const LIVE_SESSIONS: usize = 1_000;
/// `/proc/self/statm` counts pages; x86-64 and most aarch64 Linux kernels use 4 KiB pages.
const PAGE_SIZE: u64 = 4096;

/// Resident set size in bytes.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm (Linux only)");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("statm's second field is the resident page count");
    pages * PAGE_SIZE
}

/// The memory figure, run in a fresh process (`engine --session-memory <backend>`) so memory
/// that earlier benches freed to the allocator cannot be reused and hide the growth. Prints one
/// line: `rss <before> <created> <subscribed> <after>` in bytes.
pub(super) async fn memory_child(backend: Backend) {
    let mut fixture = Fixture::new(backend).await;
    let tenant = fixture.tenant.clone();
    // Warm-up: statement caches, pool connections, lazily built statics.
    for _ in 0..50 {
        let (id, mut events) = fixture.session().await;
        fixture.turn(&id, &mut events, "[short] warm-up").await;
    }
    let before = rss_bytes();
    let mut live = Vec::with_capacity(LIVE_SESSIONS);
    for _ in 0..LIVE_SESSIONS {
        live.push(fixture.create().await);
    }
    // Each figure is read once the store's writer has drained: steps waiting to be stored are
    // in flight, not what a live session keeps.
    fixture.flush_all(&live).await;
    let created = rss_bytes();
    let mut receivers = Vec::with_capacity(LIVE_SESSIONS);
    for id in &live {
        receivers.push(fixture.hub.subscribe(&tenant, id).await.unwrap());
    }
    let subscribed = rss_bytes();
    for (id, events) in live.iter().zip(&mut receivers) {
        fixture.turn(id, events, "[short] hello").await;
    }
    fixture.flush_all(&live).await;
    let after = rss_bytes();
    println!("rss {before} {created} {subscribed} {after}");
    drop(receivers);
}

/// Runs the memory figure for `backend` in a child process and prints its row.
pub(super) fn memory_row(backend: Backend) {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args([MEMORY_CHILD, backend.name()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "memory child failed: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let figures: Vec<u64> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("rss "))
        .unwrap_or_else(|| panic!("no rss line in {stdout:?}"))
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let [before, created, subscribed, after] = figures[..] else {
        panic!("expected four figures, got {figures:?}");
    };
    let per = |from: u64, to: u64| to.saturating_sub(from) as f64 / 1024.0 / LIVE_SESSIONS as f64;
    let total = per(before, after);
    let verdict = if total <= 5.0 { "met" } else { "missed" };
    println!(
        "{:<31} {:<14} {:>9.1} KB/session (create {:.1}, subscribe {:.1}, first turn {:.1})  \
         target < 5 KB ({verdict}, x{:.1})",
        "(d) live session, 1,000 open",
        backend.name(),
        total,
        per(before, created),
        per(created, subscribed),
        per(subscribed, after),
        total / 5.0,
    );
}
