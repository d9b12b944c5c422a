//! The guarded egress against local servers: what it refuses, what the operator's allow-list
//! opens, what a redirect may carry, and how much of a body it reads.

use std::sync::Arc;

use reqwest::Method;
use url::Url;
use wiremock::matchers::{header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_net::{
    Egress, EgressErrorKind, EgressOptions, NetworkPolicy, read_capped, read_within,
};

fn egress(allow: &[&str], options: EgressOptions) -> Egress {
    let policy = NetworkPolicy::allow_private(allow.iter().copied()).unwrap();
    Egress::new(Arc::new(policy), options).unwrap()
}

fn url(server: &MockServer, path: &str) -> Url {
    Url::parse(&format!("{}{path}", server.uri())).unwrap()
}

#[tokio::test]
async fn the_host_is_refused_unless_the_operator_allowed_it() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/meta"))
        .respond_with(ResponseTemplate::new(200).set_body_string("secret role"))
        .mount(&server)
        .await;
    let guarded = egress(&[], EgressOptions::anonymous());
    let target = url(&server, "/meta");
    let error = guarded
        .send(guarded.request(Method::GET, target.clone()))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::Refused, "{error}");
    assert!(error.to_string().contains("loopback"), "{error}");
    // The same through a name that resolves to the host.
    let by_name = Url::parse(&format!("http://localhost:{}/meta", target.port().unwrap())).unwrap();
    let error = guarded
        .send(guarded.request(Method::GET, by_name))
        .await
        .unwrap_err();
    assert!(error.is_refused(), "{error}");
    assert!(server.received_requests().await.unwrap().is_empty());

    let allowed = egress(&["127.0.0.1"], EgressOptions::credentialed());
    let response = allowed
        .send(allowed.request(Method::GET, target).bearer_auth("t"))
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "secret role");
}

#[tokio::test]
async fn an_allowed_range_admits_its_addresses() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&server)
        .await;
    let ranged = egress(&["127.0.0.0/8"], EgressOptions::anonymous());
    let response = ranged
        .send(ranged.request(Method::GET, url(&server, "/")))
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let narrow = egress(&["127.0.0.2/32"], EgressOptions::anonymous());
    assert!(
        narrow
            .send(narrow.request(Method::GET, url(&server, "/")))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn credentials_never_travel_in_clear_to_a_host_the_operator_did_not_name() {
    let guarded = egress(&["10.0.0.0/8"], EgressOptions::credentialed());
    let clear = Url::parse("http://example.com/api").unwrap();
    let error = guarded
        .send(guarded.request(Method::GET, clear.clone()))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("only sent over https"),
        "{error}"
    );
    let error = guarded.client_for(&clear).unwrap_err();
    assert!(error.is_refused());
}

#[tokio::test]
async fn a_redirect_to_another_origin_drops_credentials_and_is_checked_again() {
    let origin = MockServer::start().await;
    let other = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/moved"))
        .respond_with(
            ResponseTemplate::new(302).insert_header("Location", format!("{}/landed", other.uri())),
        )
        .mount(&origin)
        .await;
    Mock::given(method("GET"))
        .and(path("/same"))
        .respond_with(ResponseTemplate::new(301).insert_header("Location", "/here"))
        .mount(&origin)
        .await;
    Mock::given(method("GET"))
        .and(path("/here"))
        .and(header_exists("private-token"))
        .respond_with(ResponseTemplate::new(200).set_body_string("kept"))
        .mount(&origin)
        .await;
    Mock::given(method("GET"))
        .and(path("/landed"))
        .respond_with(ResponseTemplate::new(200).set_body_string("landed"))
        .mount(&other)
        .await;
    let allowed = egress(&["127.0.0.1"], EgressOptions::credentialed());
    let response = allowed
        .send(
            allowed
                .request(Method::GET, url(&origin, "/moved"))
                .header("PRIVATE-TOKEN", "glpat-secret")
                .bearer_auth("token")
                .header("Accept", "application/json"),
        )
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "landed");
    let landed = &other.received_requests().await.unwrap()[0];
    assert!(landed.headers.get("private-token").is_none());
    assert!(landed.headers.get("authorization").is_none());
    assert_eq!(landed.headers["accept"], "application/json");

    // On the same origin the credentials stay.
    let response = allowed
        .send(
            allowed
                .request(Method::GET, url(&origin, "/same"))
                .header("PRIVATE-TOKEN", "glpat-secret"),
        )
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "kept");
}

#[tokio::test]
async fn a_redirect_into_the_host_is_refused() {
    // The first hop is operator-allowed by name; the redirect points at an address that is not.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(307).insert_header("Location", "http://169.254.169.254/latest/"),
        )
        .mount(&server)
        .await;
    let allowed = egress(&["127.0.0.1"], EgressOptions::anonymous());
    let error = allowed
        .send(allowed.request(Method::GET, url(&server, "/")))
        .await
        .unwrap_err();
    assert!(error.is_refused(), "{error}");
    assert!(error.to_string().contains("169.254.169.254"), "{error}");
}

#[tokio::test]
async fn without_redirects_the_redirect_is_the_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "/elsewhere"))
        .expect(1)
        .mount(&server)
        .await;
    let token = egress(
        &["127.0.0.1"],
        EgressOptions::credentialed().without_redirects(),
    );
    let response = token
        .send(
            token
                .request(Method::POST, url(&server, "/token"))
                .body("code=x"),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
}

#[tokio::test]
async fn bodies_are_capped_while_they_stream() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b'x'; 300_000]))
        .mount(&server)
        .await;
    let allowed = egress(&["127.0.0.1"], EgressOptions::anonymous());
    let response = allowed
        .send(allowed.request(Method::GET, url(&server, "/")))
        .await
        .unwrap();
    let capped = read_capped(response, 1000).await.unwrap();
    assert_eq!(capped.bytes.len(), 1000);
    assert!(capped.truncated);
    let response = allowed
        .send(allowed.request(Method::GET, url(&server, "/")))
        .await
        .unwrap();
    let error = read_within(response, 64 * 1024).await.unwrap_err();
    assert_eq!(error.kind(), EgressErrorKind::TooLarge);
    let response = allowed
        .send(allowed.request(Method::GET, url(&server, "/")))
        .await
        .unwrap();
    assert_eq!(read_within(response, 1 << 20).await.unwrap().len(), 300_000);
}
