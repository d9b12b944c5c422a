//! A smart robot's files: fetched from their short-lived URL and decrypted with the message's
//! `aeskey` (long connection) or the robot's EncodingAESKey (callbacks); the file's name comes
//! from the download.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_adapter::{InboundFile, Platform};
use workmate_wecom::WeComPlatform;

const ROBOT_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";
const MESSAGE_KEY: &str = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";

fn file(url: &str, aeskey: Option<&str>) -> InboundFile {
    let handle = serde_json::json!({"url": url, "aeskey": aeskey}).to_string();
    InboundFile::new("file", handle)
}

#[tokio::test]
async fn a_file_is_fetched_and_decrypted_with_its_key() {
    let server = MockServer::start().await;
    let pdf = b"%PDF-1.4 the quarterly report".to_vec();
    Mock::given(method("GET"))
        .and(path("/robot-file"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-disposition", "attachment; filename=\"q3.pdf\"")
                .set_body_bytes(workmate_wxcrypto::encrypt_file(ROBOT_KEY, &pdf).unwrap()),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/socket-file"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_bytes(workmate_wxcrypto::encrypt_file(MESSAGE_KEY, &pdf).unwrap()),
        )
        .mount(&server)
        .await;
    // The fake stands where the operator configured the platform (a loopback address).
    let links = || workmate_adapter::net::link_egress(&Default::default(), &server.uri()).unwrap();
    let platform = WeComPlatform::new(links()).with_media_key(ROBOT_KEY.to_owned().into());

    let url = format!("{}/robot-file", server.uri());
    let got = platform.download(&file(&url, None), 1 << 20).await.unwrap();
    assert_eq!(got.bytes, pdf);
    assert_eq!(got.file_name.as_deref(), Some("q3.pdf"));

    let url = format!("{}/socket-file", server.uri());
    let got = platform
        .download(&file(&url, Some(MESSAGE_KEY)), 1 << 20)
        .await
        .unwrap();
    assert_eq!(got.bytes, pdf);

    // Under the wrong key it does not decrypt; without any key it is refused with the fix.
    let wrong = platform
        .download(&file(&url, None), 1 << 20)
        .await
        .unwrap_err();
    assert!(wrong.to_string().contains("did not decrypt"), "{wrong}");
    let keyless = WeComPlatform::new(links())
        .download(&file(&url, None), 1 << 20)
        .await
        .unwrap_err();
    assert!(
        keyless.to_string().contains("encoding_aes_key"),
        "{keyless}"
    );
}

#[tokio::test]
async fn a_file_link_aimed_at_the_host_or_a_private_address_is_not_fetched() {
    let server = MockServer::start().await;
    let platform = WeComPlatform::new(
        workmate_adapter::net::link_egress(&Default::default(), "https://qyapi.weixin.qq.com")
            .unwrap(),
    )
    .with_media_key(ROBOT_KEY.to_owned().into());
    for url in [
        format!("{}/robot-file", server.uri()),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.5/internal".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        let refused = platform
            .download(&file(&url, None), 1 << 20)
            .await
            .unwrap_err();
        assert!(
            matches!(refused, workmate_adapter::AdapterError::Rejected(_)),
            "{url}: {refused:?}"
        );
    }
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "nothing reached the host's own address"
    );
}
