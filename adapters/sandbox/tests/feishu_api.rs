//! The Feishu stand-in answers like Feishu: the token only for the configured app, every other
//! call only with that token, and CardKit's sequence rule.

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use workmate_feishu::web::{FeishuWeb, ReceiveIdType};
use workmate_sandbox::feishu::{BOT_OPEN_ID, CHAT_ID, USERS};

use crate::support::{APP_ID, APP_SECRET, get, post, sandbox, serve};

const OPEN: &str = "/sandbox/feishu/open-apis";

/// The token the stand-in hands the configured app.
async fn token(app: &Router) -> String {
    let (status, body) = post(
        app,
        &format!("{OPEN}/auth/v3/tenant_access_token/internal"),
        None,
        &json!({"app_id": APP_ID, "app_secret": APP_SECRET}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["code"], 0);
    assert_eq!(body["expire"], 7200);
    body["tenant_access_token"].as_str().unwrap().to_owned()
}

async fn feishu_state(app: &Router) -> Value {
    let (_, _, state) = get(app, "/sandbox/feishu/state").await;
    serde_json::from_str(&state).unwrap()
}

fn card(streaming: bool, text: &str) -> Value {
    json!({"schema": "2.0", "config": {"update_multi": true, "streaming_mode": streaming},
           "header": {"title": {"tag": "plain_text", "content": "Report"}},
           "body": {"elements": [{"tag": "markdown", "element_id": "e0", "content": text}]}})
}

fn card_body(card: &Value) -> Value {
    json!({"type": "card_json", "data": card.to_string()})
}

#[tokio::test]
async fn only_the_configured_app_gets_a_token_and_every_call_needs_it() {
    let app = sandbox("http://127.0.0.1:9");
    let path = format!("{OPEN}/auth/v3/tenant_access_token/internal");
    for wrong in [
        json!({"app_id": APP_ID, "app_secret": "guess"}),
        json!({"app_id": "cli_other", "app_secret": APP_SECRET}),
        json!({}),
    ] {
        let (status, body) = post(&app, &path, None, &wrong).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], 10_014, "{wrong}");
        assert!(body.get("tenant_access_token").is_none());
    }
    let token = token(&app).await;
    assert!(token.starts_with("t-"));

    let create = format!("{OPEN}/cardkit/v1/cards");
    let body = card_body(&card(false, "hi"));
    let (_, missing) = post(&app, &create, None, &body).await;
    assert_eq!(missing["code"], 99_991_661);
    let (_, wrong) = post(&app, &create, Some("t-guess"), &body).await;
    assert_eq!(wrong["code"], 99_991_663);
    let send = format!("{OPEN}/im/v1/messages?receive_id_type=chat_id");
    let text = json!({"receive_id": CHAT_ID, "msg_type": "text", "content": "{\"text\":\"hi\"}"});
    let (_, wrong) = post(&app, &send, Some("t-guess"), &text).await;
    assert_eq!(wrong["code"], 99_991_663);
    assert_eq!(
        feishu_state(&app).await,
        json!({"channels": [], "cards": {}})
    );

    // The same calls with the token are answered and stored.
    let (status, created) = post(&app, &create, Some(&token), &body).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(created["code"], 0);
    assert_eq!(created["msg"], "success");
    let (_, sent) = post(&app, &send, Some(&token), &text).await;
    assert!(
        sent["data"]["message_id"]
            .as_str()
            .unwrap()
            .starts_with("om_")
    );
    let state = feishu_state(&app).await;
    assert_eq!(state["channels"][0]["id"], CHAT_ID);
    assert_eq!(state["channels"][0]["name"], "general");
    assert_eq!(state["cards"].as_object().unwrap().len(), 1);
}

/// workmate's own Feishu client, pointed at the stand-in: names, cards, streaming and the
/// sequence rule.
#[tokio::test]
async fn workmates_feishu_client_posts_streams_and_updates_through_the_stand_in() {
    let app = sandbox("http://127.0.0.1:9");
    let base = serve(app.clone()).await;
    let web = FeishuWeb::new(
        &format!("{base}/sandbox/feishu"),
        APP_ID,
        APP_SECRET.to_owned().into(),
    )
    .unwrap();
    assert_eq!(web.bot_open_id().await.unwrap(), BOT_OPEN_ID);
    assert_eq!(
        web.user_name(USERS[0].0).await.unwrap().as_deref(),
        Some("Alice")
    );
    assert!(web.user_name("ou_stranger").await.is_err());

    let root = web
        .send_message(
            ReceiveIdType::ChatId,
            CHAT_ID,
            "text",
            &json!({"text": "root"}),
            "k-root",
        )
        .await
        .unwrap();
    let card_id = web.create_card(&card(true, "")).await.unwrap();
    let content = json!({"type": "card", "data": {"card_id": card_id}});
    let reply = web
        .reply_message(&root, "interactive", &content, "k-card")
        .await
        .unwrap();
    // The same idempotency key posts nothing new; a card entity is sent once.
    assert_eq!(
        web.reply_message(&root, "interactive", &content, "k-card")
            .await
            .unwrap(),
        reply
    );
    let again = web
        .reply_message(&root, "interactive", &content, "k-card-2")
        .await
        .unwrap_err();
    assert_eq!(again.code(), Some(230_099), "{again}");

    web.stream_element(&card_id, "e0", "Hel", 2).await.unwrap();
    web.stream_element(&card_id, "e0", "Hello", 4)
        .await
        .unwrap();
    // A sequence that does not grow is refused with Feishu's code, and changes nothing.
    let stale = web
        .stream_element(&card_id, "e0", "Hello, wor", 3)
        .await
        .unwrap_err();
    assert_eq!(stale.code(), Some(300_317), "{stale}");
    // The same sequence again is either a retry (the same text) or a conflict.
    web.stream_element(&card_id, "e0", "Hello", 4)
        .await
        .unwrap();
    let reused = web
        .stream_element(&card_id, "e0", "Hello, wor", 4)
        .await
        .unwrap_err();
    assert_eq!(reused.code(), Some(200_770), "{reused}");
    let older = web
        .update_card(&card_id, &card(false, "x"), 3)
        .await
        .unwrap_err();
    assert_eq!(older.code(), Some(300_317), "{older}");
    web.set_streaming(&card_id, false, 6).await.unwrap();
    // Streaming text needs streaming mode (the code, 300309, is checked in the unit tests:
    // workmate's client reads that code as a rate limit).
    assert!(
        web.stream_element(&card_id, "e0", "Hello, world", 7)
            .await
            .is_err()
    );
    web.update_card(&card_id, &card(false, "Hello, world."), 7)
        .await
        .unwrap();

    let state = feishu_state(&app).await;
    let stored = &state["cards"][&card_id];
    assert_eq!(stored["body"]["elements"][0]["content"], "Hello, world.");
    assert_eq!(stored["config"]["streaming_mode"], false);
    let thread = &state["channels"][0]["threads"][0];
    assert_eq!(thread["ts"], root.as_str());
    let messages = thread["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["ts"], reply.as_str());
    assert_eq!(messages[1]["thread_ts"], root.as_str());
    assert_eq!(messages[1]["card_id"], card_id.as_str());
    assert_eq!(messages[1]["user"], BOT_OPEN_ID);
}

#[tokio::test]
async fn messages_go_only_to_the_sandbox_chat_and_people() {
    let app = sandbox("http://127.0.0.1:9");
    let token = token(&app).await;
    let text =
        |to: &str| json!({"receive_id": to, "msg_type": "text", "content": "{\"text\":\"hi\"}"});
    let chat = format!("{OPEN}/im/v1/messages?receive_id_type=chat_id");
    let person = format!("{OPEN}/im/v1/messages?receive_id_type=open_id");
    let (_, body) = post(&app, &chat, Some(&token), &text("oc_elsewhere")).await;
    assert_eq!(body["code"], 230_002);
    let (_, body) = post(&app, &person, Some(&token), &text("ou_stranger")).await;
    assert_eq!(body["code"], 230_013);
    let (_, body) = post(
        &app,
        &format!("{OPEN}/im/v1/messages/om_nothing/reply"),
        Some(&token),
        &text(""),
    )
    .await;
    assert_eq!(body["code"], 230_001);
    let inline_1_0 = json!({"receive_id": USERS[1].0, "msg_type": "interactive",
                            "content": json!({"elements": []}).to_string()});
    let (_, body) = post(&app, &person, Some(&token), &inline_1_0).await;
    assert_eq!(body["code"], 230_099);
    assert_eq!(feishu_state(&app).await["channels"], json!([]));

    // A direct message (a card sent inline) to a sandbox person is kept in their own chat.
    let direct = json!({"receive_id": USERS[1].0, "msg_type": "interactive",
                        "content": card(false, "Not yours to approve.").to_string()});
    let (_, body) = post(&app, &person, Some(&token), &direct).await;
    assert_eq!(body["code"], 0, "{body}");
    let state = feishu_state(&app).await;
    assert_eq!(state["channels"][0]["id"], USERS[1].0);
    let message = &state["channels"][0]["threads"][0]["messages"][0];
    assert_eq!(
        message["blocks"]["body"]["elements"][0]["content"],
        "Not yours to approve."
    );
}
