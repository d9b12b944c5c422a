//! The self-built app's API client against a fake WeCom: the token is cached, a refused token is
//! replaced once, errors keep their meaning.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};
use workmate_adapter::AdapterError;
use workmate_wecom::app::AppWeb;

async fn fake() -> MockServer {
    let fake = MockServer::start().await;
    let issued = AtomicUsize::new(0);
    Mock::given(method("GET"))
        .and(path("/cgi-bin/gettoken"))
        .and(query_param("corpid", "ww1"))
        .and(query_param("corpsecret", "s3cret"))
        .respond_with(move |_: &Request| {
            let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
            ResponseTemplate::new(200).set_body_json(
                json!({"errcode": 0, "errmsg": "ok", "access_token": format!("tok-{n}"), "expires_in": 7200}),
            )
        })
        .mount(&fake)
        .await;
    fake
}

fn app(fake: &MockServer, secret: &str) -> AppWeb {
    let http = workmate_adapter::net::http_client().unwrap();
    AppWeb::new(
        http,
        &fake.uri(),
        "ww1",
        "1000002",
        secret.to_owned().into(),
    )
}

fn tokens_seen(requests: &[Request]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.url.path() == "/cgi-bin/message/send")
        .filter_map(|r| r.url.query_pairs().find(|(k, _)| k == "access_token"))
        .map(|(_, v)| v.into_owned())
        .collect()
}

#[tokio::test]
async fn the_token_is_cached_and_a_refused_one_is_replaced_once() {
    let fake = fake().await;
    // The first token is refused as expired, once.
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/send"))
        .and(query_param("access_token", "tok-1"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"errcode": 42001, "errmsg": "access_token expired"})),
        )
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/send"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"errcode": 0, "errmsg": "ok", "msgid": "m1"})),
        )
        .mount(&fake)
        .await;
    let app = app(&fake, "s3cret");
    let text = json!({"msgtype": "markdown", "markdown": {"content": "hi"}});
    let sent = app.send("zhangsan", text.clone()).await.unwrap();
    assert_eq!(sent["msgid"], "m1");
    app.send("zhangsan", text).await.unwrap();
    let requests = fake.received_requests().await.unwrap();
    assert_eq!(tokens_seen(&requests), ["tok-1", "tok-2", "tok-2"]);
    let body: serde_json::Value = serde_json::from_slice(&requests.last().unwrap().body).unwrap();
    assert_eq!(body["touser"], "zhangsan");
    assert_eq!(body["agentid"], 1_000_002);
}

#[tokio::test]
async fn errors_say_what_went_wrong() {
    let fake = fake().await;
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/update_template_card"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"errcode": 45009, "errmsg": "api freq out of limit"})),
        )
        .mount(&fake)
        .await;
    Mock::given(method("POST"))
        .and(path("/cgi-bin/message/send"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"errcode": 81013, "errmsg": "user & party & tag all invalid"}),
            ),
        )
        .mount(&fake)
        .await;
    let app = app(&fake, "s3cret");
    let limited = app.update_card("RC1", "zhangsan", &json!({})).await;
    assert!(
        matches!(limited, Err(AdapterError::RateLimited { .. })),
        "{limited:?}"
    );
    let refused = app.send("nobody", json!({"msgtype": "text"})).await;
    match refused {
        Err(AdapterError::Rejected(why)) => assert!(why.contains("81013"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A wrong secret gets no token, and says which keys to check.
    let wrong = app_with_wrong_secret(&fake).await;
    match wrong {
        Err(AdapterError::Rejected(why)) => assert!(why.contains("secret"), "{why}"),
        other => panic!("{other:?}"),
    }
}

async fn app_with_wrong_secret(fake: &MockServer) -> Result<serde_json::Value, AdapterError> {
    Mock::given(method("GET"))
        .and(path("/cgi-bin/gettoken"))
        .and(query_param("corpsecret", "wrong"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"errcode": 40001, "errmsg": "invalid credential"})),
        )
        .mount(fake)
        .await;
    app(fake, "wrong")
        .send("zhangsan", json!({"msgtype": "text"}))
        .await
}

#[tokio::test]
async fn a_file_sent_to_the_app_is_fetched_by_its_media_id_and_a_refusal_says_why() {
    let fake = fake().await;
    Mock::given(method("GET"))
        .and(path("/cgi-bin/media/get"))
        .and(query_param("media_id", "MEDIA1"))
        .and(query_param("access_token", "tok-1"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "image/jpeg")
                .insert_header("content-disposition", "attachment; filename=\"MEDIA1.jpg\"")
                .set_body_bytes(vec![0xff, 0xd8, 0xff, 0xe0]),
        )
        .mount(&fake)
        .await;
    Mock::given(method("GET"))
        .and(path("/cgi-bin/media/get"))
        .and(query_param("media_id", "GONE"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"errcode": 40007, "errmsg": "invalid media_id"})),
        )
        .mount(&fake)
        .await;
    let app = app(&fake, "s3cret");
    let got = app.media("MEDIA1", 1024, "image").await.unwrap();
    assert_eq!(got.bytes, [0xff, 0xd8, 0xff, 0xe0]);
    assert_eq!(got.file_name.as_deref(), Some("MEDIA1.jpg"));
    let AdapterError::Rejected(why) = app.media("GONE", 1024, "image").await.unwrap_err() else {
        panic!("not a refusal");
    };
    assert!(
        why.contains("40007") && why.contains("invalid media_id"),
        "{why}"
    );
}
