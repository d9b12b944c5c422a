//! "Private" means no one else can see it, on every platform. Each real platform adapter, against
//! a fake of its API, is told to show Ana (one of two people in a group) a notice holding a link
//! that is hers alone; the link must reach her, and no call anyone else in the group can see
//! (a group message, a reply stream, a `response_url`) may hold it.

use std::sync::Arc;

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::{ChatTarget, Platform};
use workmate_cards::{Block, Card, Inline, RichText};

/// What only Ana may see.
const SECRET: &str = "https://workmate.example/v1/connectors/connect?token=ANA-ONLY-3f9c";
const ANA: &str = "ana";

fn notice() -> Card {
    Card {
        blocks: vec![Block::Text(RichText(vec![Inline::Link {
            text: "Connect GitHub".into(),
            url: SECRET.into(),
        }]))],
    }
}

/// A fake that answers every call the way each platform's API says "done", with tokens.
async fn fake_api() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true, "ts": "1700000000.0001", "message_ts": "1700000000.0001", "channel": "C1",
            "code": 0, "msg": "ok", "tenant_access_token": "t-1", "expire": 7200,
            "data": {"message_id": "om_1"},
            "errcode": 0, "errmsg": "ok", "access_token": "at-1", "expires_in": 7200,
            "accessToken": "at-1", "expireIn": 7200, "processQueryKey": "q1",
        })))
        .mount(&server)
        .await;
    server
}

/// Every call the fake received, as (path with query, body).
async fn calls(server: &MockServer) -> Vec<(String, String)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|r| {
            let path = match r.url.query() {
                Some(q) => format!("{}?{q}", r.url.path()),
                None => r.url.path().to_owned(),
            };
            (path, String::from_utf8_lossy(&r.body).into_owned())
        })
        .collect()
}

/// Asserts that the secret went out only in calls `private` accepts, and in one at least.
fn only_privately(
    platform: &str,
    calls: &[(String, String)],
    private: impl Fn(&str, &Value) -> bool,
) {
    let carrying: Vec<&(String, String)> = calls
        .iter()
        .filter(|(_, body)| body.contains("ANA-ONLY"))
        .collect();
    assert!(
        !carrying.is_empty(),
        "{platform}: the notice never reached Ana: {calls:?}"
    );
    for (path, body) in carrying {
        let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        assert!(
            private(path, &body),
            "{platform}: the group could see {path} {body}"
        );
    }
}

fn group(chat: &str, reply: Option<String>) -> ChatTarget {
    ChatTarget {
        chat_id: chat.into(),
        thread_id: None,
        reply,
        person: None,
    }
}

#[tokio::test]
async fn slack_shows_it_as_an_ephemeral_message_to_her_alone() {
    let api = fake_api().await;
    let slack = workmate_slack::SlackPlatform::new(
        &format!("{}/api/", api.uri()),
        SecretString::from("xoxb-1"),
    )
    .unwrap();
    slack
        .private_notice(&group("C1", None), ANA, &notice())
        .await
        .unwrap();
    only_privately("Slack", &calls(&api).await, |path, body| {
        path.ends_with("chat.postEphemeral") && body["user"] == ANA
    });
}

#[tokio::test]
async fn feishu_sends_it_to_her_open_id() {
    let api = fake_api().await;
    let web =
        workmate_feishu::web::FeishuWeb::new(&api.uri(), "cli_1", "s".to_owned().into()).unwrap();
    let feishu = workmate_feishu::FeishuPlatform::new(Arc::new(web));
    let _ = feishu
        .private_notice(&group("oc_group", None), ANA, &notice())
        .await;
    only_privately("Feishu", &calls(&api).await, |path, body| {
        path.contains("receive_id_type=open_id") && body["receive_id"] == ANA
    });
}

#[tokio::test]
async fn dingtalk_sends_it_one_to_one() {
    let api = fake_api().await;
    let web = workmate_dingtalk::web::DingTalkWeb::new(&api.uri(), "ding1", "s".to_owned().into())
        .unwrap();
    let config = workmate_dingtalk::DingTalkConfig::new("tpl-a", "tpl-b");
    let dingtalk = workmate_dingtalk::DingTalkPlatform::new(Arc::new(web), config);
    let _ = dingtalk
        .private_notice(&group("cidGroup==", None), ANA, &notice())
        .await;
    only_privately("DingTalk", &calls(&api).await, |path, body| {
        path.ends_with("/oToMessages/batchSend") && body["userIds"] == json!([ANA])
    });
}

/// The smart robot's reply in a group, as Ana's message opened it.
fn robot_group_reply(response_url: &str) -> (ChatTarget, String) {
    let handle =
        workmate_wecom::ReplyHandle::callback("MSG-ANA", Some(response_url)).in_group(true);
    let stream = handle.stream.clone().unwrap();
    (group("wr_group", Some(handle.encode())), stream)
}

#[tokio::test]
async fn wecom_sends_it_as_an_app_message_and_the_group_only_hears_that_it_went() {
    let api = fake_api().await;
    let http = workmate_adapter::net::http_client().unwrap();
    let app = workmate_wecom::app::AppWeb::new(
        http.clone(),
        &api.uri(),
        "ww1",
        "1000002",
        "s".to_owned().into(),
    );
    let links = workmate_adapter::net::link_egress(&Default::default(), &api.uri()).unwrap();
    let wecom = Arc::new(workmate_wecom::WeComPlatform::new(links).with_app(app));
    let (target, stream) = robot_group_reply(&format!("{}/response", api.uri()));
    wecom.private_notice(&target, ANA, &notice()).await.unwrap();
    only_privately("WeCom", &calls(&api).await, |path, body| {
        path.starts_with("/cgi-bin/message/send") && body["touser"] == ANA
    });
    // What the group's reply stream shows (WeCom asks for it again and again): not the link.
    let shown = wecom.refresh(&stream).await.to_string();
    assert!(!shown.contains("ANA-ONLY"), "{shown}");
    assert!(shown.contains("private message"), "{shown}");
}

#[tokio::test]
async fn wecom_without_an_app_asks_her_to_write_privately_and_shows_nothing_else() {
    let api = fake_api().await;
    let links = workmate_adapter::net::link_egress(&Default::default(), &api.uri()).unwrap();
    let wecom = Arc::new(workmate_wecom::WeComPlatform::new(links));
    let (target, stream) = robot_group_reply(&format!("{}/response", api.uri()));
    wecom.private_notice(&target, ANA, &notice()).await.unwrap();
    let shown = wecom.refresh(&stream).await.to_string();
    assert!(!shown.contains("ANA-ONLY"), "{shown}");
    assert!(shown.contains("message me directly"), "{shown}");
    assert!(
        calls(&api)
            .await
            .iter()
            .all(|(_, body)| !body.contains("ANA-ONLY"))
    );

    // In her one-to-one chat with the robot, the reply itself is private.
    let handle = workmate_wecom::ReplyHandle::callback("MSG-DM", None);
    let stream = handle.stream.clone().unwrap();
    let direct = group(ANA, Some(handle.encode()));
    wecom.private_notice(&direct, ANA, &notice()).await.unwrap();
    assert!(
        wecom
            .refresh(&stream)
            .await
            .to_string()
            .contains("ANA-ONLY")
    );
}
