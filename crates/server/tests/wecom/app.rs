//! The self-built app end to end: encrypted XML callbacks in, `message/send` and
//! `update_template_card` out to a fake WeCom API.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_server::config::WeComConfig;
use workmate_server::http::{AppState, router};
use workmate_server::platforms::wecom::WeComSurface;
use workmate_server::platforms::{Mounted, Platforms};
use workmate_wxcrypto::Crypto;

use super::{AES_KEY, CORP, SHELL, TOKEN};
use crate::router::app_with_script;
use crate::support::{calls, wait_for};

async fn fake_api() -> MockServer {
    let fake = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/cgi-bin/gettoken"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"errcode": 0, "errmsg": "ok", "access_token": "tok-1", "expires_in": 7200}),
        ))
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/send"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"errcode": 0, "errmsg": "ok", "msgid": "m1", "response_code": "RC-sent"}),
        ))
        .mount(&fake)
        .await;
    // The names WeCom shows, for the people the app may see.
    for (user, name) in [("boss", "王老板"), ("ana", "安娜")] {
        Mock::given(method("GET"))
            .and(path("/cgi-bin/user/get"))
            .and(wiremock::matchers::query_param("userid", user))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(
                    json!({"errcode": 0, "errmsg": "ok", "userid": user, "name": name}),
                ),
            )
            .mount(&fake)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/update_template_card"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"errcode": 0, "errmsg": "ok"})),
        )
        .mount(&fake)
        .await;
    fake
}

/// Posts `xml` to the callback route encrypted for the app, as WeCom does.
async fn post_xml(router: &axum::Router, crypto: &Crypto, xml: &str) -> (StatusCode, String) {
    let encrypt = crypto.encrypt_with(*b"fedcba9876543210", xml);
    let now = crate::support::unix_now_s();
    let signature = crypto.signature(&now, "n1", &encrypt);
    let envelope = format!(
        "<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><Encrypt><![CDATA[{encrypt}]]></Encrypt><AgentID><![CDATA[1000002]]></AgentID></xml>"
    );
    let request = Request::builder()
        .method("POST")
        .uri(format!(
            "/v1/platforms/wecom/callback?msg_signature={signature}&timestamp={now}&nonce=n1"
        ))
        .header("content-type", "text/xml")
        .body(Body::from(envelope))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn text(msg_id: &str, from: &str, content: &str) -> String {
    format!(
        "<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[{from}]]></FromUserName><CreateTime>1700000000</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{content}]]></Content><MsgId>{msg_id}</MsgId><AgentID>1000002</AgentID></xml>"
    )
}

fn card_click(from: &str, key: &str, task_id: &str, code: &str) -> String {
    let key = key.replace("]]>", "");
    format!(
        "<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[{from}]]></FromUserName><CreateTime>1700000100</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[template_card_event]]></Event><EventKey><![CDATA[{key}]]></EventKey><TaskId><![CDATA[{task_id}]]></TaskId><CardType><![CDATA[button_interaction]]></CardType><ResponseCode><![CDATA[{code}]]></ResponseCode><AgentID>1000002</AgentID></xml>"
    )
}

#[tokio::test]
async fn an_app_message_gets_a_template_card_a_click_updates_it_and_the_answer_arrives_whole() {
    let fake = fake_api().await;
    let app = app_with_script(SHELL).await;
    let mut config = WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), &fake.uri())
        .with_admins(vec!["boss".into()]);
    config.agent_id = Some("1000002".into());
    config.secret = Some("app-secret".into());
    let chat = app.state.chat.clone();
    let surface =
        WeComSurface::new(&config, &chat, &workmate_net::NetworkPolicy::public_only()).unwrap();
    chat.start();
    let router = router(AppState {
        platforms: Platforms::of([Arc::clone(&surface) as Arc<dyn Mounted>]),
        ..app.state.clone()
    });
    let crypto = Crypto::new(TOKEN, AES_KEY, CORP).unwrap();

    // Two deliveries of one message: one turn, one approval card.
    for _ in 0..2 {
        let (status, body) = post_xml(
            &router,
            &crypto,
            &text("4561255354251345929", "ana", "run it"),
        )
        .await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, ""));
    }
    let sent = wait_for(
        &fake,
        "/cgi-bin/message/send",
        "the approval card",
        |calls| calls.iter().any(|c| c.body["msgtype"] == "template_card"),
    )
    .await;
    let card = sent
        .iter()
        .find(|c| c.body["msgtype"] == "template_card")
        .unwrap();
    assert_eq!(card.body["touser"], "ana");
    assert_eq!(card.body["agentid"], 1_000_002);
    let template = &card.body["template_card"];
    assert_eq!(template["card_type"], "button_interaction");
    let task_id = template["task_id"].as_str().unwrap();
    let once = super::once_key(template);

    // A stranger's click changes nothing but their own copy of the card.
    let (status, _) = post_xml(
        &router,
        &crypto,
        &card_click("stranger", &once, task_id, "RC-1"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // The admin's click updates the card through the click's response code.
    let (status, _) = post_xml(
        &router,
        &crypto,
        &card_click("boss", &once, task_id, "RC-2"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let updates = calls(&fake, "/cgi-bin/message/update_template_card").await;
    assert_eq!(updates.len(), 2, "{updates:#?}");
    // The stranger's own copy says why their click was refused; nobody else's changes.
    let refused = &updates[0].body;
    assert_eq!(
        (&refused["response_code"], &refused["userids"]),
        (&json!("RC-1"), &json!(["stranger"]))
    );
    assert!(
        refused["template_card"]
            .to_string()
            .contains("⛔ Only 安娜"),
        "{refused:#}"
    );
    let update = &updates[1].body;
    assert_eq!(update["response_code"], "RC-2");
    assert_eq!(update["userids"], json!(["boss"]));
    assert_eq!(update["template_card"]["task_id"], task_id);
    // People are named as WeCom shows them, not by their user ids.
    assert!(
        update["template_card"]
            .to_string()
            .contains("Approved by 王老板"),
        "{update:#}"
    );

    // The answer is sent once, whole, when the turn is done (an app message cannot be edited).
    let sent = wait_for(&fake, "/cgi-bin/message/send", "the answer", |calls| {
        calls
            .iter()
            .any(|c| c.body["markdown"]["content"].to_string().contains("Done."))
    })
    .await;
    let answers: Vec<_> = sent
        .iter()
        .filter(|c| c.body["msgtype"] == "markdown")
        .map(|c| c.body["markdown"]["content"].as_str().unwrap())
        .collect();
    // Ana's own card cannot change (the click was the admin's): a note below it says who
    // approved; the answer comes once.
    assert_eq!(answers.len(), 2, "{answers:#?}");
    assert!(answers[0].contains("✅ Approved by 王老板"), "{answers:#?}");
    assert_eq!(
        answers.iter().filter(|a| a.contains("Done.")).count(),
        1,
        "{answers:#?}"
    );
    assert_eq!(
        calls(&fake, "/cgi-bin/gettoken").await.len(),
        1,
        "the token is cached"
    );
}

#[tokio::test]
async fn an_approver_gets_a_copy_as_an_app_card_and_answers_from_it() {
    let fake = fake_api().await;
    let app = app_with_script(SHELL).await;
    let mut config = WeComConfig::callback(CORP, TOKEN.into(), AES_KEY.into(), &fake.uri());
    config.agent_id = Some("1000002".into());
    config.secret = Some("app-secret".into());
    let tenant = workmate_chat::tenant_of(workmate_protocol::Surface::Wecom, CORP);
    crate::support::separation_of_duties(&app.store, &tenant).await;
    crate::support::approver_on(&app.store, &tenant, "wecom", "carol", "Carol").await;
    crate::support::approver_on(&app.store, &tenant, "wecom", "dave", "Dave").await;
    let chat = app.state.chat.clone();
    let surface =
        WeComSurface::new(&config, &chat, &workmate_net::NetworkPolicy::public_only()).unwrap();
    chat.start();
    let router = router(AppState {
        platforms: Platforms::of([Arc::clone(&surface) as Arc<dyn Mounted>]),
        ..app.state.clone()
    });
    let crypto = Crypto::new(TOKEN, AES_KEY, CORP).unwrap();
    post_xml(
        &router,
        &crypto,
        &text("4561255354251345001", "ana", "run it"),
    )
    .await;
    // Ana may not approve her own command (separation of duties): Carol gets it as an app card.
    let sent = wait_for(&fake, "/cgi-bin/message/send", "both copies", |calls| {
        ["carol", "dave"].iter().all(|who| {
            calls
                .iter()
                .any(|c| c.body["touser"] == *who && c.body["msgtype"] == "template_card")
        })
    })
    .await;
    let copy = sent.iter().find(|c| c.body["touser"] == "carol").unwrap();
    let template = &copy.body["template_card"];
    let task_id = template["task_id"].as_str().unwrap();
    let once = super::once_key(template);
    post_xml(
        &router,
        &crypto,
        &card_click("carol", &once, task_id, "RC-carol"),
    )
    .await;
    let updates = wait_for(
        &fake,
        "/cgi-bin/message/update_template_card",
        "carol's copy answered",
        |calls| !calls.is_empty(),
    )
    .await;
    assert_eq!(updates[0].body["userids"], json!(["carol"]));
    assert!(
        updates[0].body["template_card"]
            .to_string()
            .contains("Approved by"),
        "{:#}",
        updates[0].body
    );
    // WeCom lets a card change only in the answer to a click on it: Dave, who did not click
    // his copy, is told below it who answered; Carol's own card already says so.
    let sent = wait_for(&fake, "/cgi-bin/message/send", "dave told", |calls| {
        calls
            .iter()
            .any(|c| c.body["touser"] == "dave" && c.body["msgtype"] == "markdown")
    })
    .await;
    let told = sent
        .iter()
        .find(|c| c.body["touser"] == "dave" && c.body["msgtype"] == "markdown")
        .unwrap();
    let note = told.body["markdown"]["content"].as_str().unwrap();
    assert!(note.contains("Approved by Carol"), "{note}");
    assert!(note.lines().count() <= 2, "short: {note}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let to_carol = crate::support::calls(&fake, "/cgi-bin/message/send")
        .await
        .into_iter()
        .filter(|c| c.body["touser"] == "carol" && c.body["msgtype"] == "markdown")
        .count();
    assert_eq!(to_carol, 0, "her card already shows it");
}
