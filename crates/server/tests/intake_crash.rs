//! The durable intake's acceptance test: `workmate serve` takes 200 signed Slack events (and, once
//! each, 200 Feishu and DingTalk ones) and is
//! killed: with SIGKILL right after the last acknowledgement, or at a kill point (see
//! `workmate-faults`) that hits one crash window every time: before a card is posted, after it
//! is posted but before its id is stored, mid-stream, after the answer's last delta. It is
//! started again on the same data, and the events it did not acknowledge are sent again, as
//! Slack would. Every event must run exactly one turn: one session, one user message and one
//! `turn_start`, and no intake row left unfinished. Every turn ends once, the ones the kill cut
//! too (taken up by the next start under their own turn), and every thread shows exactly one
//! card, in its final state: the answer or the restart notice, never still working.

mod dingtalk_fake;
mod feishu_fake;
mod slack_fake;

use std::time::Instant;

use serde_json::json;
use tokio::runtime::Runtime;
use workmate_protocol::{EventKind, Message, TenantId, UserContent};
use workmate_store::{ConnectOptions, SessionKey, Store};

use crate::backends::{Backend, on_every_backend};
use crate::crash::{PROCESS_PATIENCE, scripted, start, with_database};
use crate::support::Server;
use workmate_test_support::eventually_blocking;

use dingtalk_fake::DingTalkFake;
use feishu_fake::FeishuFake;
pub(crate) use slack_fake::{SlackFake, fake_slack, post, slack_env};

const EVENTS: usize = 200;
const SENDERS: usize = 8;
/// The scripted model's answer, streamed word by word.
const ANSWER: &str = "Done, all of it, nothing left.";

fn text_of(i: usize) -> String {
    format!("event number {i}")
}

/// A chat platform's side of a crash run: how its events reach workmate, and what its threads
/// show.
pub(crate) trait Fake: Sync {
    /// The platform, as the run's output names it.
    fn name(&self) -> &'static str;
    /// The server's settings that point the platform at the fake.
    fn settings(&self) -> Vec<(String, String)>;
    /// Sends event `i` (asking for [`text_of`]) as the platform does; the status, 0 when the
    /// connection broke.
    fn send(&self, server: &Server, i: usize) -> u16;
    /// Where event `i`'s session is.
    fn session(&self, i: usize) -> (TenantId, SessionKey);
    /// What each card shown for event `i` shows last, in the order they were shown.
    fn cards(&self, runtime: &Runtime, i: usize) -> Vec<String>;
}

/// Whether a turn card shows the turn over: the answer or the restart notice, and no Stop.
fn final_card(card: &str) -> bool {
    !card.contains(r#""Stop""#)
        && (card.contains(ANSWER) || card.contains(workmate_engine::RESTARTED_NOTICE))
}

/// What the database holds for one event's thread.
#[derive(Debug, Default)]
struct Outcome {
    sessions: usize,
    user_texts: Vec<String>,
    assistant_messages: usize,
    turn_starts: usize,
    turn_ends: usize,
}

impl Outcome {
    fn finished(&self) -> bool {
        self.turn_starts > 0 && self.turn_ends == self.turn_starts
    }

    /// The event reached the engine: its message is stored and its turn started.
    fn taken(&self) -> bool {
        self.turn_starts > 0 && !self.user_texts.is_empty()
    }
}

async fn outcome(store: &Store, fake: &dyn Fake, i: usize) -> Outcome {
    let (tenant, key) = fake.session(i);
    let tenant = &tenant;
    let Some(session) = store.sessions().find_by_key(tenant, &key).await.unwrap() else {
        return Outcome::default();
    };
    let history = store.messages().list(tenant, &session.id).await.unwrap();
    let events = store
        .events()
        .list_after(tenant, &session.id, 0, 10_000)
        .await
        .unwrap();
    Outcome {
        sessions: 1,
        user_texts: history
            .iter()
            .filter_map(|m| match m {
                Message::User {
                    content: UserContent::Text(t),
                    ..
                } => Some(t.clone()),
                Message::User { .. } => Some("(parts)".into()),
                _ => None,
            })
            .collect(),
        assistant_messages: history
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count(),
        turn_starts: events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::TurnStart { .. }))
            .count(),
        turn_ends: events.iter().filter(|e| e.kind.is_terminal()).count(),
    }
}

async fn open(url: &str) -> Store {
    Store::connect(url, ConnectOptions::default())
        .await
        .unwrap()
}

#[test]
fn a_turn_cut_mid_stream_ends_on_its_card_after_the_restart() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = SlackFake(runtime.block_on(fake_slack()));
    let dir = tempfile::tempdir().unwrap();
    // A long, slow answer: the kill lands while it streams into the posted card.
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"text": ANSWER, "chunk_delay_ms": 400}]}]});
    let env = slack_env(dir.path(), &script, None, &fake.0);
    let server = start(dir.path(), &env);
    assert_eq!(post(&server, 0), 200);
    let last = |i| fake.cards(&runtime, i).pop().unwrap_or_default();
    eventually_blocking("the turn card streaming", PROCESS_PATIENCE, || {
        last(0).contains("Done,").then_some(())
    });
    server.crash();
    let streamed = last(0);
    assert!(
        !streamed.contains(ANSWER),
        "cut before the answer was whole: {streamed}"
    );
    assert!(
        streamed.contains(r#""Stop""#),
        "the card was working: {streamed}"
    );

    let server = start(dir.path(), &env);
    eventually_blocking(
        "the card to end with the answer or the restart notice",
        PROCESS_PATIENCE,
        || final_card(&last(0)).then_some(()),
    );
    assert_eq!(fake.cards(&runtime, 0).len(), 1, "one card");
    assert_eq!(
        server.terminate(std::time::Duration::from_secs(10)).code(),
        Some(0)
    );
}

on_every_backend!(every_acknowledged_slack_event_runs_exactly_one_turn_after_a_sigkill);

fn every_acknowledged_slack_event_runs_exactly_one_turn_after_a_sigkill(backend: Backend) {
    let database = backend.database();
    let runtime = runtime();
    let fake = SlackFake(runtime.block_on(fake_slack()));
    crash_run(
        &runtime,
        &fake,
        &format!("{backend:?}"),
        database.as_deref(),
        None,
    );
}

/// The crash windows a kill point hits: each one's `#n` makes the process die the n-th time it
/// gets there, while many turns run.
const KILL_POINTS: [&str; 4] = [
    "card.posting#40",
    "card.posted#40",
    "model.delta#300",
    "turn.answered#40",
];

/// One run per crash window, on SQLite.
#[test]
fn every_slack_thread_shows_one_final_card_whatever_the_kill_point() {
    let runtime = runtime();
    for point in KILL_POINTS {
        let fake = SlackFake(runtime.block_on(fake_slack()));
        crash_run(&runtime, &fake, "Sqlite", None, Some(point));
    }
}

/// The same on Feishu, once: a kill after a card is posted but before its id is stored.
#[test]
fn every_feishu_thread_shows_one_final_card_after_a_kill() {
    let runtime = runtime();
    let fake = runtime.block_on(FeishuFake::start());
    crash_run(&runtime, &fake, "Sqlite", None, Some("card.posted#40"));
}

/// The same on DingTalk, once: a kill after a card is posted but before its id is stored.
#[test]
fn every_dingtalk_chat_shows_one_final_card_after_a_kill() {
    let runtime = runtime();
    let fake = runtime.block_on(DingTalkFake::start());
    crash_run(&runtime, &fake, "Sqlite", None, Some("card.posted#40"));
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Sends [`EVENTS`] events from [`SENDERS`] threads; the ones acknowledged, sorted.
fn send_all(fake: &dyn Fake, server: &Server, events: &[usize]) -> Vec<usize> {
    let mut acked: Vec<usize> = std::thread::scope(|scope| {
        let senders: Vec<_> = (0..SENDERS)
            .map(|first| {
                scope.spawn(move || {
                    events
                        .iter()
                        .copied()
                        .skip(first)
                        .step_by(SENDERS)
                        .filter(|&i| fake.send(server, i) == 200)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        senders
            .into_iter()
            .flat_map(|s| s.join().unwrap())
            .collect()
    });
    acked.sort_unstable();
    acked
}

/// Sends the events to a server that is killed (right after the last acknowledgement, or at
/// `kill_at`), starts it again, sends again what it did not acknowledge, and checks every
/// thread. Prints what the kill cut.
#[allow(
    clippy::print_stderr,
    reason = "the test output documents how much work the kill interrupted"
)]
fn crash_run(
    runtime: &Runtime,
    fake: &dyn Fake,
    name: &str,
    database: Option<&str>,
    kill_at: Option<&str>,
) {
    let began = Instant::now();
    let name = format!("{} on {name}", fake.name());
    let dir = tempfile::tempdir().unwrap();
    // Several streamed words with a pause between them, so the kill lands while turns run.
    let script = json!({"conversations": [{"when": "*", "turns": [
        {"text": ANSWER, "chunk_delay_ms": 15}]}]});
    let url = Backend::store_url(database, dir.path());
    let mut env = with_database(scripted(dir.path(), &script), database);
    env.extend(fake.settings());
    let mut armed = env.clone();
    if let Some(point) = kill_at {
        armed.push((workmate_faults::ENV.into(), point.into()));
    }
    let server = start(dir.path(), &armed);
    let all: Vec<usize> = (0..EVENTS).collect();
    let acked = send_all(fake, &server, &all);
    let log = server.log_text();
    match kill_at {
        None => {
            server.crash();
            assert_eq!(acked.len(), EVENTS, "every event acknowledged: {log}");
        }
        Some(point) => assert!(!server.died().success(), "killed at {point}"),
    }

    let (done_before, cut) = runtime.block_on(async {
        let store = open(&url).await;
        let mut done = 0;
        let mut cut = Vec::new();
        for i in 0..EVENTS {
            let found = outcome(&store, fake, i).await;
            done += usize::from(found.finished());
            if found.turn_starts > 0 && !found.finished() {
                cut.push(i);
            }
        }
        store.close().await;
        (done, cut)
    });
    let started_before = done_before + cut.len();

    let server = start(dir.path(), &env);
    // Slack sends again what was not acknowledged.
    let missing: Vec<usize> = all.iter().copied().filter(|i| !acked.contains(i)).collect();
    let resent = send_all(fake, &server, &missing);
    assert_eq!(
        resent, missing,
        "every event acknowledged after the restart"
    );
    let store = runtime.block_on(open(&url));
    // What was still unfinished at the last look, so a timeout names the events.
    let mut waiting = Vec::new();
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eventually_blocking("every event's turn", PROCESS_PATIENCE, || {
            runtime.block_on(async {
                let mut outcomes = Vec::with_capacity(EVENTS);
                waiting.clear();
                for i in 0..EVENTS {
                    let found = outcome(&store, fake, i).await;
                    if !(found.taken() && found.finished()) {
                        waiting.push((i, found));
                        continue;
                    }
                    outcomes.push((i, found));
                }
                let drained = store.intake().unfinished().await.unwrap() == 0;
                (waiting.is_empty() && drained).then_some(outcomes)
            })
        })
    }));
    let Ok(outcomes) = waited else {
        // Whether anything also ran twice or went missing, besides the turns left open.
        let doubled = runtime.block_on(async {
            let mut doubled = Vec::new();
            for i in 0..EVENTS {
                let found = outcome(&store, fake, i).await;
                if found.user_texts.len() != 1 || found.turn_starts != 1 {
                    doubled.push((i, found));
                }
            }
            doubled
        });
        let unfinished = runtime.block_on(store.intake().unfinished()).unwrap_or(0);
        panic!(
            "{name} {kill_at:?}: {} of {EVENTS} events never ran their turn (done before the \
             kill: {done_before}, started: {started_before}; intake rows unfinished: \
             {unfinished}; events without exactly one message and one turn_start: \
             {doubled:#?}); first ones: {:#?}",
            waiting.len(),
            &waiting[..waiting.len().min(3)]
        );
    };
    for (i, found) in &outcomes {
        assert_eq!(found.sessions, 1, "event {i}: {found:?}");
        assert_eq!(found.user_texts, [text_of(*i)], "event {i}: {found:?}");
        assert_eq!(found.turn_starts, 1, "event {i} ran one turn: {found:?}");
        assert_eq!(found.turn_ends, 1, "event {i}: {found:?}");
        if cut.contains(i) {
            assert!(found.assistant_messages <= 1, "event {i}: {found:?}");
        } else {
            assert_eq!(found.assistant_messages, 1, "event {i}: {found:?}");
        }
    }
    let sessions = runtime
        .block_on(store.sessions().list(&fake.session(0).0, 10_000))
        .unwrap();
    assert_eq!(sessions.len(), EVENTS, "one session per event");
    // Every thread shows one card, in its final state (card updates trail the stored events by
    // the coalescer's pause).
    let (mut answered, mut noticed) = (0, 0);
    for i in 0..EVENTS {
        let what = format!(
            "{name} {kill_at:?}: event {i}'s one card to show the answer or the restart notice"
        );
        let cards = eventually_blocking(&what, PROCESS_PATIENCE, || {
            let cards = fake.cards(runtime, i);
            (cards.len() > 1 || cards.first().is_some_and(|c| final_card(c))).then_some(cards)
        });
        assert_eq!(
            cards.len(),
            1,
            "{name} {kill_at:?}: event {i} shows two cards: {cards:#?}"
        );
        if cards[0].contains(ANSWER) {
            answered += 1;
        } else {
            noticed += 1;
        }
    }
    runtime.block_on(store.close());
    assert_eq!(
        server.terminate(std::time::Duration::from_secs(10)).code(),
        Some(0)
    );
    eprintln!(
        "intake crash on {name}, killed {}: {} acknowledged before the kill, {done_before} done \
         before it, {} cut mid-turn by it, {} run after the restart; {answered} threads show the \
         answer, {noticed} the restart notice, none two cards; {:.1} s",
        kill_at.unwrap_or("after the last acknowledgement"),
        acked.len(),
        cut.len(),
        EVENTS - started_before,
        began.elapsed().as_secs_f64()
    );
}
