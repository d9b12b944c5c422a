//! Feishu Docs and Calendar against a fake of the open platform: the app's tenant token fetched
//! once with its id and secret, `{code, msg, data}` envelopes, docx blocks, calendar v4 events.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::connected;

async fn as_app() -> (crate::support::World, MockServer) {
    let (world, feishu) = connected(
        "feishu",
        json!({"app_id": "cli_a1", "app_secret": "s3cret"}),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/open-apis/auth/v3/tenant_access_token/internal"))
        .and(body_json(
            json!({"app_id": "cli_a1", "app_secret": "s3cret"}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"code": 0, "msg": "ok", "tenant_access_token": "t-app", "expire": 7200}),
        ))
        .expect(1)
        .mount(&feishu)
        .await;
    (world, feishu)
}

fn ok(data: serde_json::Value) -> ResponseTemplate {
    let mut envelope = json!({"code": 0, "msg": "success"});
    envelope["data"] = data;
    ResponseTemplate::new(200).set_body_json(envelope)
}

#[tokio::test]
async fn a_document_is_created_and_filled_with_the_apps_token() {
    let (world, feishu) = as_app().await;
    Mock::given(method("POST"))
        .and(path("/open-apis/docx/v1/documents"))
        .and(header("authorization", "Bearer t-app"))
        .and(body_json(json!({"folder_token": "fldcnSales", "title": "Weekly digest"})))
        .respond_with(ok(json!({"document": {"document_id": "doxcnD1", "revision_id": 1, "title": "Weekly digest"}})))
        .expect(1)
        .mount(&feishu)
        .await;
    let text =
        |t: &str| json!({"block_type": 2, "text": {"elements": [{"text_run": {"content": t}}]}});
    Mock::given(method("POST"))
        .and(path("/open-apis/docx/v1/documents/doxcnD1/blocks/doxcnD1/children"))
        .and(query_param("document_revision_id", "-1"))
        .and(header("authorization", "Bearer t-app"))
        .and(body_json(json!({"children": [text("Won: 3"), text("Lost: 1")]})))
        .respond_with(ok(json!({"children": [{"block_id": "b1"}, {"block_id": "b2"}], "document_revision_id": 2})))
        .expect(1)
        .mount(&feishu)
        .await;
    let created = world
        .call(
            "feishu_create_doc",
            json!({"folder_token": "https://acme.feishu.cn/drive/folder/fldcnSales", "title": "Weekly digest", "body": "Won: 3\nLost: 1"}),
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"created": true, "document_id": "doxcnD1", "paragraphs": 2})
    );

    Mock::given(method("GET"))
        .and(path("/open-apis/docx/v1/documents/doxcnD1/raw_content"))
        .and(header("authorization", "Bearer t-app"))
        .respond_with(ok(json!({"content": "Weekly digest\nWon: 3\nLost: 1\n"})))
        .mount(&feishu)
        .await;
    let read = world
        .call("feishu_read_doc", json!({"document_id": "doxcnD1"}))
        .await
        .unwrap();
    assert_eq!(read["text"], "Weekly digest\nWon: 3\nLost: 1\n");
    assert_eq!(
        world.target_of("feishu_create_doc").await.as_deref(),
        Some("folder_token")
    );
}

#[tokio::test]
async fn an_event_is_created_on_the_primary_calendar_and_people_invited() {
    let (world, feishu) = as_app().await;
    Mock::given(method("POST"))
        .and(path("/open-apis/calendar/v4/calendars/primary"))
        .respond_with(ok(json!({"calendars": [{"calendar": {"calendar_id": "feishu.cn_abc@group.calendar.feishu.cn", "type": "primary"}}]})))
        .mount(&feishu)
        .await;
    let calendar =
        "/open-apis/calendar/v4/calendars/feishu.cn_abc%40group.calendar.feishu.cn/events";
    Mock::given(method("POST"))
        .and(path(calendar))
        .and(header("authorization", "Bearer t-app"))
        .and(body_json(json!({
            "summary": "Globex renewal",
            "description": "Bring the quote",
            "start_time": {"timestamp": "1796695200"},
            "end_time": {"timestamp": "1796697000"},
        })))
        .respond_with(ok(
            json!({"event": {"event_id": "ev_1", "app_link": "https://applink.feishu.cn/ev_1"}}),
        ))
        .expect(1)
        .mount(&feishu)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{calendar}/ev_1/attendees")))
        .and(query_param("user_id_type", "open_id"))
        .and(body_json(
            json!({"attendees": [{"type": "user", "user_id": "ou_bo"}], "need_notification": true}),
        ))
        .respond_with(ok(json!({"attendees": [{"attendee_id": "user_1"}]})))
        .expect(1)
        .mount(&feishu)
        .await;
    let created = world
        .call(
            "feishu_create_event",
            json!({"calendar_id": "primary", "summary": "Globex renewal", "description": "Bring the quote",
                   "start": "2026-12-08T10:00:00+08:00", "end": "2026-12-08T10:30:00+08:00", "attendees": ["ou_bo"]}),
        )
        .await
        .unwrap();
    assert_eq!(created["event_id"], "ev_1");
    assert_eq!(created["invited"], 1);

    Mock::given(method("GET"))
        .and(path(calendar))
        .and(query_param("start_time", "1796659200"))
        .and(query_param("end_time", "1796745600"))
        .respond_with(ok(json!({"items": [{"event_id": "ev_1", "summary": "Globex renewal",
            "start_time": {"timestamp": "1796695200"}, "end_time": {"timestamp": "1796697000"}}], "has_more": false})))
        .mount(&feishu)
        .await;
    let events = world
        .call(
            "feishu_list_events",
            json!({"calendar_id": "primary", "start": "2026-12-08T00:00:00+08:00", "end": "2026-12-09T00:00:00+08:00"}),
        )
        .await
        .unwrap();
    assert_eq!(events["events"][0]["id"], "ev_1");
}

#[tokio::test]
async fn feishu_errors_in_the_envelope_and_app_only_limits_are_explained() {
    let (world, feishu) = as_app().await;
    Mock::given(method("GET"))
        .and(path("/open-apis/docx/v1/documents/doxcnGone/raw_content"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"code": 1770002, "msg": "not found", "data": {}})),
        )
        .mount(&feishu)
        .await;
    let gone = world
        .call("feishu_read_doc", json!({"document_id": "doxcnGone"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        gone.contains("code 1770002") && gone.contains("not found"),
        "{gone}"
    );
    let search = world
        .call("feishu_search_docs", json!({"query": "digest"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(search.contains("only as a person"), "{search}");
}

#[tokio::test]
async fn a_persons_own_token_searches_documents() {
    let (world, feishu) = connected("feishu", json!({"token": "u-ada"})).await;
    Mock::given(method("POST"))
        .and(path("/open-apis/suite/docs-api/search/object"))
        .and(header("authorization", "Bearer u-ada"))
        .and(body_json(json!({"search_key": "digest", "count": 20, "offset": 0})))
        .respond_with(ok(json!({"docs_entities": [{"docs_token": "doxcnD1", "docs_type": "docx", "title": "Weekly digest", "owner_id": "ou_ada"}], "has_more": false, "total": 1})))
        .expect(1)
        .mount(&feishu)
        .await;
    let found = world
        .call("feishu_search_docs", json!({"query": "digest"}))
        .await
        .unwrap();
    assert_eq!(found["documents"][0]["id"], "doxcnD1");
}
