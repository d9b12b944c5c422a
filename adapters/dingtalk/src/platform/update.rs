//! Which calls an update of a posted card needs.
//!
//! - A state equal to the last one sent makes no call.
//! - Approval card: its shared data is set for everyone (`PUT /v1.0/card/instances`, by key), so
//!   every viewer's buttons go when one person decides, not only the clicker's.
//! - Answer card while it runs: its whole markdown is streamed (`PUT /v1.0/card/streaming`,
//!   `isFull`, not final). When it stops running: one last streamed content with `isFinalize`
//!   (`isError` when the turn failed), then its data by key (`content` and `flowStatus` finished
//!   or failed), so the card leaves DingTalk's "writing" state even when the stream was already
//!   closed. A card already finished (a first page of a long answer whose status line still
//!   changes) is updated by key only.
//!
//! Invariants: the remembered state changes only after every call of the update succeeded, so a
//! failed update is sent again whole; each streaming call's `guid` derives from the card, the
//! update's version and the state, so it is unique per call and a retried call repeats it.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{DingTalkPlatform, key_of};
use crate::card::{FlowStatus, Rendered, Template};
use crate::web::WebError;

impl DingTalkPlatform {
    /// Brings card `out_track_id` to `next` (see the module docs).
    pub(super) async fn apply(
        &self,
        out_track_id: &str,
        next: Rendered,
        version: i64,
    ) -> Result<(), WebError> {
        let last = self.last.get(out_track_id);
        if last
            .as_ref()
            .is_some_and(|l| l.template == next.template && l.params == next.params)
        {
            return Ok(());
        }
        match next.template {
            Template::Approval => {
                self.web
                    .update_card_data(out_track_id, &next.params)
                    .await?;
            }
            Template::Answer => {
                let flow = next.flow_status().unwrap_or(FlowStatus::Finished);
                let was = last.as_ref().and_then(|l| l.flow_status());
                self.answer(out_track_id, &next, flow, was, version).await?;
            }
        }
        self.last.insert(out_track_id.to_owned(), Arc::new(next));
        Ok(())
    }

    async fn answer(
        &self,
        out_track_id: &str,
        next: &Rendered,
        flow: FlowStatus,
        was: Option<FlowStatus>,
        version: i64,
    ) -> Result<(), WebError> {
        let closed = matches!(was, Some(FlowStatus::Finished | FlowStatus::Failed));
        let web = &self.web;
        if closed {
            return web.update_card_data(out_track_id, &next.params).await;
        }
        let guid = key_of(&[out_track_id, &version.to_string(), flow.as_str()]);
        let running = flow == FlowStatus::Inputing;
        let failed = flow == FlowStatus::Failed;
        let streamed = web
            .stream_content(out_track_id, &guid, next.content(), !running, failed)
            .await;
        match streamed {
            Ok(()) => {}
            // After a restart the card may have been finalized already, which DingTalk refuses
            // to stream into; its data is still set below.
            Err(WebError::Api { .. }) if was.is_none() && !running => {
                tracing::debug!(out_track_id, "A closed card refused its final stream.");
            }
            Err(e) => return Err(e),
        }
        if running {
            return Ok(());
        }
        let mut params = Map::new();
        params.insert("content".into(), Value::String(next.content().to_owned()));
        params.insert("flowStatus".into(), Value::String(flow.as_str().to_owned()));
        web.update_card_data(out_track_id, &params).await
    }
}
