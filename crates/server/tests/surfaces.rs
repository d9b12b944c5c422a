//! Who may act for whom (the admin token and surface tokens), and the bounds every request gets:
//! body size and request time in process, the first request head and the generated token's
//! secrecy against the real binary.

use std::io::{Read, Write};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use workmate_server::config::HttpLimits;
use workmate_server::http::router_with;

use crate::authority::people;
use crate::router::{App, SURFACE_TOKEN, TOKEN, app};
use crate::support::{Server, http_send};

/// `GET /v1/sessions` with `token` and, if given, an acting user.
async fn sessions_as(app: &App, token: &str, acting: Option<&str>) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .uri("/v1/sessions")
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(user) = acting {
        request = request.header("x-workmate-acting-user", user);
    }
    let response = app
        .router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn only_a_surface_token_may_name_the_acting_user() {
    let app = people().await;

    let (status, body) = sessions_as(&app, TOKEN, Some("alice")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("admin token acts only as the admin") && error.contains("surface_tokens"),
        "{error}"
    );
    // The admin token without the header still works, as the admin.
    let (status, body) = sessions_as(&app, TOKEN, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A surface must say whom it acts for.
    let (status, body) = sessions_as(&app, SURFACE_TOKEN, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("x-workmate-acting-user"),
        "{body}"
    );
    // …and that person must be a user of the tenant.
    let (status, _) = sessions_as(&app, SURFACE_TOKEN, Some("mallory")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // An unknown token is no one.
    let (status, _) = sessions_as(&app, "not-a-token-0123456789", Some("alice")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // A surface token with the header acts as that person: what alice creates is alice's.
    let request = Request::builder()
        .method("POST")
        .uri("/v1/automations")
        .header(header::AUTHORIZATION, format!("Bearer  {SURFACE_TOKEN} "))
        .header("x-workmate-acting-user", "alice")
        .body(Body::from(
            json!({"title": "Mine", "instructions": "Say hi.", "cron": "0 * * * *"}).to_string(),
        ))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let view: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(view["owner"], "alice");
}

/// The test app's routes under `limits`.
fn bounded(app: &App, limits: HttpLimits) -> axum::Router {
    router_with(app.state.clone(), None, limits)
}

fn small_limits() -> HttpLimits {
    HttpLimits::new(Duration::from_millis(300), Duration::from_secs(5), 1024, 16)
}

async fn post_session(router: &axum::Router, body: Body, length: Option<usize>) -> StatusCode {
    let mut request = Request::builder()
        .method("POST")
        .uri("/v1/sessions")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(length) = length {
        request = request.header(header::CONTENT_LENGTH, length);
    }
    router
        .clone()
        .oneshot(request.body(body).unwrap())
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let app = app().await;
    let router = bounded(&app, small_limits());
    let big = format!(r#"{{"title": "{}"}}"#, "x".repeat(4096));
    // Declared too large: refused before reading.
    assert_eq!(
        post_session(&router, Body::from(big.clone()), Some(big.len())).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // Not declared (as with a chunked upload): cut while reading.
    assert_eq!(
        post_session(&router, Body::from(big), None).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    // A body within the limit is read (and answered on its merits).
    let small = "{}".to_owned();
    let status = post_session(&router, Body::from(small.clone()), Some(small.len())).await;
    assert_ne!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(status.is_success() || status.is_client_error(), "{status}");
}

#[tokio::test]
async fn a_request_whose_body_never_ends_times_out() {
    let app = app().await;
    let router = bounded(&app, small_limits());
    // A body that sends one chunk and then nothing, like a stalled client.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(1);
    tx.send(Ok(axum::body::Bytes::from_static(b"{\"ti")))
        .await
        .unwrap();
    let stream = tokio_stream_from(rx);
    let status = tokio::time::timeout(
        Duration::from_secs(30),
        post_session(&router, Body::from_stream(stream), None),
    )
    .await
    .expect("the server's own timeout answers first");
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    drop(tx);
    // The same router answers a prompt request.
    let (status, _) = sessions_on(&router).await;
    assert_eq!(status, StatusCode::OK);
}

async fn sessions_on(router: &axum::Router) -> (StatusCode, Value) {
    let request = Request::builder()
        .uri("/v1/sessions")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// A receiver as a stream of body chunks.
fn tokio_stream_from<T: Send + 'static>(
    rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send + 'static {
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

#[test]
fn the_binary_bounds_request_heads_accepts_surface_tokens_and_never_prints_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        &[],
        &[
            ("WORKMATE__SERVER__HEADER_READ_TIMEOUT_MS", "300"),
            (
                "WORKMATE__SERVER__SURFACE_TOKENS__BRIDGE",
                "bridge-token-0123456789",
            ),
        ],
    );
    let token_file = dir.path().join("data").join("admin_token");
    let token = std::fs::read_to_string(&token_file).unwrap();
    let log = server.log_text();
    assert!(!log.contains(token.trim()), "the token was printed: {log}");
    assert!(
        log.contains(&*token_file.display().to_string()) || log.contains("admin_token"),
        "{log}"
    );

    // A connection that never finishes its request head is closed.
    let mut slow = std::net::TcpStream::connect(server.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut buf = [0u8; 64];
    let read = slow.read(&mut buf);
    assert!(
        matches!(read, Ok(0))
            || matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "expected the server to close the connection, got {read:?}"
    );

    // The surface token from the environment is read, and never acts as the built-in admin
    // (that would make it the break-glass token).
    let (status, body) = http_send(
        server.addr,
        "GET",
        "/v1/sessions",
        &[
            ("Authorization", "Bearer bridge-token-0123456789"),
            ("X-Workmate-Acting-User", "admin"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("built-in admin"), "{body}");
    let (status, body) = http_send(
        server.addr,
        "GET",
        "/v1/sessions",
        &[
            ("Authorization", &format!("Bearer {}", token.trim())),
            ("X-Workmate-Acting-User", "admin"),
        ],
        None,
    )
    .unwrap();
    assert_eq!(status, 403, "{body}");
    server.terminate(Duration::from_secs(10));
}
