//! GitHub (or GitHub Enterprise, with `base_url`): issues and pull requests, as the caller.
//! Writes carry the repository as their target, so a standing rule can allow exactly one.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::connector::{each, field, limit, no_tool, query, segment, trimmed};
use crate::http::{Api, Auth};
use crate::{AuthKind, Connector, Credentials, Descriptor, Field, Http, Risk, ToolDef};

const API: &str = "https://api.github.com";
const SYSTEM: &str = "GitHub";

/// `owner/name`.
fn repo_path(repo: &str) -> Result<String, ToolError> {
    let (owner, name) = repo
        .trim()
        .split_once('/')
        .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| ToolError::new(format!("repo {repo:?} must be owner/name")))?;
    Ok(format!("{}/{}", segment(owner), segment(name)))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// A GitHub search query, e.g. `repo:acme/web is:pr is:merged merged:>=2026-11-30`.
    query: String,
    /// At most this many results (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IssueArgs {
    /// The repository, `owner/name`.
    repo: String,
    /// The issue or pull request number.
    number: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIssueArgs {
    /// The repository, `owner/name`.
    repo: String,
    /// The title.
    title: String,
    /// The body (markdown).
    #[serde(default)]
    body: Option<String>,
    /// Labels to set.
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    /// The repository, `owner/name`.
    repo: String,
    /// The issue or pull request number.
    number: u64,
    /// The comment (markdown).
    body: String,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "github",
    title: "GitHub",
    auth: AuthKind::Token,
    fields: vec![
        Field {
            key: "token",
            label: "Personal access token",
            secret: true,
            required: true,
            help: "A fine-grained token with the repositories and permissions workmate may use.",
        },
        Field {
            key: "base_url",
            label: "API URL (GitHub Enterprise)",
            secret: false,
            required: false,
            help: "Leave empty for github.com; e.g. https://github.example.com/api/v3.",
        },
    ],
    tools: vec![
        ToolDef {
            name: "github_search",
            description: "Search GitHub issues and pull requests with a GitHub search query.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "github_get_issue",
            description: "Read one issue or pull request: title, state, author, body, labels.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<IssueArgs>(),
        },
        ToolDef {
            name: "github_create_issue",
            description: "Open an issue in a repository.",
            risk: Some(Risk::Write),
            target_arg: Some("repo"),
            parameters: schema::<CreateIssueArgs>(),
        },
        ToolDef {
            name: "github_comment",
            description: "Comment on an issue or pull request.",
            risk: Some(Risk::Write),
            target_arg: Some("repo"),
            parameters: schema::<CommentArgs>(),
        },
    ],
});

/// The GitHub connector.
#[derive(Debug, Default)]
pub struct GitHub;

/// The fields of an issue worth showing.
fn issue(value: &Value) -> Value {
    json!({
        "number": value["number"],
        "title": value["title"],
        "state": value["state"],
        "author": value["user"]["login"],
        "url": value["html_url"],
        "labels": value["labels"].as_array().map(|l| l.iter().map(|l| l["name"].clone()).collect::<Vec<_>>()),
        "pull_request": value.get("pull_request").is_some(),
        "created_at": value["created_at"],
        "closed_at": value["closed_at"],
        "body": value["body"],
    })
}

impl Connector for GitHub {
    fn descriptor(&self) -> &Descriptor {
        &DESCRIPTOR
    }

    fn call<'a>(
        &'a self,
        http: &'a Http,
        credentials: &'a Credentials,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a> {
        Box::pin(async move {
            let token = field(credentials, "github", "token")?;
            let base = trimmed(credentials.get("base_url").unwrap_or(API));
            let headers = [
                ("X-GitHub-Api-Version", "2022-11-28"),
                ("Accept", "application/vnd.github+json"),
            ];
            let api = Api {
                http,
                system: SYSTEM,
                base,
                auth: Auth::Bearer(token),
                headers: &headers,
            };
            match tool {
                "github_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let (query, limit) = (query(&args.query), limit(args.limit));
                    let found = api
                        .send(
                            Method::GET,
                            &format!("/search/issues?q={query}&per_page={limit}"),
                            None,
                        )
                        .await?;
                    Ok(
                        json!({"total": found["total_count"], "items": each(&found["items"], issue)}),
                    )
                }
                "github_get_issue" => {
                    let args: IssueArgs = parse(tool, arguments)?;
                    let repo = repo_path(&args.repo)?;
                    let found = api
                        .send(
                            Method::GET,
                            &format!("/repos/{repo}/issues/{}", args.number),
                            None,
                        )
                        .await?;
                    Ok(issue(&found))
                }
                "github_create_issue" => {
                    let args: CreateIssueArgs = parse(tool, arguments)?;
                    let repo = repo_path(&args.repo)?;
                    let body =
                        json!({"title": args.title, "body": args.body, "labels": args.labels});
                    let created = api
                        .send(Method::POST, &format!("/repos/{repo}/issues"), Some(body))
                        .await?;
                    Ok(
                        json!({"created": true, "number": created["number"], "url": created["html_url"]}),
                    )
                }
                "github_comment" => {
                    let args: CommentArgs = parse(tool, arguments)?;
                    let repo = repo_path(&args.repo)?;
                    let body = json!({"body": args.body});
                    let created = api
                        .send(
                            Method::POST,
                            &format!("/repos/{repo}/issues/{}/comments", args.number),
                            Some(body),
                        )
                        .await?;
                    Ok(json!({"commented": true, "url": created["html_url"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
