//! Building the sandbox and calling it with `oneshot`.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use workmate_sandbox::{
    DingTalkSandbox, FeishuSandbox, SandboxConfig, SlackSandbox, WeComSandbox, router,
};

pub(crate) const SECRET: &str = "sandbox-test-secret";
pub(crate) const TOKEN: &str = "xoxb-sandbox-test";
pub(crate) const APP_ID: &str = "cli_sandbox_test";
pub(crate) const APP_SECRET: &str = "feishu-app-secret";
pub(crate) const ENCRYPT_KEY: &str = "feishu-encrypt-key";
pub(crate) const VERIFICATION_TOKEN: &str = "feishu-verification-token";
pub(crate) const CORP_ID: &str = "ww_sandbox_test";
pub(crate) const WECOM_TOKEN: &str = "wecom-token";
pub(crate) const WECOM_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";
pub(crate) const WECOM_APP_SECRET: &str = "wecom-app-secret";
pub(crate) const DINGTALK_CLIENT_ID: &str = "dingsandboxtest";
pub(crate) const DINGTALK_SECRET: &str = "dingtalk-app-secret";
pub(crate) const DINGTALK_TEMPLATE: &str = "tpl-approval.schema";

/// The test configuration, delivering to `workmate_base`.
pub(crate) fn config(workmate_base: &str) -> SandboxConfig {
    SandboxConfig {
        workmate_base: workmate_base.into(),
        slack: SlackSandbox {
            signing_secret: SECRET.into(),
            bot_token: TOKEN.into(),
        },
        feishu: FeishuSandbox {
            app_id: APP_ID.into(),
            app_secret: APP_SECRET.into(),
            encrypt_key: ENCRYPT_KEY.into(),
            verification_token: VERIFICATION_TOKEN.into(),
        },
        wecom: WeComSandbox {
            corp_id: CORP_ID.into(),
            token: WECOM_TOKEN.into(),
            encoding_aes_key: WECOM_KEY.into(),
            app_secret: WECOM_APP_SECRET.into(),
        },
        dingtalk: DingTalkSandbox {
            client_id: DINGTALK_CLIENT_ID.into(),
            client_secret: DINGTALK_SECRET.into(),
            card_template_id: DINGTALK_TEMPLATE.into(),
        },
    }
}

pub(crate) fn sandbox(workmate_base: &str) -> Router {
    router(config(workmate_base)).unwrap()
}

/// Sends a request to the sandbox; returns the status and the JSON body (`null` if not JSON).
pub(crate) async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Serves the sandbox on a local port; returns its base URL (`http://127.0.0.1:<port>`).
pub(crate) async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// POSTs JSON, with a bearer token when given; returns the status and the body.
pub(crate) async fn post(
    app: &Router,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> (StatusCode, Value) {
    let mut request = Request::post(path).header("content-type", "application/json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

pub(crate) async fn get(app: &Router, path: &str) -> (StatusCode, String, String) {
    let request = Request::get(path).body(Body::empty()).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}
