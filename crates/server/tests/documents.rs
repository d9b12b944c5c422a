//! Documents over HTTP: a PDF attached to a message has its text extracted once, as it arrives,
//! and kept with the message for models that cannot read PDFs; a Word document is read as its
//! text.

use base64::Engine as _;
use serde_json::json;

use crate::api::authed;
use crate::router::app_with_script;
use crate::support::eventually;

#[tokio::test]
async fn a_pdf_attachment_keeps_its_extracted_text() {
    let app =
        app_with_script(r#"{"conversations": [{"when": "*", "turns": [{"text": "Read it."}]}]}"#)
            .await;
    let (_, created) = authed(&app, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let pdf = include_bytes!("../../engine/tests/fixtures/q3-revenue.pdf");
    let data = format!(
        "data:application/pdf;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(pdf)
    );
    let message = json!({"type": "user_message", "text": "summarize the report",
        "attachments": [{"kind": "pdf", "name": "q3.pdf", "mime": "application/pdf", "data": data}]});
    authed(
        &app,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    let file = eventually(|| async {
        let (_, body) = authed(
            &app,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        )
        .await;
        let user = body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "user")?
            .clone();
        user["content"]
            .as_array()?
            .iter()
            .find(|p| p["type"] == "file")
            .cloned()
    })
    .await;
    let text = file["file"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Q3 revenue grew 12 percent to 4.2 million"),
        "{file}"
    );
}

#[tokio::test]
async fn a_word_document_is_read_as_its_text() {
    let app =
        app_with_script(r#"{"conversations": [{"when": "*", "turns": [{"text": "Read it."}]}]}"#)
            .await;
    let (_, created) = authed(&app, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let docx = include_bytes!("../../engine/tests/fixtures/offsite-plan.docx");
    let data = format!(
        "data:application/vnd.openxmlformats-officedocument.wordprocessingml.document;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(docx)
    );
    let message = json!({"type": "user_message", "text": "what is the plan?",
        "attachments": [{"kind": "document", "name": "plan.docx", "mime": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "data": data}]});
    let (status, body) = authed(
        &app,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    assert_eq!(status, axum::http::StatusCode::ACCEPTED, "{body}");
    let part = eventually(|| async {
        let (_, body) = authed(
            &app,
            "GET",
            &format!("/v1/sessions/{session}/messages"),
            None,
        )
        .await;
        let user = body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "user")?
            .clone();
        user["content"].as_array()?.get(1).cloned()
    })
    .await;
    let text = part["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("[Text extracted by workmate from the Word document plan.docx")
            && text.contains("Lisbon, 12 people, budget 9,000 EUR & travel"),
        "{part}"
    );
    assert!(
        !text.contains("base64"),
        "the file itself is not inlined: {part}"
    );
}
