//! Jira's tools against a fake of its REST API v3: basic auth with the caller's e-mail and API
//! token, JQL search, issues created with an Atlassian document description.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::World;

async fn connected() -> (World, MockServer) {
    let world = World::new().await;
    let jira = MockServer::start().await;
    world
        .connect(
            "jira",
            json!({"base_url": jira.uri(), "email": "ada@acme.com", "api_token": "atl-secret"}),
            true,
        )
        .await;
    (world, jira)
}

/// `Basic base64("ada@acme.com:atl-secret")`.
const BASIC: &str = "Basic YWRhQGFjbWUuY29tOmF0bC1zZWNyZXQ=";

#[tokio::test]
async fn search_and_create_speak_jiras_shapes() {
    let (world, jira) = connected().await;
    Mock::given(method("POST"))
        .and(path("/rest/api/3/search/jql"))
        .and(header("authorization", BASIC))
        .and(body_json(json!({
            "jql": "project = SALES AND resolved >= -7d",
            "maxResults": 20,
            "fields": ["summary", "status", "assignee", "issuetype", "updated"],
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"issues": [{
            "key": "SALES-42",
            "fields": {"summary": "Renew Globex", "status": {"name": "Done"}, "assignee": {"displayName": "Ana"},
                       "issuetype": {"name": "Task"}, "updated": "2026-12-01T09:00:00.000+0000"}
        }]})))
        .expect(1)
        .mount(&jira)
        .await;
    let found = world
        .call(
            "jira_search",
            json!({"jql": "project = SALES AND resolved >= -7d"}),
        )
        .await
        .unwrap();
    assert_eq!(found["issues"][0]["key"], "SALES-42");
    assert_eq!(found["issues"][0]["status"], "Done");

    Mock::given(method("POST"))
        .and(path("/rest/api/3/issue"))
        .and(header("authorization", BASIC))
        .and(body_json(json!({"fields": {
            "project": {"key": "SALES"},
            "summary": "Call Globex",
            "issuetype": {"name": "Task"},
            "description": {"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "They asked for a quote."}]}
            ]}
        }})))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": "10001", "key": "SALES-43"})))
        .expect(1)
        .mount(&jira)
        .await;
    let created = world
        .call("jira_create_issue", json!({"project": "SALES", "summary": "Call Globex", "description": "They asked for a quote."}))
        .await
        .unwrap();
    assert_eq!(created["key"], "SALES-43");
    assert_eq!(created["url"], format!("{}/browse/SALES-43", jira.uri()));

    Mock::given(method("POST"))
        .and(path("/rest/api/3/issue/SALES-43/comment"))
        .and(body_json(
            json!({"body": {"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "Quote sent."}]}
            ]}}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": "5"})))
        .expect(1)
        .mount(&jira)
        .await;
    let commented = world
        .call(
            "jira_add_comment",
            json!({"issue": "SALES-43", "body": "Quote sent."}),
        )
        .await
        .unwrap();
    assert_eq!(commented, json!({"commented": true, "id": "5"}));
}

#[tokio::test]
async fn writes_carry_their_project_or_issue_as_target() {
    let world = World::new().await;
    world
        .connect(
            "jira",
            json!({"base_url": "https://acme.atlassian.net", "email": "a@b", "api_token": "t"}),
            false,
        )
        .await;
    let tools = world.offered(&workmate_personas::ConnectorGrant::All).await;
    let target = |name: &str| {
        tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap()
            .metadata()
            .unwrap()
            .target_arg
    };
    assert_eq!(target("jira_create_issue").as_deref(), Some("project"));
    assert_eq!(target("jira_add_comment").as_deref(), Some("issue"));
    assert_eq!(target("jira_search"), None);
}
