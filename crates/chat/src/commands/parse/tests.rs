//! The chat commands' grammar, case by case: what each reads as, and what each error says.

use proptest::prelude::*;

use super::*;

#[test]
fn simple_commands_parse() {
    assert_eq!(parse_command(""), Ok(ChatCommand::Help));
    assert_eq!(parse_command("  help "), Ok(ChatCommand::Help));
    assert_eq!(parse_command("WhoAmI"), Ok(ChatCommand::Whoami));
    assert_eq!(parse_command("link"), Ok(ChatCommand::Link));
    assert_eq!(parse_command("stop"), Ok(ChatCommand::Stop));
    assert_eq!(parse_command("Compact"), Ok(ChatCommand::Compact));
    assert!(parse_command("compact now").is_err());
    assert_eq!(parse_command("memory"), Ok(ChatCommand::Memory(None)));
    assert_eq!(
        parse_command("memory OFF"),
        Ok(ChatCommand::Memory(Some(false)))
    );
    assert!(
        parse_command("memory maybe")
            .unwrap_err()
            .to_string()
            .contains("on or off")
    );
    assert_eq!(parse_command("inbox"), Ok(ChatCommand::Inbox(1)));
    assert_eq!(parse_command("inbox 3"), Ok(ChatCommand::Inbox(3)));
    assert!(parse_command("inbox 0").is_err() && parse_command("inbox two").is_err());
    assert_eq!(parse_command("usage"), Ok(ChatCommand::Usage));
    assert_eq!(parse_command("rules"), Ok(ChatCommand::Rules));
    assert_eq!(
        parse_command("rules revoke r-17"),
        Ok(ChatCommand::RulesRevoke("r-17".into()))
    );
}

#[test]
fn automations_take_an_action_and_an_id() {
    assert_eq!(parse_command("automations"), Ok(ChatCommand::Automations));
    assert_eq!(parse_command(" Automation "), Ok(ChatCommand::Automations));
    for (word, action) in [
        ("run", AutomationAction::Run),
        ("PAUSE", AutomationAction::Pause),
        ("resume", AutomationAction::Resume),
        ("delete", AutomationAction::Delete),
    ] {
        let parsed = parse_command(&format!("automations {word} 0190-ab_C")).unwrap();
        assert_eq!(
            parsed,
            ChatCommand::Automation {
                action,
                id: "0190-ab_C".into()
            }
        );
    }
    let names: Vec<&str> = ["run", "pause", "resume", "delete"]
        .iter()
        .map(|a| parse_command(&format!("automations {a} x")).unwrap().name())
        .collect();
    assert_eq!(
        names,
        [
            "automation_run",
            "automation_pause",
            "automation_resume",
            "automation_delete"
        ]
    );
    let error = parse_command("automations stop x").unwrap_err();
    assert!(error.reason().contains("unknown automation action `stop`"));
    let error = parse_command("automations run <@U1>").unwrap_err();
    assert!(error.reason().contains("is not an automation id"));
    let error = parse_command("automations run").unwrap_err();
    assert_eq!(error.reason(), "wrong arguments for `automations`");
    assert!(parse_command("automations run a b").is_err());
    assert!(parse_command(&format!("automations run {}", "a".repeat(101))).is_err());
}

#[test]
fn a_revoked_rule_keeps_its_spacing() {
    assert_eq!(
        parse_command("rules  revoke  web_fetch https://status.example.com "),
        Ok(ChatCommand::RulesRevoke(
            "web_fetch https://status.example.com".into()
        ))
    );
    assert_eq!(
        parse_command("rules revoke 0190-ab run_shell echo  two  spaces"),
        Ok(ChatCommand::RulesRevoke(
            "0190-ab run_shell echo  two  spaces".into()
        ))
    );
    assert_eq!(
        parse_command("rules revoke").unwrap_err().reason(),
        "wrong arguments for `rules`"
    );
}

#[test]
fn settings_are_listed_or_set_with_the_value_as_typed() {
    assert_eq!(parse_command("settings"), Ok(ChatCommand::Settings(None)));
    assert_eq!(parse_command(" Settings "), Ok(ChatCommand::Settings(None)));
    assert_eq!(
        parse_command("settings Timezone Asia/Shanghai"),
        Ok(ChatCommand::Settings(Some((
            "timezone".into(),
            "Asia/Shanghai".into()
        ))))
    );
    assert_eq!(
        parse_command(r#"settings  permissions  {"allowed_commands": ["git  status"]} "#),
        Ok(ChatCommand::Settings(Some((
            "permissions".into(),
            r#"{"allowed_commands": ["git  status"]}"#.into()
        ))))
    );
    assert_eq!(
        parse_command("settings timezone default").unwrap().name(),
        "settings_set"
    );
    assert_eq!(parse_command("settings").unwrap().name(), "settings");
    let error = parse_command("settings timezone").unwrap_err();
    assert!(
        error.reason().starts_with("give `timezone` a value"),
        "{error}"
    );
    assert!(error.to_string().ends_with(USAGE));
}

#[test]
fn mode_and_model_take_an_optional_value() {
    assert_eq!(parse_command("mode"), Ok(ChatCommand::Mode(None)));
    assert_eq!(
        parse_command("mode Plan"),
        Ok(ChatCommand::Mode(Some(PermissionMode::Plan)))
    );
    assert_eq!(parse_command("model"), Ok(ChatCommand::Model(None)));
    assert_eq!(
        parse_command("model openai:gpt-5"),
        Ok(ChatCommand::Model(Some("openai:gpt-5".into())))
    );
    assert!(parse_command("mode yolo").is_err());
    assert!(parse_command("model gpt-5").is_err());
    assert!(parse_command("model :x").is_err());
}

#[test]
fn personas_are_listed_switched_defaulted_and_consented() {
    assert_eq!(parse_command("persona"), Ok(ChatCommand::Persona(None)));
    assert_eq!(
        parse_command("persona Release-Manager"),
        Ok(ChatCommand::Persona(Some("release-manager".into())))
    );
    assert_eq!(
        parse_command("persona default sales-analyst"),
        Ok(ChatCommand::PersonaDefault("sales-analyst".into()))
    );
    assert_eq!(
        parse_command("persona consent oncall"),
        Ok(ChatCommand::PersonaConsent {
            id: "oncall".into(),
            enabled: true
        })
    );
    assert_eq!(
        parse_command("persona disable oncall"),
        Ok(ChatCommand::PersonaConsent {
            id: "oncall".into(),
            enabled: false
        })
    );
    assert_eq!(parse_command("skills"), Ok(ChatCommand::Skills));
    let bad = parse_command("persona ../x").unwrap_err().to_string();
    assert!(bad.contains("not a persona id"), "{bad}");
    assert!(parse_command("persona a b c").is_err());
}

#[test]
fn users_are_read_from_mentions_and_ids() {
    let grant = |text: &str| {
        parse_command(text).map(|c| match c {
            ChatCommand::RoleGrant { user, role } => (user, role),
            other => panic!("not a grant: {other:?}"),
        })
    };
    assert_eq!(
        grant("role grant <@U123> admin"),
        Ok(("U123".into(), Role::Admin))
    );
    assert_eq!(
        grant("role grant <@U123|ana> approver"),
        Ok(("U123".into(), Role::Approver))
    );
    assert_eq!(
        grant("role grant U9 member"),
        Ok(("U9".into(), Role::Member))
    );
    assert!(parse_command("role grant <@U1 admin").is_err());
    assert!(parse_command("role grant <@> admin").is_err());
    assert!(parse_command("role grant U1 king").is_err());
    assert_eq!(
        parse_command("role revoke <@U2> admin"),
        Ok(ChatCommand::RoleRevoke {
            user: "U2".into(),
            role: Role::Admin
        })
    );
    assert!(parse_command("role revoke U2 member").is_err());
}

#[test]
fn errors_name_the_problem_and_show_the_usage() {
    let error = parse_command("deploy prod").unwrap_err();
    assert_eq!(error.reason(), "unknown command `deploy`");
    assert!(error.to_string().ends_with(USAGE));
    let error = parse_command("whoami now").unwrap_err();
    assert_eq!(error.reason(), "wrong arguments for `whoami`");
    assert!(parse_command("role grant").is_err());
}

proptest! {
    #[test]
    fn never_panics(text in "\\PC*") {
        let _ = parse_command(&text);
    }

    #[test]
    fn never_panics_on_command_like_text(
        verb in prop::sample::select(vec![
            "role", "mode", "model", "rules", "rules revoke", "help", "grant", "automations",
            "settings", "settings timezone",
        ]),
        rest in "[ <@>|:a-zA-Z0-9\u{e9}\u{1F600}]{0,40}",
    ) {
        if let Err(e) = parse_command(&format!("{verb} {rest}")) {
            prop_assert!(e.to_string().ends_with(USAGE));
        }
    }
}

#[test]
fn connectors_commands_read_their_words() {
    let parsed = |text: &str| parse_command(text).map_err(|e| e.reason().to_owned());
    assert_eq!(
        parsed("connectors"),
        Ok(ChatCommand::Connectors(ConnectorsAction::List))
    );
    assert_eq!(
        parsed("connectors GitHub"),
        Ok(ChatCommand::Connectors(ConnectorsAction::Connect {
            name: "github".into(),
            team: false
        }))
    );
    assert_eq!(
        parsed("connectors disconnect jira team"),
        Ok(ChatCommand::Connectors(ConnectorsAction::Disconnect {
            name: "jira".into(),
            team: true
        }))
    );
    assert!(
        parsed("connectors connect")
            .unwrap_err()
            .contains("name the connector")
    );
    assert!(
        parsed("connectors github now")
            .unwrap_err()
            .contains("only `team`")
    );
    assert!(
        parsed("connectors ../x")
            .unwrap_err()
            .contains("not a connector name")
    );
}

#[test]
fn thread_commands_start_with_the_command_word() {
    assert_eq!(thread_command("/workmate stop"), Some("stop"));
    assert_eq!(
        thread_command("  /workmate   mode plan "),
        Some("mode plan")
    );
    assert_eq!(thread_command("/workmate"), Some(""));
    assert_eq!(thread_command("/workmates stop"), None);
    assert_eq!(thread_command("please /workmate stop"), None);
}
