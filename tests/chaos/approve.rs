//! The approver: answers every prompt once, a random moment (up to [`THINK_MS`]) after it
//! first saw it, so prompts stay parked across kills. HTTP prompts are answered through the
//! inbox API of one replica, seen through another; Slack prompts by clicking the button their
//! card showed, sent to any replica. A prompt whose answer was taken (200) is never answered
//! again, so an answer that is lost stays visible as a prompt still waiting.

use std::time::Duration;

use serde_json::json;

use super::Dice;
use super::cluster::Cluster;
use super::db::{Db, slack_tenant};
use super::load::{Click, Load, call, pick};
use super::slack::{FakeSlack, click, deliver};

/// The longest the approver takes to answer a prompt.
const THINK_MS: u64 = 2_500;

impl Load {
    /// Whether the prompt `id`, seen now, is due to be answered.
    fn due(&mut self, id: &str, dice: &mut Dice, now: Duration) -> bool {
        let at = *self
            .answer_at
            .entry(id.to_owned())
            .or_insert_with(|| now + Duration::from_millis(dice.below(THINK_MS)));
        now >= at
    }

    /// Answers the prompts that are due.
    pub(crate) fn approve(
        &mut self,
        cluster: &Cluster,
        fake: &FakeSlack,
        db: &Db,
        dice: &mut Dice,
        now: Duration,
    ) {
        if let Some(r) = pick(cluster, dice, None)
            && let (200, items) = call(cluster, r, "GET", "/v1/inbox?state=pending", None)
        {
            let resolution = json!({"resolution": {"type": "approval", "choice": "once"}});
            for item in items["items"].as_array().into_iter().flatten() {
                let id = item["id"].as_str().unwrap_or_default().to_owned();
                if self.answered.contains_key(&id) || !self.due(&id, dice, now) {
                    continue;
                }
                let Some(r) = pick(cluster, dice, Some(r)) else {
                    break;
                };
                let path = format!("/v1/inbox/{id}/resolve");
                match call(cluster, r, "POST", &path, Some(&resolution)).0 {
                    200 => {
                        self.answered.insert(id, r);
                        self.last_ack = Some(r);
                    }
                    _ => self.refused += 1,
                }
            }
        }
        for item in db.pending(&slack_tenant()) {
            let id = item.id.to_string();
            if self.clicks.contains_key(&id) {
                continue;
            }
            // A person clicks what a card shows them.
            let Some(button) = fake.button(&id) else {
                continue;
            };
            if !self.due(&id, dice, now) {
                continue;
            }
            let Some(r) = pick(cluster, dice, None) else {
                continue;
            };
            let trigger = format!("{}.{}.chaos", self.clicks.len() + 1, dice.below(1 << 40));
            let addr = cluster.server(r).map(|s| s.addr);
            let body = click(&button, &trigger);
            if addr.and_then(|a| deliver(a, "interactions", &body)) == Some(200) {
                self.clicks.insert(
                    id,
                    Click {
                        trigger,
                        replica: r,
                    },
                );
                self.last_ack = Some(r);
            } else {
                self.refused += 1;
            }
        }
    }
}
