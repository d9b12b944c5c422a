//! Interactivity (`block_actions`) requests: signed form bodies, decoded as Slack sends them.

use serde_json::{Value, json};
use workmate_slack::{
    BlockActions, DecodeError, Interaction, VerifyError, decode_interaction, verify_request,
};

use crate::fixtures::{self, bool_field, i64_field, name, str_field};
use crate::signature::check_signed_case;

fn opt(value: Option<&str>) -> Value {
    value.map_or(Value::Null, |s| Value::String(s.to_owned()))
}

/// The value our decoded interaction gives for one `expected` key of the fixture.
fn extracted(interaction: &Interaction, key: &str) -> Value {
    let actions = match interaction {
        Interaction::BlockActions(a) => a,
        Interaction::Other { interaction_type } => {
            return if key == "type" {
                json!(interaction_type)
            } else {
                Value::Null
            };
        }
        other => panic!("unexpected variant {other:?}"),
    };
    let a: &BlockActions = actions;
    let first = a.actions.first();
    match key {
        "type" => json!("block_actions"),
        "user_id" => json!(a.user.id),
        "username" => opt(a.user.username.as_deref()),
        "user_name" | "name" => opt(a.user.name.as_deref()),
        "team_id" => opt(a.team_id()),
        "team_domain" => opt(a.team.as_ref().and_then(|t| t.domain.as_deref())),
        "channel_id" => opt(a.channel_id()),
        "channel_name" => opt(a.channel.as_ref().and_then(|c| c.name.as_deref())),
        "message_ts" => opt(a.message.as_ref().map(|m| m.ts.as_str())),
        "message_text" => opt(a.message.as_ref().map(|m| m.text.as_str())),
        "container_message_ts" => opt(a.container.message_ts.as_deref()),
        "container_channel_id" => opt(a.container.channel_id.as_deref()),
        "container_type" => json!(a.container.container_type),
        "is_ephemeral" => json!(a.container.is_ephemeral),
        "response_url" => opt(a.response_url.as_deref()),
        "trigger_id" => opt(a.trigger_id.as_deref()),
        "api_app_id" => opt(a.api_app_id.as_deref()),
        "action_id" => opt(first.map(|x| x.action_id.as_str())),
        "block_id" => opt(first.and_then(|x| x.block_id.as_deref())),
        "value" => opt(first.and_then(|x| x.value.as_deref())),
        "action_type" => opt(first.map(|x| x.action_type.as_str())),
        "action_ts" => opt(first.and_then(|x| x.action_ts.as_deref())),
        "style" => opt(first.and_then(|x| x.style.as_deref())),
        "action_text" => opt(first.and_then(|x| x.text.as_ref()).map(|t| t.text.as_str())),
        "actions_count" => json!(a.actions.len()),
        other => panic!("the fixture expects `{other}`, which this test does not know how to read"),
    }
}

/// Percent-decodes a form value the way `parse_qs` does, independently of the crate's decoder,
/// to check the fixture's `payload` against its `body`.
fn fixture_payload(body: &str) -> Value {
    let raw = form_urlencoded::parse(body.as_bytes())
        .find(|(k, _)| k == "payload")
        .map(|(_, v)| v.into_owned())
        .expect("fixture body has a payload field");
    serde_json::from_str(&raw).expect("fixture payload is JSON")
}

#[test]
fn every_block_actions_vector_verifies_and_decodes() {
    let cases = fixtures::cases("slack_interaction.json");
    let mut failures = Vec::new();
    for case in &cases {
        let case_name = name(case);
        failures.extend(
            check_signed_case(case)
                .into_iter()
                .map(|p| format!("{case_name}: {p}")),
        );
        if !bool_field(case, "valid") {
            continue;
        }
        let body = str_field(case, "body");
        // The fixture's own consistency: its `payload` is what its `body` decodes to.
        if let Some(payload) = case.get("payload") {
            assert_eq!(
                &fixture_payload(body),
                payload,
                "{case_name}: fixture payload"
            );
        }
        let interaction = match decode_interaction(body.as_bytes()) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{case_name}: decode failed: {e}"));
                continue;
            }
        };
        let expected = case["expected"]
            .as_object()
            .unwrap_or_else(|| panic!("{case_name}: no `expected` object"));
        for (key, want) in expected {
            let got = extracted(&interaction, key);
            if &got != want {
                failures.push(format!("{case_name}: {key} = {got}, expected {want}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The signature covers the bytes as sent: `+` and `%20` decode to the same JSON but are
/// different bodies, so re-encoding a signed body must break the signature.
#[test]
fn signature_covers_the_form_encoding_not_the_json() {
    let cases = fixtures::cases("slack_interaction.json");
    let mut checked = 0;
    for case in cases.iter().filter(|c| bool_field(c, "valid")) {
        let body = str_field(case, "body");
        let reencoded = if body.contains('+') {
            body.replace('+', "%20")
        } else if body.contains("%20") {
            body.replace("%20", "+")
        } else {
            continue;
        };
        let verdict = verify_request(
            str_field(case, "signing_secret").as_bytes(),
            str_field(case, "timestamp"),
            str_field(case, "signature"),
            reencoded.as_bytes(),
            i64_field(case, "now"),
        );
        assert_eq!(
            verdict,
            Err(VerifyError::SignatureMismatch),
            "{}",
            name(case)
        );
        let original = decode_interaction(body.as_bytes()).expect("fixture decodes");
        let same = decode_interaction(reencoded.as_bytes()).expect("re-encoded decodes");
        assert_eq!(original, same, "{}", name(case));
        checked += 1;
    }
    assert!(
        checked > 0,
        "no fixture body has an encoded space to re-encode"
    );
}

fn form(payload: &Value) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish()
}

fn minimal_block_actions() -> Value {
    json!({
        "type": "block_actions",
        "user": {"id": "U1"},
        "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1"},
        "actions": [{"action_id": "approve", "type": "button", "value": "a+b c&d=é"}]
    })
}

#[test]
fn plus_and_percent_inside_values_survive_form_encoding() {
    let decoded = decode_interaction(form(&minimal_block_actions()).as_bytes()).unwrap();
    let Interaction::BlockActions(a) = decoded else {
        panic!("{decoded:?}")
    };
    assert_eq!(a.actions[0].value.as_deref(), Some("a+b c&d=é"));
    // Without `channel` / `message`, the ids come from the container.
    assert_eq!(a.channel_id(), Some("C1"));
    assert_eq!(a.message_ts(), Some("1.2"));
    assert_eq!(a.team_id(), None);
    assert!(!a.container.is_ephemeral);
}

#[test]
fn other_interaction_types_are_kept_not_rejected() {
    for kind in [
        "view_submission",
        "shortcut",
        "message_action",
        "block_suggestion",
    ] {
        let body = form(&json!({"type": kind, "user": {"id": "U1"}}));
        match decode_interaction(body.as_bytes()).unwrap() {
            Interaction::Other { interaction_type } => assert_eq!(interaction_type, kind),
            other => panic!("{kind}: {other:?}"),
        }
    }
}

#[test]
fn malformed_interaction_bodies_are_errors() {
    let missing = |body: &str| {
        matches!(
            decode_interaction(body.as_bytes()),
            Err(DecodeError::MissingField("payload"))
        )
    };
    assert!(missing(""));
    assert!(missing("payloadx=%7B%7D"));
    assert!(missing(r#"{"type":"block_actions"}"#));

    let json_error = |body: &str| {
        matches!(
            decode_interaction(body.as_bytes()),
            Err(DecodeError::Json {
                what: "interaction payload",
                ..
            })
        )
    };
    assert!(json_error("payload="));
    assert!(json_error("payload=not+json"));
    assert!(json_error("payload=%5B%5D")); // an array
    assert!(json_error("payload=%7B%7D")); // no type
    assert!(json_error("payload=%7B%22type%22%3A1%7D")); // type not a string
    // block_actions without the clicking user.
    let mut no_user = minimal_block_actions();
    no_user.as_object_mut().unwrap().remove("user");
    assert!(json_error(&form(&no_user)));
    // An action without an action_id.
    let mut no_action_id = minimal_block_actions();
    no_action_id["actions"][0]
        .as_object_mut()
        .unwrap()
        .remove("action_id");
    assert!(json_error(&form(&no_action_id)));
}
