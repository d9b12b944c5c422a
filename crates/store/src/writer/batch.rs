//! Writing a batch of steps: many sessions' steps in one transaction.
//!
//! Invariants: a step is stored whole or not at all; a step is stored only if its session's
//! stored counters equal the step's `base` and its lease token is the step's (the fence), checked
//! and moved by one conditional update for the whole batch; steps of one session are stored in the order they were queued,
//! and a step after a failed one of the same session fails too, so a session's log has no gap.
//! When the batch as a whole fails, each step is retried in a transaction of its own, so one bad
//! step fails alone.

use std::collections::HashMap;

use workmate_protocol::{SessionId, TenantId};

use super::rows::{Rows, Value};
use super::step::{Counters, StepError, StepWrite, StepWritten};
use crate::dialect::numbered_placeholders;
use crate::repo::appends::message_row;
use crate::repo::intake;
use crate::repo::leases::token_param;
use crate::repo::tool_calls::{Transition, transition_on};
use crate::repo::usage::utc_day;
use crate::row::{new_id, to_i64, to_json, to_word};
use crate::{Dialect, Error, Result, Store};

type Outcome = std::result::Result<StepWritten, StepError>;

/// Stores `steps`; one outcome per step, in order.
pub(crate) async fn write(store: &Store, steps: &[StepWrite]) -> Vec<Outcome> {
    match write_together(store, steps).await {
        Ok(outcomes) => outcomes,
        Err(error) if steps.len() == 1 => vec![Err(StepError::Failed(error.to_string()))],
        Err(error) => {
            tracing::warn!(steps = steps.len(), error = %error, "A batch of steps failed; storing them one by one.");
            write_apart(store, steps).await
        }
    }
}

/// Each step in a transaction of its own, in order; a session whose step failed fails the rest.
async fn write_apart(store: &Store, steps: &[StepWrite]) -> Vec<Outcome> {
    let mut failed: HashMap<(&TenantId, &SessionId), StepError> = HashMap::new();
    let mut outcomes = Vec::with_capacity(steps.len());
    for step in steps {
        let key = (&step.tenant, &step.session);
        if let Some(error) = failed.get(&key) {
            outcomes.push(Err(error.clone()));
            continue;
        }
        let outcome = match write_together(store, std::slice::from_ref(step)).await {
            Ok(mut one) => one.pop().unwrap_or(Err(StepError::Stopped)),
            Err(error) => Err(StepError::Failed(error.to_string())),
        };
        if let Err(error) = &outcome {
            failed.insert(key, error.clone());
        }
        outcomes.push(outcome);
    }
    outcomes
}

/// Stores every step the fence lets through in one transaction. `Err` means nothing was stored.
async fn write_together(store: &Store, steps: &[StepWrite]) -> Result<Vec<Outcome>> {
    let mut tx = store.begin_write().await?;
    let fenced = fence(&mut tx, store, steps).await?;
    let accepted: Vec<&StepWrite> = steps
        .iter()
        .zip(&fenced)
        .filter(|(_, refused)| refused.is_none())
        .map(|(step, _)| step)
        .collect();
    insert_rows(&mut tx, store, &accepted).await?;
    let mut outcomes = Vec::with_capacity(steps.len());
    for (step, refused) in steps.iter().zip(fenced) {
        if let Some(error) = refused {
            outcomes.push(Err(error));
            continue;
        }
        let key = (&step.tenant, &step.session);
        let mut moved = Vec::with_capacity(step.moves.len());
        for change in &step.moves {
            let transition = Transition {
                call: &change.call,
                to: change.to,
                result: change.result.as_ref(),
            };
            moved.push(transition_on(&mut *tx, store, key, &transition).await?);
        }
        intake::finish_in(&mut tx, store, &step.tenant, &step.done).await?;
        settle_settings(&mut tx, store, step).await?;
        outcomes.push(Ok(StepWritten { moved }));
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// The session's new settings, if the step changes them.
async fn settle_settings(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    step: &StepWrite,
) -> Result<()> {
    let change = &step.change;
    if change.is_empty() {
        return Ok(());
    }
    let done = store
        .dialect
        .query("UPDATE sessions SET mode = COALESCE(?, mode), model = COALESCE(?, model), persona = COALESCE(?, persona), grants_json = COALESCE(?, grants_json), unattended = COALESCE(?, unattended), compaction_json = COALESCE(?, compaction_json), updated_at_ms = ? WHERE tenant_id = ? AND session_id = ?")
        .bind(change.mode.as_ref().map(to_word).transpose()?)
        .bind(change.model.clone())
        .bind(change.persona.clone())
        .bind(change.grants.as_ref().map(to_json).transpose()?)
        .bind(change.unattended.map(i64::from))
        .bind(change.compaction.as_ref().map(to_json).transpose()?)
        .bind(store.clock_ms())
        .bind(step.tenant.as_str().to_owned())
        .bind(step.session.as_str().to_owned())
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound {
            what: format!("session {}", step.session),
        });
    }
    Ok(())
}

/// Checks and moves each session's counters once for the whole batch; returns, per step, why it
/// is refused (`None`: it may be stored). `Err` when a session's fence failed among several:
/// the caller then stores the steps one by one, so the fence names the session.
async fn fence(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    steps: &[StepWrite],
) -> Result<Vec<Option<StepError>>> {
    let mut refused = vec![None; steps.len()];
    let mut moving: Vec<(Vec<usize>, CounterMove<'_>)> = Vec::new();
    for indexes in by_session(steps) {
        let first = &steps[indexes[0]];
        let base = first.base;
        // Steps must follow each other; a gap means the runtime lost a step, so the rest wait
        // for the session to be reloaded.
        let mut end = base;
        let mut open_turn = None;
        let mut contiguous = indexes.len();
        for (n, &i) in indexes.iter().enumerate() {
            if steps[i].base != end {
                contiguous = n;
                break;
            }
            end = steps[i].end();
            open_turn = steps[i].open_turn_after().or(open_turn);
        }
        for &i in &indexes[contiguous..] {
            refused[i] = Some(fenced(&steps[i]));
        }
        if end != base {
            let step = CounterMove {
                tenant: &first.tenant,
                session: &first.session,
                lease: first.lease,
                base,
                end,
                open_turn,
            };
            moving.push((indexes[..contiguous].to_vec(), step));
        }
    }
    let now = store.clock_ms();
    match moving.as_slice() {
        [] => {}
        [(indexes, one)] => {
            if move_counters(tx, store, std::slice::from_ref(one), now).await? == 0 {
                for &i in indexes {
                    refused[i] = Some(fenced(&steps[indexes[0]]));
                }
            }
        }
        many => {
            let moves: Vec<CounterMove<'_>> = many.iter().map(|(_, m)| *m).collect();
            for chunk in moves.chunks(SESSIONS_PER_STATEMENT) {
                let moved = move_counters(tx, store, chunk, now).await?;
                if moved != chunk.len() as u64 {
                    return Err(Error::Invalid(
                        "a session of the batch was written by another writer".into(),
                    ));
                }
            }
        }
    }
    Ok(refused)
}

fn fenced(step: &StepWrite) -> StepError {
    StepError::Fenced {
        session: step.session.clone(),
        expected: step.base.last_seq,
    }
}

/// Sessions whose counters one statement moves at most.
const SESSIONS_PER_STATEMENT: usize = 200;

/// One session's counters, from what the batch expects to what it leaves.
#[derive(Clone, Copy, Debug)]
struct CounterMove<'a> {
    tenant: &'a TenantId,
    session: &'a SessionId,
    lease: u64,
    base: Counters,
    end: Counters,
    /// The session's open turn after the batch, when its steps start or end one.
    open_turn: Option<Option<&'a str>>,
}

/// Moves every session's counters from `base` to `end` (and its open turn, where the batch
/// starts or ends one) in one statement, each only if it is still at `base` and its lease token
/// is still the step's; returns how many moved.
async fn move_counters(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    moves: &[CounterMove<'_>],
    now: i64,
) -> Result<u64> {
    let cases = |column: &str| {
        let arms = " WHEN tenant_id = ? AND session_id = ? THEN ?".repeat(moves.len());
        format!("{column} = CASE{arms} ELSE {column} END")
    };
    let turning: Vec<(&CounterMove<'_>, Option<&str>)> = moves
        .iter()
        .filter_map(|m| m.open_turn.map(|turn| (m, turn)))
        .collect();
    let open_turn = if turning.is_empty() {
        String::new()
    } else {
        let arms = " WHEN tenant_id = ? AND session_id = ? THEN ?".repeat(turning.len());
        format!("open_turn_id = CASE{arms} ELSE open_turn_id END, ")
    };
    let matches = vec![
        "(tenant_id = ? AND session_id = ? AND last_seq = ? AND message_count = ? AND lease_token = ?)";
        moves.len()
    ];
    let sql = format!(
        "UPDATE sessions SET {}, {}, {open_turn}updated_at_ms = ? WHERE {}",
        cases("last_seq"),
        cases("message_count"),
        matches.join(" OR ")
    );
    let sql = match store.dialect {
        Dialect::Postgres => numbered_placeholders(&sql),
        Dialect::Sqlite | Dialect::Mysql => sql,
    };
    // Built from static text; every value is bound.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    let key = |m: &CounterMove<'_>| (m.tenant.as_str().to_owned(), m.session.as_str().to_owned());
    for m in moves {
        let (t, s) = key(m);
        query = query.bind(t).bind(s).bind(to_i64(m.end.last_seq));
    }
    for m in moves {
        let (t, s) = key(m);
        query = query.bind(t).bind(s).bind(to_i64(m.end.message_count));
    }
    for (m, turn) in turning {
        let (t, s) = key(m);
        query = query.bind(t).bind(s).bind(turn.map(str::to_owned));
    }
    query = query.bind(now);
    for m in moves {
        let (t, s) = key(m);
        query = query
            .bind(t)
            .bind(s)
            .bind(to_i64(m.base.last_seq))
            .bind(to_i64(m.base.message_count))
            .bind(token_param(m.lease));
    }
    Ok(query.execute(&mut **tx).await?.rows_affected())
}

/// The steps' indexes grouped by session, sessions in order of first appearance.
fn by_session(steps: &[StepWrite]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut slot: HashMap<(&TenantId, &SessionId), usize> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        let next = groups.len();
        let group = *slot.entry((&step.tenant, &step.session)).or_insert(next);
        if group == next {
            groups.push(Vec::new());
        }
        groups[group].push(i);
    }
    groups
}

/// The accepted steps' messages, events, proposed calls, audit records and usage, one multi-row
/// statement per table.
async fn insert_rows(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    store: &Store,
    steps: &[&StepWrite],
) -> Result<()> {
    let now = store.clock_ms();
    let mut messages = Rows::new(
        "messages",
        &[
            "tenant_id",
            "session_id",
            "idx",
            "message_role",
            "body_json",
            "created_at_ms",
        ],
    );
    let mut events = Rows::new(
        "session_events",
        &[
            "tenant_id",
            "session_id",
            "seq",
            "turn_id",
            "kind",
            "at_ms",
            "body_json",
        ],
    );
    let mut proposed = Rows::new(
        "tool_calls",
        &[
            "tenant_id",
            "session_id",
            "tool_call_id",
            "turn_id",
            "name",
            "arguments_json",
            "state",
            "result_json",
            "proposed_at_ms",
            "updated_at_ms",
        ],
    )
    .keeping_existing("tool_call_id");
    let mut audit = Rows::new(
        "audit_events",
        &[
            "tenant_id",
            "audit_id",
            "at_ms",
            "session_id",
            "actor",
            "stage",
            "tool",
            "status",
            "body_json",
        ],
    );
    let mut usage = Rows::new(
        "usage_records",
        &[
            "tenant_id",
            "record_id",
            "at_ms",
            "day",
            "session_id",
            "user_id",
            "model",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
        ],
    );
    for step in steps {
        let tenant = || Value::Text(step.tenant.as_str().to_owned());
        let session = || Value::Text(step.session.as_str().to_owned());
        let turn = || Value::OptText(step.turn.as_ref().map(|t| t.as_str().to_owned()));
        for (index, message) in (step.base.message_count + 1..).zip(&step.messages) {
            let (role, body) = message_row(message)?;
            messages.push([
                tenant(),
                session(),
                Value::Int(to_i64(index)),
                Value::Text(role),
                Value::Text(body),
                Value::Int(now),
            ]);
        }
        for event in &step.events {
            events.push([
                tenant(),
                session(),
                Value::Int(to_i64(event.seq)),
                Value::OptText(event.turn_id.as_ref().map(|t| t.as_str().to_owned())),
                Value::Text(event.kind.name().to_owned()),
                Value::Int(event.at_ms),
                Value::Text(to_json(&event.kind)?),
            ]);
        }
        for call in &step.proposed {
            proposed.push([
                tenant(),
                session(),
                Value::Text(call.id.as_str().to_owned()),
                turn(),
                Value::Text(call.name.clone()),
                Value::Text(to_json(&call.arguments)?),
                Value::Text("proposed".into()),
                Value::OptText(None),
                Value::Int(now),
                Value::Int(now),
            ]);
        }
        for record in &step.audit {
            audit.push([
                tenant(),
                Value::Text(new_id()),
                Value::Int(now),
                Value::OptText(record.session_id.as_ref().map(|s| s.as_str().to_owned())),
                Value::OptText(record.actor.clone()),
                Value::Text(record.stage.clone()),
                Value::OptText(record.tool.clone()),
                Value::OptText(record.status.clone()),
                Value::Text(to_json(&workmate_dlp::global().json(&record.detail).value)?),
            ]);
        }
        for used in &step.usage {
            usage.push([
                tenant(),
                Value::Text(new_id()),
                Value::Int(now),
                Value::Text(utc_day(now)),
                Value::Text(used.session_id.as_str().to_owned()),
                Value::OptText(used.user_id.as_ref().map(|u| u.as_str().to_owned())),
                Value::Text(used.model.clone()),
                Value::Int(to_i64(used.input)),
                Value::Int(to_i64(used.output)),
                Value::Int(to_i64(used.cache_read)),
                Value::Int(to_i64(used.cache_write)),
            ]);
        }
    }
    let d = store.dialect;
    // Calls first: moves later in the transaction find them.
    for rows in [messages, events, proposed, audit, usage] {
        rows.insert(tx, d).await?;
    }
    Ok(())
}
