//! The page is served and self-contained.

use axum::http::StatusCode;

use crate::support::{get, sandbox};

#[tokio::test]
async fn the_page_is_html_without_external_assets() {
    let app = sandbox("http://127.0.0.1:9");
    let (status, content_type, html) = get(&app, "/sandbox").await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(html.contains("#general") || html.contains("# general"));
    assert!(html.contains("/sandbox/state"));
    assert!(html.contains("/sandbox/say"));
    assert!(html.contains("/sandbox/click"));
    // The Feishu side, and the picker between the platforms.
    assert!(html.contains("/sandbox/feishu/state"));
    assert!(html.contains("/sandbox/feishu/say"));
    assert!(html.contains("/sandbox/feishu/click"));
    assert!(html.contains(r#"id="platform-slack""#));
    assert!(html.contains(r#"id="platform-feishu""#));
    assert!(html.contains(workmate_sandbox::feishu::CHAT_ID));
    // And WeCom's.
    assert!(html.contains("/sandbox/wecom/state"));
    assert!(html.contains("/sandbox/wecom/say"));
    assert!(html.contains("/sandbox/wecom/click"));
    assert!(html.contains(r#"id="platform-wecom""#));
    assert!(html.contains(workmate_sandbox::wecom::CHAT_ID));
    // And DingTalk's.
    assert!(html.contains("/sandbox/dingtalk/state"));
    assert!(html.contains("/sandbox/dingtalk/say"));
    assert!(html.contains("/sandbox/dingtalk/click"));
    assert!(html.contains(r#"id="platform-dingtalk""#));
    assert!(html.contains(workmate_sandbox::dingtalk::CONVERSATION_ID));
    assert!(!html.contains("__SANDBOX_PLATFORMS__"));
    // The SVG namespace names no asset and is never fetched: the page's own icons use it.
    let lower = html
        .to_lowercase()
        .replace("http://www.w3.org/2000/svg", "");
    assert!(
        html.contains("drawIcons"),
        "the page draws its own status icons"
    );
    assert!(!lower.contains("http://"), "the page names an http:// URL");
    assert!(
        !lower.contains("https://"),
        "the page names an https:// URL"
    );
    assert!(
        !lower.contains("<link"),
        "the page links an external stylesheet"
    );
    assert!(
        !lower.contains("<script src"),
        "the page loads an external script"
    );
}
