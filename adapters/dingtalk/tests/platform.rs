//! `DingTalkPlatform` against a fake open platform: an approval card is created in the chat from
//! the approval template and updated for everyone; an answer card streams its whole markdown
//! while its turn runs and is finalized when it stops; a state already shown costs no call; a
//! retried post reuses its `outTrackId`; notices are robot messages.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::{ChatAdapter, ChatTarget, Platform, PostedCard, Posting};
use workmate_cards::testing::{Story, item, turn};
use workmate_cards::{Card, approval_card, notice_card, turn_card};
use workmate_dingtalk::card::approval_param_map;
use workmate_dingtalk::web::CallbackType;
use workmate_dingtalk::{DingTalkConfig, DingTalkPlatform};

use crate::support::api::{bodies, fake_api, mount_successes, mount_token, routes, web};
use crate::support::gateway::CLIENT_ID;

const GROUP: &str = "cidGroup==";
const CREATE: &str = "/v1.0/card/instances/createAndDeliver";
const INSTANCES: &str = "/v1.0/card/instances";
const STREAMING: &str = "/v1.0/card/streaming";

fn platform(server: &MockServer) -> DingTalkPlatform {
    DingTalkPlatform::new(
        web(server),
        DingTalkConfig::new("tpl-approval", "tpl-answer"),
    )
}

fn group() -> ChatTarget {
    ChatTarget {
        chat_id: GROUP.into(),
        thread_id: None,
        reply: None,
        person: None,
    }
}

/// A first post under a key of its own.
fn first_post() -> Posting {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Posting::first(format!("key{n}"))
}

/// Renders and posts `card` into `target`.
async fn post(platform: &DingTalkPlatform, target: &ChatTarget, card: &Card) -> PostedCard {
    platform
        .post(target, &platform.render(card), &first_post())
        .await
        .unwrap()
}

async fn update(platform: &DingTalkPlatform, posted: &PostedCard, card: &Card, version: i64) {
    platform
        .update(posted, &platform.render(card), version)
        .await
        .unwrap();
}

fn params(view: &workmate_cards::SessionView, id: &str) -> Value {
    Value::Object(approval_param_map(view.approval(&item(id)).unwrap()))
}

#[tokio::test]
async fn an_approval_card_is_created_in_the_group_then_updated_for_everyone() {
    let server = fake_api().await;
    let platform = platform(&server);
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    let card = approval_card(s.view().approval(&item("ib_1")).unwrap());
    let posted = post(&platform, &group(), &card).await;
    assert_eq!(
        posted,
        PostedCard {
            chat_id: GROUP.into(),
            message_id: "approval_ib_1".into()
        }
    );
    let created = bodies(&server, "POST", CREATE).await;
    assert_eq!(
        created,
        vec![json!({
            "cardTemplateId": "tpl-approval",
            "outTrackId": "approval_ib_1",
            "cardData": { "cardParamMap": params(&s.view(), "ib_1") },
            "userIdType": 1,
            "callbackType": "STREAM",
            "openSpaceId": format!("dtv1.card//IM_GROUP.{GROUP}"),
            "imGroupOpenSpaceModel": { "supportForward": true },
            "imGroupOpenDeliverModel": { "robotCode": CLIENT_ID },
        })]
    );

    s.approve_once_as_bob("call_1", "ib_1");
    let decided = approval_card(s.view().approval(&item("ib_1")).unwrap());
    update(&platform, &posted, &decided, 1).await;
    update(&platform, &posted, &decided, 2).await;
    let updates = bodies(&server, "PUT", INSTANCES).await;
    assert_eq!(updates.len(), 1, "the same state again costs no call");
    let update = &updates[0];
    assert_eq!(update["outTrackId"], "approval_ib_1");
    assert_eq!(
        update["cardUpdateOptions"],
        json!({ "updateCardDataByKey": true })
    );
    let map = &update["cardData"]["cardParamMap"];
    assert_eq!(
        (&map["status"], &map["approver"]),
        (&json!("approved"), &json!("Bob Li"))
    );
    assert_eq!(map["detail"], params(&s.view(), "ib_1")["detail"]);
    assert!(bodies(&server, "PUT", STREAMING).await.is_empty());
}

#[tokio::test]
async fn a_card_for_a_person_goes_to_their_chat_with_the_robot_and_http_callbacks_name_their_route()
{
    let server = fake_api().await;
    let mut config = DingTalkConfig::new("tpl-approval", "tpl-answer");
    config.callback = CallbackType::Http {
        route_key: "workmate-card".into(),
    };
    let platform = DingTalkPlatform::new(web(&server), config);
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    let card = approval_card(s.view().approval(&item("ib_1")).unwrap());
    let direct = ChatTarget {
        chat_id: "manager1234".into(),
        thread_id: None,
        reply: None,
        person: None,
    };
    post(&platform, &direct, &card).await;
    let created = &bodies(&server, "POST", CREATE).await[0];
    assert_eq!(created["openSpaceId"], "dtv1.card//IM_ROBOT.manager1234");
    assert_eq!(
        created["imRobotOpenDeliverModel"],
        json!({ "spaceType": "IM_ROBOT", "robotCode": CLIENT_ID })
    );
    assert_eq!(
        created["imRobotOpenSpaceModel"],
        json!({ "supportForward": true })
    );
    assert!(created.get("imGroupOpenDeliverModel").is_none());
    assert_eq!(
        (&created["callbackType"], &created["callbackRouteKey"]),
        (&json!("HTTP"), &json!("workmate-card"))
    );
}

#[tokio::test]
async fn an_answer_streams_while_its_turn_runs_and_is_finalized_when_it_ends() {
    let server = fake_api().await;
    let platform = platform(&server);
    let mut s = Story::asking_which_deploys_failed();
    let card = |s: &Story| turn_card(s.view().turn(&turn("tn_1")).unwrap());
    let posted = post(&platform, &group(), &card(&s)).await;
    assert!(posted.message_id.starts_with("wm_"), "{posted:?}");
    let created = &bodies(&server, "POST", CREATE).await[0];
    assert_eq!(created["cardTemplateId"], "tpl-answer");
    assert_eq!(
        created["cardData"]["cardParamMap"],
        json!({ "content": "> 🤔 Thinking…", "flowStatus": "2" })
    );
    assert!(
        created.get("callbackType").is_none(),
        "the answer card has no buttons"
    );

    s.reason_then_stream_a_reply();
    let streaming = card(&s);
    update(&platform, &posted, &streaming, 1).await;
    update(&platform, &posted, &streaming, 2).await;
    let streamed = bodies(&server, "PUT", STREAMING).await;
    assert_eq!(streamed.len(), 1, "the same state again costs no call");
    let first = &streamed[0];
    let content = workmate_dingtalk::card::markdown(&streaming);
    assert!(content.ends_with("Let me check the CI runs."), "{content}");
    assert_eq!(first["outTrackId"], json!(posted.message_id));
    assert_eq!(first["key"], "content");
    assert_eq!(first["content"], json!(content));
    assert_eq!(
        (&first["isFull"], &first["isFinalize"], &first["isError"]),
        (&json!(true), &json!(false), &json!(false))
    );

    s.message(Some("Nothing failed."), &[]);
    s.end(workmate_protocol::TurnEndStatus::Completed);
    let done = card(&s);
    update(&platform, &posted, &done, 3).await;
    let streamed = bodies(&server, "PUT", STREAMING).await;
    assert_eq!(streamed.len(), 2);
    let last = &streamed[1];
    assert_eq!(
        last["content"],
        json!(workmate_dingtalk::card::markdown(&done))
    );
    assert_eq!(
        (&last["isFull"], &last["isFinalize"], &last["isError"]),
        (&json!(true), &json!(true), &json!(false))
    );
    assert_ne!(last["guid"], first["guid"], "a guid per call");
    let finished = bodies(&server, "PUT", INSTANCES).await;
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["cardData"]["cardParamMap"]["flowStatus"], "3");
    assert_eq!(
        finished[0]["cardUpdateOptions"],
        json!({ "updateCardDataByKey": true })
    );
}

#[tokio::test]
async fn a_failed_turn_ends_its_stream_as_an_error() {
    let server = fake_api().await;
    let platform = platform(&server);
    let mut s = Story::asking_to_write_release_notes();
    let card = |s: &Story| turn_card(s.view().turn(&turn("tn_1")).unwrap());
    let posted = post(&platform, &group(), &card(&s)).await;
    s.deny_as_bob("call_w", "ib_w", "write_file");
    s.fail_rate_limited();
    update(&platform, &posted, &card(&s), 1).await;
    let streamed = bodies(&server, "PUT", STREAMING).await;
    assert_eq!(
        (&streamed[0]["isFinalize"], &streamed[0]["isError"]),
        (&json!(true), &json!(true))
    );
    let finished = bodies(&server, "PUT", INSTANCES).await;
    assert_eq!(finished[0]["cardData"]["cardParamMap"]["flowStatus"], "5");
}

#[tokio::test]
async fn a_finished_card_that_still_changes_is_updated_by_key_not_streamed() {
    let server = fake_api().await;
    let platform = platform(&server);
    let done = notice_card("Model switched");
    let posted = post(&platform, &group(), &done).await;
    update(&platform, &posted, &notice_card("Model switched twice"), 1).await;
    assert!(bodies(&server, "PUT", STREAMING).await.is_empty());
    let updated = bodies(&server, "PUT", INSTANCES).await;
    assert_eq!(
        updated[0]["cardData"]["cardParamMap"],
        json!({ "content": "> Model switched twice", "flowStatus": "3" })
    );
}

#[tokio::test]
async fn a_post_key_names_one_out_track_id_and_a_post_made_before_is_updated_not_created() {
    let server = MockServer::start().await;
    mount_token(&server, "t", 7_200).await;
    Mock::given(method("POST"))
        .and(path(CREATE))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_successes(&server).await;
    let platform = platform(&server);
    let card = notice_card("Model switched");
    let rendered = platform.render(&card);
    let first = Posting::first("key-a");
    let reserved = platform
        .reserve(&group(), &rendered, &first.key)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reserved.message_id, "wm_key-a", "known before the post");
    assert!(platform.post(&group(), &rendered, &first).await.is_err());
    let posted = platform.post(&group(), &rendered, &first).await.unwrap();
    let other = platform
        .post(&group(), &rendered, &Posting::first("key-b"))
        .await
        .unwrap();
    let ids: Vec<Value> = bodies(&server, "POST", CREATE)
        .await
        .into_iter()
        .map(|b| b["outTrackId"].clone())
        .collect();
    assert_eq!(
        ids,
        [json!("wm_key-a"), json!("wm_key-a"), json!("wm_key-b")]
    );
    assert_eq!(posted, reserved);
    assert_eq!(
        other.message_id, "wm_key-b",
        "another card does not collide"
    );

    // Posted again by a process that does not know whether the first post was made: the card
    // is there, so it is updated, and nothing is created.
    let again = Posting {
        again: true,
        reserved: Some(reserved.clone()),
        ..first
    };
    assert_eq!(
        platform.post(&group(), &rendered, &again).await.unwrap(),
        reserved
    );
    assert_eq!(bodies(&server, "POST", CREATE).await.len(), 3);
    let updated = bodies(&server, "PUT", INSTANCES).await;
    assert_eq!(updated.last().unwrap()["outTrackId"], "wm_key-a");
}

#[tokio::test]
async fn notices_are_robot_messages_to_the_group_or_the_person() {
    let server = fake_api().await;
    let platform = platform(&server);
    platform.notice(&group(), "Stopped.").await.unwrap();
    let direct = ChatTarget {
        chat_id: "manager1234".into(),
        thread_id: None,
        reply: None,
        person: None,
    };
    platform.notice(&direct, "Stopped.").await.unwrap();
    platform
        .private_notice(&group(), "bob", &notice_card("Only you can see this"))
        .await
        .unwrap();
    assert_eq!(
        bodies(&server, "POST", "/v1.0/robot/groupMessages/send").await,
        vec![json!({
            "robotCode": CLIENT_ID,
            "openConversationId": GROUP,
            "msgKey": "sampleText",
            "msgParam": "{\"content\":\"Stopped.\"}",
        })]
    );
    let one_to_one = bodies(&server, "POST", "/v1.0/robot/oToMessages/batchSend").await;
    assert_eq!(one_to_one[0]["userIds"], json!(["manager1234"]));
    assert_eq!(one_to_one[1]["userIds"], json!(["bob"]));
    assert_eq!(one_to_one[1]["msgKey"], "sampleMarkdown");
    let param: Value = serde_json::from_str(one_to_one[1]["msgParam"].as_str().unwrap()).unwrap();
    assert_eq!(
        param,
        json!({ "title": "workmate", "text": "> Only you can see this" })
    );
    assert_eq!(platform.profile("bob").await, Default::default());
    assert!(
        !routes(&server).await.iter().any(|r| r.contains("contact")),
        "no profile lookup is made"
    );
}

#[tokio::test]
async fn the_pace_and_the_answer_budget_are_the_configured_ones() {
    let server = fake_api().await;
    let platform = platform(&server);
    assert_eq!(
        platform.min_update_interval(),
        workmate_dingtalk::MIN_UPDATE_INTERVAL
    );
    assert_eq!(platform.answer_budget(), workmate_dingtalk::ANSWER_BUDGET);
    let mut config = DingTalkConfig::new("a", "b");
    config.min_update_interval = std::time::Duration::from_secs(3);
    config.answer_budget = 1_000;
    let paced = DingTalkPlatform::new(web(&server), config);
    assert_eq!(
        paced.min_update_interval(),
        std::time::Duration::from_secs(3)
    );
    assert_eq!(paced.answer_budget(), 1_000);
}

/// Who may decide, as a fake chat layer answers: fixed ids, or a failing store.
#[derive(Debug)]
struct FixedDeciders(Option<Vec<String>>);

impl workmate_adapter::Deciders for FixedDeciders {
    fn deciders<'a>(
        &'a self,
        _surface: workmate_protocol::Surface,
        _item: &'a workmate_protocol::InboxItemId,
    ) -> workmate_adapter::BoxFuture<'a, Result<Vec<String>, workmate_adapter::AdapterError>> {
        let answer = self
            .0
            .clone()
            .ok_or_else(|| workmate_adapter::AdapterError::Transient("store down".into()));
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn with_http_clicks_an_approval_card_gives_each_decider_their_own_key_privately() {
    let server = fake_api().await;
    let keys = workmate_dingtalk::card::ClickKeys::new("app secret");
    let mut config = DingTalkConfig::new("tpl-approval", "tpl-answer");
    config.callback = CallbackType::Http {
        route_key: "workmate".into(),
    };
    let bound = |deciders: Option<Vec<String>>| {
        DingTalkPlatform::new(web(&server), config.clone())
            .binding_clicks(keys.clone(), std::sync::Arc::new(FixedDeciders(deciders)))
    };
    let mut s = Story::asking_which_deploys_failed();
    s.check_the_ci_runs("call_1", "ib_1");
    let card = approval_card(s.view().approval(&item("ib_1")).unwrap());

    // The store cannot say who decides: the post fails to be retried, no card without keys.
    let failing = bound(None);
    let err = failing
        .post(&group(), &failing.render(&card), &first_post())
        .await
        .unwrap_err();
    assert!(
        matches!(err, workmate_adapter::AdapterError::Transient(_)),
        "{err:?}"
    );
    assert!(bodies(&server, "POST", CREATE).await.is_empty());

    let platform = bound(Some(vec!["owner".into(), "approver".into()]));
    post(&platform, &group(), &card).await;
    let created = bodies(&server, "POST", CREATE).await;
    let private = &created[0]["privateData"];
    for user in ["owner", "approver"] {
        assert_eq!(
            private[user]["cardParamMap"]["click_key"],
            json!(keys.key_for("approval_ib_1", user)),
            "{private:#}"
        );
    }
    assert_eq!(private.as_object().unwrap().len(), 2);
    let shared = created[0]["cardData"]["cardParamMap"].to_string();
    assert!(
        !shared.contains("click_key"),
        "never in the shared data: {shared}"
    );
    assert_eq!(created[0]["callbackType"], "HTTP");

    // An answer card has no buttons and no private data.
    let answer = notice_card("Model switched");
    post(&platform, &group(), &answer).await;
    let created = bodies(&server, "POST", CREATE).await;
    assert!(created[1].get("privateData").is_none(), "{:#}", created[1]);
}
