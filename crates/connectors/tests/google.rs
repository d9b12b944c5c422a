//! Gmail and Google Calendar against fakes of Google's APIs: a refresh token exchanged at the
//! token endpoint once (then reused), the access token as a bearer, RFC 2822 messages as
//! base64url `raw`, events with attendees.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use wiremock::matchers::{body_json, body_string, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::support::connected;

/// Mounts Google's token endpoint on `server`, answering the refresh of `rt-ada` exactly once.
async fn token_endpoint(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(body_string(
            "grant_type=refresh_token&refresh_token=rt-ada&client_id=cid.apps.googleusercontent.com&client_secret=cs",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"access_token": "ya29.ada", "expires_in": 3599, "token_type": "Bearer"}),
        ))
        .expect(1)
        .mount(server)
        .await;
}

fn refreshable(server: &MockServer) -> Value {
    json!({
        "refresh_token": "rt-ada",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "cs",
        "token_url": format!("{}/token", server.uri()),
    })
}

#[tokio::test]
async fn gmail_searches_with_a_refreshed_token_and_sends_rfc_2822() {
    let tokens = MockServer::start().await;
    token_endpoint(&tokens).await;
    let (world, gmail) = connected("gmail", refreshable(&tokens)).await;
    Mock::given(method("GET"))
        .and(path("/gmail/v1/users/me/messages"))
        .and(query_param("q", "from:bo@globex.com newer_than:7d"))
        .and(query_param("maxResults", "10"))
        .and(header("authorization", "Bearer ya29.ada"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"messages": [{"id": "18c2a", "threadId": "18c2a"}], "resultSizeEstimate": 1}),
        ))
        .expect(1)
        .mount(&gmail)
        .await;
    Mock::given(method("GET"))
        .and(path("/gmail/v1/users/me/messages/18c2a"))
        .and(query_param("format", "metadata"))
        .and(header("authorization", "Bearer ya29.ada"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "18c2a", "threadId": "18c2a", "snippet": "Renewal terms attached", "labelIds": ["INBOX", "UNREAD"],
            "payload": {"headers": [
                {"name": "From", "value": "Bo <bo@globex.com>"},
                {"name": "Subject", "value": "Renewal"},
                {"name": "Date", "value": "Tue, 1 Dec 2026 09:00:00 +0000"}
            ]}
        })))
        .expect(1)
        .mount(&gmail)
        .await;
    let found = world
        .call(
            "gmail_search",
            json!({"query": "from:bo@globex.com newer_than:7d"}),
        )
        .await
        .unwrap();
    assert_eq!(found["messages"][0]["subject"], "Renewal");
    assert_eq!(found["messages"][0]["from"], "Bo <bo@globex.com>");
    assert_eq!(found["messages"][0]["unread"], true);

    Mock::given(method("POST"))
        .and(path("/gmail/v1/users/me/messages/send"))
        .and(header("authorization", "Bearer ya29.ada"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"id": "18c2b", "threadId": "18c2a"})),
        )
        .expect(1)
        .mount(&gmail)
        .await;
    let sent = world
        .call(
            "gmail_send",
            json!({"to": "bo@globex.com", "subject": "Re: Renewal", "body": "Signed.\nThanks!", "cc": "ana@acme.com"}),
        )
        .await
        .unwrap();
    assert_eq!(
        sent,
        json!({"sent": true, "id": "18c2b", "thread_id": "18c2a"})
    );
    let requests: Vec<Request> = gmail.received_requests().await.unwrap();
    let send = requests
        .iter()
        .find(|r| r.url.path().ends_with("/send"))
        .unwrap();
    let raw = serde_json::from_slice::<Value>(&send.body).unwrap()["raw"]
        .as_str()
        .unwrap()
        .to_owned();
    let message = String::from_utf8(URL_SAFE_NO_PAD.decode(raw).unwrap()).unwrap();
    assert_eq!(
        message,
        "To: bo@globex.com\r\nCc: ana@acme.com\r\nSubject: Re: Renewal\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=\"UTF-8\"\r\nContent-Transfer-Encoding: 8bit\r\n\r\nSigned.\r\nThanks!"
    );
    assert_eq!(world.target_of("gmail_send").await.as_deref(), Some("to"));
}

#[tokio::test]
async fn a_revoked_grant_says_to_connect_again() {
    let tokens = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}),
        ))
        .mount(&tokens)
        .await;
    let (world, _gmail) = connected("gmail", refreshable(&tokens)).await;
    let error = world
        .call("gmail_search", json!({"query": "x"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("expired or revoked") && error.contains("connect it again"),
        "{error}"
    );
    assert!(
        !error.contains("rt-ada") && !error.contains("\"cs\""),
        "no secret shows: {error}"
    );
}

#[tokio::test]
async fn calendar_lists_and_creates_events_with_guests() {
    let (world, google) = connected("google_calendar", json!({"token": "ya29.bare"})).await;
    Mock::given(method("GET"))
        .and(path("/calendar/v3/calendars/primary/events"))
        .and(header("authorization", "Bearer ya29.bare"))
        .and(query_param("timeMin", "2026-12-07T00:00:00+08:00"))
        .and(query_param("timeMax", "2026-12-08T00:00:00+08:00"))
        .and(query_param("singleEvents", "true"))
        .and(query_param("orderBy", "startTime"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"timeZone": "Asia/Shanghai", "items": [{
            "id": "ev1", "summary": "Standup", "start": {"dateTime": "2026-12-07T09:30:00+08:00"},
            "end": {"dateTime": "2026-12-07T09:45:00+08:00"}, "organizer": {"email": "ana@acme.com"},
            "attendees": [{"email": "bo@acme.com", "responseStatus": "accepted"}], "htmlLink": "https://calendar.google.com/e/ev1"
        }]})))
        .expect(1)
        .mount(&google)
        .await;
    let events = world
        .call(
            "gcal_list_events",
            json!({"calendar": "primary", "time_min": "2026-12-07T00:00:00+08:00", "time_max": "2026-12-08T00:00:00+08:00"}),
        )
        .await
        .unwrap();
    assert_eq!(events["events"][0]["start"], "2026-12-07T09:30:00+08:00");
    assert_eq!(events["events"][0]["attendees"][0]["response"], "accepted");

    Mock::given(method("POST"))
        .and(path("/calendar/v3/calendars/sales%40acme.com/events"))
        .and(query_param("sendUpdates", "all"))
        .and(header("authorization", "Bearer ya29.bare"))
        .and(body_json(json!({
            "summary": "Globex renewal",
            "start": {"dateTime": "2026-12-08T10:00:00+08:00"},
            "end": {"dateTime": "2026-12-08T10:30:00+08:00"},
            "attendees": [{"email": "bo@globex.com"}],
        })))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"id": "ev2", "htmlLink": "https://calendar.google.com/e/ev2"}),
            ),
        )
        .expect(1)
        .mount(&google)
        .await;
    let created = world
        .call(
            "gcal_create_event",
            json!({"calendar": "sales@acme.com", "summary": "Globex renewal", "start": "2026-12-08T10:00:00+08:00",
                   "end": "2026-12-08T10:30:00+08:00", "attendees": ["bo@globex.com"]}),
        )
        .await
        .unwrap();
    assert_eq!(created["id"], "ev2");
    assert_eq!(
        world.target_of("gcal_create_event").await.as_deref(),
        Some("calendar")
    );
}
