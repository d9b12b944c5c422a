//! Confluence Cloud (at the site's `base_url`): CQL search, reading pages, creating pages and
//! commenting, as the caller (account e-mail and API token). A new page carries its space as the
//! target, a comment its page, so a standing rule can allow exactly one.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::atlassian;
use crate::connector::{each, limit, no_tool, query, segment};
use crate::http::Api;
use crate::markup::{paragraphs, text_of};
use crate::{AuthKind, Connector, Credentials, Descriptor, Http, Risk, ToolDef};

const SYSTEM: &str = "Confluence";

/// The most characters of a page's text returned.
const MAX_TEXT: usize = 20_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// A CQL query, e.g. `type = page AND space = SALES AND text ~ "pricing"`.
    cql: String,
    /// At most this many results (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PageArgs {
    /// The page's id.
    page_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePageArgs {
    /// The space's key, e.g. `SALES`.
    space: String,
    /// The page title.
    title: String,
    /// The page text (plain text; blank lines separate paragraphs).
    body: String,
    /// The id of the page to put it under; the space's top level when absent.
    #[serde(default)]
    parent_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    /// The page's id.
    page_id: String,
    /// The comment (plain text).
    body: String,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "confluence",
    title: "Confluence",
    auth: AuthKind::ApiToken,
    fields: atlassian::fields(),
    tools: vec![
        ToolDef {
            name: "confluence_search",
            description: "Search Confluence pages and blog posts with CQL.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "confluence_get_page",
            description: "Read a Confluence page's title and text.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<PageArgs>(),
        },
        ToolDef {
            name: "confluence_create_page",
            description: "Create a page in a Confluence space.",
            risk: Some(Risk::Write),
            target_arg: Some("space"),
            parameters: schema::<CreatePageArgs>(),
        },
        ToolDef {
            name: "confluence_add_comment",
            description: "Add a comment under a Confluence page.",
            risk: Some(Risk::Write),
            target_arg: Some("page_id"),
            parameters: schema::<CommentArgs>(),
        },
    ],
});

/// A page's web address from an answer's `_links`.
fn web_url(base: &str, links: &Value) -> Value {
    match links["webui"].as_str() {
        Some(path) => json!(format!("{}{path}", links["base"].as_str().unwrap_or(base))),
        None => Value::Null,
    }
}

/// The numeric id of the space with `key`.
async fn space_id(api: &Api<'_>, key: &str) -> Result<String, ToolError> {
    let found = api
        .send(
            Method::GET,
            &format!("/wiki/api/v2/spaces?keys={}", query(key)),
            None,
        )
        .await?;
    found["results"][0]["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| {
            ToolError::new(format!(
                "Confluence has no space {key:?} (or the account cannot see it)"
            ))
        })
}

/// A page's id, checked to be one (page ids are numbers).
fn page_id(id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ToolError::new(format!(
            "page_id {id:?} must be a Confluence page id (a number, as in …/pages/123456/…)"
        )));
    }
    Ok(segment(id))
}

/// The Confluence connector.
#[derive(Debug, Default)]
pub struct Confluence;

impl Connector for Confluence {
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
            let api = atlassian::api(http, credentials, "confluence", SYSTEM)?;
            let base = format!("{}/wiki", api.base);
            match tool {
                "confluence_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let path = format!(
                        "/wiki/rest/api/search?cql={}&limit={}",
                        query(&args.cql),
                        limit(args.limit)
                    );
                    let found = api.send(Method::GET, &path, None).await?;
                    let results = each(&found["results"], |r| {
                        json!({
                            "id": r["content"]["id"],
                            "type": r["content"]["type"],
                            "title": r["title"],
                            "excerpt": r["excerpt"],
                            "url": web_url(&base, &r["content"]["_links"]),
                            "last_modified": r["lastModified"],
                        })
                    });
                    Ok(json!({"results": results}))
                }
                "confluence_get_page" => {
                    let args: PageArgs = parse(tool, arguments)?;
                    let path = format!(
                        "/wiki/api/v2/pages/{}?body-format=storage",
                        page_id(&args.page_id)?
                    );
                    let page = api.send(Method::GET, &path, None).await?;
                    let text: String =
                        text_of(page["body"]["storage"]["value"].as_str().unwrap_or(""))
                            .chars()
                            .take(MAX_TEXT)
                            .collect();
                    Ok(json!({
                        "id": page["id"],
                        "title": page["title"],
                        "version": page["version"]["number"],
                        "url": web_url(&base, &page["_links"]),
                        "text": text,
                    }))
                }
                "confluence_create_page" => {
                    let args: CreatePageArgs = parse(tool, arguments)?;
                    let space = space_id(&api, args.space.trim()).await?;
                    let mut body = json!({
                        "spaceId": space,
                        "status": "current",
                        "title": args.title,
                        "body": {"representation": "storage", "value": paragraphs(&args.body)},
                    });
                    if let Some(parent) = args.parent_id.as_deref() {
                        body["parentId"] = json!(page_id(parent)?);
                    }
                    let created = api
                        .send(Method::POST, "/wiki/api/v2/pages", Some(body))
                        .await?;
                    Ok(
                        json!({"created": true, "id": created["id"], "url": web_url(&base, &created["_links"])}),
                    )
                }
                "confluence_add_comment" => {
                    let args: CommentArgs = parse(tool, arguments)?;
                    let body = json!({
                        "pageId": page_id(&args.page_id)?,
                        "body": {"representation": "storage", "value": paragraphs(&args.body)},
                    });
                    let created = api
                        .send(Method::POST, "/wiki/api/v2/footer-comments", Some(body))
                        .await?;
                    Ok(json!({"commented": true, "id": created["id"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
