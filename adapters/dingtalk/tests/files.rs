//! Files sent to the robot: pictures, files and a rich-text message's pictures travel with the
//! message by their download code; fetching one exchanges the code for a temporary link with the
//! app's token, then fetches the link.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, ResponseTemplate};
use workmate_adapter::InboundKind;
use workmate_dingtalk::inbound::decode_robot;
use workmate_dingtalk::mapping::robot_inbound;

use crate::support::api::{TOKEN, fake_api, web};
use crate::support::gateway::CLIENT_ID;

fn message(msgtype: &str, content: &serde_json::Value) -> serde_json::Value {
    json!({
        "conversationId": "cid1", "chatbotCorpId": "ding1", "msgId": "m1", "senderStaffId": "u1",
        "conversationType": "1", "msgtype": msgtype, "content": content, "robotCode": CLIENT_ID
    })
}

fn files(msgtype: &str, content: &serde_json::Value) -> (String, Vec<(String, String)>) {
    let decoded = decode_robot(&message(msgtype, content).to_string()).unwrap();
    let inbound = robot_inbound(&decoded).unwrap();
    let InboundKind::Message { text, files } = inbound.kind else {
        panic!("not a message");
    };
    (
        text,
        files.into_iter().map(|f| (f.name, f.handle)).collect(),
    )
}

#[test]
fn pictures_files_and_rich_text_pictures_travel_by_their_download_code() {
    assert_eq!(
        files(
            "file",
            &json!({"downloadCode": "dc1", "fileName": "q3.pdf"})
        ),
        (String::new(), vec![("q3.pdf".into(), "dc1".into())])
    );
    assert_eq!(
        files("picture", &json!({"pictureDownloadCode": "pc2"})).1,
        [("image".to_owned(), "pc2".to_owned())]
    );
    let rich =
        json!({"richText": [{"text": "look at this"}, {"type": "picture", "downloadCode": "dc3"}]});
    assert_eq!(
        files("richText", &rich),
        (
            "look at this".into(),
            vec![("image 1".into(), "dc3".into())]
        )
    );
    assert_eq!(
        files(
            "audio",
            &json!({"recognition": "停止", "downloadCode": "a"})
        )
        .0,
        "停止"
    );
}

#[tokio::test]
async fn a_download_code_is_exchanged_for_a_link_then_fetched() {
    let server = fake_api().await;
    let link = format!("{}/temp/q3.pdf", server.uri());
    Mock::given(method("POST"))
        .and(path("/v1.0/robot/messageFiles/download"))
        .and(header("x-acs-dingtalk-access-token", TOKEN))
        .and(body_json(
            json!({"downloadCode": "dc1", "robotCode": CLIENT_ID}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"downloadUrl": link})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/temp/q3.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"%PDF-1.4".to_vec()))
        .mount(&server)
        .await;
    let web = web(&server);
    let got = web.message_file("dc1", 1024, "q3.pdf").await.unwrap();
    assert_eq!(got.bytes, b"%PDF-1.4");
    let refused = web.message_file("", 1024, "x.pdf").await.unwrap_err();
    assert!(
        refused.to_string().contains("no download code"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_download_link_aimed_at_a_private_address_is_not_fetched() {
    let server = fake_api().await;
    for (code, link) in [
        ("dc-meta", "http://169.254.169.254/latest/meta-data/"),
        ("dc-lan", "http://10.1.2.3/secret.pdf"),
        ("dc-file", "file:///etc/passwd"),
    ] {
        Mock::given(method("POST"))
            .and(path("/v1.0/robot/messageFiles/download"))
            .and(body_json(
                json!({"downloadCode": code, "robotCode": CLIENT_ID}),
            ))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"downloadUrl": link})))
            .mount(&server)
            .await;
    }
    let web = web(&server);
    for code in ["dc-meta", "dc-lan", "dc-file"] {
        let refused = web.message_file(code, 1024, "x.pdf").await.unwrap_err();
        assert!(
            matches!(refused, workmate_adapter::AdapterError::Rejected(_)),
            "{code}: {refused:?}"
        );
    }
}
