//! The losses the approver and the platform would notice: a prompt answered (or approved)
//! whose call never ran, and a Slack delivery acknowledged (200) that had no effect.

use workmate_protocol::{Resolution, TenantId, ToolStatus};
use workmate_store::{InboxFilter, InboxItemState, IntakeKey, IntakeState};

use super::count::{Log, Sources, Tally};
use super::db::{Db, slack_tenant};
use super::load::Load;

/// The session's prompts: an approved call must have run (or been cut) exactly once; a prompt
/// the approver answered must not still wait.
pub(super) fn prompts(
    sources: &Sources<'_>,
    tenant: &TenantId,
    s: &str,
    log: &Log,
    tally: &mut Tally,
) {
    let (db, load) = (sources.db, sources.load);
    let filter = InboxFilter {
        session: Some(s.to_owned().into()),
        ..InboxFilter::default()
    };
    let items = db
        .block_on(db.store.inbox().list(tenant, &filter, 10_000))
        .unwrap_or_default();
    for item in items {
        let id = item.id.to_string();
        let answered = load
            .answered
            .get(&id)
            .map(|r| format!("answered over HTTP on replica-{r}"));
        let clicked = load
            .clicks
            .get(&id)
            .map(|c| format!("clicked ({}) on replica-{}", c.trigger, c.replica));
        let by_us = answered.or(clicked);
        if item.state == InboxItemState::Pending {
            tally.waiting += 1;
            match &by_us {
                Some(how) => {
                    tally.lost_approvals += 1;
                    tally.flag(
                        &id,
                        format!("session {s}: prompt {id} {how}, still waiting"),
                    );
                }
                None => {
                    // The approver answers what it sees: HTTP prompts in the inbox, Slack ones
                    // on their cards.
                    let announced = log.parked.contains(&id);
                    let carded = sources.fake.button(&id).is_some();
                    tally.flag(
                        &id,
                        format!(
                            "session {s}: prompt {id} ({:?}, made at {} ms) never answered: \
                             announced in the session's log (inbox_item_parked) {announced}, \
                             shown on a Slack card {carded}",
                            item.title, item.created_at_ms
                        ),
                    );
                }
            }
            continue;
        }
        if !matches!(item.resolution, Some(Resolution::Approval { .. })) {
            continue;
        }
        tally.approvals += 1;
        let call = item
            .tool_call_id
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let outcome = log.finished.get(&call).map(Vec::as_slice);
        if !matches!(outcome, Some([status]) if *status != ToolStatus::Denied) {
            tally.lost_approvals += 1;
            let what = format!(
                "session {s}: prompt {id} approved ({by_us:?}), call {call} finished {outcome:?}"
            );
            tally.flag(&id, what);
        }
    }
}

/// Every Slack event and click a replica answered 200 to must have had its effect: the event
/// its thread's user message, the click a delivery that was not given up.
pub(super) fn deliveries(db: &Db, load: &Load, tally: &mut Tally) {
    let tenant = slack_tenant();
    let row = |id: &str| {
        let key = IntakeKey {
            tenant_id: tenant.clone(),
            platform: "slack".into(),
            delivery_id: id.to_owned(),
        };
        db.block_on(db.store.intake().get(&key)).ok().flatten()
    };
    for m in load.mentions.iter().filter(|m| m.acked_by.is_some()) {
        tally.acked_events += 1;
        let session = db.thread_session(&m.ts);
        let stored = session
            .as_ref()
            .is_some_and(|s| db.has_user_message(&tenant, s.id.as_str(), &m.text));
        let state = row(&m.event_id).map(|d| (d.state, d.attempts, d.error));
        if !stored || matches!(state, Some((IntakeState::Failed, ..))) {
            tally.lost_events += 1;
            let what = format!(
                "event {} (thread {}) acknowledged by replica-{}, delivered again to {:?}: \
                 session {:?}, message stored {stored}, intake row {state:?}",
                m.event_id,
                m.ts,
                m.acked_by.unwrap_or_default(),
                m.redelivered,
                session.map(|s| s.id)
            );
            tally.flag(&m.event_id, what);
        }
    }
    for (item, click) in &load.clicks {
        tally.acked_events += 1;
        let state = row(&click.trigger).map(|d| (d.state, d.attempts, d.error));
        if !matches!(state, Some((IntakeState::Done, ..))) {
            tally.lost_events += 1;
            tally.flag(
                &click.trigger,
                format!(
                    "click {} on prompt {item} acknowledged by replica-{}: intake row {state:?}",
                    click.trigger, click.replica
                ),
            );
        }
    }
}
