//! `workmate bench soak`: signed Slack events through the real route, each opening a new thread
//! (a new session, a new turn, a new card), posted in blocks by a client in a second process at
//! a steady rate the service keeps up with; resident memory is read from `/proc/self/status` after
//! the warm-up and after each block, once every event of the block has its turn card and the idle
//! sessions' state had time to go. At a steady rate the sessions live at once are as many in the
//! warm-up as later, so growth after it is what stays behind, not a backlog's high-water mark
//! (`--rate 0` posts as fast as the connections go, for that high-water mark).
//!
//! Invariant: the figures are printed as measured, beside the target (under 200 bytes of growth
//! per event after the warm-up); a shortfall is said, never hidden, and never fails the command.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use workmate_chat::ChatConfig;
use workmate_engine::EngineConfig;

use super::{Load, Service, fake_slack, in_a_runtime, parse, run_child, serve, wait_for_cards};
use crate::error::StartupError;

/// The growth per event after the warm-up the soak aims under.
const TARGET_BYTES_PER_EVENT: f64 = 200.0;
/// How long a session, and a card pump, may stay idle before its state is dropped, in the soak.
const IDLE: Duration = Duration::from_secs(2);

/// `workmate bench soak` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct SoakArgs {
    /// Events posted after the warm-up (at most 100,000).
    #[arg(long, default_value_t = 20_000)]
    pub events: usize,
    /// Events of the warm-up: enough to open the pool's connections and fill every bounded
    /// cache (the largest holds 1,024 entries), so growth after it is what stays behind.
    #[arg(long, default_value_t = 5_000)]
    pub warmup: usize,
    /// Events between two readings.
    #[arg(long, default_value_t = 4_000)]
    pub block: usize,
    /// Connections posting at once.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Events per second, spread evenly (0: as fast as the connections go).
    #[arg(long, default_value_t = 250)]
    pub rate: u32,
}

/// One reading.
struct Reading {
    events: usize,
    rss_bytes: u64,
    live_sessions: usize,
}

/// Runs the soak and returns its table.
pub fn soak(args: &SoakArgs) -> Result<String, StartupError> {
    let sized = |n: usize, max: usize| (1..=max).contains(&n);
    if !sized(args.events, 100_000)
        || !sized(args.warmup, 20_000)
        || !sized(args.block, 20_000)
        || !sized(args.concurrency, 64)
        || args.rate > 100_000
    {
        return Err(StartupError::Usage(
            "--events 1..=100000, --warmup and --block 1..=20000, --concurrency 1..=64, \
             --rate 0..=100000"
                .into(),
        ));
    }
    in_a_runtime(|dir| measure(args, dir))
}

async fn measure(args: &SoakArgs, dir: std::path::PathBuf) -> Result<String, StartupError> {
    let token = CancellationToken::new();
    let cards = Arc::new(fake_slack::Cards::default());
    let fake = serve(fake_slack::router(Arc::clone(&cards)), token.clone()).await?;
    let engine = EngineConfig {
        idle_session: IDLE,
        ..EngineConfig::default()
    };
    let chat = ChatConfig {
        pump_idle: IDLE,
        ..ChatConfig::default()
    };
    let app = Service::start(
        &dir,
        fake,
        engine,
        chat,
        Arc::new(OnceLock::new()),
        token.clone(),
    )
    .await?;
    app.hub.evict_idle_continuously(token.clone());
    let started = Instant::now();
    let mut posted = 0;
    let mut readings = Vec::new();
    let mut blocks = vec![args.warmup];
    let mut left = args.events;
    while left > 0 {
        let block = left.min(args.block);
        blocks.push(block);
        left -= block;
    }
    let mut failure = None;
    for block in blocks {
        let exe = std::env::current_exe()
            .map_err(|e| StartupError::Bench(format!("cannot find the workmate binary: {e}")))?;
        let load = Load {
            requests: block,
            concurrency: args.concurrency,
            first: posted,
            rate: args.rate,
        };
        let addr = app.addr;
        let output = tokio::task::spawn_blocking(move || run_child(exe, addr, load))
            .await
            .map_err(|e| StartupError::Bench(format!("the client runner failed: {e}")))??;
        let run = parse(&output)?;
        posted += block;
        if run.acked < block {
            failure = Some(format!(
                "{} of {block} events were not answered 200 ({} refused, {} I/O errors)",
                block - run.acked,
                run.rejected,
                run.io_errors
            ));
        }
        let seen = wait_for_cards(&cards, posted).await;
        if seen.threads < posted {
            failure.get_or_insert(format!(
                "{} of {posted} events have no turn card yet",
                posted - seen.threads
            ));
        }
        // Idle sessions and card pumps are dropped after IDLE: read once they could be.
        tokio::time::sleep(IDLE * 3).await;
        readings.push(Reading {
            events: posted,
            rss_bytes: resident_bytes().unwrap_or(0),
            live_sessions: app.hub.live_sessions(),
        });
    }
    token.cancel();
    app.stop().await;
    Ok(report(args, &readings, started.elapsed(), failure))
}

fn report(
    args: &SoakArgs,
    readings: &[Reading],
    took: Duration,
    failure: Option<String>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "soak: signed Slack events, each a new thread, {} at once, {}; sessions and card pumps \
         idle for {} s are dropped; resident memory from /proc/self/status ({:.0} s in all)",
        args.concurrency,
        if args.rate == 0 {
            "as fast as they go".to_owned()
        } else {
            format!("{} a second", args.rate)
        },
        IDLE.as_secs(),
        took.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "{:>10}  {:>12}  {:>14}  {:>13}",
        "events", "resident MB", "live sessions", "bytes/event"
    );
    let warm = readings.first();
    for reading in readings {
        let per_event = warm
            .filter(|w| reading.events > w.events)
            .map(|w| growth_per_event(w, reading))
            .map_or("(warm-up)".to_owned(), |g| format!("{g:.0}"));
        let _ = writeln!(
            out,
            "{:>10}  {:>12.1}  {:>14}  {:>13}",
            reading.events,
            reading.rss_bytes as f64 / 1_048_576.0,
            reading.live_sessions,
            per_event
        );
    }
    if let (Some(warm), Some(last)) = (warm, readings.last())
        && last.events > warm.events
    {
        let growth = growth_per_event(warm, last);
        let verdict = if growth < TARGET_BYTES_PER_EVENT {
            "met"
        } else {
            "NOT met"
        };
        let _ = writeln!(
            out,
            "growth after the warm-up: {growth:.0} bytes per event over {} events; target under \
             {TARGET_BYTES_PER_EVENT:.0}: {verdict}",
            last.events - warm.events
        );
    }
    if let Some(failure) = failure {
        let _ = writeln!(out, "problem: {failure}");
    }
    out
}

/// Resident growth from `warm` to `later`, per event posted in between (negative: it shrank).
fn growth_per_event(warm: &Reading, later: &Reading) -> f64 {
    let grown = later.rss_bytes as f64 - warm.rss_bytes as f64;
    grown / (later.events - warm.events).max(1) as f64
}

/// This process's resident memory (`VmRSS`), in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}
