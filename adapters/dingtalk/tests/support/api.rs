//! A fake DingTalk open platform (wiremock): the token endpoint and every card and robot call
//! answering success, and the calls it received.

use std::sync::Arc;

use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_dingtalk::web::DingTalkWeb;

use super::gateway::{CLIENT_ID, CLIENT_SECRET};

/// The token the fake hands out.
pub(crate) const TOKEN: &str = "tok-1";

/// Mounts the token endpoint, answering `token` valid for `expire_in` seconds.
pub(crate) async fn mount_token(server: &MockServer, token: &str, expire_in: u64) {
    Mock::given(method("POST"))
        .and(path("/v1.0/oauth2/accessToken"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({ "accessToken": token, "expireIn": expire_in })),
        )
        .mount(server)
        .await;
}

/// A fake whose every card and robot call succeeds.
pub(crate) async fn fake_api() -> MockServer {
    let server = MockServer::start().await;
    mount_token(&server, TOKEN, 7_200).await;
    mount_successes(&server).await;
    server
}

/// Every card and robot call answers success.
pub(crate) async fn mount_successes(server: &MockServer) {
    let ok = |result: Value| {
        ResponseTemplate::new(200).set_body_json(json!({ "success": true, "result": result }))
    };
    let delivered = json!({ "deliverResults": [{ "success": true, "spaceId": "x" }] });
    let calls = [
        (
            "POST",
            "/v1.0/card/instances/createAndDeliver",
            ok(delivered),
        ),
        ("PUT", "/v1.0/card/instances", ok(json!(true))),
        ("PUT", "/v1.0/card/streaming", ok(json!(true))),
        (
            "POST",
            "/v1.0/robot/groupMessages/send",
            ResponseTemplate::new(200).set_body_json(json!({ "processQueryKey": "q1" })),
        ),
        (
            "POST",
            "/v1.0/robot/oToMessages/batchSend",
            ResponseTemplate::new(200)
                .set_body_json(json!({ "processQueryKey": "q2", "invalidStaffIdList": [] })),
        ),
    ];
    for (verb, route, answer) in calls {
        Mock::given(method(verb))
            .and(path(route))
            .respond_with(answer)
            .mount(server)
            .await;
    }
}

/// A client of the test app against `server`.
pub(crate) fn web(server: &MockServer) -> Arc<DingTalkWeb> {
    Arc::new(DingTalkWeb::new(&server.uri(), CLIENT_ID, SecretString::from(CLIENT_SECRET)).unwrap())
}

/// The bodies of the calls `server` received on `verb route`, in order.
pub(crate) async fn bodies(server: &MockServer, verb: &str, route: &str) -> Vec<Value> {
    requests(server, verb, route)
        .await
        .into_iter()
        .map(|(_, body)| body)
        .collect()
}

/// The token header and body of each call `server` received on `verb route`, in order.
pub(crate) async fn requests(
    server: &MockServer,
    verb: &str,
    route: &str,
) -> Vec<(Option<String>, Value)> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.method.as_str() == verb && r.url.path() == route)
        .map(|r| {
            let token = r
                .headers
                .get("x-acs-dingtalk-access-token")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            (
                token,
                serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// Every call `server` received, as `VERB path`, in order.
pub(crate) async fn routes(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}
