//! Files shared into a Slack thread: fetched with the bot token from their private link and
//! attached to the message; a PDF's text reaches a model that does not read PDFs; a file that
//! cannot be read reaches it as a note saying why, and nothing is dropped silently.

use wiremock::matchers::header;

use super::*;

const SCRIPT: &str = r###"{"conversations": [{"when": "*", "turns": [
    {"text": "Hello."},
    {"requires_user": "Q3 revenue grew 12 percent to 4.2 million", "text": "Revenue grew 12 percent."}]}]}"###;

fn mention_with_files(fake: &MockServer) -> String {
    let pdf = format!("{}/files-pri/T1-F1/download/q3.pdf", fake.uri());
    let html = format!("{}/files-pri/T1-F2/download/notes.txt", fake.uri());
    json!({
        "type": "event_callback", "team_id": "T1", "api_app_id": "A1",
        "event_id": "Ev3", "event_time": 1_700_000_000,
        "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> what does the report say?",
                  "ts": "1700000000.0300", "thread_ts": THREAD, "channel": "C1",
                  "event_ts": "1700000000.0300",
                  "files": [
                      {"id": "F1", "name": "q3.pdf", "mimetype": "application/pdf", "size": 1200,
                       "url_private_download": pdf},
                      {"id": "F2", "name": "notes.txt", "mimetype": "text/plain",
                       "url_private_download": html},
                      {"id": "F3", "name": "talk.key", "mimetype": "application/x-iwork-keynote-sffkey",
                       "url_private_download": "https://files.slack.com/files-pri/T1-F3/download/talk.key"},
                      {"id": "F4", "mode": "hidden_by_limit"}
                  ]}
    })
    .to_string()
}

#[tokio::test]
async fn a_shared_pdf_reaches_a_model_that_does_not_read_pdfs_as_its_text() {
    let app = slack_app_with(SCRIPT).await;
    let pdf = include_bytes!("../../../engine/tests/fixtures/q3-revenue.pdf");
    Mock::given(method("GET"))
        .and(path("/files-pri/T1-F1/download/q3.pdf"))
        .and(header("authorization", "Bearer xoxb-test"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/pdf")
                .set_body_bytes(pdf.to_vec()),
        )
        .mount(&app.fake)
        .await;
    // A token without files:read gets Slack's sign-in page, with a 200.
    Mock::given(method("GET"))
        .and(path("/files-pri/T1-F2/download/notes.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/html; charset=utf-8")
                .set_body_string("<!DOCTYPE html><html><body>Sign in</body></html>"),
        )
        .mount(&app.fake)
        .await;

    signed(&app, "events", &mention("Ev1"), SECRET).await;
    let session = app.session_of(THREAD).await;
    wait_shown(&app.fake, "the first answer", |updates| {
        updates.iter().any(|u| u.to_string().contains("Hello."))
    })
    .await;
    let tenant = tenant_of("T1");
    app.in_thread_until(
        "Ev2",
        "1700000000.0200",
        "/workmate model scripted:text-only",
        &session.id,
        |r| r.model == "scripted:text-only",
    )
    .await;

    let (status, _) = signed(&app, "events", &mention_with_files(&app.fake), SECRET).await;
    assert_eq!(status, StatusCode::OK);
    wait_shown(&app.fake, "the answer about the PDF", |updates| {
        updates
            .iter()
            .any(|u| u.to_string().contains("Revenue grew 12 percent."))
    })
    .await;
    let history = app
        .store
        .messages()
        .list(&tenant, &session.id)
        .await
        .unwrap();
    let asked = history
        .iter()
        .rev()
        .find_map(|m| match m {
            workmate_protocol::Message::User { content, .. } => {
                Some(serde_json::to_string(content).unwrap())
            }
            _ => None,
        })
        .unwrap();
    assert!(
        asked.contains("q3.pdf") && asked.contains("application/pdf"),
        "{asked}"
    );
    assert!(
        asked.contains("notes.txt could not be read: Slack answered with a sign-in page"),
        "{asked}"
    );
    assert!(asked.contains("talk.key was not read"), "{asked}");
    assert!(
        asked.contains("Slack did not share a download link for file F4"),
        "{asked}"
    );
    app.chat.shutdown(Duration::from_secs(2)).await;
}
