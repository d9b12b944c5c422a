//! `web_fetch`: forbidden addresses are refused on every hop; allow-listed hosts are fetched.

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use workmate_tools::BuiltinOptions;

use crate::support::{World, err};

/// A one-route HTTP server answering every connection with `response`; returns its port.
async fn serve(response: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let response = response.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    port
}

fn allow_localhost_ip() -> BuiltinOptions {
    BuiltinOptions {
        network: std::sync::Arc::new(
            workmate_net::NetworkPolicy::allow_private(["127.0.0.1"]).unwrap(),
        ),
        ..BuiltinOptions::default()
    }
}

#[tokio::test]
async fn internal_addresses_are_refused() {
    let world = World::new().await;
    for url in [
        "http://127.0.0.1/",
        "http://localhost/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://0x7f000001/",
        "http://2130706433/",
        "https://192.168.0.1/",
    ] {
        let message = err(world.call("web_fetch", json!({"url": url})).await);
        assert!(message.contains("refusing"), "{url}: {message}");
    }
    for url in ["file:///etc/passwd", "ftp://example.com/", "not a url"] {
        err(world.call("web_fetch", json!({"url": url})).await);
    }
}

#[tokio::test]
async fn allow_listed_hosts_are_fetched_as_text() {
    let world = World::with_options(&allow_localhost_ip()).await;
    let body = "<html><head><title>Hi</title></head><body><p>Hello &amp; welcome</p></body></html>";
    let port = serve(format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let url = format!("http://127.0.0.1:{port}/page?x=1");
    let out = world.call("web_fetch", json!({"url": url})).await.unwrap();
    assert_eq!(
        out,
        json!({"url": url, "status": 200, "content_type": "text/html; charset=utf-8", "text": "Hi\nHello & welcome"})
    );

    let short = world
        .call("web_fetch", json!({"url": url, "max_chars": 5}))
        .await
        .unwrap();
    assert!(
        short["text"]
            .as_str()
            .unwrap()
            .starts_with("Hi\nHe\n[… truncated"),
        "{short}"
    );

    // The operator allowed the address 127.0.0.1, so a name for it is allowed too; any other
    // loopback address is still refused.
    let by_name = world
        .call(
            "web_fetch",
            json!({"url": format!("http://localhost:{port}/page?x=1")}),
        )
        .await
        .unwrap();
    assert_eq!(by_name["text"], "Hi\nHello & welcome");
    let message = err(world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.2:{port}/")}),
        )
        .await);
    assert!(message.contains("refusing"), "{message}");
}

#[tokio::test]
async fn redirects_are_followed_and_rechecked() {
    let world = World::with_options(&allow_localhost_ip()).await;
    let target =
        serve("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nlanded".to_owned()).await;
    let hop = serve(format!(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{target}/final\r\nContent-Length: 0\r\n\r\n"
    ))
    .await;
    let out = world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{hop}/")}),
        )
        .await;
    let out = out.unwrap();
    assert_eq!(out["text"], "landed");
    assert_eq!(out["url"], format!("http://127.0.0.1:{target}/final"));

    for location in [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2/",
        "http://10.0.0.1/",
        "http://[::1]:80/",
    ] {
        let port = serve(format!(
            "HTTP/1.1 301 Moved\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
        ))
        .await;
        let message = err(world
            .call(
                "web_fetch",
                json!({"url": format!("http://127.0.0.1:{port}/")}),
            )
            .await);
        assert!(message.contains("refusing"), "{location}: {message}");
    }

    // Five hops are followed; a sixth is not.
    let mut next = target;
    for _ in 0..5 {
        next = serve(format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{next}/final\r\n\r\n"
        ))
        .await;
    }
    let five = world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{next}/")}),
        )
        .await
        .unwrap();
    assert_eq!(five["text"], "landed");
    let six = serve(format!(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{next}/\r\n\r\n"
    ))
    .await;
    let message = err(world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{six}/")}),
        )
        .await);
    assert!(message.contains("too many redirects"), "{message}");

    let looping = serve("HTTP/1.1 302 Found\r\nLocation: /again\r\n\r\n".to_owned()).await;
    let message = err(world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{looping}/")}),
        )
        .await);
    assert!(message.contains("too many redirects"), "{message}");
}

#[tokio::test]
async fn large_bodies_are_cut_at_the_download_limit() {
    let world = World::with_options(&allow_localhost_ip()).await;
    // 256 KiB of markup with almost no text: far past the 64 KiB kept for 1000 characters.
    let body = format!(
        "<p>start</p>{}<p>never read</p>",
        "<i></i>".repeat(256 * 1024 / 7)
    );
    let port = serve(format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let out = world
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{port}/"), "max_chars": 1000}),
        )
        .await
        .unwrap();
    assert_eq!(
        out["text"],
        "start\n[… truncated: the page is larger than the download limit]"
    );
}

#[tokio::test]
async fn https_urls_are_vetted_before_connecting() {
    let world = World::new().await;
    for url in [
        "https://127.0.0.1/",
        "https://localhost:8443/",
        "https://[::1]/",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:169.254.169.254]/",
    ] {
        let message = err(world.call("web_fetch", json!({"url": url})).await);
        assert!(message.starts_with("refusing"), "{url}: {message}");
    }
}

#[tokio::test]
async fn https_to_an_allow_listed_host_is_attempted() {
    let world = World::with_options(&allow_localhost_ip()).await;

    // Nothing listening: a connection error, not a refusal.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let message = err(world
        .call(
            "web_fetch",
            json!({"url": format!("https://127.0.0.1:{port}/")}),
        )
        .await);
    assert!(
        message.starts_with(&format!("https://127.0.0.1:{port} cannot be reached"))
            && message.to_ascii_lowercase().contains("connect"),
        "{message}"
    );

    // A listener that records what arrives: the client opens with a TLS handshake, then gives up
    // when the answer is not TLS.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (first_bytes, received) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 3];
        socket.read_exact(&mut buf).await.unwrap();
        let _ = first_bytes.send(buf);
        let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
    });
    let message = err(world
        .call(
            "web_fetch",
            json!({"url": format!("https://127.0.0.1:{port}/")}),
        )
        .await);
    assert!(message.starts_with("https://127.0.0.1"), "{message}");
    // A TLS record of type handshake (22), protocol version 3.x.
    let head = received.await.unwrap();
    assert_eq!(&head[..2], &[22, 3], "{head:?}");
}
