//! The self-built app beside the WeCom robot: its token only for the configured secret, the
//! names WeCom shows, and app messages shown in the person's own direct chat, never the group.

use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_sandbox::wecom::{CHAT_ID, USERS};

use crate::support::{CORP_ID, WECOM_APP_SECRET, get, post, sandbox};

async fn get_json(app: &axum::Router, path: &str) -> Value {
    let (status, _, body) = get(app, path).await;
    assert_eq!(status, StatusCode::OK, "WeCom answers 200 with an errcode");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn the_app_names_people_and_its_messages_reach_one_person_only() {
    let app = sandbox("http://127.0.0.1:9");
    let wrong = get_json(
        &app,
        &format!("/sandbox/wecom/cgi-bin/gettoken?corpid={CORP_ID}&corpsecret=guess"),
    )
    .await;
    assert_eq!(wrong["errcode"], 40_001, "{wrong}");
    let token = get_json(
        &app,
        &format!("/sandbox/wecom/cgi-bin/gettoken?corpid={CORP_ID}&corpsecret={WECOM_APP_SECRET}"),
    )
    .await;
    let token = token["access_token"].as_str().unwrap().to_owned();

    let (userid, name) = USERS[0];
    let user = get_json(
        &app,
        &format!("/sandbox/wecom/cgi-bin/user/get?access_token={token}&userid={userid}"),
    )
    .await;
    assert_eq!(
        (user["errcode"].clone(), user["name"].clone()),
        (json!(0), json!(name))
    );
    let nobody = get_json(
        &app,
        &format!("/sandbox/wecom/cgi-bin/user/get?access_token={token}&userid=ghost"),
    )
    .await;
    assert_eq!(nobody["errcode"], 60_111);

    let message = json!({"touser": userid, "agentid": 1_000_002, "msgtype": "markdown",
                         "markdown": {"content": "Only for you."}});
    let (status, sent) = post(
        &app,
        &format!("/sandbox/wecom/cgi-bin/message/send?access_token={token}"),
        None,
        &message,
    )
    .await;
    assert_eq!(
        (status, sent["errcode"].clone()),
        (StatusCode::OK, json!(0)),
        "{sent}"
    );
    let (_, _, state) = get(&app, "/sandbox/wecom/state").await;
    let state: Value = serde_json::from_str(&state).unwrap();
    let channel = |id: &str| {
        state["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert!(
        channel(userid).to_string().contains("Only for you."),
        "{state:#}"
    );
    assert!(
        !channel(CHAT_ID).to_string().contains("Only for you."),
        "{state:#}"
    );

    let (_, refused) = post(
        &app,
        "/sandbox/wecom/cgi-bin/message/send?access_token=stolen",
        None,
        &message,
    )
    .await;
    assert_eq!(refused["errcode"], 40_001);
}
