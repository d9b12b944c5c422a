//! A message's `response_url` takes one answer WeCom would show, in WeCom's shapes.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use workmate_sandbox::wecom::USERS;

use crate::support::{post as post_json, sandbox, send};
use crate::wecom_stub::{first_thread, recording_workmate};

/// workmate answering the message with a finished stream, so nothing is followed.
async fn app_with_a_message() -> (Router, String) {
    let (base, _) = recording_workmate(Arc::new(|_: &Value| {
        Some(json!({"msgtype": "stream", "stream": {"id": "wm1", "finish": true, "content": "On it."}}))
    }))
    .await;
    let app = sandbox(&base);
    let (status, answer) = post_json(
        &app,
        "/sandbox/wecom/say",
        None,
        &json!({"user": USERS[0].0, "text": "write the report"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let msgid = first_thread(&app).await[0]["ts"]
        .as_str()
        .unwrap()
        .to_owned();
    (app, msgid)
}

async fn answer(app: &Router, msgid: &str, body: &Value) -> Value {
    let (status, answer) =
        post_json(app, &format!("/sandbox/wecom/response/{msgid}"), None, body).await;
    assert_eq!(status, StatusCode::OK, "WeCom answers 200 with an errcode");
    answer
}

fn card() -> Value {
    json!({"msgtype": "template_card", "template_card": {
        "card_type": "button_interaction", "main_title": {"title": "Approve write_file?"},
        "horizontal_content_list": [{"keyname": "File", "value": "weekly-report.md"}],
        "button_list": [{"text": "Approve once", "style": 1, "key": "k1"}],
        "task_id": "task-1"}})
}

#[tokio::test]
async fn a_response_url_takes_one_answer_shown_in_the_messages_thread() {
    let (app, msgid) = app_with_a_message().await;
    assert_eq!(
        answer(&app, &msgid, &card()).await,
        json!({"errcode": 0, "errmsg": "ok"})
    );
    let thread = first_thread(&app).await;
    assert_eq!(thread.len(), 3, "{thread:#?}");
    assert_eq!(thread[1]["blocks"]["stream"]["content"], "On it.");
    assert_eq!(thread[2]["blocks"], card());
    assert_eq!(thread[2]["thread_ts"], msgid.as_str());
    assert_eq!(thread[2]["user"], "workmate");

    // A second answer is refused, and not shown.
    let markdown = json!({"msgtype": "markdown", "markdown": {"content": "The rest."}});
    let again = answer(&app, &msgid, &markdown).await;
    assert_eq!(again["errcode"], 45009, "{again}");
    assert_eq!(first_thread(&app).await.len(), 3);
}

#[tokio::test]
async fn the_rest_of_an_answer_arrives_as_markdown() {
    let (app, msgid) = app_with_a_message().await;
    let markdown = json!({"msgtype": "markdown", "markdown": {"content": "The rest."}});
    assert_eq!(answer(&app, &msgid, &markdown).await["errcode"], 0);
    assert_eq!(first_thread(&app).await[2]["blocks"], markdown);
}

#[tokio::test]
async fn what_wecom_would_not_take_is_refused_and_leaves_the_url_unused() {
    let (app, msgid) = app_with_a_message().await;
    let mut broken = card();
    broken["template_card"]["button_list"] = json!([]);
    for (body, errcode) in [
        (json!({"msgtype": "text", "text": {"content": "hi"}}), 40008),
        (
            json!({"msgtype": "markdown", "markdown": {"content": " "}}),
            40058,
        ),
        (broken, 40058),
    ] {
        let refused = answer(&app, &msgid, &body).await;
        assert_eq!(refused["errcode"], errcode, "{body} → {refused}");
        assert!(!refused["errmsg"].as_str().unwrap().is_empty());
    }
    // Not JSON.
    let request = Request::post(format!("/sandbox/wecom/response/{msgid}"))
        .header("content-type", "application/json")
        .body(Body::from("{not json"))
        .unwrap();
    let (status, refused) = send(&app, request).await;
    assert_eq!(
        (status, refused["errcode"].clone()),
        (StatusCode::OK, json!(47001))
    );
    // No such message, or one the robot sent.
    assert_eq!(answer(&app, "nothing", &card()).await["errcode"], 40058);
    let bubble = first_thread(&app).await[1]["ts"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(answer(&app, &bubble, &card()).await["errcode"], 40058);
    assert_eq!(first_thread(&app).await.len(), 2);

    // The refusals used nothing up.
    assert_eq!(answer(&app, &msgid, &card()).await["errcode"], 0);
}
