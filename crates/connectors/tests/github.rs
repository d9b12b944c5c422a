//! GitHub's tools against a fake of its REST API: the caller's token, the paths and bodies GitHub
//! documents, and what the model gets back.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_personas::ConnectorGrant;

use crate::support::World;

async fn connected() -> (World, MockServer) {
    let world = World::new().await;
    let github = MockServer::start().await;
    world
        .connect(
            "github",
            json!({"token": "ghp_ada", "base_url": github.uri()}),
            true,
        )
        .await;
    (world, github)
}

#[tokio::test]
async fn tools_are_offered_only_when_connected_and_granted() {
    let bare = World::new().await;
    assert!(
        bare.offered(&ConnectorGrant::All).await.is_empty(),
        "not connected"
    );
    let world = World::new().await;
    world
        .connect("github", json!({"token": "ghp_team"}), false)
        .await;
    let names: Vec<String> = world
        .offered(&ConnectorGrant::All)
        .await
        .iter()
        .map(|t| t.spec().name)
        .collect();
    assert!(
        names.contains(&"github_create_issue".to_owned()),
        "the tenant's token counts: {names:?}"
    );
    assert!(!names.iter().any(|n| n.starts_with("jira_")), "{names:?}");
    assert!(world.offered(&ConnectorGrant::None).await.is_empty());
    assert!(
        world
            .offered(&ConnectorGrant::Ids(vec!["jira".into()]))
            .await
            .is_empty()
    );
    assert!(
        !world
            .offered(&ConnectorGrant::Ids(vec!["github".into()]))
            .await
            .is_empty()
    );

    let tools = world.offered(&ConnectorGrant::All).await;
    let meta = |name: &str| {
        tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap()
            .metadata()
            .unwrap()
    };
    assert!(!meta("github_search").requires_approval, "reads run");
    let write = meta("github_create_issue");
    assert!(write.requires_approval && write.category == "connector");
    assert_eq!(
        write.target_arg.as_deref(),
        Some("repo"),
        "a rule can allow exactly one repository"
    );
}

#[tokio::test]
async fn an_issue_is_created_with_the_callers_token() {
    let (world, github) = connected().await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/web/issues"))
        .and(header("authorization", "Bearer ghp_ada"))
        .and(header("x-github-api-version", "2022-11-28"))
        .and(body_json(
            json!({"title": "Flaky login test", "body": "Fails 1 in 5.", "labels": ["bug"]}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(
            json!({"number": 42, "html_url": "https://github.com/acme/web/issues/42"}),
        ))
        .expect(1)
        .mount(&github)
        .await;
    let result = world
        .call(
            "github_create_issue",
            json!({"repo": "acme/web", "title": "Flaky login test", "body": "Fails 1 in 5.", "labels": ["bug"]}),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({"created": true, "number": 42, "url": "https://github.com/acme/web/issues/42"})
    );
}

#[tokio::test]
async fn search_comment_and_read_speak_githubs_shapes() {
    let (world, github) = connected().await;
    Mock::given(method("GET"))
        .and(path("/search/issues"))
        .and(query_param("q", "repo:acme/web is:pr is:merged"))
        .and(query_param("per_page", "5"))
        .and(header("authorization", "Bearer ghp_ada"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "total_count": 1,
            "items": [{"number": 7, "title": "Faster login", "state": "closed", "user": {"login": "ana"},
                       "html_url": "https://github.com/acme/web/pull/7", "labels": [{"name": "perf"}],
                       "pull_request": {}, "created_at": "2026-11-30T10:00:00Z", "closed_at": null, "body": "…"}]
        })))
        .mount(&github)
        .await;
    let found = world
        .call(
            "github_search",
            json!({"query": "repo:acme/web is:pr is:merged", "limit": 5}),
        )
        .await
        .unwrap();
    assert_eq!(found["total"], 1);
    assert_eq!(found["items"][0]["author"], "ana");
    assert_eq!(found["items"][0]["pull_request"], true);
    assert_eq!(found["items"][0]["labels"], json!(["perf"]));

    Mock::given(method("POST"))
        .and(path("/repos/acme/web/issues/7/comments"))
        .and(body_json(json!({"body": "Shipped in 2.4."})))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(json!({"html_url": "https://github.com/acme/web/pull/7#c1"})),
        )
        .expect(1)
        .mount(&github)
        .await;
    let commented = world
        .call(
            "github_comment",
            json!({"repo": "acme/web", "number": 7, "body": "Shipped in 2.4."}),
        )
        .await
        .unwrap();
    assert_eq!(commented["commented"], true);

    Mock::given(method("GET"))
        .and(path("/repos/acme/web/issues/8"))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(json!({"message": "Bad credentials"})),
        )
        .mount(&github)
        .await;
    let error = world
        .call("github_get_issue", json!({"repo": "acme/web", "number": 8}))
        .await
        .unwrap_err();
    assert!(
        error.message.contains("did not accept the credentials"),
        "{error}"
    );
    assert!(
        !error.message.contains("ghp_ada"),
        "no credential in errors: {error}"
    );
    let error = world
        .call(
            "github_get_issue",
            json!({"repo": "not-a-repo", "number": 8}),
        )
        .await
        .unwrap_err();
    assert!(error.message.contains("owner/name"), "{error}");
}
