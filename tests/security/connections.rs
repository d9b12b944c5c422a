//! Finding 7 of the second review: after a connection's first request nothing timed it out, so
//! 64 idle keep-alive connections against `max_connections = 64` locked every new client out
//! (no `/healthz` in 10 s), unauthenticated. Now an idle connection is closed after
//! `idle_timeout_ms`, and at the cap the idlest connection makes room for a new one.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use workmate_server::config::HttpLimits;

use crate::router::app;

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: workmate\r\n\r\n";

/// Sends `/healthz` on `stream` and reads one answer's head.
async fn healthz(stream: &mut TcpStream) -> String {
    stream.write_all(HEALTHZ).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = stream.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Whether the server closed `stream` (a read sees the end, or a reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(within, stream.read(&mut buf)).await {
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

#[tokio::test]
async fn idle_connections_cannot_hold_the_server() {
    let app = app().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let limits = HttpLimits::new(Duration::from_secs(5), Duration::from_secs(5), 1 << 20, 8)
        .with_idle_timeout(Duration::from_millis(2500))
        // Every client of the test is 127.0.0.1: let it hold all of them.
        .with_max_connections_per_client(8);
    let state = app.state.clone();
    let server = tokio::spawn(workmate_server::serve::run(
        listener,
        state,
        limits,
        Duration::from_secs(1),
    ));

    // The attack: every connection the server allows, each idle after one request.
    let mut idle = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        assert!(healthz(&mut stream).await.starts_with("HTTP/1.1 200"));
        idle.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(800)).await;

    // A new client is answered at once: the idlest connection made room.
    let answered = tokio::time::timeout(Duration::from_secs(3), async {
        let mut fresh = TcpStream::connect(address).await.unwrap();
        healthz(&mut fresh).await
    })
    .await
    .expect("a new client got no /healthz while idle connections held the server");
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");

    // A connection in use stays open past the idle timeout; idle ones are closed.
    let mut busy = TcpStream::connect(address).await.unwrap();
    for _ in 0..8 {
        assert!(healthz(&mut busy).await.starts_with("HTTP/1.1 200"));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for stream in &mut idle {
        assert!(
            closed_within(stream, Duration::from_secs(5)).await,
            "an idle connection stayed open"
        );
    }
    assert!(healthz(&mut busy).await.starts_with("HTTP/1.1 200"));
    app.state.shutdown.cancel();
    let _ = server.await;
}

#[tokio::test]
async fn one_address_holds_at_most_its_share() {
    let app = app().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let limits = HttpLimits::new(Duration::from_secs(5), Duration::from_secs(5), 1 << 20, 64)
        .with_max_connections_per_client(3);
    let server = tokio::spawn(workmate_server::serve::run(
        listener,
        app.state.clone(),
        limits,
        Duration::from_secs(1),
    ));
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(address).await.unwrap();
        assert!(healthz(&mut stream).await.starts_with("HTTP/1.1 200"));
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    // A fourth from the same address is admitted in place of its idlest one.
    let mut fourth = TcpStream::connect(address).await.unwrap();
    assert!(healthz(&mut fourth).await.starts_with("HTTP/1.1 200"));
    let mut closed = 0;
    for stream in &mut held {
        if closed_within(stream, Duration::from_millis(500)).await {
            closed += 1;
        }
    }
    assert_eq!(closed, 1, "exactly the idlest one made room");
    app.state.shutdown.cancel();
    let _ = server.await;
}

#[tokio::test]
async fn one_address_holds_at_most_its_share_of_event_streams() {
    let app = app().await;
    let mut state = app.state.clone();
    state.streams = std::sync::Arc::new(workmate_server::http::StreamCaps::new(2));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(workmate_server::serve::run(
        listener,
        state,
        HttpLimits::default(),
        Duration::from_secs(1),
    ));
    let token = crate::router::TOKEN;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let create = format!(
        "POST /v1/sessions HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer {token}\r\nContent-Length: 0\r\n\r\n"
    );
    stream.write_all(create.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = stream.read(&mut buf).await.unwrap();
    let answer = String::from_utf8_lossy(&buf[..n]).into_owned();
    let session = answer
        .split("\"session_id\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no session in {answer}"))
        .to_owned();
    let open_stream = || {
        let session = session.clone();
        async move {
            let mut stream = TcpStream::connect(address).await.unwrap();
            let request = format!(
                "GET /v1/sessions/{session}/events HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer {token}\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut buf = vec![0u8; 1024];
            let n = stream.read(&mut buf).await.unwrap();
            (stream, String::from_utf8_lossy(&buf[..n]).into_owned())
        }
    };
    let (first, head) = open_stream().await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_second, head) = open_stream().await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_, head) = open_stream().await;
    assert!(head.starts_with("HTTP/1.1 429"), "{head}");
    // Closing one gives its place back (once the server sees it closed).
    drop(first);
    crate::support::eventually(
        "a third stream once the first closed",
        crate::support::PATIENCE,
        || async {
            let (_third, head) = open_stream().await;
            head.starts_with("HTTP/1.1 200").then_some(())
        },
    )
    .await;
    app.state.shutdown.cancel();
    let _ = server.await;
}
