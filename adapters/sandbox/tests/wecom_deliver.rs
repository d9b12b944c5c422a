//! Saying and clicking on the WeCom side reach workmate as WeCom posts them (encrypted, signed
//! smart-robot callbacks); the passive replies are applied as WeCom applies them: a stream
//! followed in the message's bubble until it finishes, a card updated for everyone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_sandbox::wecom::{AIBOT_ID, CHAT_ID, USERS};

use crate::support::{post as post_json, sandbox};
use crate::wecom_stub::{
    Script, first_thread, recording_workmate, recording_workmate_sealing_with, until,
};

const ZHANGSAN: &str = USERS[0].0;
const LISI: &str = USERS[1].0;

fn stream(id: &str, content: &str, finish: bool) -> Value {
    json!({"msgtype": "stream", "stream": {"id": id, "finish": finish, "content": content}})
}

/// workmate as the tests need it: a message opens the stream `wm1`, the first refresh shows
/// "Thinking", the next ones "Done." (finished); a click is answered with `click_answer`.
fn script(click_answer: Option<Value>) -> Script {
    let refreshes = AtomicUsize::new(0);
    Arc::new(move |callback: &Value| match callback["msgtype"].as_str() {
        Some("text") => Some(stream("wm1", "", false)),
        Some("stream") => Some(if refreshes.fetch_add(1, Ordering::SeqCst) == 0 {
            stream("wm1", "Thinking", false)
        } else {
            stream("wm1", "**Done.**", true)
        }),
        _ => click_answer.clone(),
    })
}

fn prompt(task_id: &str) -> Value {
    json!({"msgtype": "template_card", "template_card": {
        "card_type": "button_interaction", "main_title": {"title": "Approve run_shell?"},
        "sub_title_text": "echo hi",
        "button_list": [{"text": "Approve once", "style": 1, "key": "{\"approve\":\"once\"}"},
                        {"text": "Deny", "style": 3, "key": "{\"deny\":true}"}],
        "task_id": task_id}})
}

fn notice(task_id: &str) -> Value {
    json!({"card_type": "text_notice", "main_title": {"title": "Approve run_shell?"},
           "sub_title_text": "✅ Approved by lisi · once", "card_action": {"type": 0},
           "task_id": task_id})
}

async fn say(app: &Router, user: &str, text: &str) -> (StatusCode, Value) {
    post_json(
        app,
        "/sandbox/wecom/say",
        None,
        &json!({"user": user, "text": text}),
    )
    .await
}

/// Says something, then posts `card` to the message's response URL; the card's message id.
async fn card_in_thread(app: &Router, card: &Value) -> String {
    let (status, answer) = say(app, ZHANGSAN, "run it").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let msgid = first_thread(app).await[0]["ts"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, ok) = post_json(app, &format!("/sandbox/wecom/response/{msgid}"), None, card).await;
    assert_eq!(ok, json!({"errcode": 0, "errmsg": "ok"}));
    let thread = first_thread(app).await;
    let shown = thread
        .iter()
        .find(|m| m["blocks"]["msgtype"] == "template_card")
        .unwrap();
    shown["ts"].as_str().unwrap().to_owned()
}

async fn click(app: &Router, user: &str, message_id: &str, key: &str) -> (StatusCode, Value) {
    post_json(
        app,
        "/sandbox/wecom/click",
        None,
        &json!({"user": user, "message_id": message_id, "key": key}),
    )
    .await
}

#[tokio::test]
async fn say_sends_an_encrypted_mention_and_the_stream_is_followed_until_it_finishes() {
    let (base, received) = recording_workmate(script(None)).await;
    let app = sandbox(&base);
    let (status, answer) = say(&app, ZHANGSAN, "@workmate write the report").await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let message = &received.of("text")[0];
    let thread = first_thread(&app).await;
    let msgid = thread[0]["ts"].as_str().unwrap();
    assert_eq!(message["msgid"], msgid);
    assert_eq!(message["aibotid"], AIBOT_ID);
    assert_eq!(message["chatid"], CHAT_ID);
    assert_eq!(message["chattype"], "group");
    assert_eq!(message["from"]["userid"], ZHANGSAN);
    assert_eq!(message["text"]["content"], "@workmate write the report");
    let response_url = message["response_url"].as_str().unwrap();
    assert_eq!(
        response_url,
        format!("{base}/sandbox/wecom/response/{msgid}")
    );
    assert_eq!(thread[0]["text"], "@workmate write the report");
    assert_eq!(thread[0]["user"], ZHANGSAN);
    // The passive reply opened the stream in a bubble below the message.
    assert_eq!(thread[1]["thread_ts"], msgid);
    assert_eq!(thread[1]["user"], "workmate");
    assert_eq!(thread[1]["blocks"]["stream"]["id"], "wm1");

    // WeCom asks again about every second, and shows each answer, until it finishes.
    let thread = until(&app, Duration::from_secs(6), "the finished stream", |t| {
        t.get(1)
            .is_some_and(|m| m["blocks"] == stream("wm1", "**Done.**", true))
    })
    .await;
    assert_eq!(thread.len(), 2);
    assert_eq!(thread[1]["edited"], false);
    let refreshes = received.of("stream");
    assert_eq!(refreshes.len(), 2, "{refreshes:#?}");
    for refresh in &refreshes {
        assert_eq!(refresh["stream"]["id"], "wm1");
        assert_eq!(refresh["from"]["userid"], ZHANGSAN);
        assert_eq!(refresh["chatid"], CHAT_ID);
    }
    assert_ne!(refreshes[0]["msgid"], refreshes[1]["msgid"]);
    assert_ne!(refreshes[0]["msgid"], msgid);
    // Finished: nothing more is asked.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(received.of("stream").len(), 2);

    // A message of nothing is not sent.
    let (status, _) = say(&app, LISI, "@workmate  ").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = say(&app, "wangwu", "hi").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(received.of("text").len(), 1);
}

#[tokio::test]
async fn a_click_sends_the_cards_key_and_task_id_and_the_answer_updates_the_card_for_everyone() {
    let (base, received) = recording_workmate(script(Some(json!({
        "response_type": "update_template_card",
        "template_card": notice("task-1"),
    }))))
    .await;
    let app = sandbox(&base);
    let card = card_in_thread(&app, &prompt("task-1")).await;

    let (status, answer) = click(&app, LISI, &card, "{\"approve\":\"once\"}").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["updated"], true);
    let event = &received.of("event")[0];
    assert_eq!(event["aibotid"], AIBOT_ID);
    assert_eq!(event["chatid"], CHAT_ID);
    assert_eq!(event["from"]["userid"], LISI);
    assert_eq!(event["event"]["eventtype"], "template_card_event");
    let clicked = &event["event"]["template_card_event"];
    assert_eq!(clicked["card_type"], "button_interaction");
    assert_eq!(clicked["event_key"], "{\"approve\":\"once\"}");
    assert_eq!(clicked["task_id"], "task-1");

    let thread = first_thread(&app).await;
    let shown = thread.iter().find(|m| m["ts"] == card.as_str()).unwrap();
    assert_eq!(
        shown["blocks"],
        json!({"msgtype": "template_card", "template_card": notice("task-1")})
    );
    // The notice has no buttons to click.
    let (status, _) = click(&app, LISI, &card, "{\"approve\":\"once\"}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(received.of("event").len(), 1);
}

#[tokio::test]
async fn bad_clicks_send_nothing_and_an_empty_answer_leaves_the_card() {
    let (base, received) = recording_workmate(script(None)).await;
    let app = sandbox(&base);
    let card = card_in_thread(&app, &prompt("task-2")).await;
    let before = first_thread(&app).await;

    for (user, message, key) in [
        ("wangwu", card.as_str(), "{\"deny\":true}"),
        (LISI, "nothing", "{\"deny\":true}"),
        (LISI, card.as_str(), "{\"forged\":true}"),
    ] {
        let (status, _) = click(&app, user, message, key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{user} {message} {key}");
    }
    assert!(received.of("event").is_empty());

    let (status, answer) = click(&app, LISI, &card, "{\"deny\":true}").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["updated"], false);
    assert_eq!(received.of("event").len(), 1);
    let after = first_thread(&app).await;
    let card_of = |thread: &[Value]| {
        thread
            .iter()
            .find(|m| m["ts"] == card.as_str())
            .unwrap()
            .clone()
    };
    assert_eq!(card_of(&after), card_of(&before));
}

#[tokio::test]
async fn an_update_for_another_task_or_for_some_people_is_refused_and_changes_nothing() {
    for answer in [
        json!({"response_type": "update_template_card", "template_card": notice("task-other")}),
        json!({"response_type": "update_template_card", "template_card": notice("task-3"),
               "userids": [LISI]}),
        json!({"response_type": "update_template_card", "template_card": {"card_type": "text_notice"}}),
        json!({"msgtype": "text", "text": {"content": "hi"}}),
    ] {
        let (base, _) = recording_workmate(script(Some(answer.clone()))).await;
        let app = sandbox(&base);
        let card = card_in_thread(&app, &prompt("task-3")).await;
        let (status, reported) = click(&app, LISI, &card, "{\"deny\":true}").await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
        assert!(
            reported["error"].as_str().unwrap().contains("WeCom"),
            "{reported}"
        );
        let thread = first_thread(&app).await;
        let shown = thread.iter().find(|m| m["ts"] == card.as_str()).unwrap();
        assert_eq!(shown["blocks"], prompt("task-3"), "{answer}");
    }
}

#[tokio::test]
async fn a_reply_sealed_with_another_token_is_not_shown_and_a_refusal_is_reported() {
    let (base, _) = recording_workmate_sealing_with(script(None), "another-token").await;
    let app = sandbox(&base);
    let (status, answer) = say(&app, ZHANGSAN, "hi").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        answer["error"].as_str().unwrap().contains("signature"),
        "{answer}"
    );
    assert_eq!(first_thread(&app).await.len(), 1);

    // The sandbox signs with another Token: workmate refuses, and the page is told.
    let (base, received) = recording_workmate(script(None)).await;
    let mut config = crate::support::config(&base);
    config.wecom.token = "another-token".into();
    let app = workmate_sandbox::router(config).unwrap();
    let (status, answer) = say(&app, ZHANGSAN, "hi").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer["status"], 401);
    assert!(received.all().is_empty());

    // A key that is not an EncodingAESKey cannot make a sandbox.
    let mut config = crate::support::config(&base);
    config.wecom.encoding_aes_key = "short".into();
    assert!(workmate_sandbox::router(config).is_err());
}
