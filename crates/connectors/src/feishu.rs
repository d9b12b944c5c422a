//! Feishu (or Lark, at its `base_url`) Docs and Calendar: search and read documents, create and
//! append to them, list and create events. It acts as the person (their user access token) or,
//! where an admin connected the company's app, as the app (its tenant token, fetched with the
//! app's id and secret and reused until shortly before it expires). Writes carry their folder,
//! document or calendar as the target, so a standing rule can allow exactly one.

use std::sync::LazyLock;

use chrono::DateTime;
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

const API: &str = "https://open.feishu.cn";
const SYSTEM: &str = "Feishu";

/// The most characters of a document's text returned.
const MAX_TEXT: usize = 20_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words to find in document titles and text.
    query: String,
    /// At most this many documents (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DocArgs {
    /// The document's id (the token in its URL, `…/docx/<id>`).
    document_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateDocArgs {
    /// The folder's token (the token in its URL, `…/drive/folder/<token>`).
    folder_token: String,
    /// The title.
    title: String,
    /// The text (plain text; one paragraph per line).
    #[serde(default)]
    body: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AppendArgs {
    /// The document's id.
    document_id: String,
    /// The text to append (plain text; one paragraph per line).
    body: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EventsArgs {
    /// The calendar's id, or `primary` for the caller's own.
    calendar_id: String,
    /// From this time (RFC 3339, e.g. `2026-12-07T00:00:00+08:00`).
    start: String,
    /// Up to this time (RFC 3339).
    end: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateEventArgs {
    /// The calendar's id, or `primary` for the caller's own.
    calendar_id: String,
    /// The title.
    summary: String,
    /// The start (RFC 3339 with offset).
    start: String,
    /// The end (RFC 3339 with offset).
    end: String,
    /// The description.
    #[serde(default)]
    description: Option<String>,
    /// People to invite, by Feishu open_id (`ou_…`).
    #[serde(default)]
    attendees: Vec<String>,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "feishu",
    title: "Feishu Docs & Calendar",
    auth: AuthKind::Oauth,
    fields: vec![
        Field {
            key: "token",
            label: "User access token",
            secret: true,
            required: false,
            help: "Set by signing in with Feishu (/workmate connectors); acts as the person.",
        },
        Field {
            key: "app_id",
            label: "App ID",
            secret: false,
            required: false,
            help: "Instead of a user token (admins): the company app's id; acts as the app.",
        },
        Field {
            key: "app_secret",
            label: "App secret",
            secret: true,
            required: false,
            help: "That app's secret.",
        },
        Field {
            key: "base_url",
            label: "Open platform URL",
            secret: false,
            required: false,
            help: "Leave empty for Feishu; https://open.larksuite.com for Lark.",
        },
    ],
    tools: vec![
        ToolDef {
            name: "feishu_search_docs",
            description: "Search Feishu documents the caller can see (needs a person's sign-in).",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<SearchArgs>(),
        },
        ToolDef {
            name: "feishu_read_doc",
            description: "Read a Feishu document's text.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<DocArgs>(),
        },
        ToolDef {
            name: "feishu_create_doc",
            description: "Create a Feishu document in a folder, with text.",
            risk: Some(Risk::Write),
            target_arg: Some("folder_token"),
            parameters: schema::<CreateDocArgs>(),
        },
        ToolDef {
            name: "feishu_append_doc",
            description: "Append paragraphs to the end of a Feishu document.",
            risk: Some(Risk::Write),
            target_arg: Some("document_id"),
            parameters: schema::<AppendArgs>(),
        },
        ToolDef {
            name: "feishu_list_events",
            description: "List the events of a Feishu calendar between two times.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<EventsArgs>(),
        },
        ToolDef {
            name: "feishu_create_event",
            description: "Create an event in a Feishu calendar and invite people.",
            risk: Some(Risk::Write),
            target_arg: Some("calendar_id"),
            parameters: schema::<CreateEventArgs>(),
        },
    ],
});

/// Feishu's envelope: `data` when `code` is 0, else the error its `msg` gives.
fn data(mut answer: Value) -> Result<Value, ToolError> {
    match answer["code"].as_i64() {
        Some(0) => Ok(answer
            .get_mut("data")
            .map(Value::take)
            .unwrap_or(Value::Null)),
        code => Err(ToolError::new(format!(
            "Feishu refused the request (code {}): {}",
            code.map_or_else(|| "none".to_owned(), |c| c.to_string()),
            answer["msg"].as_str().unwrap_or("no message")
        ))),
    }
}

/// A document or folder token, from its URL or bare: letters and digits only.
fn doc_token(name: &str, given: &str) -> Result<String, ToolError> {
    let last = given
        .trim()
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let last = last.split(['?', '#']).next().unwrap_or("");
    if last.is_empty() || !last.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ToolError::new(format!(
            "{name} {given:?} is not a Feishu token"
        )));
    }
    Ok(last.to_owned())
}

/// An RFC 3339 time as Unix seconds, as Feishu's calendar wants them.
fn seconds(name: &str, time: &str) -> Result<String, ToolError> {
    DateTime::parse_from_rfc3339(time.trim())
        .map(|t| t.timestamp().to_string())
        .map_err(|e| {
            ToolError::new(format!(
                "{name} {time:?} is not an RFC 3339 time such as 2026-12-07T10:00:00+08:00: {e}"
            ))
        })
}

/// Text blocks, one per non-empty line.
fn text_blocks(text: &str) -> Vec<Value> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(|l| json!({"block_type": 2, "text": {"elements": [{"text_run": {"content": l}}]}}))
        .collect()
}

/// One caller's Feishu API.
struct Feishu<'a> {
    api: Api<'a>,
    /// Whether it acts as a person (not as the company app).
    as_person: bool,
}

impl Feishu<'_> {
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ToolError> {
        data(self.api.send(method, path, body).await?)
    }

    /// The calendar id `given` names (`primary`: the caller's own).
    async fn calendar(&self, given: &str) -> Result<String, ToolError> {
        if given.trim() != "primary" {
            return Ok(segment(given.trim()));
        }
        let found = self
            .call(
                Method::POST,
                "/open-apis/calendar/v4/calendars/primary",
                None,
            )
            .await?;
        found["calendars"][0]["calendar"]["calendar_id"]
            .as_str()
            .map(segment)
            .ok_or_else(|| ToolError::new("Feishu reported no primary calendar"))
    }

    /// Appends `text` as paragraphs at the end of document `id`.
    async fn append(&self, id: &str, text: &str) -> Result<usize, ToolError> {
        let children = text_blocks(text);
        if children.is_empty() {
            return Ok(0);
        }
        let path = format!(
            "/open-apis/docx/v1/documents/{id}/blocks/{id}/children?document_revision_id=-1"
        );
        let added = self
            .call(Method::POST, &path, Some(json!({"children": children})))
            .await?;
        Ok(added["children"].as_array().map_or(0, Vec::len))
    }
}

/// The caller's token: their own, or the app's tenant token.
async fn bearer(
    http: &Http,
    credentials: &Credentials,
    base: &str,
) -> Result<(String, bool), ToolError> {
    if let Some(token) = credentials.get("token") {
        return Ok((token.to_owned(), true));
    }
    let app_id = field(credentials, "feishu", "app_id")?;
    let app_secret = field(credentials, "feishu", "app_secret")?;
    let url = format!("{base}/open-apis/auth/v3/tenant_access_token/internal");
    let token = http
        .access_token(&["feishu", base, app_id, app_secret], || async {
            let body = json!({"app_id": app_id, "app_secret": app_secret});
            let answer = http
                .json(SYSTEM, Method::POST, &url, &Auth::None, &[], Some(&body))
                .await
                .map_err(ToolError::new)?;
            if answer["code"].as_i64() != Some(0) {
                return Err(ToolError::new(format!(
                    "Feishu did not give the app a token (code {}): {}: check the app id and secret (/workmate connectors feishu)",
                    answer["code"], answer["msg"].as_str().unwrap_or("no message")
                )));
            }
            let token = answer["tenant_access_token"]
                .as_str()
                .ok_or_else(|| ToolError::new("Feishu answered without a tenant_access_token"))?;
            Ok(Issued::new(token, answer["expire"].as_u64().unwrap_or(7200)))
        })
        .await?;
    Ok((token.expose_secret().to_owned(), false))
}

/// The Feishu connector.
#[derive(Debug, Default)]
pub struct FeishuWorkspace;

impl Connector for FeishuWorkspace {
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
            let (token, as_person) = bearer(http, credentials, base).await?;
            let feishu = Feishu {
                api: Api {
                    http,
                    system: SYSTEM,
                    base,
                    auth: Auth::Bearer(&token),
                    headers: &[],
                },
                as_person,
            };
            match tool {
                "feishu_search_docs" => {
                    let args: SearchArgs = parse(tool, arguments)?;
                    if !feishu.as_person {
                        return Err(ToolError::new(
                            "Feishu searches documents only as a person: connect Feishu with your own sign-in (/workmate connectors feishu)",
                        ));
                    }
                    let body =
                        json!({"search_key": args.query, "count": limit(args.limit), "offset": 0});
                    let found = feishu
                        .call(
                            Method::POST,
                            "/open-apis/suite/docs-api/search/object",
                            Some(body),
                        )
                        .await?;
                    let docs = each(
                        &found["docs_entities"],
                        |d| json!({"id": d["docs_token"], "type": d["docs_type"], "title": d["title"], "owner": d["owner_id"]}),
                    );
                    Ok(json!({"total": found["total"], "documents": docs}))
                }
                "feishu_read_doc" => {
                    let args: DocArgs = parse(tool, arguments)?;
                    let id = doc_token("document_id", &args.document_id)?;
                    let path = format!("/open-apis/docx/v1/documents/{id}/raw_content");
                    let found = feishu.call(Method::GET, &path, None).await?;
                    let text: String = found["content"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(MAX_TEXT)
                        .collect();
                    Ok(json!({"id": id, "text": text}))
                }
                "feishu_create_doc" => {
                    let args: CreateDocArgs = parse(tool, arguments)?;
                    let body = json!({"folder_token": doc_token("folder_token", &args.folder_token)?, "title": args.title});
                    let created = feishu
                        .call(Method::POST, "/open-apis/docx/v1/documents", Some(body))
                        .await?;
                    let id = created["document"]["document_id"]
                        .as_str()
                        .ok_or_else(|| {
                            ToolError::new("Feishu created the document but gave no id")
                        })?
                        .to_owned();
                    // The document exists now: a failure to fill it is reported, not raised, so
                    // the model does not create it twice.
                    match feishu.append(&id, args.body.as_deref().unwrap_or("")).await {
                        Ok(paragraphs) => Ok(
                            json!({"created": true, "document_id": id, "paragraphs": paragraphs}),
                        ),
                        Err(e) => Ok(
                            json!({"created": true, "document_id": id, "text_error": format!("the document was created empty: {e}")}),
                        ),
                    }
                }
                "feishu_append_doc" => {
                    let args: AppendArgs = parse(tool, arguments)?;
                    let id = doc_token("document_id", &args.document_id)?;
                    let paragraphs = feishu.append(&id, &args.body).await?;
                    Ok(json!({"appended": true, "paragraphs": paragraphs}))
                }
                "feishu_list_events" => {
                    let args: EventsArgs = parse(tool, arguments)?;
                    let calendar = feishu.calendar(&args.calendar_id).await?;
                    let path = format!(
                        "/open-apis/calendar/v4/calendars/{calendar}/events?start_time={}&end_time={}&page_size=100",
                        query(&seconds("start", &args.start)?),
                        query(&seconds("end", &args.end)?)
                    );
                    let found = feishu.call(Method::GET, &path, None).await?;
                    let events = each(&found["items"], |e| {
                        json!({
                            "id": e["event_id"],
                            "summary": e["summary"],
                            "start": e["start_time"]["timestamp"],
                            "end": e["end_time"]["timestamp"],
                            "status": e["status"],
                            "url": e["app_link"],
                        })
                    });
                    Ok(json!({"events": events, "more": found["has_more"]}))
                }
                "feishu_create_event" => {
                    let args: CreateEventArgs = parse(tool, arguments)?;
                    let calendar = feishu.calendar(&args.calendar_id).await?;
                    let mut body = json!({
                        "summary": args.summary,
                        "start_time": {"timestamp": seconds("start", &args.start)?},
                        "end_time": {"timestamp": seconds("end", &args.end)?},
                    });
                    if let Some(description) = args.description {
                        body["description"] = json!(description);
                    }
                    let path = format!("/open-apis/calendar/v4/calendars/{calendar}/events");
                    let created = feishu.call(Method::POST, &path, Some(body)).await?;
                    let event = &created["event"];
                    let id = event["event_id"]
                        .as_str()
                        .ok_or_else(|| ToolError::new("Feishu created the event but gave no id"))?;
                    let mut invited = json!(0);
                    if !args.attendees.is_empty() {
                        let attendees: Vec<Value> = args
                            .attendees
                            .iter()
                            .map(|a| json!({"type": "user", "user_id": a.trim()}))
                            .collect();
                        let path = format!("{path}/{}/attendees?user_id_type=open_id", segment(id));
                        let body = json!({"attendees": attendees, "need_notification": true});
                        // The event exists now: a failed invitation is reported, not raised.
                        invited = match feishu.call(Method::POST, &path, Some(body)).await {
                            Ok(_) => json!(args.attendees.len()),
                            Err(e) => json!(format!(
                                "the event was created, but no one was invited: {e}"
                            )),
                        };
                    }
                    Ok(
                        json!({"created": true, "event_id": id, "url": event["app_link"], "invited": invited}),
                    )
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
