//! `workmate bench webhooks`: how fast the Slack Events API route acknowledges signed events,
//! beside an empty axum handler measured in the same run.
//!
//! Invariant: nothing here fails on a target; the figures and the targets are printed side by
//! side. The load comes from a second process (`workmate bench-client`) over loopback, so the
//! server's CPU figures (from `/proc/self/stat`) contain no client work. Turns triggered by the
//! events run in the background while the client is still posting, so they are part of the
//! server CPU of the run; the report says so and also gives the cost once they have drained.

mod client;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use workmate_chat::{Chat, ChatConfig};
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::{ConnectOptions, Store, SystemClock};
use workmate_tools::{BuiltinOptions, builtin_registry};

pub use client::{ClientArgs, run as client};

use crate::config::SlackConfig;
use crate::error::StartupError;
use crate::http::api::Auth;
use crate::http::{AppState, router};
use crate::metrics::Metrics;
use crate::platforms::slack::SlackSurface;

const SECRET: &str = "bench-signing-secret";
const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [{"text": "Done."}]}]}"#;
/// The most events one run may post, and the longest a client run may take.
const MAX_REQUESTS: usize = 20_000;
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long background turns may take to drain after the client is done.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);
/// Clock ticks per second of `/proc/self/stat` (`CLK_TCK`, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;

/// `workmate bench webhooks` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct WebhooksArgs {
    /// Signed events to post (at most 20,000).
    #[arg(long, default_value_t = 2_000)]
    pub requests: usize,
    /// Connections posting at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
}

/// One client run's figures, parsed from the client's output line.
#[derive(Debug, Default)]
struct Run {
    acked: usize,
    rejected: usize,
    io_errors: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    /// Server CPU during the run, if `/proc` is readable.
    cpu: Option<Duration>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.acked as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs the benchmark and returns its report.
pub fn webhooks(args: &WebhooksArgs) -> Result<String, StartupError> {
    if args.requests == 0 || args.requests > MAX_REQUESTS {
        return Err(StartupError::Usage(format!(
            "--requests must be between 1 and {MAX_REQUESTS}"
        )));
    }
    if args.concurrency == 0 || args.concurrency > 256 {
        return Err(StartupError::Usage(
            "--concurrency must be between 1 and 256".into(),
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartupError::Runtime)?;
    let dir = TempDir::new()?;
    let outcome = runtime.block_on(measure(args, &dir.0));
    runtime.shutdown_timeout(Duration::from_secs(2));
    outcome
}

async fn measure(args: &WebhooksArgs, dir: &std::path::Path) -> Result<String, StartupError> {
    let token = CancellationToken::new();
    let posts = Arc::new(AtomicUsize::new(0));
    let fake = serve(fake_slack(Arc::clone(&posts)), token.clone()).await?;
    let baseline_router = Router::new().route(
        "/v1/platforms/slack/events",
        post(|| async { StatusCode::OK }),
    );
    let baseline_addr = serve(baseline_router, token.clone()).await?;

    let (hub, store) = hub(dir).await?;
    let slack_config = SlackConfig::http(
        SECRET.to_owned().into(),
        "xoxb-bench".to_owned().into(),
        &format!("http://{fake}"),
    );
    let chat = Chat::new(hub.clone(), store.clone(), ChatConfig::default());
    let slack = SlackSurface::new(&slack_config, chat.clone())
        .map_err(|e| StartupError::Bench(format!("cannot set up Slack: {e}")))?;
    chat.start();
    let state = AppState {
        store: store.clone(),
        metrics: Arc::new(Metrics::new()),
        hub: hub.clone(),
        auth: Arc::new(Auth::admin(uuid::Uuid::new_v4().to_string().into())),
        scheduler: workmate_engine::Scheduler::new(
            hub.clone(),
            Arc::new(workmate_engine::NoObserver),
            workmate_engine::SchedulerConfig::default(),
        ),
        chat: chat.clone(),
        slack: Some(Arc::clone(&slack)),
        shutdown: token.clone(),
    };
    let service_addr = serve(router(state), token.clone()).await?;

    // The baseline runs first, while the server is idle; the events run leaves turns behind.
    let baseline = timed_client(baseline_addr, args).await;
    let service = match baseline {
        Ok(_) => timed_client(service_addr, args).await,
        Err(_) => Ok(Run::default()),
    };
    let end_of_run = cpu_time();
    let drained = match &service {
        Ok(run) => {
            let (posted, took, end) = drain(&posts, run.acked).await;
            Some(Drained {
                posted,
                took,
                cpu: end.zip(end_of_run).map(|(e, s)| e.saturating_sub(s)),
            })
        }
        Err(_) => None,
    };
    token.cancel();
    slack.shutdown().await;
    chat.shutdown(Duration::from_secs(1)).await;
    hub.shutdown().await;
    store.close().await;
    let (baseline, service) = (baseline?, service?);
    Ok(report(args, &baseline, &service, drained.as_ref()))
}

/// What happened after the client ended, until the background turns drained.
#[derive(Debug)]
struct Drained {
    /// Turn cards posted in all.
    posted: usize,
    took: Duration,
    /// Server CPU from the client's end until the drain.
    cpu: Option<Duration>,
}

/// The store, migrated, and a hub whose scripted model answers "Done." at once.
async fn hub(dir: &std::path::Path) -> Result<(SessionHub, Store), StartupError> {
    let url = format!("sqlite://{}/bench.db", dir.display());
    let failed = |source| StartupError::Database {
        url: url.clone(),
        source,
    };
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .map_err(failed)?;
    store.migrate().await.map_err(failed)?;
    let scripted =
        ScriptedProvider::from_json(SCRIPT).map_err(|e| StartupError::Script(e.to_string()))?;
    let mut providers = ProviderRouter::new("scripted");
    providers.register("scripted", Arc::new(scripted));
    let hub = SessionHub::new(EngineParts {
        store: store.clone(),
        providers,
        tools: builtin_registry(&BuiltinOptions::default()),
        permissions: PermissionConfig::default(),
        config: EngineConfig {
            data_dir: dir.to_owned(),
            ..EngineConfig::default()
        },
        clock: Arc::new(SystemClock),
    });
    Ok((hub, store))
}

/// A stand-in for the Slack Web API calls the adapter makes; counts posted messages.
fn fake_slack(posts: Arc<AtomicUsize>) -> Router {
    let ok = |extra: serde_json::Value| {
        let mut body = json!({"ok": true});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        axum::Json(body)
    };
    let message = ok(json!({"channel": "C1", "ts": "1700000000.0001"}));
    let update = message.clone();
    let auth = ok(json!({"team_id": "TBENCH", "user_id": "UBOT", "bot_id": "BBOT"}));
    let ephemeral = ok(json!({"message_ts": "1700000000.0009"}));
    Router::new()
        .route(
            "/chat.postMessage",
            post(move || {
                posts.fetch_add(1, Ordering::Relaxed);
                async move { message }
            }),
        )
        .route("/chat.update", post(move || async move { update }))
        .route("/auth.test", post(move || async move { auth }))
        .route(
            "/chat.postEphemeral",
            post(move || async move { ephemeral }),
        )
}

/// Serves `app` on a fresh loopback port until `token` is cancelled.
async fn serve(app: Router, token: CancellationToken) -> Result<SocketAddr, StartupError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(StartupError::Serve)?;
    let addr = listener.local_addr().map_err(StartupError::Serve)?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(token.cancelled_owned())
            .await;
    });
    Ok(addr)
}

/// Runs the client process against `addr`, reading this process's CPU time around it.
async fn timed_client(addr: SocketAddr, args: &WebhooksArgs) -> Result<Run, StartupError> {
    let exe = std::env::current_exe()
        .map_err(|e| StartupError::Bench(format!("cannot find the workmate binary: {e}")))?;
    let (requests, concurrency) = (args.requests, args.concurrency);
    let before = cpu_time();
    let output = tokio::task::spawn_blocking(move || run_child(exe, addr, requests, concurrency))
        .await
        .map_err(|e| StartupError::Bench(format!("the client runner failed: {e}")))??;
    let after = cpu_time();
    let mut run = parse(&output)?;
    run.cpu = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    Ok(run)
}

fn run_child(
    exe: PathBuf,
    addr: SocketAddr,
    requests: usize,
    concurrency: usize,
) -> Result<String, StartupError> {
    let failed = |e: std::io::Error| StartupError::Bench(format!("the bench client failed: {e}"));
    let mut child = Command::new(exe)
        .args([
            "bench-client",
            "--addr",
            &addr.to_string(),
            "--secret",
            SECRET,
        ])
        .args(["--requests", &requests.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    loop {
        if child.try_wait().map_err(failed)?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(StartupError::Bench(format!(
                "the bench client took longer than {} s",
                CLIENT_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().map_err(failed)?;
    if !output.status.success() {
        return Err(StartupError::Bench(format!(
            "the bench client exited with {}",
            output.status
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn parse(line: &str) -> Result<Run, StartupError> {
    let value = |key: &str| -> Result<u64, StartupError> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StartupError::Bench(format!("the bench client printed {line:?}")))
    };
    let count = |key: &str| value(key).map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    Ok(Run {
        acked: count("acked")?,
        rejected: count("rejected")?,
        io_errors: count("io_errors")?,
        elapsed: Duration::from_nanos(value("elapsed_ns")?),
        p50: Duration::from_nanos(value("p50_ns")?),
        p99: Duration::from_nanos(value("p99_ns")?),
        cpu: None,
    })
}

/// Waits until every acknowledged event's turn card was posted, or posting stops for 2 s.
/// Returns the cards posted, the time taken and the process CPU time at the end.
async fn drain(posts: &AtomicUsize, acked: usize) -> (usize, Duration, Option<Duration>) {
    let started = Instant::now();
    let (mut last, mut since) = (posts.load(Ordering::Relaxed), Instant::now());
    while started.elapsed() < DRAIN_TIMEOUT {
        let now = posts.load(Ordering::Relaxed);
        if now >= acked {
            break;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_secs(2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (posts.load(Ordering::Relaxed), started.elapsed(), cpu_time())
}

/// This process's user plus system CPU time, from `/proc/self/stat` (10 ms resolution).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at field 3 (state);
    // utime and stime are fields 14 and 15.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SECOND,
    ))
}

fn micros_per(cpu: Option<Duration>, n: usize) -> String {
    cpu.map_or_else(
        || "n/a".to_owned(),
        |cpu| format!("{:.1}", cpu.as_secs_f64() * 1e6 / n.max(1) as f64),
    )
}

fn report(args: &WebhooksArgs, baseline: &Run, service: &Run, drained: Option<&Drained>) -> String {
    let row = |name: &str, run: &Run| {
        format!(
            "{name:<28} {:>6} {:>8} {:>10.0} {:>8.0} {:>8.0} {:>12}\n",
            run.acked,
            run.rejected + run.io_errors,
            run.per_second(),
            run.p50.as_secs_f64() * 1e6,
            run.p99.as_secs_f64() * 1e6,
            micros_per(run.cpu, args.requests),
        )
    };
    let ratio = service.per_second() / baseline.per_second().max(1e-9);
    let cpu_per = service
        .cpu
        .map(|c| c.as_secs_f64() * 1e6 / args.requests.max(1) as f64);
    let verdict = |met: bool| if met { "met" } else { "missed" };
    let mut out = format!(
        "Slack webhooks: {} signed app_mention events (each opens a new thread), concurrency {}, \
         from a second process over loopback\n\n\
         {:<28} {:>6} {:>8} {:>10} {:>8} {:>8} {:>12}\n",
        args.requests,
        args.concurrency,
        "route",
        "acked",
        "non-200",
        "req/s",
        "p50 µs",
        "p99 µs",
        "CPU µs/req",
    );
    out.push_str(&row("empty axum handler", baseline));
    out.push_str(&row("/v1/platforms/slack/events", service));
    out.push_str(&format!(
        "\nthroughput vs the empty handler: {ratio:.2}x   (target >= 0.50x: {})\n",
        verdict(ratio >= 0.5)
    ));
    out.push_str(&format!(
        "server CPU per event during the client run: {} µs   (target < 10 µs per verified, \
         deduped, persisted event: {})\n",
        micros_per(service.cpu, args.requests),
        cpu_per.map_or("n/a", |c| verdict(c < 10.0)),
    ));
    out.push_str(
        "  the ack path only verifies, decodes and queues; dedupe, persistence and the turns run \
         in the background\n  and overlap the client run, so this figure includes part of their \
         work. CPU is read from /proc/self/stat (10 ms ticks).\n",
    );
    if let Some(Drained { posted, took, cpu }) = drained {
        let total = cpu.zip(service.cpu).map(|(w, s)| w + s);
        out.push_str(&format!(
            "background turns: {posted} of {} turn cards posted {:.1} s after the client ended; \
             server CPU per event including its turn: {} µs\n",
            service.acked,
            took.as_secs_f64(),
            micros_per(total, service.acked),
        ));
    }
    if service.rejected + service.io_errors > 0 {
        out.push_str(
            "non-200 answers on the events route are 503s: the Slack work queue (1,024 jobs) \
             was full.\n",
        );
    }
    out
}

/// A directory removed when dropped (the bench's SQLite file lives there).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, StartupError> {
        let path = std::env::temp_dir().join(format!("workmate-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).map_err(|e| StartupError::DataDir {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Ok(Self(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
