//! The chaos test: three `workmate serve` replicas on one Postgres (and again on one MariaDB)
//! database, sharing one Redis, take a scripted load of tool-using turns that each wait for an
//! approval — sessions over the HTTP API, threads opened by signed Slack mentions (half of them
//! delivered again to another replica after they were acknowledged), one-shot and cron
//! automations — while every few seconds a random replica is killed with SIGKILL and started
//! again on the same folder and replica id. An approver answers every prompt once, through any
//! replica: HTTP prompts through the inbox API, Slack prompts by clicking their card's button.
//!
//! After the load, every replica is stopped and started again, and once all is quiet the test
//! reads the database and the counting files: turns completed, and no duplicate (a user message
//! stored twice, a turn ended twice, a call run twice), no orphaned tool call, no lost approval,
//! no lost acknowledged Slack delivery and no double automation fire. It prints its counts and
//! seed; `WORKMATE_TEST_CHAOS_SEED=<seed>` plays the same plan and kill schedule again.

mod approve;
mod cluster;
mod count;
mod db;
mod load;
mod lost;
mod slack;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cluster::{Cluster, SESSION_LEASE_MS, Shared};
use db::Db;
use load::Load;
use slack::FakeSlack;

use crate::support::fresh_database;

const REPLICAS: usize = 3;
/// HTTP sessions, Slack threads and one-shot automations (plus one cron automation).
const SIZES: [usize; 3] = [36, 36, 8];
/// How long the load is sent and replicas are killed.
const LOAD: Duration = Duration::from_secs(55);
/// How long after the load everything may take to finish.
const DRAIN: Duration = Duration::from_secs(45);
/// How long after the final restart everything may take to be quiet.
const SETTLE: Duration = Duration::from_secs(20);
/// Time between one replica's restart and the next kill, at least and at most.
const BETWEEN_KILLS: (u64, u64) = (2_500, 5_000);
/// How long a killed replica stays down, at most.
const DOWN_MS: u64 = 2_500;

/// xorshift64*: a small seeded generator, so a failing plan can be played again.
pub(crate) struct Dice(u64);

impl Dice {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n.max(1)
    }
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    fn on_postgres_three_replicas_survive_random_kills() {
        three_replicas_survive_random_kills("WORKMATE_TEST_POSTGRES_URL");
    }
}

workmate_test_support::needs! { [mysql, redis]
    #[test]
    fn on_mariadb_three_replicas_survive_random_kills() {
        three_replicas_survive_random_kills("WORKMATE_TEST_MYSQL_URL");
    }
}

/// The seed of this run: `WORKMATE_TEST_CHAOS_SEED`, or the clock.
fn seed() -> u64 {
    std::env::var("WORKMATE_TEST_CHAOS_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
            now.as_nanos() as u64
        })
}

#[allow(
    clippy::print_stderr,
    reason = "the chaos test prints its seed, its kills and what it counted"
)]
fn three_replicas_survive_random_kills(variable: &str) {
    let redis = workmate_test_support::Backend::Redis.url();
    let database = fresh_database(variable);
    let seed = seed();
    eprintln!("{variable}: chaos seed {seed}");
    let mut dice = Dice::new(seed);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = FakeSlack::start(&runtime);
    let prefix = format!("wmtest:chaos:{}", uuid::Uuid::new_v4().simple());
    let api = fake.uri();
    let shared = Shared {
        database: &database,
        redis: &redis,
        prefix: &prefix,
        slack_api: &api,
    };
    let began = Instant::now();
    let mut cluster = Cluster::start(REPLICAS, &shared);
    let db = Db::connect(runtime.handle().clone(), &database);
    let tag = format!("{:x}", seed % 0xff_ffff);
    let mut load = Load::plan(&mut dice, &tag, SIZES, LOAD - Duration::from_secs(12));

    // The load, and the kills.
    let started = Instant::now();
    let mut kills: Vec<(f64, usize)> = Vec::new();
    // Turns open anywhere at each kill.
    let mut open_at_kill: Vec<usize> = Vec::new();
    let mut next_kill = started + Duration::from_millis(2_000 + dice.below(3_000));
    let mut down: Option<(usize, Instant)> = None;
    let mut cron_paused = false;
    let mut tick = 0_u64;
    loop {
        let now = started.elapsed();
        load.send(&cluster, &mut dice, now);
        if tick.is_multiple_of(3) {
            load.approve(&cluster, &fake, &db, &mut dice, now);
        }
        if tick.is_multiple_of(10) {
            load.progress(&db);
        }
        if now < LOAD && down.is_none() && Instant::now() >= next_kill {
            let up = cluster.up();
            let victim = match load.last_ack {
                Some(last) if dice.below(2) == 0 && up.contains(&last) => last,
                _ => up[dice.below(up.len() as u64) as usize],
            };
            open_at_kill.push(db.open_turns());
            cluster.kill(victim);
            load.after_kill(victim, &db);
            kills.push((now.as_secs_f64(), victim));
            down = Some((
                victim,
                Instant::now() + Duration::from_millis(dice.below(DOWN_MS)),
            ));
        }
        if let Some((victim, at)) = down
            && Instant::now() >= at
        {
            cluster.restart(victim);
            down = None;
            let (least, most) = BETWEEN_KILLS;
            next_kill = Instant::now() + Duration::from_millis(least + dice.below(most - least));
        }
        if now >= LOAD && !cron_paused {
            cron_paused = load.pause_cron(&cluster, &mut dice);
        }
        if now >= LOAD && cron_paused && down.is_none() && load.finished() {
            break;
        }
        if now >= LOAD + DRAIN {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        tick += 1;
    }
    let load_secs = started.elapsed().as_secs_f64();
    let drained = load.finished();
    let stuck = load.unfinished();

    // Every replica stopped and started again; then wait for quiet.
    let mut exits = cluster.stop_all();
    cluster.start_all();
    let settling = Instant::now();
    let quiet = loop {
        load.approve(&cluster, &fake, &db, &mut dice, started.elapsed());
        load.progress(&db);
        let quiet = db.quiet();
        if (quiet.is_ok() && load.finished()) || settling.elapsed() >= SETTLE {
            break quiet;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    let settle_secs = settling.elapsed().as_secs_f64();
    exits.extend(cluster.stop_all());

    let workspaces = cluster.workspaces();
    let tally = count::count(&count::Sources {
        db: &db,
        load: &load,
        fake: &fake,
        workspaces: &workspaces,
    });
    db.close();
    let (posts, updates) = fake.traffic();
    let not_taken = fake.not_taken();
    let t = &tally;
    let lines = [
        format!(
            "{variable}: chaos (seed {seed}, {REPLICAS} replicas, session lease \
             {SESSION_LEASE_MS} ms): {:.1} s in all, load and drain {load_secs:.1} s, quiet \
             {settle_secs:.1} s after the final restart",
            began.elapsed().as_secs_f64()
        ),
        format!("kills (s, replica) {kills:?}; turns open at each kill {open_at_kill:?}"),
        format!(
            "turns completed {}, kills {}, duplicates {}, orphaned tool calls {}, lost \
             approvals {}, lost acknowledged events {}, double automation fires {}",
            t.completed,
            kills.len(),
            t.duplicates,
            t.orphaned,
            t.lost_approvals,
            t.lost_events,
            t.double_fires
        ),
        format!(
            "sessions {}, turns {}: ended with the restart error {}, with another error {}, \
             interrupted {}, never ended {}; restarted notices {}; turns taken up after a \
             kill {:?}",
            t.sessions,
            t.turns,
            t.restart_errors,
            t.other_errors,
            t.interrupted,
            t.open_turns,
            t.recovered,
            cluster.recovered
        ),
        format!(
            "tool calls {} (cut while running {}), counting runs {}, approvals {} (HTTP {}, \
             Slack clicks {}), prompts left waiting {}",
            t.tool_calls,
            t.cut_calls,
            t.runs_of_tools,
            t.approvals,
            load.answered.len(),
            load.clicks.len(),
            t.waiting
        ),
        format!(
            "acknowledged Slack deliveries {} (events delivered again {}), automation runs {} \
             (missed or unfinished {}), messages accepted but not yet in their session when \
             killed (not sent again) {}, requests refused or unanswered {}, Slack posts \
             {posts}, updates {updates}, \
             \"could not take\" notices {}",
            t.acked_events,
            load.redelivered(),
            t.automation_runs,
            t.missed_fires,
            load.resent,
            load.refused,
            not_taken.len()
        ),
    ];
    eprintln!("{}", lines.join("\n  "));
    let failed = !drained
        || quiet.is_err()
        || !tally.evidence.is_empty()
        || !not_taken.is_empty()
        || exits.iter().any(|code| *code != Some(0));
    if failed {
        let saved = cluster.save_logs(seed);
        eprintln!(
            "{variable}: FAILED (seed {seed}); every replica's log is in {}\n  drained \
             {drained} ({stuck})\n  quiet {quiet:?}\n  exit codes {exits:?}\n  \"could not \
             take\" notices {not_taken:?}\n  evidence:\n    {}\nlog lines about them:\n{}",
            saved.display(),
            tally.evidence.join("\n    "),
            cluster.lines_about(&tally.suspects, 60),
        );
    }
    assert!(kills.len() >= 5, "only {} kills", kills.len());
    assert!(
        drained,
        "{variable}: not everything finished (seed {seed}): {stuck}"
    );
    assert!(
        quiet.is_ok(),
        "{variable}: not quiet after the final restart (seed {seed}): {quiet:?}"
    );
    assert!(
        tally.completed >= SIZES[0] + SIZES[1],
        "{variable}: {tally:?}"
    );
    assert_eq!(
        tally.open_turns, 0,
        "{variable}: turns never ended (seed {seed})"
    );
    assert_eq!(
        tally.waiting, 0,
        "{variable}: prompts left waiting (seed {seed})"
    );
    assert_eq!(tally.duplicates, 0, "{variable}: duplicates (seed {seed})");
    assert_eq!(
        tally.orphaned, 0,
        "{variable}: orphaned tool calls (seed {seed})"
    );
    assert_eq!(
        tally.lost_approvals, 0,
        "{variable}: lost approvals (seed {seed})"
    );
    assert_eq!(
        tally.lost_events, 0,
        "{variable}: lost acknowledged events (seed {seed})"
    );
    assert_eq!(
        tally.double_fires, 0,
        "{variable}: double automation fires (seed {seed})"
    );
    assert_eq!(
        tally.missed_fires, 0,
        "{variable}: automations missed (seed {seed})"
    );
    assert!(
        not_taken.is_empty(),
        "{variable}: deliveries given up (seed {seed}): {not_taken:?}"
    );
    assert!(
        exits.iter().all(|code| *code == Some(0)),
        "{variable}: a replica did not stop cleanly (seed {seed}): {exits:?}"
    );
}
