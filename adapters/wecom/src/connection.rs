//! [`WeComConnection`]: the smart robot's long connection for the chat layer, a [`Client`] of
//! the kit.
//!
//! Invariant: a message is answered (its stream opened) only once the chat layer stored it; one
//! the chat layer could not take gets no answer, so the person sees it unanswered rather than
//! answered twice. A click is answered with the updated card within WeCom's 5 s.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use workmate_adapter::{BoxFuture, Client, InboundSink};
use workmate_protocol::Surface;

use crate::WeComPlatform;
use crate::inbound::{RobotCallback, decode_robot};
use crate::ws::{FrameHandler, LongConnection, RESPOND_MSG, RESPOND_UPDATE, Sender};

/// The long connection of one smart robot.
#[derive(Debug)]
pub struct WeComConnection {
    client: LongConnection,
    platform: Arc<WeComPlatform>,
    corp_id: String,
}

impl WeComConnection {
    /// The connection `client` opens, for the corp `corp_id`, answering through `platform`
    /// (made [`WeComPlatform::with_socket`] with `client`'s sender).
    pub fn new(client: LongConnection, platform: Arc<WeComPlatform>, corp_id: &str) -> Self {
        Self {
            client,
            platform,
            corp_id: corp_id.to_owned(),
        }
    }
}

impl Client for WeComConnection {
    const SURFACE: Surface = Surface::Wecom;

    /// One per robot: WeCom keeps one connection per bot id, and a new one kicks the old.
    fn app_id(&self) -> Option<&str> {
        Some(self.client.bot_id())
    }

    async fn serve(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> Result<(), String> {
        let handler = Arc::new(ToChat {
            sink,
            platform: Arc::clone(&self.platform),
            sender: self.client.sender(),
            corp_id: self.corp_id.clone(),
        });
        self.client
            .run(handler, stop)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Whether an answer only opens an empty stream.
fn opening(answer: &Value) -> bool {
    answer["msgtype"] == "stream"
        && answer["stream"]["finish"] == false
        && answer["stream"]["content"] == ""
}

/// Hands each callback to the chat layer and answers it on the connection.
#[derive(Debug)]
struct ToChat {
    sink: Arc<dyn InboundSink>,
    platform: Arc<WeComPlatform>,
    sender: Sender,
    corp_id: String,
}

impl FrameHandler for ToChat {
    fn handle(&self, _cmd: &str, req_id: &str, body: Value) -> BoxFuture<'_, ()> {
        let req_id = req_id.to_owned();
        Box::pin(async move {
            let callback = match decode_robot(&body.to_string()) {
                Ok(callback) => callback,
                Err(e) => {
                    tracing::warn!(error = %e, "A WeCom callback workmate cannot read.");
                    return;
                }
            };
            let cmd = match &callback {
                RobotCallback::Event(_) => RESPOND_UPDATE,
                RobotCallback::Message(_) | RobotCallback::StreamRefresh(_) => RESPOND_MSG,
            };
            let answer = crate::dispatch_robot(
                &callback,
                &self.sink,
                &self.platform,
                &self.corp_id,
                Some(&req_id),
            )
            .await;
            match answer {
                // The stream opens with its first push: an empty opening could overtake it.
                Ok(Some(answer)) if opening(&answer) => {}
                Ok(Some(answer)) => {
                    if let Err(e) = self.sender.respond(&req_id, cmd, answer).await {
                        tracing::warn!(error = %e, "Cannot answer a WeCom callback.");
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "A WeCom message was not stored; not answered.");
                }
            }
        })
    }
}
