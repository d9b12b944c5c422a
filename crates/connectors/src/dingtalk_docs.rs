//! DingTalk Docs (钉钉文档): the knowledge-base workspaces a person can see, search, reading and
//! creating documents. DingTalk's document APIs act for an operator (a person's unionId) with the
//! company app's access token (fetched with the app's key and secret and reused until shortly
//! before it expires). A new document carries its workspace as the target, so a standing rule
//! can allow exactly one.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::connector::{each, field, limit, no_tool, query, segment, trimmed};
use crate::http::{Api, Auth, Issued};
use crate::{AuthKind, Connector, Credentials, Descriptor, Field, Http, Risk, ToolDef};

const API: &str = "https://api.dingtalk.com";
const SYSTEM: &str = "DingTalk Docs";

/// The most characters of a document's text returned.
const MAX_TEXT: usize = 20_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words to find in document names.
    query: String,
    /// Only in this workspace.
    #[serde(default)]
    workspace_id: Option<String>,
    /// At most this many documents (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// The document's key (`docKey`, from search or creation).
    doc_key: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The workspace's id.
    workspace_id: String,
    /// The document's name.
    name: String,
    /// Its content (markdown).
    #[serde(default)]
    body: Option<String>,
    /// The folder node to put it in; the workspace's top level when absent.
    #[serde(default)]
    parent_node_id: Option<String>,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "dingtalk_docs",
    title: "DingTalk Docs",
    auth: AuthKind::ApiToken,
    fields: vec![
        Field {
            key: "app_key",
            label: "App key",
            secret: false,
            required: true,
            help: "The company app's AppKey (Client ID), with the document permissions granted.",
        },
        Field {
            key: "app_secret",
            label: "App secret",
            secret: true,
            required: true,
            help: "That app's AppSecret.",
        },
        Field {
            key: "union_id",
            label: "Your unionId",
            secret: false,
            required: true,
            help: "The person documents are read and written as (their DingTalk unionId).",
        },
    ],
    tools: vec![
        ToolDef {
            name: "dingtalk_docs_workspaces",
            description: "List the DingTalk Docs workspaces the caller can see.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<NoArgs>(),
        },
        ToolDef {
            name: "dingtalk_docs_search",
            description: "Search DingTalk documents by name.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "dingtalk_docs_read",
            description: "Read a DingTalk document's text.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<ReadArgs>(),
        },
        ToolDef {
            name: "dingtalk_docs_create",
            description: "Create a DingTalk document in a workspace, with markdown content.",
            risk: Some(Risk::Write),
            target_arg: Some("workspace_id"),
            parameters: schema::<CreateArgs>(),
        },
    ],
});

/// An id in a path or query: letters, digits, `-` and `_` only.
fn id(name: &str, given: &str) -> Result<String, ToolError> {
    let given = given.trim();
    if given.is_empty()
        || !given
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(ToolError::new(format!(
            "{name} {given:?} is not a DingTalk id"
        )));
    }
    Ok(segment(given))
}

/// The text of a document's blocks: each block's own text, one line each.
fn blocks_text(blocks: &Value) -> String {
    let lines: Vec<String> = each(blocks, |b| {
        let kind = b["blockType"].as_str().unwrap_or("paragraph");
        json!(
            b[kind]["text"]
                .as_str()
                .or_else(|| b["text"].as_str())
                .unwrap_or_default()
        )
    })
    .into_iter()
    .filter_map(|l| l.as_str().filter(|l| !l.is_empty()).map(str::to_owned))
    .collect();
    lines.join("\n").chars().take(MAX_TEXT).collect()
}

/// The app's access token.
async fn app_token(
    http: &Http,
    credentials: &Credentials,
    base: &str,
) -> Result<String, ToolError> {
    let app_key = field(credentials, "dingtalk_docs", "app_key")?;
    let app_secret = field(credentials, "dingtalk_docs", "app_secret")?;
    let url = format!("{base}/v1.0/oauth2/accessToken");
    let token = http
        .access_token(&["dingtalk", base, app_key, app_secret], || async {
            let body = json!({"appKey": app_key, "appSecret": app_secret});
            let answer = http
                .json(SYSTEM, Method::POST, &url, &Auth::None, &[], Some(&body))
                .await
                .map_err(|e| {
                    ToolError::new(format!(
                        "{e}: check the app key and secret (/workmate connectors dingtalk_docs)"
                    ))
                })?;
            let token = answer["accessToken"]
                .as_str()
                .ok_or_else(|| ToolError::new("DingTalk answered without an accessToken"))?;
            Ok(Issued::new(
                token,
                answer["expireIn"].as_u64().unwrap_or(7200),
            ))
        })
        .await?;
    Ok(token.expose_secret().to_owned())
}

/// The DingTalk Docs connector.
#[derive(Debug, Default)]
pub struct DingTalkDocs;

impl Connector for DingTalkDocs {
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
            let base = trimmed(credentials.get("base_url").unwrap_or(API));
            let operator = query(field(credentials, "dingtalk_docs", "union_id")?);
            let token = app_token(http, credentials, base).await?;
            let api = Api {
                http,
                system: SYSTEM,
                base,
                auth: Auth::Header("x-acs-dingtalk-access-token", &token),
                headers: &[],
            };
            match tool {
                "dingtalk_docs_workspaces" => {
                    let _: NoArgs = parse(tool, arguments)?;
                    let path = format!("/v1.0/doc/workspaces?operatorId={operator}");
                    let found = api.send(Method::GET, &path, None).await?;
                    let workspaces = each(
                        &found["workspaces"],
                        |w| json!({"id": w["workspaceId"], "name": w["name"], "url": w["url"], "role": w["role"]}),
                    );
                    Ok(json!({"workspaces": workspaces}))
                }
                "dingtalk_docs_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let mut path = format!(
                        "/v1.0/doc/docs?operatorId={operator}&keyword={}&maxResults={}",
                        query(&args.query),
                        limit(args.limit)
                    );
                    if let Some(workspace) = args.workspace_id.as_deref() {
                        path.push_str(&format!("&workspaceId={}", id("workspace_id", workspace)?));
                    }
                    let found = api.send(Method::GET, &path, None).await?;
                    let docs = each(&found["docs"], |d| {
                        let node = &d["nodeBO"];
                        json!({
                            "doc_key": node["nodeId"],
                            "name": node["name"],
                            "type": node["docType"],
                            "url": node["url"],
                            "last_edited": node["lastEditTime"],
                            "workspace": d["workspaceBO"]["name"],
                        })
                    });
                    Ok(json!({"documents": docs, "more": found["hasMore"]}))
                }
                "dingtalk_docs_read" => {
                    let args: ReadArgs = parse(tool, arguments)?;
                    let path = format!(
                        "/v1.0/doc/suites/documents/{}/blocks?operatorId={operator}",
                        id("doc_key", &args.doc_key)?
                    );
                    let found = api.send(Method::GET, &path, None).await?;
                    Ok(
                        json!({"doc_key": args.doc_key.trim(), "text": blocks_text(&found["result"]["data"])}),
                    )
                }
                "dingtalk_docs_create" => {
                    let args: CreateArgs = parse(tool, arguments)?;
                    let workspace = id("workspace_id", &args.workspace_id)?;
                    let mut body = json!({
                        "name": args.name,
                        "docType": "DOC",
                        "operatorId": field(credentials, "dingtalk_docs", "union_id")?,
                    });
                    if let Some(parent) = args.parent_node_id.as_deref() {
                        body["parentNodeId"] = json!(id("parent_node_id", parent)?);
                    }
                    let created = api
                        .send(
                            Method::POST,
                            &format!("/v1.0/doc/workspaces/{workspace}/docs"),
                            Some(body),
                        )
                        .await?;
                    let doc_key = created["docKey"].as_str().ok_or_else(|| {
                        ToolError::new("DingTalk created the document but gave no docKey")
                    })?;
                    let mut shown =
                        json!({"created": true, "doc_key": doc_key, "url": created["url"]});
                    if let Some(content) = args.body.as_deref().filter(|b| !b.trim().is_empty()) {
                        let path = format!(
                            "/v1.0/doc/suites/documents/{}/overwriteContent?operatorId={operator}",
                            id("docKey", doc_key)?
                        );
                        let body = json!({"content": content, "dataType": "markdown"});
                        // The document exists now: a failure to fill it is reported, not raised,
                        // so the model does not create it twice.
                        if let Err(e) = api.send(Method::POST, &path, Some(body)).await {
                            shown["content_error"] =
                                json!(format!("the document was created empty: {e}"));
                        }
                    }
                    Ok(shown)
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
