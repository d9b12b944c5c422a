//! DingTalk Docs against a fake of api.dingtalk.com: the app's access token fetched once, sent as
//! `x-acs-dingtalk-access-token`, with the caller's unionId as operator.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::support::connected;

#[tokio::test]
async fn documents_are_searched_read_and_created_as_the_operator() {
    let (world, dingtalk) = connected(
        "dingtalk_docs",
        json!({"app_key": "ding_app", "app_secret": "s3cret", "union_id": "uAda"}),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/v1.0/oauth2/accessToken"))
        .and(body_json(
            json!({"appKey": "ding_app", "appSecret": "s3cret"}),
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"accessToken": "at-1", "expireIn": 7200})),
        )
        .expect(1)
        .mount(&dingtalk)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1.0/doc/docs"))
        .and(header("x-acs-dingtalk-access-token", "at-1"))
        .and(query_param("operatorId", "uAda"))
        .and(query_param("keyword", "周报"))
        .and(query_param("maxResults", "20"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"docs": [{
            "nodeBO": {"nodeId": "nd1", "name": "销售周报", "docType": "DOC", "url": "https://alidocs.dingtalk.com/i/nodes/nd1", "lastEditTime": 1796695200000_u64},
            "workspaceBO": {"workspaceId": "ws1", "name": "销售"}
        }], "hasMore": false})))
        .expect(1)
        .mount(&dingtalk)
        .await;
    let found = world
        .call("dingtalk_docs_search", json!({"query": "周报"}))
        .await
        .unwrap();
    assert_eq!(found["documents"][0]["name"], "销售周报");
    assert_eq!(found["documents"][0]["workspace"], "销售");

    Mock::given(method("POST"))
        .and(path("/v1.0/doc/workspaces/ws1/docs"))
        .and(header("x-acs-dingtalk-access-token", "at-1"))
        .and(body_json(json!({"name": "本周摘要", "docType": "DOC", "operatorId": "uAda"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "docKey": "dk1", "dentryUuid": "du1", "nodeId": "nd2", "url": "https://alidocs.dingtalk.com/i/nodes/nd2", "workspaceId": "ws1"
        })))
        .expect(1)
        .mount(&dingtalk)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1.0/doc/suites/documents/dk1/overwriteContent"))
        .and(query_param("operatorId", "uAda"))
        .and(body_json(
            json!({"content": "# 本周\n成交 3 单", "dataType": "markdown"}),
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"success": true, "result": {}})),
        )
        .expect(1)
        .mount(&dingtalk)
        .await;
    let created = world
        .call(
            "dingtalk_docs_create",
            json!({"workspace_id": "ws1", "name": "本周摘要", "body": "# 本周\n成交 3 单"}),
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"created": true, "doc_key": "dk1", "url": "https://alidocs.dingtalk.com/i/nodes/nd2"})
    );

    Mock::given(method("GET"))
        .and(path("/v1.0/doc/suites/documents/dk1/blocks"))
        .and(query_param("operatorId", "uAda"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"success": true, "result": {"data": [
                {"blockType": "heading", "heading": {"text": "本周"}},
                {"blockType": "paragraph", "paragraph": {"text": "成交 3 单"}}
            ]}}),
        ))
        .mount(&dingtalk)
        .await;
    let read = world
        .call("dingtalk_docs_read", json!({"doc_key": "dk1"}))
        .await
        .unwrap();
    assert_eq!(read["text"], "本周\n成交 3 单");
    assert_eq!(
        world.target_of("dingtalk_docs_create").await.as_deref(),
        Some("workspace_id")
    );
}

#[tokio::test]
async fn a_refused_call_shows_dingtalks_code() {
    let (world, dingtalk) = connected(
        "dingtalk_docs",
        json!({"app_key": "ding_app", "app_secret": "s3cret", "union_id": "uAda"}),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/v1.0/oauth2/accessToken"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"accessToken": "at-1", "expireIn": 7200})),
        )
        .mount(&dingtalk)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1.0/doc/workspaces"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "code": "Forbidden.AccessDenied.AccessTokenPermissionDenied", "message": "no Storage.File.Read", "requestid": "r1"
        })))
        .mount(&dingtalk)
        .await;
    let refused = world
        .call("dingtalk_docs_workspaces", json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("AccessTokenPermissionDenied") && refused.contains("403"),
        "{refused}"
    );
}
