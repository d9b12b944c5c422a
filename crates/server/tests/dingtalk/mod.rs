//! The DingTalk surface end to end, in process: a test Stream gateway (a WebSocket server) that
//! delivers robot messages and card clicks and checks their acks, HTTP mode's signed robot and
//! card callbacks and encrypted event push, and the open-platform calls workmate makes to a fake
//! DingTalk.

mod fake;
mod groups;
pub(crate) mod http;
mod stream;

use std::sync::Arc;

use axum::Router;
use serde_json::{Value, json};
use workmate_protocol::{EventKind, Surface};
use workmate_server::config::DingTalkConfig;
use workmate_server::http::{AppState, router};
use workmate_server::platforms::dingtalk::DingTalkSurface;
use workmate_server::platforms::{Mounted, Platforms};
use workmate_store::{InboxFilter, InboxItem, InboxItemState, Store};

use self::fake::FakeDingTalk;
use crate::router::{App, app_with_script};
use crate::support::{Call, PATIENCE, eventually, thread_session, wait_for};

const CLIENT_ID: &str = "dingappkey";
pub(crate) const CLIENT_SECRET: &str = "ding-app-secret";
const APPROVAL_TEMPLATE: &str = "tpl-approval.schema";
const CORP: &str = "dingcorp";
const GROUP: &str = "cidGroup==";
const SHELL: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"tool_calls": [{"name": "run_shell", "arguments": {"command": "echo hi"}}]}, {"text": "Done."}]}]}"#;

/// Answers each message with its own text, in order.
const TWO_ANSWERS: &str = r#"{"conversations": [{"when": "*", "turns": [
    {"text": "First answer."}, {"text": "Second answer."}]}]}"#;

pub(crate) struct DingTalkApp {
    router: Router,
    pub(crate) store: Store,
    fake: FakeDingTalk,
    surface: Arc<DingTalkSurface>,
    _dir: tempfile::TempDir,
}

/// An app serving DingTalk configured by `configure` (from Stream mode against the fake, with
/// `boss` an admin).
async fn dingtalk_app(
    script: &str,
    configure: impl FnOnce(DingTalkConfig) -> DingTalkConfig,
) -> DingTalkApp {
    let (app, fake) = unserved(script).await;
    serve(app, fake, configure)
}

/// The app and the fake before DingTalk is served.
async fn unserved(script: &str) -> (App, FakeDingTalk) {
    (app_with_script(script).await, FakeDingTalk::start().await)
}

/// Serves DingTalk on `app`, configured by `configure`.
fn serve(
    app: App,
    fake: FakeDingTalk,
    configure: impl FnOnce(DingTalkConfig) -> DingTalkConfig,
) -> DingTalkApp {
    let config = DingTalkConfig::stream(
        CLIENT_ID,
        CLIENT_SECRET.into(),
        APPROVAL_TEMPLATE,
        &fake.api.uri(),
    )
    .with_admins(CORP, vec!["boss".into()]);
    let chat = app.state.chat.clone();
    chat.attach_scheduler(app.state.scheduler.clone());
    let surface = DingTalkSurface::new(
        &configure(config),
        &chat,
        &workmate_net::NetworkPolicy::public_only(),
    )
    .unwrap();
    chat.start();
    let state = AppState {
        platforms: Platforms::of([Arc::clone(&surface) as Arc<dyn Mounted>]),
        ..app.state.clone()
    };
    DingTalkApp {
        router: router(state),
        store: app.store.clone(),
        fake,
        surface,
        _dir: app.dir,
    }
}

/// A group message @-mentioning the robot, from `ana`.
pub(crate) fn robot_message(msg_id: &str, text: &str) -> Value {
    json!({
        "msgId": msg_id,
        "msgtype": "text",
        "text": { "content": text },
        "conversationId": GROUP,
        "conversationType": "2",
        "conversationTitle": "Ops",
        "chatbotCorpId": CORP,
        "chatbotUserId": "$:LWCP_v1:$bot",
        "senderStaffId": "ana",
        "senderNick": "Ana",
        "senderCorpId": CORP,
        "isInAtList": true,
        "robotCode": CLIENT_ID,
        "createAt": 1_700_000_000_000_i64,
    })
}

/// `user`'s click on the `choice` button of the approval card `out_track_id`.
pub(crate) fn click(out_track_id: &str, user: &str, choice: &str) -> Value {
    let content = json!({"cardPrivateData": {"actionIds": [choice], "params": {"action": choice}}});
    json!({
        "type": "actionCallback",
        "outTrackId": out_track_id,
        "corpId": CORP,
        "userId": user,
        "userIdType": 1,
        "spaceType": "IM_GROUP",
        "spaceId": GROUP,
        "content": content.to_string(),
        "extension": "{}",
    })
}

/// A click as DingTalk sends it when `user` presses `choice` on the card `created` made: the
/// template's `click_key` param is that person's own private value, or absent when the card
/// gave them none.
pub(crate) fn keyed_click(created: &Call, user: &str, choice: &str) -> Value {
    let out_track_id = created.body["outTrackId"].as_str().unwrap();
    let mut click = click(out_track_id, user, choice);
    let key = created.body["privateData"][user]["cardParamMap"]["click_key"].clone();
    if key.is_string() {
        let mut content: Value = serde_json::from_str(click["content"].as_str().unwrap()).unwrap();
        content["cardPrivateData"]["params"]["click_key"] = key;
        click["content"] = content.to_string().into();
    }
    click
}

/// The approval prompt parked in the inbox.
pub(crate) async fn parked(app: &DingTalkApp) -> InboxItem {
    let tenant = workmate_chat::tenant_of(Surface::Dingtalk, CORP);
    eventually("the approval parked in the inbox", PATIENCE, || async {
        app.store
            .inbox()
            .list(&tenant, &InboxFilter::default(), 10)
            .await
            .unwrap()
            .into_iter()
            .next()
    })
    .await
}

pub(crate) async fn item_state(app: &DingTalkApp, item: &InboxItem) -> InboxItemState {
    let tenant = workmate_chat::tenant_of(Surface::Dingtalk, CORP);
    app.store
        .inbox()
        .get(&tenant, &item.id)
        .await
        .unwrap()
        .unwrap()
        .state
}

/// The approval card of `item` as created in the group: its `outTrackId` and create call.
pub(crate) async fn approval_card(app: &DingTalkApp, item: &InboxItem) -> (String, Call) {
    let out_track_id = format!("approval_{}", item.id.as_str());
    let created = wait_for(
        &app.fake.api,
        "/v1.0/card/instances/createAndDeliver",
        "the approval card",
        |calls| calls.iter().any(|c| c.body["outTrackId"] == out_track_id),
    )
    .await;
    let call = created
        .into_iter()
        .find(|c| c.body["outTrackId"] == out_track_id)
        .unwrap();
    assert_eq!(
        call.body["cardTemplateId"], APPROVAL_TEMPLATE,
        "{:#}",
        call.body
    );
    assert_eq!(
        call.body["openSpaceId"],
        format!("dtv1.card//IM_GROUP.{GROUP}")
    );
    let params = &call.body["cardData"]["cardParamMap"];
    assert_eq!(params["status"], "pending", "{params:#}");
    assert!(
        params["detail"].as_str().unwrap().contains("echo hi"),
        "{params:#}"
    );
    assert!(
        params["choices"].as_str().unwrap().contains("\"once\""),
        "{params:#}"
    );
    (out_track_id, call)
}

/// Waits until the approval card was updated for everyone (the shared card data, by key) to
/// `status`; that update's body.
async fn updated_for_everyone(app: &DingTalkApp, out_track_id: &str, status: &str) -> Value {
    let is_it = |c: &Call| {
        c.method == "PUT"
            && c.body["outTrackId"] == out_track_id
            && c.body["cardData"]["cardParamMap"]["status"] == status
    };
    let updates = wait_for(
        &app.fake.api,
        "/v1.0/card/instances",
        "the approval card updated for everyone",
        |calls| calls.iter().any(is_it),
    )
    .await;
    let update = updates.into_iter().find(is_it).unwrap().body;
    // The shared data, not one viewer's private data.
    assert!(update.get("privateData").is_none(), "{update:#}");
    assert_eq!(
        update["cardUpdateOptions"]["updateCardDataByKey"], true,
        "{update:#}"
    );
    update
}

/// The turn went on to its answer, shown in an answer card.
async fn answered(app: &DingTalkApp, text: &str) {
    wait_for(&app.fake.api, "/v1.0/card/", "the answer card", |calls| {
        calls.iter().any(|c| c.body.to_string().contains(text))
    })
    .await;
}

/// The thread of Ana's own conversation in the group (each person has their own in a group
/// without threads).
pub(crate) const ANAS: &str = "@ana#0";

/// The input of every turn Ana's conversation in the group ran, once there are `count`.
async fn turn_inputs(app: &DingTalkApp, count: usize) -> Vec<String> {
    let tenant = workmate_chat::tenant_of(Surface::Dingtalk, CORP);
    eventually("the turns of Ana's conversation", PATIENCE, || async {
        let session = thread_session(&app.store, Surface::Dingtalk, CORP, GROUP, ANAS).await?;
        let inputs: Vec<String> = app
            .store
            .events()
            .list_after(&tenant, &session.id, 0, 1000)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::TurnStart { input, .. } => Some(input),
                _ => None,
            })
            .collect();
        (inputs.len() >= count).then_some(inputs)
    })
    .await
}

/// How many turns Ana's conversation in the group ran (none before it exists).
pub(crate) async fn turns(app: &DingTalkApp) -> usize {
    let tenant = workmate_chat::tenant_of(Surface::Dingtalk, CORP);
    let Some(session) = thread_session(&app.store, Surface::Dingtalk, CORP, GROUP, ANAS).await
    else {
        return 0;
    };
    app.store
        .events()
        .list_after(&tenant, &session.id, 0, 1000)
        .await
        .unwrap()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TurnStart { .. }))
        .count()
}
