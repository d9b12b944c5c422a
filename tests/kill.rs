//! The kill test: 40 sessions, each asking five times for a tool that needs an approval (200
//! tool-using turns), while `workmate serve` is killed with SIGKILL at random moments and started
//! again on the same data. An approver answers every prompt as it appears, through whichever
//! process is up. At the end every turn must have ended (with its answer, or an error that says
//! why), every call must have run at most once and have exactly one result, and no approval may
//! be lost. The test prints its counts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use workmate_protocol::{EventKind, Resolution, SessionId, TenantId, ToolStatus, TurnId};
use workmate_store::{ConnectOptions, InboxFilter, Store};

use crate::crash::{TOKEN, call, pending, scripted, start};
use crate::support::{Server, http_request};

const SESSIONS: usize = 40;
const ROUNDS: usize = 5;
const KILLS: usize = 6;
/// The longest the whole run may take before the test gives up and reports what is stuck.
const DEADLINE: Duration = Duration::from_secs(240);

/// A model that, for each message, runs `sh count.sh <marker>` (the marker names the call) and
/// then streams its answer slowly, so kills land in every phase of a turn.
fn script(dir: &Path) -> Vec<(String, String)> {
    let turns: Vec<Value> = (0..ROUNDS * 2)
        .flat_map(|index| {
            let call = json!({"text": "Counting.", "chunk_delay_ms": 10, "tool_calls": [
                {"name": "run_shell", "arguments": {"command": format!("sh count.sh m{index}")}}]});
            let answer = json!({"text": "Counted, all of it, nothing left.", "chunk_delay_ms": 25});
            [call, answer]
        })
        .collect();
    scripted(
        dir,
        &json!({"conversations": [{"when": "*", "turns": turns}]}),
    )
}

/// A small deterministic generator, seeded from the clock (the seed is printed).
pub(crate) struct Dice(pub(crate) u64);

impl Dice {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// One session the driver talks to.
struct Talk {
    id: String,
    count_file: PathBuf,
    sent: usize,
    waiting: bool,
}

impl Talk {
    fn open(server: &Server, dir: &Path) -> Self {
        let (status, created) = call(server, "POST", "/v1/sessions", None);
        assert_eq!(status, 201, "{created}");
        let id = created["session_id"].as_str().unwrap().to_owned();
        let workspace = dir.join("workspaces/default").join(&id);
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(
            workspace.join("count.sh"),
            "echo \"$1\" >> count.txt\nsleep 0.2\n",
        )
        .unwrap();
        Self {
            id,
            count_file: workspace.join("count.txt"),
            sent: 0,
            waiting: false,
        }
    }

    fn history(&self, server: &Server) -> Option<Vec<Value>> {
        let path = format!("/v1/sessions/{}/messages", self.id);
        let (status, text) = http_request(server.addr, "GET", &path, Some(TOKEN), None).ok()?;
        let body: Value = serde_json::from_str(&text).ok()?;
        (status == 200).then(|| body["messages"].as_array().cloned())?
    }

    /// After a restart: a message the API accepted (202) just before the kill, before its turn
    /// stored it, is sent again under its key (which changes nothing: the command was stored
    /// before its 202); 1 if so.
    fn forgotten(&mut self, server: &Server) -> usize {
        let Some(history) = self.history(server) else {
            return 0;
        };
        if self.waiting && user_messages(&history) < self.sent {
            self.sent -= 1;
            self.waiting = false;
            return 1;
        }
        0
    }

    /// Sends the next message when the last turn is over; `false` once the process is down.
    fn step(&mut self, server: &Server) -> bool {
        let Some(history) = self.history(server) else {
            return false;
        };
        if self.waiting && (user_messages(&history) < self.sent || !turn_over(&history)) {
            return true;
        }
        self.waiting = false;
        if self.sent == ROUNDS {
            return true;
        }
        let message = json!({"type": "user_message", "text": format!("count {}", self.sent)});
        let path = format!("/v1/sessions/{}/commands", self.id);
        let body = message.to_string();
        // One key per message, the same for a message sent again: a command stored before its
        // answer was lost is not applied twice.
        let key = format!("{}-{}", self.id, self.sent);
        let bearer = format!("Bearer {TOKEN}");
        let headers = [
            ("Authorization", bearer.as_str()),
            ("Idempotency-Key", key.as_str()),
        ];
        match crate::support::http_send(server.addr, "POST", &path, &headers, Some(&body)) {
            Ok((202, _)) => {
                self.sent += 1;
                self.waiting = true;
                true
            }
            _ => false,
        }
    }
}

fn user_messages(history: &[Value]) -> usize {
    history.iter().filter(|m| m["role"] == "user").count()
}

/// Whether the history ends a turn: an answer without calls, or an error or stop notice.
fn turn_over(history: &[Value]) -> bool {
    history
        .last()
        .is_some_and(|last| match last["role"].as_str() {
            Some("assistant") => last["tool_calls"].as_array().is_none_or(Vec::is_empty),
            Some("notice") => matches!(last["kind"].as_str(), Some("error" | "interrupted")),
            _ => false,
        })
}

/// Answers every prompt waiting; how many answers were taken.
fn approve_all(server: &Server) -> usize {
    let Ok((200, text)) = http_request(
        server.addr,
        "GET",
        "/v1/inbox?state=pending",
        Some(TOKEN),
        None,
    ) else {
        return 0;
    };
    let items: Value = serde_json::from_str(&text).unwrap_or_default();
    let mut taken = 0;
    for item in items["items"].as_array().into_iter().flatten() {
        let body = json!({"resolution": {"type": "approval", "choice": "once"}}).to_string();
        let path = format!(
            "/v1/inbox/{}/resolve",
            item["id"].as_str().unwrap_or_default()
        );
        if let Ok((200, _)) = http_request(server.addr, "POST", &path, Some(TOKEN), Some(&body)) {
            taken += 1;
        }
    }
    taken
}

/// The turns a freshly started process took up, by how (from its metrics).
pub(crate) fn recovered_at_start(server: &Server, into: &mut BTreeMap<String, u64>) {
    let Ok((200, text)) = http_request(server.addr, "GET", "/metrics", Some(TOKEN), None) else {
        return;
    };
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("workmate_turns_recovered_total{outcome=\"") else {
            continue;
        };
        if let Some((outcome, value)) = rest.split_once("\"} ")
            && let Ok(n) = value.trim().parse::<u64>()
        {
            *into.entry(outcome.to_owned()).or_default() += n;
        }
    }
}

/// What the store says after the run.
#[derive(Debug, Default)]
struct Counts {
    turns: usize,
    ended: usize,
    double_executions: usize,
    calls: usize,
    calls_without_one_result: usize,
    approvals: usize,
    lost_approvals: usize,
    still_waiting: usize,
    sessions_without_outcome: usize,
    recovered: usize,
}

async fn count(store: &Store, talks: &[Talk]) -> Counts {
    let tenant = TenantId::from("default");
    let mut counts = Counts::default();
    for talk in talks {
        let session = SessionId::from(talk.id.clone());
        let events = store
            .events()
            .list_after(&tenant, &session, 0, 100_000)
            .await
            .unwrap();
        let mut started: Vec<TurnId> = Vec::new();
        let mut ended: HashSet<TurnId> = HashSet::new();
        let mut finished: HashMap<String, Vec<ToolStatus>> = HashMap::new();
        for event in &events {
            let turn = event.turn_id.clone();
            match &event.kind {
                EventKind::TurnStart { .. } => started.extend(turn),
                kind if kind.is_terminal() => {
                    ended.extend(turn);
                }
                EventKind::ToolFinished {
                    tool_call_id,
                    status,
                    ..
                } => finished
                    .entry(tool_call_id.to_string())
                    .or_default()
                    .push(*status),
                _ => {}
            }
        }
        counts.turns += started.len();
        counts.ended += started.iter().filter(|t| ended.contains(*t)).count();
        let history = store.messages().list(&tenant, &session).await.unwrap();
        let mut results: HashMap<String, usize> = HashMap::new();
        for message in &history {
            if let workmate_protocol::Message::Tool { tool_call_id, .. } = message {
                *results.entry(tool_call_id.to_string()).or_default() += 1;
            }
        }
        for message in &history {
            if let workmate_protocol::Message::Assistant { tool_calls, .. } = message {
                for call in tool_calls {
                    counts.calls += 1;
                    if results.get(call.id.as_str()) != Some(&1) {
                        counts.calls_without_one_result += 1;
                    }
                }
            }
            if let workmate_protocol::Message::Notice {
                kind: workmate_protocol::NoticeKind::Restarted,
                ..
            } = message
            {
                counts.recovered += 1;
            }
        }
        let runs = std::fs::read_to_string(&talk.count_file).unwrap_or_default();
        let mut per_marker: BTreeMap<&str, usize> = BTreeMap::new();
        for line in runs.lines() {
            *per_marker.entry(line).or_default() += 1;
        }
        counts.double_executions += per_marker.values().filter(|&&n| n > 1).count();
        let filter = InboxFilter {
            session: Some(session.clone()),
            ..InboxFilter::default()
        };
        for item in store.inbox().list(&tenant, &filter, 1_000).await.unwrap() {
            let approved = matches!(item.resolution, Some(Resolution::Approval { .. }));
            if item.resolution.is_none() {
                counts.still_waiting += 1;
            }
            if !approved {
                continue;
            }
            counts.approvals += 1;
            let outcome = item
                .tool_call_id
                .as_ref()
                .and_then(|call| finished.get(call.as_str()));
            // An approved call that ended without running, or was denied, lost its approval.
            let lost = match outcome.map(Vec::as_slice) {
                Some([status]) => *status == ToolStatus::Denied,
                _ => true,
            };
            counts.lost_approvals += usize::from(lost);
        }
        let over = started.last().is_some_and(|t| ended.contains(t));
        counts.sessions_without_outcome += usize::from(!over || talk.sent < ROUNDS);
    }
    counts
}

/// What `read` finds in the SQLite store of the stopped server that ran in `dir`.
pub(crate) fn read_store<T>(dir: &Path, read: impl AsyncFnOnce(&Store) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}/data/workmate.db", dir.display());
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        let found = read(&store).await;
        store.close().await;
        found
    })
}

#[test]
#[allow(
    clippy::print_stderr,
    reason = "the kill test prints what the kills interrupted and what it found"
)]
fn sigkills_during_200_tool_turns_lose_and_repeat_nothing() {
    let began = Instant::now();
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut dice = Dice(seed);
    let dir = tempfile::tempdir().unwrap();
    let env = script(dir.path());
    let mut server = start(dir.path(), &env);
    let mut talks: Vec<Talk> = (0..SESSIONS)
        .map(|_| Talk::open(&server, dir.path()))
        .collect();

    let (mut kills, mut ticks, mut answers, mut resent) = (0, 0, 0, 0);
    let mut recovered = BTreeMap::new();
    // Sessions waiting for their turn to end at each kill.
    let mut in_flight = Vec::new();
    // Each kill comes once this many messages were sent, at a random moment after the tick
    // that sent them: while their turns run, park, run tools or stream.
    let mut kill_at: Vec<usize> = (0..KILLS).map(|_| 10 + dice.below(180) as usize).collect();
    kill_at.sort_unstable();
    loop {
        ticks += 1;
        for talk in &mut talks {
            talk.step(&server);
        }
        answers += approve_all(&server);
        let done = talks.iter().all(|t| t.sent == ROUNDS && !t.waiting);
        if done && kills >= KILLS {
            break;
        }
        assert!(
            began.elapsed() < DEADLINE,
            "the run did not finish in {DEADLINE:?} (seed {seed}): {} sessions still waiting, \
             prompts pending: {}",
            talks.iter().filter(|t| t.waiting).count(),
            pending(&server).len()
        );
        let sent: usize = talks.iter().map(|t| t.sent).sum();
        if kills < KILLS && (sent >= kill_at[kills] || done) {
            std::thread::sleep(Duration::from_millis(dice.below(400)));
            in_flight.push(talks.iter().filter(|t| t.waiting).count());
            server.crash();
            kills += 1;
            server = start(dir.path(), &env);
            recovered_at_start(&server, &mut recovered);
            resent += talks
                .iter_mut()
                .map(|t| t.forgotten(&server))
                .sum::<usize>();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.terminate(Duration::from_secs(10)).code(), Some(0));

    let counts = read_store(dir.path(), async |store| count(store, &talks).await);
    eprintln!(
        "kill test (seed {seed}): {kills} SIGKILLs over {ticks} ticks, {:.1} s, sessions \
         mid-turn at each kill {in_flight:?}\n  turns {} (ended \
         {}), tool calls {}, approvals given {answers} (stored {}), messages sent again (accepted \
         but not yet stored when killed) {resent}\n  double executions {}, \
         calls without exactly one result {}, lost approvals {}, prompts left waiting {}, \
         sessions without an outcome {}\n  turns the kills cut, taken up at the next start: \
         {recovered:?} ({} answered again)",
        began.elapsed().as_secs_f64(),
        counts.turns,
        counts.ended,
        counts.calls,
        counts.approvals,
        counts.double_executions,
        counts.calls_without_one_result,
        counts.lost_approvals,
        counts.still_waiting,
        counts.sessions_without_outcome,
        counts.recovered,
    );
    assert!(kills >= 5);
    assert!(counts.turns >= SESSIONS * ROUNDS, "{counts:?}");
    assert!(counts.calls >= SESSIONS * ROUNDS, "{counts:?}");
    assert_eq!(counts.ended, counts.turns, "every turn ended: {counts:?}");
    assert_eq!(counts.double_executions, 0, "{counts:?}");
    assert_eq!(counts.calls_without_one_result, 0, "{counts:?}");
    assert_eq!(counts.lost_approvals, 0, "{counts:?}");
    assert_eq!(counts.still_waiting, 0, "{counts:?}");
    assert_eq!(counts.sessions_without_outcome, 0, "{counts:?}");
}
