//! Files shared in Feishu: a file, an image and a rich-text post's images become files to fetch,
//! and fetching one is a GET of the message resource with the app's token; Feishu's refusal
//! comes back with its code and message.

use std::sync::Arc;

use serde_json::json;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};
use workmate_adapter::{AdapterError, Platform};
use workmate_feishu::FeishuPlatform;
use workmate_feishu::inbound::{MessageId, message_files};
use workmate_feishu::web::FeishuWeb;

fn files_of(
    message_type: &str,
    content: &serde_json::Value,
) -> Vec<(String, Option<String>, String)> {
    let json = json!({"message_id": "om_1", "chat_id": "oc_1", "chat_type": "p2p",
                      "message_type": message_type, "content": content.to_string()})
    .to_string();
    let message: MessageId<'_> = serde_json::from_str(&json).unwrap();
    message_files(&message)
        .into_iter()
        .map(|f| (f.name, f.mime, f.handle))
        .collect()
}

#[test]
fn files_images_and_post_images_are_named_with_their_resource() {
    assert_eq!(
        files_of(
            "file",
            &json!({"file_key": "file_v2_a", "file_name": "q3.pdf"})
        ),
        [("q3.pdf".into(), None, "om_1|file_v2_a|file".into())]
    );
    assert_eq!(
        files_of("image", &json!({"image_key": "img_v2_b"})),
        [(
            "image".into(),
            Some("image/*".into()),
            "om_1|img_v2_b|image".into()
        )]
    );
    let post = json!({"zh_cn": {"title": "t", "content": [
        [{"tag": "text", "text": "look"}],
        [{"tag": "img", "image_key": "img_1"}, {"tag": "img", "image_key": "img_2"}]
    ]}});
    let handles: Vec<String> = files_of("post", &post).into_iter().map(|f| f.2).collect();
    assert_eq!(handles, ["om_1|img_1|image", "om_1|img_2|image"]);
    assert!(files_of("text", &json!({"text": "hi"})).is_empty());
}

#[tokio::test]
async fn a_resource_is_fetched_with_the_token_and_a_refusal_keeps_feishus_reason() {
    let server = crate::platform::fake_feishu().await;
    Mock::given(method("GET"))
        .and(path("/open-apis/im/v1/messages/om_1/resources/file_v2_a"))
        .and(query_param("type", "file"))
        .and(header("authorization", "Bearer t-test"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"%PDF-1.4 body".to_vec()))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/open-apis/im/v1/messages/om_2/resources/file_v2_b"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(json!({"code": 234004, "msg": "app not in the chat"})),
        )
        .mount(&server)
        .await;
    let web =
        Arc::new(FeishuWeb::new(&server.uri(), "cli_test", "secret".to_owned().into()).unwrap());
    let platform = FeishuPlatform::new(web);
    let file = workmate_adapter::InboundFile::new("q3.pdf", "om_1|file_v2_a|file");
    assert_eq!(
        platform.download(&file, 1024).await.unwrap().bytes,
        b"%PDF-1.4 body"
    );
    let too_small = platform.download(&file, 4).await.unwrap_err();
    assert!(too_small.to_string().contains("larger than"), "{too_small}");
    let refused = workmate_adapter::InboundFile::new("b.pdf", "om_2|file_v2_b|file");
    let AdapterError::Rejected(why) = platform.download(&refused, 1024).await.unwrap_err() else {
        panic!("not a refusal");
    };
    assert!(
        why.contains("234004") && why.contains("app not in the chat"),
        "{why}"
    );
    let forged = workmate_adapter::InboundFile::new("x", "../../auth|k|file");
    assert!(platform.download(&forged, 1024).await.is_err());
}
