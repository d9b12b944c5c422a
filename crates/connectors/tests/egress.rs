//! A connector's `base_url` is the tenant's to set, so it goes through the guarded egress: aimed
//! at the host, its networks or the metadata service it reaches nothing, and a token never
//! travels over plain http to a host the operator did not name.

use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};
use workmate_net::NetworkPolicy;

use crate::support::World;

async fn internal_service() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"items": [], "total_count": 0})),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_base_url_aimed_at_the_host_reaches_nothing() {
    let internal = internal_service().await;
    let world = World::with_network(NetworkPolicy::public_only()).await;
    for base_url in [
        internal.uri(),
        // A trailing `#` would swallow the path the connector appends.
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/role#".to_owned(),
        "https://[::ffff:127.0.0.1]:9200/_cat/indices?".to_owned(),
        format!("http://localhost:{}/", internal.address().port()),
    ] {
        world
            .connect(
                "github",
                json!({"token": "ghp_ada", "base_url": base_url}),
                true,
            )
            .await;
        let error = world
            .call("github_search", json!({"query": "is:pr"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("refusing"), "{base_url}: {error}");
    }
    assert!(internal.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn plain_http_is_refused_for_a_host_the_operator_did_not_name() {
    let world = World::with_network(NetworkPolicy::public_only()).await;
    world
        .connect(
            "gitlab",
            json!({"token": "glpat-abcdefghijklmnopqrst", "base_url": "http://gitlab.example.com"}),
            true,
        )
        .await;
    let error = world
        .call("gitlab_list_issues", json!({"search": "login"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("only sent over https"), "{error}");
}

#[tokio::test]
async fn an_internal_host_the_operator_allowed_is_reached() {
    let internal = internal_service().await;
    let allowed = NetworkPolicy::allow_private(["127.0.0.1"]).unwrap();
    let world = World::with_network(allowed).await;
    world
        .connect(
            "github",
            json!({"token": "ghp_ada", "base_url": internal.uri()}),
            true,
        )
        .await;
    let found = world
        .call("github_search", json!({"query": "is:pr"}))
        .await
        .unwrap();
    assert_eq!(found["total"], 0);
    assert_eq!(internal.received_requests().await.unwrap().len(), 1);
}
