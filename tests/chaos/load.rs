//! The scripted load: sessions over the HTTP API (one message each), Slack threads opened by
//! signed mentions (some delivered again, to another replica, after they were acknowledged),
//! and one-shot and cron automations (the approver is in `approve.rs`). Every request goes to a
//! random replica that is up; what is refused or unanswered is sent again later, as a client or
//! Slack would (a command under its `Idempotency-Key`).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::Dice;
use super::cluster::Cluster;
use super::db::{Db, api_tenant, slack_tenant};
use super::slack::{Mention, Sent};
use crate::crash::TOKEN;
use crate::support::http_request;

/// One HTTP session and its one message.
#[derive(Debug)]
pub(crate) struct Talk {
    due: Duration,
    pub(crate) text: String,
    pub(crate) session: Option<String>,
    /// The replica that accepted the message (202), until it is known stored or lost.
    pub(crate) accepted_by: Option<usize>,
    retry_at: Duration,
    pub(crate) done: bool,
}

/// One automation to create: a one-shot firing `fire_in` after its creation, or the cron one.
#[derive(Debug)]
pub(crate) struct Planned {
    due: Duration,
    fire_in: Option<Duration>,
    pub(crate) id: Option<String>,
    retry_at: Duration,
    pub(crate) done: bool,
}

/// A click the fake Slack acknowledged.
#[derive(Debug)]
pub(crate) struct Click {
    pub(crate) trigger: String,
    pub(crate) replica: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Load {
    pub(crate) talks: Vec<Talk>,
    pub(crate) mentions: Vec<Mention>,
    pub(crate) automations: Vec<Planned>,
    /// HTTP prompts answered 200, by item id: the replica that took the answer.
    pub(crate) answered: HashMap<String, usize>,
    /// Slack prompts whose click was acknowledged, by item id.
    pub(crate) clicks: HashMap<String, Click>,
    /// When the approver answers each prompt it has seen (a moment after it first saw it).
    pub(crate) answer_at: HashMap<String, Duration>,
    /// The replica that acknowledged something last (a kill aims there half the time).
    pub(crate) last_ack: Option<usize>,
    /// Messages accepted (202) by a replica killed before their turn stored them (never sent
    /// again: the command was stored before its 202).
    pub(crate) resent: usize,
    /// Requests refused or unanswered (a replica down, a session driven elsewhere…).
    pub(crate) refused: usize,
}

/// A random replica that is up, other than `not` when another one is.
pub(super) fn pick(cluster: &Cluster, dice: &mut Dice, not: Option<usize>) -> Option<usize> {
    let up = cluster.up();
    let others: Vec<usize> = up.iter().copied().filter(|&i| Some(i) != not).collect();
    let from = if others.is_empty() { up } else { others };
    (!from.is_empty()).then(|| from[dice.below(from.len() as u64) as usize])
}

/// `method path` with the admin token on replica `index`; status and JSON body.
pub(super) fn call(
    cluster: &Cluster,
    index: usize,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let Some(server) = cluster.server(index) else {
        return (0, Value::Null);
    };
    let body = body.map(Value::to_string);
    match http_request(server.addr, method, path, Some(TOKEN), body.as_deref()) {
        Ok((status, text)) => (status, serde_json::from_str(&text).unwrap_or(Value::Null)),
        Err(_) => (0, Value::Null),
    }
}

/// Sends a command as a careful client does: under an `Idempotency-Key`, the same for every
/// retry, so a retry of a command that was stored before its answer was lost changes nothing.
fn command(cluster: &Cluster, index: usize, path: &str, body: &Value, key: &str) -> u16 {
    let Some(server) = cluster.server(index) else {
        return 0;
    };
    let bearer = format!("Bearer {TOKEN}");
    let headers = [("Authorization", bearer.as_str()), ("Idempotency-Key", key)];
    crate::support::http_send(server.addr, "POST", path, &headers, Some(&body.to_string()))
        .map_or(0, |(status, _)| status)
}

impl Load {
    /// The plan: `talks` HTTP sessions and `mentions` Slack threads due at random moments of
    /// the first `span`, `one_shots` automations firing within it, and one cron automation.
    pub(crate) fn plan(dice: &mut Dice, run: &str, sizes: [usize; 3], span: Duration) -> Self {
        let [talks, mentions, one_shots] = sizes;
        let mut at =
            |within: Duration| Duration::from_millis(dice.below(within.as_millis() as u64));
        let mut load = Load::default();
        for i in 0..talks {
            load.talks.push(Talk {
                due: at(span),
                text: format!("chaos api {i} {run}"),
                session: None,
                accepted_by: None,
                retry_at: Duration::ZERO,
                done: false,
            });
        }
        for i in 0..mentions {
            let due = at(span);
            load.mentions.push(Mention::new(i, run, due));
        }
        let cron = Planned {
            due: Duration::ZERO,
            fire_in: None,
            id: None,
            retry_at: Duration::ZERO,
            done: false,
        };
        load.automations.push(cron);
        for _ in 0..one_shots {
            let due = at(span / 2);
            load.automations.push(Planned {
                due,
                fire_in: Some(Duration::from_secs(3) + at(span / 2)),
                id: None,
                retry_at: Duration::ZERO,
                done: false,
            });
        }
        load
    }

    /// Sends what is due at `now`.
    pub(crate) fn send(&mut self, cluster: &Cluster, dice: &mut Dice, now: Duration) {
        for talk in &mut self.talks {
            if talk.done || talk.accepted_by.is_some() || now < talk.due || now < talk.retry_at {
                continue;
            }
            let Some(r) = pick(cluster, dice, None) else {
                continue;
            };
            let Some(session) = talk.session.clone() else {
                match call(cluster, r, "POST", "/v1/sessions", None) {
                    (201, created) => {
                        talk.session = created["session_id"].as_str().map(str::to_owned);
                    }
                    _ => {
                        self.refused += 1;
                        talk.retry_at = now + Duration::from_millis(500);
                    }
                }
                continue;
            };
            let message = json!({"type": "user_message", "text": talk.text});
            let path = format!("/v1/sessions/{session}/commands");
            match command(cluster, r, &path, &message, &talk.text.replace(' ', "-")) {
                202 => {
                    talk.accepted_by = Some(r);
                    self.last_ack = Some(r);
                }
                _ => {
                    self.refused += 1;
                    talk.retry_at = now + Duration::from_secs(1);
                }
            }
        }
        for m in &mut self.mentions {
            match m.send(cluster, dice, now) {
                Sent::Acked(r) => self.last_ack = Some(r),
                Sent::Refused => self.refused += 1,
                Sent::Nothing => {}
            }
        }
        for (i, planned) in self.automations.iter_mut().enumerate() {
            if planned.id.is_some() || now < planned.due || now < planned.retry_at {
                continue;
            }
            let Some(r) = pick(cluster, dice, None) else {
                continue;
            };
            let mut body = json!({"title": format!("chaos {i}"),
                                  "instructions": format!("chaos automation {i}")});
            match planned.fire_in {
                Some(fire_in) => {
                    let at = chrono::Utc::now() + chrono::Duration::from_std(fire_in).unwrap();
                    body["fire_at"] = Value::from(at.to_rfc3339());
                }
                None => body["cron"] = Value::from("* * * * *"),
            }
            match call(cluster, r, "POST", "/v1/automations", Some(&body)) {
                (201, created) => planned.id = created["id"].as_str().map(str::to_owned),
                _ => {
                    self.refused += 1;
                    planned.retry_at = now + Duration::from_secs(1);
                }
            }
        }
    }

    /// After replica `killed` died: counts the messages it accepted whose turn had not stored
    /// them yet. They are not sent again: an accepted command is stored before its `202`, and
    /// the run checks that each one reaches its session once.
    pub(crate) fn after_kill(&mut self, killed: usize, db: &Db) {
        for talk in &self.talks {
            if talk.done || talk.accepted_by != Some(killed) {
                continue;
            }
            let session = talk.session.as_deref().unwrap_or_default();
            if !db.has_user_message(&api_tenant(), session, &talk.text) {
                self.resent += 1;
            }
        }
    }

    /// Marks what has finished: sessions whose turn ended, automations whose run ended.
    pub(crate) fn progress(&mut self, db: &Db) {
        for talk in self
            .talks
            .iter_mut()
            .filter(|t| !t.done && t.accepted_by.is_some())
        {
            let session = talk.session.clone().unwrap_or_default().into();
            talk.done = db.turn_over(&api_tenant(), &session);
        }
        for m in self
            .mentions
            .iter_mut()
            .filter(|m| !m.done && m.acked_by.is_some())
        {
            m.done = db
                .thread_session(&m.ts)
                .is_some_and(|s| db.turn_over(&slack_tenant(), &s.id));
        }
        for planned in self.automations.iter_mut().filter(|p| !p.done) {
            let Some(id) = &planned.id else { continue };
            let runs = db.runs(&api_tenant(), id);
            let ended = runs.iter().all(|r| r.finished_at_ms.is_some());
            // The cron automation is done when no run is going; a one-shot once its run ended.
            planned.done = ended && (planned.fire_in.is_none() || !runs.is_empty());
        }
    }

    /// Events delivered again after their first acknowledgement, and answered 200.
    pub(crate) fn redelivered(&self) -> usize {
        let all = self.mentions.iter().flat_map(|m| &m.redelivered);
        all.filter(|(_, status)| *status == 200).count()
    }

    /// Whether everything was sent and has finished.
    pub(crate) fn finished(&self) -> bool {
        self.talks.iter().all(|t| t.done)
            && self
                .mentions
                .iter()
                .all(|m| m.done && m.redeliver_at.is_none())
            && self.automations.iter().all(|p| p.done)
    }

    /// What has not finished, for a message.
    pub(crate) fn unfinished(&self) -> String {
        let talks: Vec<_> = self
            .talks
            .iter()
            .filter(|t| !t.done)
            .map(|t| &t.session)
            .collect();
        let mentions: Vec<_> = self
            .mentions
            .iter()
            .filter(|m| !m.done)
            .map(|m| &m.event_id)
            .collect();
        let automations: Vec<_> = self
            .automations
            .iter()
            .filter(|p| !p.done)
            .map(|p| &p.id)
            .collect();
        format!("HTTP sessions {talks:?}, Slack events {mentions:?}, automations {automations:?}")
    }

    /// Pauses the cron automation (so the end is quiet); whether a replica took the change.
    pub(crate) fn pause_cron(&mut self, cluster: &Cluster, dice: &mut Dice) -> bool {
        let Some(id) = self
            .automations
            .iter()
            .find(|p| p.fire_in.is_none())
            .and_then(|p| p.id.clone())
        else {
            return false;
        };
        let Some(r) = pick(cluster, dice, None) else {
            return false;
        };
        let path = format!("/v1/automations/{id}");
        let paused = call(cluster, r, "PATCH", &path, Some(&json!({"enabled": false}))).0 == 200;
        self.refused += usize::from(!paused);
        paused
    }
}
