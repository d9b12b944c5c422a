//! Jira Cloud (or Data Center, at its `base_url`): search, read, create issues and comment, as
//! the caller (account e-mail and API token). Writes carry their project or issue as target.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::ToolFuture;
use workmate_tools::args::{parse, schema};

use crate::atlassian;
use crate::connector::{each, limit, no_tool, segment};
use crate::{AuthKind, Connector, Credentials, Descriptor, Http, Risk, ToolDef};

const SYSTEM: &str = "Jira";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// A JQL query, e.g. `project = SALES AND status = Done AND resolved >= -7d`.
    jql: String,
    /// At most this many issues (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IssueArgs {
    /// The issue key, e.g. `SALES-42`.
    issue: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The project key, e.g. `SALES`.
    project: String,
    /// The summary.
    summary: String,
    /// The description (plain text).
    #[serde(default)]
    description: Option<String>,
    /// The issue type (default `Task`).
    #[serde(default)]
    issue_type: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    /// The issue key, e.g. `SALES-42`.
    issue: String,
    /// The comment (plain text).
    body: String,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "jira",
    title: "Jira",
    auth: AuthKind::ApiToken,
    fields: atlassian::fields(),
    tools: vec![
        ToolDef {
            name: "jira_search",
            description: "Search Jira issues with JQL.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "jira_get_issue",
            description: "Read one Jira issue.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<IssueArgs>(),
        },
        ToolDef {
            name: "jira_create_issue",
            description: "Create an issue in a Jira project.",
            risk: Some(Risk::Write),
            target_arg: Some("project"),
            parameters: schema::<CreateArgs>(),
        },
        ToolDef {
            name: "jira_add_comment",
            description: "Comment on a Jira issue.",
            risk: Some(Risk::Write),
            target_arg: Some("issue"),
            parameters: schema::<CommentArgs>(),
        },
    ],
});

/// Plain text as an Atlassian document.
fn document(text: &str) -> Value {
    let paragraphs: Vec<Value> = text
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| json!({"type": "paragraph", "content": [{"type": "text", "text": p.trim()}]}))
        .collect();
    json!({"type": "doc", "version": 1, "content": paragraphs})
}

fn issue(value: &Value) -> Value {
    let fields = &value["fields"];
    json!({
        "key": value["key"],
        "summary": fields["summary"],
        "status": fields["status"]["name"],
        "assignee": fields["assignee"]["displayName"],
        "type": fields["issuetype"]["name"],
        "updated": fields["updated"],
    })
}

/// The Jira connector.
#[derive(Debug, Default)]
pub struct Jira;

impl Connector for Jira {
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
            let api = atlassian::api(http, credentials, "jira", SYSTEM)?;
            let base = api.base;
            match tool {
                "jira_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let body = json!({
                        "jql": args.jql,
                        "maxResults": limit(args.limit),
                        "fields": ["summary", "status", "assignee", "issuetype", "updated"],
                    });
                    let found = api
                        .send(Method::POST, "/rest/api/3/search/jql", Some(body))
                        .await?;
                    Ok(json!({"issues": each(&found["issues"], issue)}))
                }
                "jira_get_issue" => {
                    let args: IssueArgs = parse(tool, arguments)?;
                    let found = api
                        .send(
                            Method::GET,
                            &format!("/rest/api/3/issue/{}", segment(args.issue.trim())),
                            None,
                        )
                        .await?;
                    Ok(issue(&found))
                }
                "jira_create_issue" => {
                    let args: CreateArgs = parse(tool, arguments)?;
                    let mut fields = json!({
                        "project": {"key": args.project.trim()},
                        "summary": args.summary,
                        "issuetype": {"name": args.issue_type.as_deref().unwrap_or("Task")},
                    });
                    if let Some(description) = args.description.as_deref() {
                        fields["description"] = document(description);
                    }
                    let created = api
                        .send(
                            Method::POST,
                            "/rest/api/3/issue",
                            Some(json!({"fields": fields})),
                        )
                        .await?;
                    Ok(
                        json!({"created": true, "key": created["key"], "url": format!("{base}/browse/{}", created["key"].as_str().unwrap_or_default())}),
                    )
                }
                "jira_add_comment" => {
                    let args: CommentArgs = parse(tool, arguments)?;
                    let url = format!("/rest/api/3/issue/{}/comment", segment(args.issue.trim()));
                    let created = api
                        .send(
                            Method::POST,
                            &url,
                            Some(json!({"body": document(&args.body)})),
                        )
                        .await?;
                    Ok(json!({"commented": true, "id": created["id"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
