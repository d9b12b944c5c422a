//! The fake Web API answers like Slack.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use workmate_slack::{SlackWeb, UserInfo};

use crate::support::{TOKEN, get, post, sandbox, send, serve};

/// `users.info` as Slack's SDKs call it: a form-encoded POST.
fn users_info_form(form: &str, token: Option<&str>) -> Request<Body> {
    let mut request = Request::post("/sandbox/api/users.info")
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(Body::from(form.to_owned())).unwrap()
}

fn person(id: &str, handle: &str, name: &str) -> Value {
    json!({"ok": true, "user": {
        "id": id, "name": handle, "real_name": name, "tz": "UTC",
        "profile": {"display_name": name, "real_name": name},
    }})
}

#[tokio::test]
async fn users_info_names_the_sandbox_people() {
    let app = sandbox("http://127.0.0.1:9");
    let (status, alice) = send(&app, users_info_form("user=U1", Some(TOKEN))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(alice, person("U1", "alice", "Alice"));

    // The user may also come in the query string (GET or POST), or as JSON.
    let get = Request::get("/sandbox/api/users.info?user=U2")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, get).await.1, person("U2", "bob", "Bob"));
    let query = Request::post("/sandbox/api/users.info?user=U2")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, query).await.1, person("U2", "bob", "Bob"));
    let (_, bob) = post(
        &app,
        "/sandbox/api/users.info",
        Some(TOKEN),
        &json!({"user": "U2"}),
    )
    .await;
    assert_eq!(bob, person("U2", "bob", "Bob"));
}

#[tokio::test]
async fn users_info_refuses_strangers_and_bad_tokens() {
    let app = sandbox("http://127.0.0.1:9");
    let not_found = json!({"ok": false, "error": "user_not_found"});
    for form in ["user=U9", "user=", "", "user=u1"] {
        let (status, body) = send(&app, users_info_form(form, Some(TOKEN))).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, not_found, "{form:?}");
    }
    let (_, body) = send(&app, users_info_form("user=U1", Some("xoxb-wrong"))).await;
    assert_eq!(body, json!({"ok": false, "error": "invalid_auth"}));
    let (_, body) = send(&app, users_info_form("user=U1", None)).await;
    assert_eq!(body, json!({"ok": false, "error": "not_authed"}));
    // The same call with the bot token is answered.
    let (_, body) = send(&app, users_info_form("user=U1", Some(TOKEN))).await;
    assert_eq!(body["user"]["real_name"], "Alice");
}

/// workmate's own Slack client, pointed at the sandbox, gets names rather than ids.
#[tokio::test]
async fn workmates_slack_client_reads_names_and_the_bot_from_the_sandbox() {
    let base = serve(sandbox("http://127.0.0.1:9")).await;
    let web = SlackWeb::new(&format!("{base}/sandbox/api"), TOKEN.to_owned().into()).unwrap();
    let alice = web.user_info("U1").await.unwrap();
    let mut expected = UserInfo::default();
    expected.name = Some("Alice".into());
    expected.tz = Some("UTC".into());
    assert_eq!(alice, expected);
    assert_eq!(
        web.user_info("U2").await.unwrap().name.as_deref(),
        Some("Bob")
    );
    assert!(web.user_info("U404").await.is_err());
    let bot = web.auth_test().await.unwrap();
    assert_eq!(
        (
            bot.team_id.as_str(),
            bot.user_id.as_str(),
            bot.bot_id.as_deref()
        ),
        ("TSANDBOX", "UBOT", Some("BSANDBOX"))
    );
}

#[tokio::test]
async fn auth_test_names_the_sandbox_bot() {
    let app = sandbox("http://127.0.0.1:9");
    let (status, body) = post(&app, "/sandbox/api/auth.test", Some(TOKEN), &json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"ok": true, "url": "http://sandbox.local/", "team": "Sandbox", "user": "workmate",
               "team_id": "TSANDBOX", "user_id": "UBOT", "bot_id": "BSANDBOX"})
    );
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_refused_and_nothing_is_stored() {
    let app = sandbox("http://127.0.0.1:9");
    let message = json!({"channel": "CGENERAL", "text": "hi"});
    let (_, body) = post(
        &app,
        "/sandbox/api/chat.postMessage",
        Some("xoxb-wrong"),
        &message,
    )
    .await;
    assert_eq!(body, json!({"ok": false, "error": "invalid_auth"}));
    let (_, body) = post(
        &app,
        "/sandbox/api/auth.test",
        Some("xoxb-wrong"),
        &json!({}),
    )
    .await;
    assert_eq!(body, json!({"ok": false, "error": "invalid_auth"}));
    let (_, body) = post(&app, "/sandbox/api/chat.postMessage", None, &message).await;
    assert_eq!(body["ok"], false);
    let (_, _, state) = get(&app, "/sandbox/state").await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&state).unwrap(),
        json!({"channels": []})
    );
}

#[tokio::test]
async fn post_update_and_ephemeral_have_slacks_shapes() {
    let app = sandbox("http://127.0.0.1:9");
    let blocks = json!([{"type": "section", "text": {"type": "mrkdwn", "text": "*Thinking*"}}]);
    let (_, root) = post(
        &app,
        "/sandbox/api/chat.postMessage",
        Some(TOKEN),
        &json!({"channel": "CGENERAL", "text": "root", "blocks": blocks}),
    )
    .await;
    assert_eq!(root["ok"], true);
    assert_eq!(root["channel"], "CGENERAL");
    let ts = root["ts"].as_str().unwrap().to_owned();
    let (secs, counter) = ts.split_once('.').unwrap();
    assert!(secs.parse::<u64>().unwrap() > 1_600_000_000);
    assert_eq!(counter.len(), 6);
    assert!(counter.bytes().all(|b| b.is_ascii_digit()));

    let (_, reply) = post(
        &app,
        "/sandbox/api/chat.postMessage",
        Some(TOKEN),
        &json!({"channel": "CGENERAL", "text": "reply", "thread_ts": ts}),
    )
    .await;
    assert_ne!(reply["ts"], root["ts"]);

    let (_, updated) = post(
        &app,
        "/sandbox/api/chat.update",
        Some(TOKEN),
        &json!({"channel": "CGENERAL", "ts": ts, "text": "Done", "blocks": []}),
    )
    .await;
    assert_eq!(updated["ok"], true);
    assert_eq!(updated["ts"], ts.as_str());
    let (_, missing) = post(
        &app,
        "/sandbox/api/chat.update",
        Some(TOKEN),
        &json!({"channel": "CGENERAL", "ts": "1.000001", "text": "x"}),
    )
    .await;
    assert_eq!(missing, json!({"ok": false, "error": "message_not_found"}));

    let (_, ephemeral) = post(
        &app,
        "/sandbox/api/chat.postEphemeral",
        Some(TOKEN),
        &json!({"channel": "CGENERAL", "user": "U2", "text": "Not yours to approve."}),
    )
    .await;
    assert_eq!(ephemeral["ok"], true);
    assert!(ephemeral["message_ts"].is_string());

    let (_, _, state) = get(&app, "/sandbox/state").await;
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let channel = &state["channels"][0];
    assert_eq!(channel["id"], "CGENERAL");
    assert_eq!(channel["name"], "general");
    let threads = channel["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    let first = threads[0]["messages"].as_array().unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0]["text"], "Done");
    assert_eq!(first[0]["edited"], true);
    assert_eq!(first[0]["user"], "UBOT");
    assert_eq!(first[1]["text"], "reply");
    assert_eq!(first[1]["thread_ts"], ts.as_str());
    assert_eq!(threads[1]["messages"][0]["ephemeral_for"], "U2");
}
