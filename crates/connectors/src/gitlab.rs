//! GitLab (gitlab.com or a company's own instance, at `base_url`): issues and merge requests, as
//! the caller (a personal access token). Writes carry the project as their target, so a standing
//! rule can allow exactly one.

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

const SITE: &str = "https://gitlab.com";
const SYSTEM: &str = "GitLab";

/// A project's id in a path: its full path (`group/sub/name`) or its number, encoded.
fn project_id(project: &str) -> Result<String, ToolError> {
    let project = project.trim().trim_matches('/');
    if project.is_empty() || project.split('/').any(str::is_empty) {
        return Err(ToolError::new(format!(
            "project {project:?} must be a project path (group/name) or its numeric id"
        )));
    }
    Ok(segment(project))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListIssuesArgs {
    /// The project (`group/name`); all projects the caller can see when absent.
    #[serde(default)]
    project: Option<String>,
    /// Words to search in titles and descriptions.
    #[serde(default)]
    search: Option<String>,
    /// `opened`, `closed` or `all` (default `opened`).
    #[serde(default)]
    state: Option<String>,
    /// At most this many issues (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListMergeRequestsArgs {
    /// The project (`group/name`).
    project: String,
    /// `opened`, `merged`, `closed` or `all` (default `opened`).
    #[serde(default)]
    state: Option<String>,
    /// Only those updated at or after this time (ISO 8601, e.g. `2026-11-30T00:00:00Z`).
    #[serde(default)]
    updated_after: Option<String>,
    /// At most this many (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IssueArgs {
    /// The project (`group/name`).
    project: String,
    /// The issue's number in the project (its `iid`).
    iid: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIssueArgs {
    /// The project (`group/name`).
    project: String,
    /// The title.
    title: String,
    /// The description (markdown).
    #[serde(default)]
    description: Option<String>,
    /// Labels to set.
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Noteable {
    #[default]
    Issue,
    MergeRequest,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    /// The project (`group/name`).
    project: String,
    /// The issue's or merge request's number in the project (its `iid`).
    iid: u64,
    /// What is commented on: `issue` (default) or `merge_request`.
    #[serde(default)]
    on: Noteable,
    /// The comment (markdown).
    body: String,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "gitlab",
    title: "GitLab",
    auth: AuthKind::Token,
    fields: vec![
        Field {
            key: "token",
            label: "Personal access token",
            secret: true,
            required: true,
            help: "A token with the api (or read_api) scope.",
        },
        Field {
            key: "base_url",
            label: "Instance URL",
            secret: false,
            required: false,
            help: "Leave empty for gitlab.com; e.g. https://gitlab.example.com.",
        },
    ],
    tools: vec![
        ToolDef {
            name: "gitlab_list_issues",
            description: "List or search issues, in one project or all the caller can see.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<ListIssuesArgs>(),
        },
        ToolDef {
            name: "gitlab_list_merge_requests",
            description: "List a project's merge requests, e.g. those merged since a date.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<ListMergeRequestsArgs>(),
        },
        ToolDef {
            name: "gitlab_get_issue",
            description: "Read one issue: title, state, author, labels, description.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<IssueArgs>(),
        },
        ToolDef {
            name: "gitlab_create_issue",
            description: "Open an issue in a project.",
            risk: Some(Risk::Write),
            target_arg: Some("project"),
            parameters: schema::<CreateIssueArgs>(),
        },
        ToolDef {
            name: "gitlab_comment",
            description: "Comment on an issue or a merge request.",
            risk: Some(Risk::Write),
            target_arg: Some("project"),
            parameters: schema::<CommentArgs>(),
        },
    ],
});

/// The fields of an issue or merge request worth showing.
fn item(value: &Value) -> Value {
    json!({
        "iid": value["iid"],
        "title": value["title"],
        "state": value["state"],
        "author": value["author"]["username"],
        "url": value["web_url"],
        "labels": value["labels"],
        "created_at": value["created_at"],
        "merged_at": value.get("merged_at"),
        "description": value["description"],
    })
}

/// `state` if it is one of `allowed`, else an error listing them.
fn state<'s>(asked: Option<&'s str>, allowed: &[&str]) -> Result<&'s str, ToolError> {
    let state = asked.unwrap_or("opened");
    if allowed.contains(&state) {
        Ok(state)
    } else {
        Err(ToolError::new(format!(
            "state {state:?} must be one of {}",
            allowed.join(", ")
        )))
    }
}

/// The GitLab connector.
#[derive(Debug, Default)]
pub struct GitLab;

impl Connector for GitLab {
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
            let token = field(credentials, "gitlab", "token")?;
            let base = format!(
                "{}/api/v4",
                trimmed(credentials.get("base_url").unwrap_or(SITE))
            );
            let api = Api {
                http,
                system: SYSTEM,
                base: &base,
                auth: Auth::Header("PRIVATE-TOKEN", token),
                headers: &[],
            };
            match tool {
                "gitlab_list_issues" => {
                    let args: ListIssuesArgs = parse(tool, arguments)?;
                    let state = state(args.state.as_deref(), &["opened", "closed", "all"])?;
                    let mut path = match args.project.as_deref() {
                        Some(project) => format!("/projects/{}/issues?", project_id(project)?),
                        None => "/issues?scope=all&".to_owned(),
                    };
                    path.push_str(&format!("state={state}&per_page={}", limit(args.limit)));
                    if let Some(search) = args.search.as_deref() {
                        path.push_str(&format!("&search={}", query(search)));
                    }
                    let found = api.send(Method::GET, &path, None).await?;
                    Ok(json!({"issues": each(&found, item)}))
                }
                "gitlab_list_merge_requests" => {
                    let args: ListMergeRequestsArgs = parse(tool, arguments)?;
                    let state = state(
                        args.state.as_deref(),
                        &["opened", "merged", "closed", "all"],
                    )?;
                    let mut path = format!(
                        "/projects/{}/merge_requests?state={state}&per_page={}",
                        project_id(&args.project)?,
                        limit(args.limit)
                    );
                    if let Some(after) = args.updated_after.as_deref() {
                        path.push_str(&format!("&updated_after={}", query(after)));
                    }
                    let found = api.send(Method::GET, &path, None).await?;
                    Ok(json!({"merge_requests": each(&found, item)}))
                }
                "gitlab_get_issue" => {
                    let args: IssueArgs = parse(tool, arguments)?;
                    let path = format!(
                        "/projects/{}/issues/{}",
                        project_id(&args.project)?,
                        args.iid
                    );
                    Ok(item(&api.send(Method::GET, &path, None).await?))
                }
                "gitlab_create_issue" => {
                    let args: CreateIssueArgs = parse(tool, arguments)?;
                    let path = format!("/projects/{}/issues", project_id(&args.project)?);
                    let mut body = json!({"title": args.title});
                    if let Some(description) = args.description {
                        body["description"] = json!(description);
                    }
                    if !args.labels.is_empty() {
                        body["labels"] = json!(args.labels.join(","));
                    }
                    let created = api.send(Method::POST, &path, Some(body)).await?;
                    Ok(json!({"created": true, "iid": created["iid"], "url": created["web_url"]}))
                }
                "gitlab_comment" => {
                    let args: CommentArgs = parse(tool, arguments)?;
                    let kind = match args.on {
                        Noteable::Issue => "issues",
                        Noteable::MergeRequest => "merge_requests",
                    };
                    let path = format!(
                        "/projects/{}/{kind}/{}/notes",
                        project_id(&args.project)?,
                        args.iid
                    );
                    let created = api
                        .send(Method::POST, &path, Some(json!({"body": args.body})))
                        .await?;
                    Ok(json!({"commented": true, "id": created["id"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
