//! Confluence's tools against a fake of its REST API: basic auth with the caller's e-mail and API
//! token, CQL search (v1), pages and comments in storage format (v2), a space found by its key.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::support::connected;

/// `Basic base64("ada@acme.com:atl-secret")`.
const BASIC: &str = "Basic YWRhQGFjbWUuY29tOmF0bC1zZWNyZXQ=";

fn fields() -> serde_json::Value {
    json!({"email": "ada@acme.com", "api_token": "atl-secret"})
}

#[tokio::test]
async fn a_page_is_created_in_the_space_its_key_names() {
    let (world, site) = connected("confluence", fields()).await;
    Mock::given(method("GET"))
        .and(path("/wiki/api/v2/spaces"))
        .and(query_param("keys", "SALES"))
        .and(header("authorization", BASIC))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"results": [{"id": "98304", "key": "SALES"}]})),
        )
        .expect(1)
        .mount(&site)
        .await;
    Mock::given(method("POST"))
        .and(path("/wiki/api/v2/pages"))
        .and(header("authorization", BASIC))
        .and(body_json(json!({
            "spaceId": "98304",
            "status": "current",
            "title": "Weekly digest",
            "parentId": "111",
            "body": {"representation": "storage", "value": "<p>Won: Globex &amp; Initech</p><p>Lost: none</p>"},
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "222", "_links": {"webui": "/spaces/SALES/pages/222/Weekly+digest", "base": "https://acme.atlassian.net/wiki"}
        })))
        .expect(1)
        .mount(&site)
        .await;
    let created = world
        .call(
            "confluence_create_page",
            json!({"space": "SALES", "title": "Weekly digest", "parent_id": "111", "body": "Won: Globex & Initech\n\nLost: none"}),
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"created": true, "id": "222", "url": "https://acme.atlassian.net/wiki/spaces/SALES/pages/222/Weekly+digest"})
    );
    assert_eq!(
        world.target_of("confluence_create_page").await.as_deref(),
        Some("space")
    );
    assert_eq!(
        world.target_of("confluence_add_comment").await.as_deref(),
        Some("page_id")
    );
}

#[tokio::test]
async fn search_read_and_comment_speak_confluences_shapes() {
    let (world, site) = connected("confluence", fields()).await;
    Mock::given(method("GET"))
        .and(path("/wiki/rest/api/search"))
        .and(query_param("cql", "type = page AND text ~ \"pricing\""))
        .and(query_param("limit", "5"))
        .and(header("authorization", BASIC))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [{
            "content": {"id": "333", "type": "page", "_links": {"webui": "/spaces/SALES/pages/333"}},
            "title": "Pricing 2027", "excerpt": "new @@@hl@@@pricing@@@endhl@@@", "lastModified": "2026-12-01T08:00:00.000Z"
        }]})))
        .expect(1)
        .mount(&site)
        .await;
    let found = world
        .call(
            "confluence_search",
            json!({"cql": "type = page AND text ~ \"pricing\"", "limit": 5}),
        )
        .await
        .unwrap();
    assert_eq!(found["results"][0]["id"], "333");
    assert_eq!(
        found["results"][0]["url"],
        format!("{}/wiki/spaces/SALES/pages/333", site.uri())
    );

    Mock::given(method("GET"))
        .and(path("/wiki/api/v2/pages/333"))
        .and(query_param("body-format", "storage"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "333", "title": "Pricing 2027", "version": {"number": 4},
            "body": {"storage": {"value": "<h1>Tiers</h1><p>Basic &amp; Pro</p><ul><li>Basic: 10</li></ul>"}},
            "_links": {"webui": "/spaces/SALES/pages/333"}
        })))
        .mount(&site)
        .await;
    let page = world
        .call("confluence_get_page", json!({"page_id": "333"}))
        .await
        .unwrap();
    assert_eq!(page["text"], "Tiers\nBasic & Pro\nBasic: 10");
    assert_eq!(page["version"], 4);

    Mock::given(method("POST"))
        .and(path("/wiki/api/v2/footer-comments"))
        .and(body_json(json!({"pageId": "333", "body": {"representation": "storage", "value": "<p>Reviewed.</p>"}})))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": "444"})))
        .expect(1)
        .mount(&site)
        .await;
    let commented = world
        .call(
            "confluence_add_comment",
            json!({"page_id": "333", "body": "Reviewed."}),
        )
        .await
        .unwrap();
    assert_eq!(commented, json!({"commented": true, "id": "444"}));

    let bad = world
        .call("confluence_get_page", json!({"page_id": "../admin"}))
        .await
        .unwrap_err();
    assert!(
        bad.to_string().contains("must be a Confluence page id"),
        "{bad}"
    );
}
