//! Slash commands: flat form fields.

use workmate_slack::{DecodeError, decode_slash_command, verify_request};

use crate::fixtures::{self, bool_field, i64_field, str_field};

#[test]
fn slack_docs_example_verifies_and_decodes() {
    let body = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    verify_request(
        b"8f742231b10e8888abcd99yyyzzz85a5",
        "1531420618",
        "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
        body.as_bytes(),
        1_531_420_618,
    )
    .unwrap();
    let c = decode_slash_command(body.as_bytes()).unwrap();
    assert_eq!(c.team_id, "T1DC2JH3J");
    assert_eq!(c.team_domain.as_deref(), Some("testteamnow"));
    assert_eq!(c.channel_id, "G8PSS9T3V");
    assert_eq!(c.channel_name.as_deref(), Some("foobar"));
    assert_eq!(c.user_id, "U2CERLKJA");
    assert_eq!(c.user_name.as_deref(), Some("roadrunner"));
    assert_eq!(c.command, "/webhook-collect");
    assert_eq!(c.text, "");
    assert_eq!(
        c.response_url,
        "https://hooks.slack.com/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN"
    );
    assert_eq!(
        c.trigger_id,
        "398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    );
    assert_eq!(c.enterprise_id, None);
    assert_eq!(c.api_app_id, None);
}

#[test]
fn fixture_command_text_is_percent_and_plus_decoded() {
    let case = fixtures::cases("slack_signature.json")
        .into_iter()
        .find(|c| bool_field(c, "valid") && str_field(c, "body").contains("command=%2Fask"))
        .expect("slack_signature.json has its /ask slash command case");
    let body = str_field(&case, "body");
    verify_request(
        str_field(&case, "signing_secret").as_bytes(),
        str_field(&case, "timestamp"),
        str_field(&case, "signature"),
        body.as_bytes(),
        i64_field(&case, "now"),
    )
    .unwrap();
    let c = decode_slash_command(body.as_bytes()).unwrap();
    assert_eq!(c.command, "/ask");
    assert_eq!(c.text, "数据库迁移 飞书 🎉 green 部署完成 summarize");
    assert_eq!(c.api_app_id.as_deref(), Some("AA4DBJQIY0X"));
    assert!(
        c.response_url
            .starts_with("https://hooks.slack.com/commands/")
    );
}

const FULL: &str = "team_id=T1&channel_id=C1&user_id=U1&command=%2Fagent&text=a+b%2Bc%26d%3De&response_url=https%3A%2F%2Fh%2Fx&trigger_id=1.2.3&enterprise_id=";

#[test]
fn text_keeps_encoded_plus_and_ampersand() {
    let c = decode_slash_command(FULL.as_bytes()).unwrap();
    assert_eq!(c.text, "a b+c&d=e");
    // Slack sends optional fields empty rather than leaving them out.
    assert_eq!(c.enterprise_id, None);
}

#[test]
fn first_occurrence_wins() {
    let body = format!("{FULL}&user_id=U_SPOOF&text=other");
    let c = decode_slash_command(body.as_bytes()).unwrap();
    assert_eq!(c.user_id, "U1");
    assert_eq!(c.text, "a b+c&d=e");
}

#[test]
fn missing_or_empty_required_fields_are_named() {
    for field in [
        "team_id",
        "channel_id",
        "user_id",
        "command",
        "response_url",
        "trigger_id",
    ] {
        let without: Vec<&str> = FULL
            .split('&')
            .filter(|kv| !kv.starts_with(&format!("{field}=")))
            .collect();
        match decode_slash_command(without.join("&").as_bytes()) {
            Err(DecodeError::MissingField(name)) => assert_eq!(name, field),
            other => panic!("{field}: {other:?}"),
        }
        let emptied = FULL.replace(&format!("{field}="), &format!("{field}=&x="));
        match decode_slash_command(emptied.as_bytes()) {
            Err(DecodeError::MissingField(name)) => assert_eq!(name, field),
            other => panic!("{field} empty: {other:?}"),
        }
    }
    // Text may be absent altogether.
    let no_text = FULL.replace("text=a+b%2Bc%26d%3De&", "");
    assert_eq!(decode_slash_command(no_text.as_bytes()).unwrap().text, "");
    assert!(matches!(
        decode_slash_command(b""),
        Err(DecodeError::MissingField("team_id"))
    ));
    assert!(
        DecodeError::MissingField("trigger_id")
            .to_string()
            .contains("trigger_id")
    );
}
