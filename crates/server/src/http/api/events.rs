//! `GET /v1/sessions/{id}/events`: a session's events as Server-Sent Events.
//!
//! Invariants: live events are subscribed to before stored ones are replayed, and state events
//! already replayed are skipped, so a client sees every state event after its starting point once
//! and in order; an SSE `id:` is a state event's `seq` (deltas carry none), so a reconnecting
//! client's `Last-Event-ID` resumes exactly after the last state event it saw; a subscriber that
//! falls behind the live buffer catches up from the store instead of losing state events; one
//! client address holds at most its share of streams open (`[server] max_streams_per_client`).

use std::convert::Infallible;

use axum::extract::{ConnectInfo, Extension, Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use workmate_protocol::{Event, SessionId, TenantId};
use workmate_store::Store;

use super::Principal;
use crate::http::{ApiError, AppState, ClientAddr};

/// Events fetched from the store per page while replaying.
const REPLAY_PAGE: u32 = 500;
/// Events buffered for one client.
const CLIENT_BUFFER: usize = 256;

/// Where to start.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamQuery {
    /// Replay stored state events from this `seq` on (inclusive).
    from_seq: Option<u64>,
}

/// Streams the session's events: stored ones from the starting point, then live ones.
pub(crate) async fn stream(
    State(state): State<AppState>,
    Extension(caller): Extension<Principal>,
    client: Option<Extension<ConnectInfo<ClientAddr>>>,
    Path(id): Path<String>,
    Query(query): Query<StreamQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let session = SessionId::from(id);
    super::visible::session(&state.store, &caller, &session).await?;
    let slot = match client {
        Some(Extension(ConnectInfo(ClientAddr(address)))) => Some(
            state
                .streams
                .admit(address.ip())
                .ok_or_else(|| ApiError::TooManyStreams {
                    max: state.streams.max_per_client(),
                })?,
        ),
        None => None,
    };
    let last_event_id = headers
        .get("last-event-id")
        .map(|v| v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok()))
        .map(|parsed| {
            parsed.ok_or_else(|| {
                ApiError::BadRequest("Last-Event-ID must be a sequence number".into())
            })
        })
        .transpose()?;
    // Replay after this seq; `None` means live events only.
    let after = last_event_id.or(query.from_seq.map(|from| from.saturating_sub(1)));
    let live = state.hub.subscribe(&caller.tenant, &session).await?;
    let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
    let forward = Forwarder {
        hub: state.hub.clone(),
        store: state.store.clone(),
        tenant: caller.tenant,
        session,
        tx,
        shutdown: state.shutdown.clone(),
    };
    tokio::spawn(forward.run(live, after));
    // The slot rides with the stream: the address gets it back when the client leaves.
    let events = futures_util::stream::unfold((rx, slot), |(mut rx, slot)| async move {
        rx.recv().await.map(|event| (Ok(event), (rx, slot)))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

struct Forwarder {
    hub: workmate_engine::SessionHub,
    store: Store,
    tenant: TenantId,
    session: SessionId,
    tx: mpsc::Sender<SseEvent>,
    shutdown: CancellationToken,
}

impl Forwarder {
    async fn run(self, mut live: broadcast::Receiver<std::sync::Arc<Event>>, after: Option<u64>) {
        let mut last = after.unwrap_or(0);
        if after.is_some() && !self.replay(&mut last).await {
            return;
        }
        loop {
            let received = tokio::select! {
                () = self.shutdown.cancelled() => return,
                () = self.tx.closed() => return,
                received = live.recv() => received,
            };
            let ok = match received {
                Ok(event) if event.kind.is_state() && event.seq <= last => true,
                Ok(event) => {
                    if event.kind.is_state() {
                        last = event.seq;
                    }
                    self.send(&event).await
                }
                Err(broadcast::error::RecvError::Lagged(_)) => self.replay(&mut last).await,
                Err(broadcast::error::RecvError::Closed) => false,
            };
            if !ok {
                return;
            }
        }
    }

    /// Sends stored state events after `last`; `false` when the client is gone or the store
    /// failed (the client reconnects with its Last-Event-ID).
    async fn replay(&self, last: &mut u64) -> bool {
        // Events are published as their step is queued: what was published is stored first.
        if let Err(e) = self.hub.flushed(&self.tenant, &self.session).await {
            tracing::warn!(session = %self.session, error = %e, "Event replay found the session's log failed.");
        }
        loop {
            let page = match self
                .store
                .events()
                .list_after(&self.tenant, &self.session, *last, REPLAY_PAGE)
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(session = %self.session, error = %e, "Event replay failed.");
                    return false;
                }
            };
            for event in &page {
                *last = event.seq;
                if !self.send(event).await {
                    return false;
                }
            }
            if page.len() < REPLAY_PAGE as usize {
                return true;
            }
        }
    }

    async fn send(&self, event: &Event) -> bool {
        let Ok(mut sse) = SseEvent::default()
            .event(event.kind.name())
            .json_data(event)
        else {
            return true;
        };
        if event.kind.is_state() {
            sse = sse.id(event.seq.to_string());
        }
        self.tx.send(sse).await.is_ok()
    }
}
