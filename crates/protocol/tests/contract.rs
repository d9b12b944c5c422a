//! The published contract under `docs/contract/` is exactly what the types generate: the JSON
//! Schemas and the example-driven event and command references.

use std::fmt::Write as _;

use serde_json::Value;
use workmate_protocol::{EventKind, command_schema, event_schema};

use crate::examples;
use crate::golden::{check, command_variants, event_kind_variants, pretty};

const GENERATED: &str = "<!-- Generated from crates/protocol by `WORKMATE_BLESS=1 cargo test -p workmate-protocol`; do not edit. -->";

const EVENTS_INTRO: &str = r#"Sessions talk to surfaces in events. Each event is an envelope around one kind:

| Field | Meaning |
|---|---|
| `tenant_id` | The tenant that owns the session. |
| `session_id` | The session. |
| `seq` | The session's sequence number (see below). |
| `turn_id` | The turn the event belongs to; absent for session-level events outside a turn. |
| `at_ms` | When it happened, in Unix milliseconds. |
| `kind` | What happened: an object tagged by `type`, with that kind's fields. |

**State and transport events.** State events are persisted and numbered per session: `seq` is
1, 2, 3, … with no gaps, and replaying the state events in order rebuilds every view (reconnect,
restart, re-rendering a card on another replica). Transport events, `assistant_delta` and
`reasoning_delta`, are streamed and never persisted; they carry the `seq` of the latest state event
before them, so a consumer resuming after seq N can drop them. The complete text of a round-trip
arrives afterwards in `assistant_message`.

**Turns.** A turn starts with one `turn_start` and ends with exactly one terminal event:
`turn_end`, `error` or `interrupted` (`error` and `interrupted` are not followed by `turn_end`).
Every `tool_proposed` is followed, eventually, by exactly one `tool_finished` for the same
`tool_call_id`; all tool events carry it, so a surface can key one card row per call.

**Compatibility.** New kinds and new optional fields are additive; consumers skip kinds they do not
know and ignore unknown fields. Optional fields are omitted when absent, never `null`. The JSON
Schema is [`event.schema.json`](event.schema.json).

The examples below follow one story: Alice asks in a Slack thread which deploys failed, the agent
wants to run a shell command, and Bob approves it from the thread."#;

const COMMANDS_INTRO: &str = r#"Surfaces act on a session only by submitting commands, each tagged by `type`. Every
command names the person it acts for; the engine decides whether that person may do it. The JSON
Schema is [`command.schema.json`](command.schema.json)."#;

fn description(variant: &Value) -> &str {
    variant["description"].as_str().unwrap_or("")
}

fn events_md() -> String {
    let schema = event_schema();
    let variants = event_kind_variants(&schema);
    let mut md = format!("# Events\n\n{GENERATED}\n\n{EVENTS_INTRO}\n\n");
    md.push_str("| Kind | Class | Ends the turn |\n|---|---|---|\n");
    let mut sections = String::new();
    for name in EventKind::NAMES {
        let event = examples::event(name).unwrap();
        let (_, variant) = variants.iter().find(|(n, _)| n == name).unwrap();
        let class = if event.kind.is_state() {
            "state"
        } else {
            "transport"
        };
        let terminal = if event.kind.is_terminal() { "yes" } else { "" };
        writeln!(md, "| [`{name}`](#{name}) | {class} | {terminal} |").unwrap();
        write!(
            sections,
            "\n## {name}\n\n{}\n\n*{} event.*\n\n```json\n{}```\n",
            description(variant),
            if event.kind.is_state() {
                "State"
            } else {
                "Transport"
            },
            pretty(&event),
        )
        .unwrap();
    }
    md.push_str(&sections);
    md
}

fn commands_md() -> String {
    let schema = command_schema();
    let mut md = format!("# Commands\n\n{GENERATED}\n\n{COMMANDS_INTRO}\n");
    for (name, variant) in command_variants(&schema) {
        let command = examples::command(name).unwrap();
        write!(
            md,
            "\n## {name}\n\n{}\n\n```json\n{}```\n",
            description(variant),
            pretty(&command),
        )
        .unwrap();
    }
    md
}

#[test]
fn event_schema_is_current() {
    check("event.schema.json", &pretty(&event_schema()));
}

#[test]
fn command_schema_is_current() {
    check("command.schema.json", &pretty(&command_schema()));
}

#[test]
fn events_reference_is_current() {
    check("events.md", &events_md());
}

#[test]
fn commands_reference_is_current() {
    check("commands.md", &commands_md());
}
