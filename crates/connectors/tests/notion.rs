//! Notion's tools against a fake of its API: the integration's bearer token, the pinned
//! `Notion-Version`, search, pages and their block children.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::support::connected;

const PAGE: &str = "1a2b3c4d5e6f70819a2b3c4d5e6f7081";

#[tokio::test]
async fn search_read_create_and_append_speak_notions_shapes() {
    let (world, notion) = connected("notion", json!({"token": "secret_ada"})).await;
    let title =
        json!({"title": {"id": "title", "type": "title", "title": [{"plain_text": "Q4 plan"}]}});
    Mock::given(method("POST"))
        .and(path("/v1/search"))
        .and(header("authorization", "Bearer secret_ada"))
        .and(header("notion-version", "2022-06-28"))
        .and(body_json(json!({"query": "Q4", "page_size": 20, "filter": {"property": "object", "value": "page"}})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [{
            "object": "page", "id": PAGE, "url": "https://www.notion.so/Q4-plan", "properties": title,
            "last_edited_time": "2026-12-01T08:00:00.000Z"
        }], "has_more": false})))
        .expect(1)
        .mount(&notion)
        .await;
    let found = world
        .call("notion_search", json!({"query": "Q4"}))
        .await
        .unwrap();
    assert_eq!(found["pages"][0]["title"], "Q4 plan");

    Mock::given(method("GET"))
        .and(path(format!("/v1/pages/{PAGE}")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": PAGE, "properties": title, "url": "u"})),
        )
        .mount(&notion)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/blocks/{PAGE}/children")))
        .and(query_param("page_size", "100"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            {"type": "heading_1", "heading_1": {"rich_text": [{"plain_text": "Goals"}]}},
            {"type": "paragraph", "paragraph": {"rich_text": [{"plain_text": "Ship "}, {"plain_text": "v2"}]}},
            {"type": "divider", "divider": {}}
        ], "has_more": false})))
        .mount(&notion)
        .await;
    let page = world
        .call(
            "notion_get_page",
            json!({"page_id": format!("https://www.notion.so/acme/Q4-plan-{PAGE}")}),
        )
        .await
        .unwrap();
    assert_eq!(page["text"], "Goals\nShip v2");

    let paragraph = |text: &str| json!({"object": "block", "type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": text}}]}});
    Mock::given(method("POST"))
        .and(path("/v1/pages"))
        .and(header("authorization", "Bearer secret_ada"))
        .and(body_json(json!({
            "parent": {"page_id": PAGE},
            "properties": {"title": {"title": [{"text": {"content": "Digest"}}]}},
            "children": [paragraph("Won: 3"), paragraph("Lost: 1")],
        })))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": "new-page", "url": "https://www.notion.so/Digest"})),
        )
        .expect(1)
        .mount(&notion)
        .await;
    let created = world
        .call(
            "notion_create_page",
            json!({"parent_page_id": PAGE, "title": "Digest", "body": "Won: 3\n\nLost: 1"}),
        )
        .await
        .unwrap();
    assert_eq!(created["id"], "new-page");

    Mock::given(method("PATCH"))
        .and(path(format!("/v1/blocks/{PAGE}/children")))
        .and(body_json(
            json!({"children": [paragraph("Update: signed.")]}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [{"id": "b1"}]})))
        .expect(1)
        .mount(&notion)
        .await;
    let appended = world
        .call(
            "notion_append",
            json!({"page_id": PAGE, "body": "Update: signed."}),
        )
        .await
        .unwrap();
    assert_eq!(appended, json!({"appended": true, "blocks": 1}));
    assert_eq!(
        world.target_of("notion_create_page").await.as_deref(),
        Some("parent_page_id")
    );
}
