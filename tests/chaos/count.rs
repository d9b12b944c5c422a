//! What the store and the counting files say once everything is quiet: every session of both
//! tenants, every prompt, every acknowledged Slack delivery and every automation's runs. Each
//! loss or duplicate found is also described in `evidence`, by session, item or event.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use workmate_protocol::{EventKind, Message, NoticeKind, TenantId, ToolStatus};
use workmate_store::RunStatus;

use super::db::{Db, api_tenant, slack_tenant, user_text};
use super::load::Load;
use super::lost::{deliveries, prompts};
use super::slack::FakeSlack;

/// The text of the message a run adopted after a restart is told to carry on with.
const CARRY_ON: &str = "⏰ The service restarted during this scheduled run.";

#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) sessions: usize,
    pub(crate) turns: usize,
    /// `turn_end`.
    pub(crate) completed: usize,
    /// `error` with the restart notice (cut twice, or too long ago).
    pub(crate) restart_errors: usize,
    pub(crate) other_errors: usize,
    pub(crate) interrupted: usize,
    /// Turns without a terminal event.
    pub(crate) open_turns: usize,
    /// `restarted` notices: turns a kill cut, taken up again.
    pub(crate) recovered: usize,
    pub(crate) tool_calls: usize,
    /// Calls a kill cut while they ran (their outcome unknown).
    pub(crate) cut_calls: usize,
    pub(crate) runs_of_tools: usize,
    /// User messages stored twice, turns ended twice, calls stored twice, calls run twice.
    pub(crate) duplicates: usize,
    /// Calls without exactly one result.
    pub(crate) orphaned: usize,
    pub(crate) approvals: usize,
    pub(crate) lost_approvals: usize,
    /// Prompts nobody answered (the approver answers every prompt it can see).
    pub(crate) waiting: usize,
    pub(crate) acked_events: usize,
    pub(crate) lost_events: usize,
    pub(crate) automation_runs: usize,
    pub(crate) double_fires: usize,
    /// One-shot automations without a run, and runs still going.
    pub(crate) missed_fires: usize,
    pub(crate) evidence: Vec<String>,
    /// Sessions, items and events named in `evidence`, to pick their log lines.
    pub(crate) suspects: Vec<String>,
}

impl Tally {
    pub(super) fn flag(&mut self, suspect: &str, what: String) {
        self.suspects.push(suspect.to_owned());
        self.evidence.push(what);
    }
}

/// Where the counts come from: the database, what the driver did and saw, and the replicas'
/// session folders.
pub(crate) struct Sources<'a> {
    pub(crate) db: &'a Db,
    pub(crate) load: &'a Load,
    pub(crate) fake: &'a FakeSlack,
    pub(crate) workspaces: &'a [PathBuf],
}

/// What a session's log says of its calls and prompts.
pub(super) struct Log {
    /// Each call's `tool_finished` statuses.
    pub(super) finished: HashMap<String, Vec<ToolStatus>>,
    /// The prompts announced (`inbox_item_parked`).
    pub(super) parked: HashSet<String>,
}

pub(crate) fn count(sources: &Sources<'_>) -> Tally {
    let mut tally = Tally::default();
    for tenant in [api_tenant(), slack_tenant()] {
        for session in sources.db.sessions(&tenant) {
            sessions(sources, &tenant, &session.id, &mut tally);
        }
    }
    deliveries(sources.db, sources.load, &mut tally);
    automations(sources.db, &mut tally);
    tally
}

/// One session: its turns, messages, calls, runs of the counting command and prompts.
fn sessions(
    sources: &Sources<'_>,
    tenant: &TenantId,
    session: &workmate_protocol::SessionId,
    tally: &mut Tally,
) {
    let (db, workspaces) = (sources.db, sources.workspaces);
    let s = session.as_str();
    tally.sessions += 1;
    let events = db.events(tenant, session);
    let mut ends: BTreeMap<String, Vec<&EventKind>> = BTreeMap::new();
    let mut log = Log {
        finished: HashMap::new(),
        parked: HashSet::new(),
    };
    for event in &events {
        let turn = event
            .turn_id
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        match &event.kind {
            EventKind::TurnStart { .. } => {
                ends.entry(turn).or_default();
            }
            kind if kind.is_terminal() => ends.entry(turn).or_default().push(kind),
            EventKind::ToolFinished {
                tool_call_id,
                status,
                ..
            } => {
                log.finished
                    .entry(tool_call_id.to_string())
                    .or_default()
                    .push(*status);
            }
            EventKind::InboxItemParked { item_id, .. } => {
                log.parked.insert(item_id.to_string());
            }
            _ => {}
        }
    }
    for (turn, kinds) in &ends {
        tally.turns += 1;
        match kinds.as_slice() {
            [] => tally.flag(s, format!("session {s}: turn {turn} never ended")),
            [EventKind::TurnEnd { .. }] => tally.completed += 1,
            [EventKind::Error { error_type, .. }] if error_type == "restarted" => {
                tally.restart_errors += 1;
            }
            [EventKind::Error { error, .. }] => {
                tally.other_errors += 1;
                tally.flag(s, format!("session {s}: turn {turn} failed: {error}"));
            }
            [_] => tally.interrupted += 1,
            more => {
                tally.duplicates += 1;
                tally.flag(
                    s,
                    format!(
                        "session {s}: turn {turn} ended {} times: {more:?}",
                        more.len()
                    ),
                );
            }
        }
        tally.open_turns += usize::from(kinds.is_empty());
    }
    let history = db.history(tenant, session);
    let mut texts: HashMap<String, usize> = HashMap::new();
    let mut results: HashMap<String, usize> = HashMap::new();
    let mut calls: HashMap<String, usize> = HashMap::new();
    for message in &history {
        match message {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                tally.cut_calls += usize::from(content.contains("outcome unknown"));
                *results.entry(tool_call_id.to_string()).or_default() += 1;
            }
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    *calls.entry(call.id.to_string()).or_default() += 1;
                }
            }
            _ => {}
        }
        if let Message::Notice {
            kind: NoticeKind::Restarted,
            ..
        } = message
        {
            tally.recovered += 1;
        }
        if let Some(text) = user_text(message).filter(|t| !t.starts_with(CARRY_ON)) {
            *texts.entry(text).or_default() += 1;
        }
    }
    for (text, n) in texts.into_iter().filter(|(_, n)| *n > 1) {
        tally.duplicates += 1;
        tally.flag(
            s,
            format!("session {s}: user message {text:?} stored {n} times"),
        );
    }
    for (call, n) in &calls {
        tally.tool_calls += 1;
        if *n > 1 {
            tally.duplicates += 1;
            tally.flag(s, format!("session {s}: call {call} stored {n} times"));
        }
        let answers = results.get(call).copied().unwrap_or(0);
        if answers != 1 {
            tally.orphaned += 1;
            tally.flag(s, format!("session {s}: call {call} has {answers} results"));
        }
    }
    // The counting command appends its marker in the folder of the replica that ran it.
    let mut markers: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (replica, base) in workspaces.iter().enumerate() {
        let file = workmate_tools::session_workspace(base, tenant, session).join("count.txt");
        for line in std::fs::read_to_string(file).unwrap_or_default().lines() {
            markers.entry(line.to_owned()).or_default().push(replica);
            tally.runs_of_tools += 1;
        }
    }
    for (marker, replicas) in markers.into_iter().filter(|(_, r)| r.len() > 1) {
        tally.duplicates += 1;
        tally.flag(
            s,
            format!(
                "session {s}: call {marker} ran {} times, on replicas {replicas:?}",
                replicas.len()
            ),
        );
    }
    prompts(sources, tenant, s, &log, tally);
}

/// A one-shot automation runs once; a cron one at most once per minute.
fn automations(db: &Db, tally: &mut Tally) {
    let tenant = api_tenant();
    let all = db
        .block_on(db.store.automations().list(&tenant, 10_000))
        .unwrap_or_default();
    for automation in all {
        let id = automation.id.to_string();
        let runs: Vec<_> = db
            .runs(&tenant, &id)
            .into_iter()
            .filter(|r| r.status != RunStatus::Skipped)
            .collect();
        tally.automation_runs += runs.len();
        let one_shot = automation.schedule.get("fire_at").is_some();
        let mut per_minute: BTreeMap<i64, usize> = BTreeMap::new();
        for run in &runs {
            *per_minute.entry(run.started_at_ms / 60_000).or_default() += 1;
            if run.status == RunStatus::Running {
                tally.missed_fires += 1;
                tally.flag(&id, format!("automation {id}: run {} still going", run.id));
            }
        }
        let runs_list = || {
            runs.iter()
                .map(|r| (r.id.to_string(), r.trigger, r.started_at_ms))
                .collect::<Vec<_>>()
        };
        if one_shot && runs.len() > 1 || per_minute.values().any(|&n| n > 1) {
            tally.double_fires += 1;
            tally.flag(
                &id,
                format!(
                    "automation {id} ({}): runs {:?}",
                    automation.schedule,
                    runs_list()
                ),
            );
        }
        if one_shot && runs.is_empty() {
            tally.missed_fires += 1;
            tally.flag(
                &id,
                format!("automation {id} ({}) never fired", automation.schedule),
            );
        }
    }
}
