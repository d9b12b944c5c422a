//! GitLab's tools against a fake of its REST API v4: the caller's token in `PRIVATE-TOKEN`,
//! project paths encoded as GitLab documents, and labels as a comma-separated list.

use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

use crate::support::connected;

#[tokio::test]
async fn merged_merge_requests_issues_and_notes_speak_gitlabs_shapes() {
    let (world, gitlab) = connected("gitlab", json!({"token": "glpat-ada"})).await;
    Mock::given(method("GET"))
        .and(path("/api/v4/projects/acme%2Fweb/merge_requests"))
        .and(header("private-token", "glpat-ada"))
        .and(query_param("state", "merged"))
        .and(query_param("updated_after", "2026-11-30T00:00:00Z"))
        .and(query_param("per_page", "20"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{
            "iid": 12, "title": "Faster search", "state": "merged", "author": {"username": "ana"},
            "web_url": "https://gitlab.com/acme/web/-/merge_requests/12", "labels": ["perf"],
            "created_at": "2026-11-30T10:00:00Z", "merged_at": "2026-12-01T10:00:00Z", "description": "…"
        }])))
        .expect(1)
        .mount(&gitlab)
        .await;
    let merged = world
        .call(
            "gitlab_list_merge_requests",
            json!({"project": "acme/web", "state": "merged", "updated_after": "2026-11-30T00:00:00Z"}),
        )
        .await
        .unwrap();
    assert_eq!(merged["merge_requests"][0]["iid"], 12);
    assert_eq!(merged["merge_requests"][0]["author"], "ana");

    Mock::given(method("POST"))
        .and(path("/api/v4/projects/acme%2Fweb/issues"))
        .and(header("private-token", "glpat-ada"))
        .and(body_json(
            json!({"title": "Flaky test", "description": "1 in 5", "labels": "bug,ci"}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(
            json!({"iid": 31, "web_url": "https://gitlab.com/acme/web/-/issues/31"}),
        ))
        .expect(1)
        .mount(&gitlab)
        .await;
    let created = world
        .call(
            "gitlab_create_issue",
            json!({"project": "acme/web", "title": "Flaky test", "description": "1 in 5", "labels": ["bug", "ci"]}),
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        json!({"created": true, "iid": 31, "url": "https://gitlab.com/acme/web/-/issues/31"})
    );

    Mock::given(method("POST"))
        .and(path("/api/v4/projects/acme%2Fweb/merge_requests/12/notes"))
        .and(body_json(json!({"body": "Looks good."})))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 900})))
        .expect(1)
        .mount(&gitlab)
        .await;
    let noted = world
        .call(
            "gitlab_comment",
            json!({"project": "acme/web", "iid": 12, "on": "merge_request", "body": "Looks good."}),
        )
        .await
        .unwrap();
    assert_eq!(noted, json!({"commented": true, "id": 900}));
    assert_eq!(
        world.target_of("gitlab_create_issue").await.as_deref(),
        Some("project")
    );
}

#[tokio::test]
async fn bad_arguments_and_refusals_say_what_to_do() {
    let (world, gitlab) = connected("gitlab", json!({"token": "glpat-ada"})).await;
    let bad = world
        .call("gitlab_list_issues", json!({"state": "sleeping"}))
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("opened, closed, all"), "{bad}");
    Mock::given(method("GET"))
        .and(path("/api/v4/projects/acme%2Fsecret/issues/1"))
        .respond_with(
            ResponseTemplate::new(404).set_body_json(json!({"message": "404 Project Not Found"})),
        )
        .mount(&gitlab)
        .await;
    let missing = world
        .call(
            "gitlab_get_issue",
            json!({"project": "acme/secret", "iid": 1}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("GitLab found no such thing") && missing.contains("404"),
        "{missing}"
    );
    assert!(
        !missing.contains("glpat-ada"),
        "the token never shows: {missing}"
    );
}
