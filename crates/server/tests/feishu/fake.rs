//! A fake Feishu open platform: the token, bot, contact, message and CardKit endpoints, with
//! unique ids for every card and message it creates.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers `{"code":0,"data":{<field>: "<prefix><n>"}}` with a new n each time.
struct NewIds {
    next: AtomicUsize,
    field: &'static str,
    prefix: &'static str,
}

impl Respond for NewIds {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        ResponseTemplate::new(200).set_body_json(
            json!({"code": 0, "msg": "ok", "data": {self.field: format!("{}{n}", self.prefix)}}),
        )
    }
}

fn ok(data: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({"code": 0, "msg": "ok", "data": data}))
}

/// The fake, with every endpoint workmate calls.
pub(crate) async fn feishu() -> MockServer {
    let fake = MockServer::start().await;
    mount_identity(&fake).await;
    mount_cards(&fake).await;
    fake
}

/// The token, the bot's own info, and people's names.
pub(crate) async fn mount_identity(fake: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/open-apis/auth/v3/tenant_access_token/internal"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"code": 0, "msg": "ok", "tenant_access_token": "t-test", "expire": 7200}),
        ))
        .mount(fake)
        .await;
    Mock::given(method("GET"))
        .and(path("/open-apis/bot/v3/info"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"code": 0, "msg": "ok", "bot": {"open_id": "ou_bot", "app_name": "workmate"}}),
        ))
        .mount(fake)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/open-apis/contact/v3/users/"))
        .respond_with(|request: &Request| {
            let id = request
                .url
                .path()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            let name = match id.as_str() {
                "ou_ana" => "Ana Lima",
                "ou_boss" => "Bo Chen",
                _ => "Someone Else",
            };
            ok(&json!({"user": {"open_id": id, "name": name}}))
        })
        .mount(fake)
        .await;
}

/// CardKit and messages: every card and message created gets an id of its own.
async fn mount_cards(fake: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/open-apis/cardkit/v1/cards"))
        .respond_with(NewIds {
            next: AtomicUsize::new(1),
            field: "card_id",
            prefix: "card_",
        })
        .mount(fake)
        .await;
    Mock::given(method("POST"))
        .and(path_regex("^/open-apis/im/v1/messages"))
        .respond_with(NewIds {
            next: AtomicUsize::new(1),
            field: "message_id",
            prefix: "om_sent_",
        })
        .mount(fake)
        .await;
    for verb in ["PUT", "PATCH"] {
        Mock::given(method(verb))
            .and(path_regex("^/open-apis/cardkit/v1/cards/"))
            .respond_with(ok(&json!({})))
            .mount(fake)
            .await;
    }
}
