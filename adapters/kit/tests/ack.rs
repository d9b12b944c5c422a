//! Ack-then-process: submitting never waits on running jobs; a full queue refuses; shutdown runs
//! what was accepted and joins it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use workmate_adapter::{Job, QueueFull, WorkQueue};

/// A job that sleeps `for_`, counting how many run at once and how many finished.
fn sleeper(
    for_: Duration,
    running: &Arc<AtomicUsize>,
    peak: &Arc<AtomicUsize>,
    done: &Arc<AtomicUsize>,
) -> Job {
    let (running, peak, done) = (running.clone(), peak.clone(), done.clone());
    Box::pin(async move {
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(for_).await;
        running.fetch_sub(1, Ordering::SeqCst);
        done.fetch_add(1, Ordering::SeqCst);
    })
}

/// Lets the dispatcher and workers run without moving the paused clock.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn submit_returns_while_every_worker_is_busy() {
    let queue = WorkQueue::new(2, 8);
    let counters: [Arc<AtomicUsize>; 3] = Default::default();
    let [running, peak, done] = &counters;
    let start = Instant::now();
    for _ in 0..2 {
        queue
            .try_submit(sleeper(Duration::from_secs(10), running, peak, done))
            .unwrap();
    }
    settle().await;
    assert_eq!(running.load(Ordering::SeqCst), 2, "both workers busy");
    for _ in 0..8 {
        queue
            .try_submit(sleeper(Duration::from_secs(10), running, peak, done))
            .unwrap();
    }
    // No virtual time passed: the submits waited for none of the ten-second jobs.
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(done.load(Ordering::SeqCst), 0);
    assert_eq!(queue.queued(), 8);
    queue.shutdown().await;
    assert_eq!(done.load(Ordering::SeqCst), 10);
    assert_eq!(
        peak.load(Ordering::SeqCst),
        2,
        "never more than `workers` at once"
    );
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(50),
        "five rounds of two"
    );
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_refuses_at_once_and_recovers() {
    let queue = WorkQueue::new(1, 2);
    let gate = Arc::new(Semaphore::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let job = |gate: &Arc<Semaphore>, done: &Arc<AtomicUsize>| -> Job {
        let (gate, done) = (gate.clone(), done.clone());
        Box::pin(async move {
            gate.acquire().await.unwrap().forget();
            done.fetch_add(1, Ordering::SeqCst);
        })
    };
    queue.try_submit(job(&gate, &done)).unwrap();
    settle().await; // The worker holds the first job; the dispatcher waits for a permit.
    queue.try_submit(job(&gate, &done)).unwrap();
    queue.try_submit(job(&gate, &done)).unwrap();
    assert_eq!(queue.try_submit(job(&gate, &done)), Err(QueueFull));

    gate.add_permits(1);
    settle().await;
    assert_eq!(done.load(Ordering::SeqCst), 1);
    queue.try_submit(job(&gate, &done)).unwrap();
    gate.add_permits(3);
    queue.shutdown().await;
    assert_eq!(done.load(Ordering::SeqCst), 4, "every accepted job ran");
}

#[tokio::test(start_paused = true)]
async fn shutdown_runs_accepted_jobs_then_refuses() {
    let queue = WorkQueue::new(3, 16);
    let counters: [Arc<AtomicUsize>; 3] = Default::default();
    let [running, peak, done] = &counters;
    for _ in 0..12 {
        queue
            .try_submit(sleeper(Duration::from_secs(1), running, peak, done))
            .unwrap();
    }
    let token = queue.shutdown_token();
    assert!(!token.is_cancelled());
    queue.shutdown().await;
    assert!(token.is_cancelled());
    assert_eq!(done.load(Ordering::SeqCst), 12);
    assert_eq!(running.load(Ordering::SeqCst), 0);
    assert_eq!(
        queue.try_submit(sleeper(Duration::ZERO, running, peak, done)),
        Err(QueueFull)
    );
}
