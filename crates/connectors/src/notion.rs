//! Notion (an internal integration's token, or a person's OAuth token): search, read pages,
//! create pages and append to them. A write carries the page it goes under or into as its target,
//! so a standing rule can allow exactly one.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::connector::{each, field, limit, no_tool, trimmed};
use crate::http::{Api, Auth};
use crate::{AuthKind, Connector, Credentials, Descriptor, Field, Http, Risk, ToolDef};

const API: &str = "https://api.notion.com";
const SYSTEM: &str = "Notion";
const VERSION: &str = "2022-06-28";

/// The most characters of one rich-text run Notion takes.
const MAX_RUN: usize = 2000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words in the title of the pages to find.
    query: String,
    /// At most this many results (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PageArgs {
    /// The page's id (or its URL).
    page_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePageArgs {
    /// The id (or URL) of the page the new page goes under.
    parent_page_id: String,
    /// The title.
    title: String,
    /// The text (plain text; blank lines separate paragraphs).
    #[serde(default)]
    body: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AppendArgs {
    /// The id (or URL) of the page to append to.
    page_id: String,
    /// The text to append (plain text; blank lines separate paragraphs).
    body: String,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "notion",
    title: "Notion",
    auth: AuthKind::Token,
    fields: vec![Field {
        key: "token",
        label: "Integration token",
        secret: true,
        required: true,
        help: "An internal integration's secret; share the pages workmate may use with it.",
    }],
    tools: vec![
        ToolDef {
            name: "notion_search",
            description: "Search Notion pages by title.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "notion_get_page",
            description: "Read a Notion page's title and text.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<PageArgs>(),
        },
        ToolDef {
            name: "notion_create_page",
            description: "Create a Notion page under another page.",
            risk: Some(Risk::Write),
            target_arg: Some("parent_page_id"),
            parameters: schema::<CreatePageArgs>(),
        },
        ToolDef {
            name: "notion_append",
            description: "Append paragraphs to the end of a Notion page.",
            risk: Some(Risk::Write),
            target_arg: Some("page_id"),
            parameters: schema::<AppendArgs>(),
        },
    ],
});

/// A page id from an id (with or without dashes) or a page URL: the 32 hex digits, undashed.
fn page_id(given: &str) -> Result<String, ToolError> {
    let last = given
        .trim()
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let last = last.split(['?', '#']).next().unwrap_or("");
    let hex: String = last.chars().filter(|c| *c != '-').collect();
    let id = hex.get(hex.len().saturating_sub(32)..).unwrap_or("");
    if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id.to_ascii_lowercase())
    } else {
        Err(ToolError::new(format!(
            "{given:?} is not a Notion page id (32 hex digits) or page URL"
        )))
    }
}

/// The plain text of a rich-text array.
fn plain(rich_text: &Value) -> String {
    rich_text
        .as_array()
        .map(|runs| {
            runs.iter()
                .filter_map(|r| r["plain_text"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// A page's title: its property of type `title`.
fn title(page: &Value) -> String {
    page["properties"]
        .as_object()
        .and_then(|p| p.values().find(|v| v["type"] == "title"))
        .map(|t| plain(&t["title"]))
        .unwrap_or_default()
}

/// Plain text as paragraph blocks, each run within Notion's length limit.
fn blocks(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let chars: Vec<char> = p.chars().collect();
            let runs: Vec<Value> = chars
                .chunks(MAX_RUN)
                .map(|c| json!({"type": "text", "text": {"content": c.iter().collect::<String>()}}))
                .collect();
            json!({"object": "block", "type": "paragraph", "paragraph": {"rich_text": runs}})
        })
        .collect()
}

/// The Notion connector.
#[derive(Debug, Default)]
pub struct Notion;

impl Connector for Notion {
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
            let headers = [("Notion-Version", VERSION)];
            let api = Api {
                http,
                system: SYSTEM,
                base: trimmed(credentials.get("base_url").unwrap_or(API)),
                auth: Auth::Bearer(field(credentials, "notion", "token")?),
                headers: &headers,
            };
            match tool {
                "notion_search" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    let body = json!({
                        "query": args.query,
                        "page_size": limit(args.limit),
                        "filter": {"property": "object", "value": "page"},
                    });
                    let found = api.send(Method::POST, "/v1/search", Some(body)).await?;
                    let pages = each(
                        &found["results"],
                        |p| json!({"id": p["id"], "title": title(p), "url": p["url"], "last_edited": p["last_edited_time"]}),
                    );
                    Ok(json!({"pages": pages}))
                }
                "notion_get_page" => {
                    let args: PageArgs = parse(tool, arguments)?;
                    let id = page_id(&args.page_id)?;
                    let page = api
                        .send(Method::GET, &format!("/v1/pages/{id}"), None)
                        .await?;
                    let children = api
                        .send(
                            Method::GET,
                            &format!("/v1/blocks/{id}/children?page_size=100"),
                            None,
                        )
                        .await?;
                    let lines: Vec<String> = each(&children["results"], |b| {
                        let kind = b["type"].as_str().unwrap_or_default();
                        json!(plain(&b[kind]["rich_text"]))
                    })
                    .into_iter()
                    .filter_map(|l| l.as_str().filter(|l| !l.is_empty()).map(str::to_owned))
                    .collect();
                    Ok(json!({
                        "id": page["id"],
                        "title": title(&page),
                        "url": page["url"],
                        "text": lines.join("\n"),
                        "more": children["has_more"],
                    }))
                }
                "notion_create_page" => {
                    let args: CreatePageArgs = parse(tool, arguments)?;
                    let body = json!({
                        "parent": {"page_id": page_id(&args.parent_page_id)?},
                        "properties": {"title": {"title": [{"text": {"content": args.title}}]}},
                        "children": blocks(args.body.as_deref().unwrap_or("")),
                    });
                    let created = api.send(Method::POST, "/v1/pages", Some(body)).await?;
                    Ok(json!({"created": true, "id": created["id"], "url": created["url"]}))
                }
                "notion_append" => {
                    let args: AppendArgs = parse(tool, arguments)?;
                    let path = format!("/v1/blocks/{}/children", page_id(&args.page_id)?);
                    let body = json!({"children": blocks(&args.body)});
                    let appended = api.send(Method::PATCH, &path, Some(body)).await?;
                    let added = appended["results"].as_array().map_or(0, Vec::len);
                    Ok(json!({"appended": true, "blocks": added}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ids_come_from_ids_or_urls() {
        let id = "1a2b3c4d5e6f70819a2b3c4d5e6f7081";
        assert_eq!(page_id(id).unwrap(), id);
        assert_eq!(page_id("1a2b3c4d-5e6f-7081-9a2b-3c4d5e6f7081").unwrap(), id);
        assert_eq!(
            page_id(&format!("https://www.notion.so/acme/Q4-plan-{id}?pvs=4")).unwrap(),
            id
        );
        assert!(page_id("not-a-page").is_err());
    }
}
