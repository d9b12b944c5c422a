//! Google Calendar, as the person signed in with Google: list events and create them. A new
//! event carries its calendar as the target, so a standing rule can allow exactly one.

use std::sync::LazyLock;

use reqwest::Method;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use workmate_tools::args::{parse, schema};
use workmate_tools::{ToolError, ToolFuture};

use crate::connector::{each, limit, no_tool, query, segment, trimmed};
use crate::google;
use crate::http::{Api, Auth};
use crate::{AuthKind, Connector, Credentials, Descriptor, Http, Risk, ToolDef};

const API: &str = "https://www.googleapis.com";
const SYSTEM: &str = "Google Calendar";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// The calendar: `primary` for the caller's own, or a calendar id (an e-mail address).
    calendar: String,
    /// From this time (RFC 3339, e.g. `2026-12-07T00:00:00+08:00`).
    time_min: String,
    /// Up to this time (RFC 3339).
    time_max: String,
    /// Words to find in events.
    #[serde(default)]
    query: Option<String>,
    /// At most this many events (default 20, at most 50).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The calendar: `primary` for the caller's own, or a calendar id.
    calendar: String,
    /// The title.
    summary: String,
    /// The start (RFC 3339 with offset, e.g. `2026-12-08T10:00:00+08:00`).
    start: String,
    /// The end (RFC 3339 with offset).
    end: String,
    /// The description.
    #[serde(default)]
    description: Option<String>,
    /// The place.
    #[serde(default)]
    location: Option<String>,
    /// Guests to invite, by e-mail address (they get Google's invitation).
    #[serde(default)]
    attendees: Vec<String>,
}

static DESCRIPTOR: LazyLock<Descriptor> = LazyLock::new(|| Descriptor {
    name: "google_calendar",
    title: "Google Calendar",
    auth: AuthKind::Oauth,
    fields: google::fields(),
    tools: vec![
        ToolDef {
            name: "gcal_list_events",
            description: "List the events of a calendar between two times.",
            risk: Some(Risk::Read),
            target_arg: None,
            parameters: schema::<ListArgs>(),
        },
        ToolDef {
            name: "gcal_create_event",
            description: "Create an event in a calendar and invite guests.",
            risk: Some(Risk::Write),
            target_arg: Some("calendar"),
            parameters: schema::<CreateArgs>(),
        },
    ],
});

/// An event's summary.
fn event(value: &Value) -> Value {
    let when = |t: &Value| t.get("dateTime").or_else(|| t.get("date")).cloned();
    json!({
        "id": value["id"],
        "summary": value["summary"],
        "start": when(&value["start"]),
        "end": when(&value["end"]),
        "location": value.get("location"),
        "organizer": value["organizer"]["email"],
        "attendees": each(&value["attendees"], |a| json!({"email": a["email"], "response": a["responseStatus"]})),
        "url": value["htmlLink"],
    })
}

/// A calendar id in a path.
fn calendar_id(calendar: &str) -> Result<String, ToolError> {
    let calendar = calendar.trim();
    if calendar.is_empty() {
        return Err(ToolError::new(
            "calendar must be `primary` or a calendar id",
        ));
    }
    Ok(segment(calendar))
}

/// The Google Calendar connector.
#[derive(Debug, Default)]
pub struct GoogleCalendar;

impl Connector for GoogleCalendar {
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
            let token = google::access_token(http, credentials, "google_calendar").await?;
            let api = Api {
                http,
                system: SYSTEM,
                base: trimmed(credentials.get("base_url").unwrap_or(API)),
                auth: Auth::Bearer(&token),
                headers: &[],
            };
            match tool {
                "gcal_list_events" => {
                    let args: ListArgs = parse(tool, arguments)?;
                    let mut path = format!(
                        "/calendar/v3/calendars/{}/events?timeMin={}&timeMax={}&singleEvents=true&orderBy=startTime&maxResults={}",
                        calendar_id(&args.calendar)?,
                        query(&args.time_min),
                        query(&args.time_max),
                        limit(args.limit)
                    );
                    if let Some(words) = args.query.as_deref() {
                        path.push_str(&format!("&q={}", query(words)));
                    }
                    let found = api.send(Method::GET, &path, None).await?;
                    Ok(
                        json!({"time_zone": found["timeZone"], "events": each(&found["items"], event)}),
                    )
                }
                "gcal_create_event" => {
                    let args: CreateArgs = parse(tool, arguments)?;
                    let path = format!(
                        "/calendar/v3/calendars/{}/events?sendUpdates=all",
                        calendar_id(&args.calendar)?
                    );
                    let mut body = json!({
                        "summary": args.summary,
                        "start": {"dateTime": args.start},
                        "end": {"dateTime": args.end},
                    });
                    if let Some(description) = args.description {
                        body["description"] = json!(description);
                    }
                    if let Some(location) = args.location {
                        body["location"] = json!(location);
                    }
                    if !args.attendees.is_empty() {
                        let guests: Vec<Value> = args
                            .attendees
                            .iter()
                            .map(|e| json!({"email": e.trim()}))
                            .collect();
                        body["attendees"] = json!(guests);
                    }
                    let created = api.send(Method::POST, &path, Some(body)).await?;
                    Ok(json!({"created": true, "id": created["id"], "url": created["htmlLink"]}))
                }
                other => Err(no_tool(SYSTEM, other)),
            }
        })
    }
}
