//! `DingTalkConnection` over a fake Stream gateway, with a fake chat layer: a robot message is
//! acked only once the chat layer stored it, and a redelivery carries the same delivery id; a
//! card click runs and its ack carries the clicker's card data; a click on someone else's card
//! and events change nothing. Also the shared dispatch as the HTTP routes will call it.

use std::sync::Arc;

use futures_util::SinkExt;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use workmate_adapter::{
    ClickReply, Connection, Inbound, InboundKind, InboundSink, InboundUser, ToastKind,
};
use workmate_cards::testing::{Story, item};
use workmate_cards::{ButtonAction, approval_card};
use workmate_dingtalk::DingTalkConnection;
use workmate_dingtalk::dispatch::{card_callback, click_inbound, robot_message};
use workmate_dingtalk::stream::StreamClient;
use workmate_protocol::{ApprovalChoice, Resolution, Surface};

use crate::support::gateway::{
    CLIENT_ID, CLIENT_SECRET, FakeDingTalk, WAIT, ack_data, downstream, eventually_holds,
    next_text, timings,
};
use crate::support::sink::FakeSink;

const ROBOT: &str = "/v1.0/im/bot/messages/get";
const CARD: &str = "/v1.0/card/instances/callback";

struct Running {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Running {
    async fn stop(self) {
        self.stop.cancel();
        tokio::time::timeout(crate::support::gateway::WAIT, self.task)
            .await
            .expect("the connection stops promptly")
            .unwrap();
    }
}

fn connection(fake: &FakeDingTalk) -> Arc<DingTalkConnection> {
    let client = StreamClient::new(
        &fake.api.uri(),
        CLIENT_ID,
        SecretString::from(CLIENT_SECRET),
    )
    .unwrap()
    .with_timings(timings());
    Arc::new(DingTalkConnection::new(client))
}

fn run(fake: &FakeDingTalk, sink: &Arc<FakeSink>) -> Running {
    let stop = CancellationToken::new();
    let sink: Arc<dyn InboundSink> = Arc::clone(sink) as Arc<dyn InboundSink>;
    let task = tokio::spawn(connection(fake).run(sink, stop.clone()));
    Running { stop, task }
}

fn robot_message_body() -> Value {
    json!({
        "msgId": "msg-1",
        "msgtype": "text",
        "text": { "content": " deploy the fix " },
        "conversationId": "cidGroup==",
        "conversationType": "2",
        "chatbotCorpId": "dingcorp",
        "senderStaffId": "manager1234",
        "senderNick": "张三",
        "isInAtList": true,
    })
}

fn click_body(out_track_id: &str) -> Value {
    json!({
        "type": "actionCallback",
        "outTrackId": out_track_id,
        "corpId": "dingcorp",
        "userId": "bob",
        "userIdType": 1,
        "spaceType": "IM_GROUP",
        "spaceId": "cidGroup==",
        "content": "{\"cardPrivateData\":{\"actionIds\":[\"once\"],\"params\":{\"action\":\"once\"}}}",
        "extension": "{}",
    })
}

fn bobs_click(delivery_id: &str) -> Inbound {
    Inbound {
        surface: Surface::Dingtalk,
        tenant_key: "dingcorp".into(),
        delivery_id: delivery_id.into(),
        user: InboundUser {
            id: "bob".into(),
            name: None,
        },
        chat_id: "cidGroup==".into(),
        thread_id: None,
        direct: false,
        reply: None,
        message_ref: None,
        kind: InboundKind::Click {
            action: ButtonAction::Resolve {
                item_id: item("ib_1"),
                resolution: Resolution::Approval {
                    choice: ApprovalChoice::Once,
                },
            },
        },
    }
}

/// The approval card of `ib_1` once Bob approved it once.
fn approved_card() -> workmate_cards::Card {
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    s.approve_once_as_bob("call_1", "ib_1");
    approval_card(s.view().approval(&item("ib_1")).unwrap())
}

#[tokio::test]
async fn the_lease_is_one_per_app() {
    let fake = FakeDingTalk::start().await;
    let connection = connection(&fake);
    assert_eq!(connection.surface(), Surface::Dingtalk);
    assert_eq!(connection.lease_name(), "dingtalk:ding-app-key");
}

#[tokio::test]
async fn a_robot_message_is_acked_only_once_stored_and_comes_again_with_the_same_id() {
    let fake = FakeDingTalk::start().await;
    let sink = Arc::new(FakeSink::refusing(1));
    let running = run(&fake, &sink);
    let (mut ws, _) = fake.accept().await;
    let frame = downstream("CALLBACK", ROBOT, "frame-1", &robot_message_body());
    ws.send(frame.clone()).await.unwrap();
    eventually_holds("the chat layer is offered the message", WAIT, || async {
        sink.offered().len() == 1
    })
    .await;
    // Refused: no ack. The next frame the client writes answers a later ping instead.
    let ping = json!({ "opaque": "after the refusal" });
    ws.send(downstream("SYSTEM", "ping", "ping-1", &ping))
        .await
        .unwrap();
    let pong = next_text(&mut ws).await;
    assert_eq!(
        ack_data(&pong, "ping-1"),
        ping,
        "the refused message was not acked"
    );

    // DingTalk pushes it again; now it is stored, and acked.
    ws.send(frame).await.unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack_data(&ack, "frame-1"), json!({ "response": {} }));
    let offered = sink.offered();
    assert_eq!(offered.len(), 2);
    assert!(
        offered.iter().all(|i| i.delivery_id == "msg-1"),
        "{offered:?}"
    );
    assert_eq!(sink.stored(), 1);
    let inbound = &offered[1];
    assert_eq!(
        (
            inbound.tenant_key.as_str(),
            inbound.chat_id.as_str(),
            inbound.user.id.as_str()
        ),
        ("dingcorp", "cidGroup==", "manager1234")
    );
    assert_eq!(
        inbound.kind,
        InboundKind::Message {
            text: "deploy the fix".into(),
            files: Vec::new(),
        }
    );
    running.stop().await;
}

#[tokio::test]
async fn a_card_click_runs_and_its_ack_carries_the_clickers_card_data() {
    let fake = FakeDingTalk::start().await;
    let sink = Arc::new(FakeSink::answering(ClickReply {
        kind: ToastKind::Success,
        toast: "Approved".into(),
        card: Some(approved_card()),
    }));
    let running = run(&fake, &sink);
    let (mut ws, _) = fake.accept().await;
    ws.send(downstream(
        "CALLBACK",
        CARD,
        "frame-c1",
        &click_body("approval_ib_1"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(
        ack_data(&ack, "frame-c1"),
        json!({ "response": {
            "cardData": { "cardParamMap": { "status": "approved", "approver": "Bob Li" } },
            "cardUpdateOptions": { "updateCardDataByKey": true },
        }})
    );
    assert_eq!(sink.offered(), vec![bobs_click("frame-c1")]);

    // A click on a card that is not an approval card of workmate's is acked and changes nothing.
    ws.send(downstream(
        "CALLBACK",
        CARD,
        "frame-c2",
        &click_body("someone_elses_card"),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack_data(&ack, "frame-c2"), json!({ "response": {} }));
    // An event is acked and not handed on.
    ws.send(downstream(
        "EVENT",
        "chat_update_title",
        "frame-e1",
        &json!({}),
    ))
    .await
    .unwrap();
    let ack = next_text(&mut ws).await;
    assert_eq!(ack_data(&ack, "frame-e1")["status"], "SUCCESS");
    assert_eq!(sink.offered().len(), 1);
    running.stop().await;
}

#[tokio::test]
async fn the_http_routes_dispatch_the_same_way() {
    let sink = FakeSink::answering(ClickReply {
        kind: ToastKind::Warning,
        toast: "Already approved by Bob Li.".into(),
        card: Some(approved_card()),
    });
    let body = click_body("approval_ib_1").to_string();
    let answer = card_callback(&body, None, &sink).await.unwrap();
    assert_eq!(answer["cardData"]["cardParamMap"]["status"], "approved");
    // Without a frame id, the click's id comes from the card, the clicker and the choice.
    let derived = "card:approval_ib_1:bob:once";
    assert_eq!(sink.offered(), vec![bobs_click(derived)]);
    assert_eq!(
        click_inbound(&click_body("approval_ib_1"), None)
            .unwrap()
            .delivery_id,
        derived
    );

    // A refused click is not acked (the route answers 5xx), and nothing shows.
    let down = FakeSink::refusing(1);
    assert!(card_callback(&body, Some("f"), &down).await.is_err());
    // A click without a known choice is no click.
    let mut unknown = click_body("approval_ib_1");
    unknown["content"] = json!("{\"cardPrivateData\":{\"params\":{\"action\":\"maybe\"}}}");
    assert_eq!(click_inbound(&unknown, None), None);
    // A refused click answers with no card: the clicker's view does not change.
    let refused = FakeSink::answering(ClickReply {
        kind: ToastKind::Error,
        toast: "Only approvers may answer this.".into(),
        card: None,
    });
    assert_eq!(
        card_callback(&body, None, &refused).await.unwrap(),
        json!({})
    );

    let robot = FakeSink::default();
    let answer = robot_message(&robot_message_body().to_string(), &robot)
        .await
        .unwrap();
    assert_eq!(answer, json!({}));
    assert_eq!(robot.stored(), 1);
    let picture = json!({ "msgId": "m2", "msgtype": "picture", "conversationId": "cid", "content": { "downloadCode": "x" } });
    assert_eq!(
        robot_message(&picture.to_string(), &robot).await.unwrap(),
        json!({})
    );
    assert_eq!(
        robot.offered().len(),
        1,
        "a picture is acked, not delivered"
    );
}
