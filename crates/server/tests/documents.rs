//! Documents over HTTP: a PDF attached to a message has its text extracted once, as it arrives,
//! and kept with the message for models that cannot read PDFs; a Word document is read as its
//! text.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::api::{authed, messages_once};
use crate::router::app_with_script;

/// The stored user message of a new session sent `attachment` (`kind`, `name`, `mime`, and the
/// file's bytes).
async fn sent_with(kind: &str, name: &str, mime: &str, bytes: &[u8]) -> Value {
    let app =
        app_with_script(r#"{"conversations": [{"when": "*", "turns": [{"text": "Read it."}]}]}"#)
            .await;
    let (_, created) = authed(&app, "POST", "/v1/sessions", None).await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let data = format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    );
    let message = json!({"type": "user_message", "text": "what does it say?",
        "attachments": [{"kind": kind, "name": name, "mime": mime, "data": data}]});
    let (status, body) = authed(
        &app,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    assert_eq!(status, axum::http::StatusCode::ACCEPTED, "{body}");
    let messages = messages_once(&app, &session, |m| m.iter().any(|m| m["role"] == "user")).await;
    messages.into_iter().find(|m| m["role"] == "user").unwrap()
}

#[tokio::test]
async fn a_pdf_attachment_keeps_its_extracted_text() {
    let pdf = include_bytes!("../../engine/tests/fixtures/q3-revenue.pdf");
    let user = sent_with("pdf", "q3.pdf", "application/pdf", pdf).await;
    let file = &user["content"][1]["file"];
    let text = file["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Q3 revenue grew 12 percent to 4.2 million"),
        "{file}"
    );
}

#[tokio::test]
async fn a_word_document_is_read_as_its_text() {
    let docx = include_bytes!("../../engine/tests/fixtures/offsite-plan.docx");
    let mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    let user = sent_with("document", "plan.docx", mime, docx).await;
    let part = &user["content"][1];
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

#[tokio::test]
async fn a_pdfs_text_reaches_a_model_that_does_not_read_pdfs() {
    let app = app_with_script(
        r#"{"conversations": [{"when": "*", "turns": [{"requires_user": "Q3 revenue grew 12 percent to 4.2 million", "text": "It grew 12 percent."}]}]}"#,
    )
    .await;
    let (_, created) = authed(
        &app,
        "POST",
        "/v1/sessions",
        Some(json!({"model": "scripted:text-only"})),
    )
    .await;
    let session = created["session_id"].as_str().unwrap().to_owned();
    let pdf = include_bytes!("../../engine/tests/fixtures/q3-revenue.pdf");
    let data = format!(
        "data:application/pdf;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(pdf)
    );
    let message = json!({"type": "user_message", "text": "what does it say?",
        "attachments": [{"kind": "pdf", "name": "q3.pdf", "mime": "application/pdf", "data": data}]});
    authed(
        &app,
        "POST",
        &format!("/v1/sessions/{session}/commands"),
        Some(message),
    )
    .await;
    messages_once(&app, &session, |m| {
        m.iter().any(|m| m["content"] == "It grew 12 percent.")
    })
    .await;
}
