//! `workmate bench-client`: the load generator `workmate bench webhooks` runs in a second process.
//!
//! Invariant: the client shares nothing with the server but the loopback socket, so its CPU never
//! counts as the server's; each worker keeps one HTTP/1.1 keep-alive connection and times each
//! request from the first byte written to the last byte of the answer read.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::StartupError;

/// `workmate bench-client` (hidden): posts signed `app_mention` events and prints one line of
/// `key=value` figures.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ClientArgs {
    /// Where the events route listens.
    #[arg(long)]
    pub addr: SocketAddr,
    /// How many events to post.
    #[arg(long)]
    pub requests: usize,
    /// How many connections post at once.
    #[arg(long)]
    pub concurrency: usize,
    /// The Slack signing secret the server verifies with.
    #[arg(long)]
    pub secret: String,
    /// The number of the first event (so runs one after another post new events).
    #[arg(long, default_value_t = 0)]
    pub first: usize,
    /// Events per second in all, spread evenly; 0 posts as fast as the connections go.
    #[arg(long, default_value_t = 0)]
    pub rate: u32,
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    latencies_ns: Vec<u64>,
    ok: usize,
    rejected: usize,
    io_errors: usize,
    /// The first answer other than 200: its status and the start of its body.
    first_rejection: Option<String>,
}

/// Runs the client and returns `acked=… rejected=… io_errors=… elapsed_ns=… p50_ns=… p99_ns=…`,
/// then, if any answer was not 200, a line `first_rejection: <status> <body>`.
pub fn run(args: &ClientArgs) -> Result<String, StartupError> {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..args.concurrency.max(1))
            .map(|_| scope.spawn(|| worker(args, &next, started)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let elapsed = started.elapsed();
    let mut latencies: Vec<u64> = tallies
        .iter()
        .flat_map(|t| t.latencies_ns.iter().copied())
        .collect();
    latencies.sort_unstable();
    let at = |q: usize| {
        latencies
            .get((latencies.len() * q / 100).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    let sum = |f: fn(&Tally) -> usize| tallies.iter().map(f).sum::<usize>();
    let mut out = format!(
        "acked={} rejected={} io_errors={} elapsed_ns={} p50_ns={} p99_ns={}\n",
        sum(|t| t.ok),
        sum(|t| t.rejected),
        sum(|t| t.io_errors),
        elapsed.as_nanos(),
        at(50),
        at(99),
    );
    if let Some(first) = tallies.iter().find_map(|t| t.first_rejection.as_ref()) {
        out.push_str(&format!("first_rejection: {first}\n"));
    }
    Ok(out)
}

fn worker(args: &ClientArgs, next: &AtomicUsize, started: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut connection: Option<TcpStream> = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= args.requests {
            return tally;
        }
        if args.rate > 0 {
            // Event i is due i/rate seconds after the start; a late worker does not wait.
            let due = started + Duration::from_secs_f64(i as f64 / f64::from(args.rate));
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        let request = signed_request(args, args.first + i);
        // One retry on a fresh connection: the server may close an idle keep-alive.
        let mut outcome = None;
        for _ in 0..2 {
            let stream = match connection.take() {
                Some(stream) => stream,
                None => match connect(args.addr) {
                    Ok(stream) => stream,
                    Err(_) => continue,
                },
            };
            let started = Instant::now();
            if let Ok((status, keep, body)) = exchange(&stream, &request) {
                outcome = Some((status, started.elapsed(), body));
                if keep {
                    connection = Some(stream);
                }
                break;
            }
        }
        match outcome {
            Some((status, took, body)) => {
                tally
                    .latencies_ns
                    .push(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
                if status == 200 {
                    tally.ok += 1;
                } else {
                    tally.rejected += 1;
                    if tally.first_rejection.is_none() {
                        let body: String = body.chars().take(300).collect();
                        tally.first_rejection = Some(format!("{status} {}", body.trim()));
                    }
                }
            }
            None => tally.io_errors += 1,
        }
    }
}

fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    Ok(stream)
}

/// The `i`th event: a new thread each, so every event is a new session and a new turn.
fn signed_request(args: &ClientArgs, i: usize) -> Vec<u8> {
    let ts = format!("1700000000.{:06}", i % 1_000_000);
    let body = serde_json::json!({
        "type": "event_callback", "team_id": "TBENCH", "api_app_id": "A1",
        "event_id": format!("EvBench{i:07}"), "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> hi",
                  "ts": ts, "channel": "C1", "event_ts": ts}
    })
    .to_string();
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        .to_string();
    let signature = workmate_slack::sign(args.secret.as_bytes(), &timestamp, body.as_bytes());
    let mut request = format!(
        "POST /v1/platforms/slack/events HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
         x-slack-request-timestamp: {timestamp}\r\nx-slack-signature: {signature}\r\n\
         content-length: {}\r\n\r\n",
        args.addr,
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

/// Writes the request, reads one response; returns its status, whether the connection stays,
/// and its body (empty for a chunked one).
fn exchange(mut stream: &TcpStream, request: &[u8]) -> std::io::Result<(u16, bool, String)> {
    stream.write_all(request)?;
    let mut buffer = Vec::with_capacity(512);
    let mut chunk = [0_u8; 1024];
    let head_end = loop {
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(chunk.get(..read).unwrap_or_default());
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(buffer.get(..head_end).unwrap_or_default()).to_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or(std::io::ErrorKind::InvalidData)?;
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    if header("transfer-encoding:").is_some() {
        // Not needed for these answers; a chunked one ends the connection after it.
        return Ok((status, false, String::new()));
    }
    let length: usize = header("content-length:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(chunk.get(..read).unwrap_or_default());
    }
    let keep = header("connection:").is_none_or(|v| v != "close");
    let body = buffer.get(head_end..head_end + length).unwrap_or_default();
    Ok((status, keep, String::from_utf8_lossy(body).into_owned()))
}
