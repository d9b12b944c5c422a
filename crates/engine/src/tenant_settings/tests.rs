//! The settings' validation, defaults and descriptions.

use super::*;
use workmate_protocol::PermissionMode;

fn shown(settings: &Value, key: &str) -> String {
    describe(settings)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .unwrap()
}

#[test]
fn a_key_is_set_or_removed_and_the_others_are_kept() {
    let current = json!({"gateway": {"retries": 1}, "timezone": "UTC"});
    let set = apply(&current, "timezone", &json!(" Asia/Shanghai ")).unwrap();
    assert_eq!(
        set,
        json!({"gateway": {"retries": 1}, "timezone": "Asia/Shanghai"})
    );
    let removed = apply(&set, "timezone", &Value::Null).unwrap();
    assert_eq!(removed, json!({"gateway": {"retries": 1}}));
    // A non-object (never stored by the service) starts over from an empty object.
    assert_eq!(
        apply(&Value::Null, "separation_of_duties", &json!(true)).unwrap(),
        json!({"separation_of_duties": true})
    );
}

#[test]
fn each_known_key_takes_only_what_its_reader_accepts() {
    let empty = json!({});
    let error = apply(&empty, "timezone", &json!("Mars/Olympus"))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("`timezone` must be a known zone"),
        "{error}"
    );
    assert!(error.contains("Mars/Olympus"), "{error}");
    assert!(apply(&empty, "timezone", &json!(8)).is_err());

    assert_eq!(
        apply(&empty, "automation_creators", &json!("Admin")).unwrap(),
        json!({"automation_creators": "admin"})
    );
    let error = apply(&empty, "automation_creators", &json!("owner"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"member\", \"approver\" or \"admin\""),
        "{error}"
    );

    assert!(apply(&empty, "separation_of_duties", &json!(false)).is_ok());
    assert!(apply(&empty, "separation_of_duties", &json!("true")).is_err());
    assert!(apply(&empty, "separation_of_duties", &json!(1)).is_err());
}

#[test]
fn permissions_are_checked_by_the_engines_parser() {
    let empty = json!({});
    let policy = json!({"allowed_commands": ["git status"], "risk_overrides": [{"pattern": "mcp__*", "risk": "read"}]});
    assert_eq!(
        apply(&empty, "permissions", &policy).unwrap(),
        json!({ "permissions": policy })
    );
    let typo = apply(&empty, "permissions", &json!({"allowed_command": ["ls"]}))
        .unwrap_err()
        .to_string();
    assert!(typo.contains("unknown field `allowed_command`"), "{typo}");
    let risk = apply(
        &empty,
        "permissions",
        &json!({"risk_overrides": [{"pattern": "*", "risk": "harmless"}]}),
    )
    .unwrap_err()
    .to_string();
    assert!(risk.contains("harmless"), "{risk}");
    // serde would read a struct from an array; the setting must be an object.
    let array = apply(&empty, "permissions", &json!([[], [], []]))
        .unwrap_err()
        .to_string();
    assert!(array.contains("not an array"), "{array}");
}

#[test]
fn the_gateway_policy_is_checked_by_the_engine() {
    let empty = json!({});
    let policy = json!({"fallback": ["openai:gpt-4o-mini"], "daily_tokens": 2_000_000});
    assert_eq!(
        apply(&empty, "gateway", &policy).unwrap()["gateway"],
        policy
    );
    for bad in [
        json!({"fallbacks": []}),
        json!({"sensitive": true}),
        json!(["openai:gpt-4o-mini"]),
    ] {
        assert!(apply(&empty, "gateway", &bad).is_err(), "{bad}");
    }
}

#[test]
fn unknown_keys_are_refused_with_the_known_ones() {
    let error = apply(&json!({}), "time_zone", &json!("UTC"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "unknown setting `time_zone`; the settings are timezone, automation_creators, \
         separation_of_duties, modes_allowed, permissions, shell_standing_choices, \
         web_fetch_allow, network_tools, gateway, approver_groups, approval_quorum, approvals, \
         identity_binding, auth_groups, dlp, compaction"
    );
}

#[test]
fn modes_allowed_lists_modes_and_defaults_to_the_safe_three() {
    let empty = json!({});
    assert_eq!(modes_allowed(&empty), DEFAULT_MODES_ALLOWED.to_vec());
    let set = apply(&empty, "modes_allowed", &json!(["Plan", "auto", "plan"])).unwrap();
    assert_eq!(set, json!({"modes_allowed": ["plan", "auto"]}));
    assert_eq!(
        modes_allowed(&set),
        vec![PermissionMode::Plan, PermissionMode::Auto]
    );
    let error = apply(&empty, "modes_allowed", &json!(["yolo"]))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("yolo") && error.contains("discuss"),
        "{error}"
    );
    assert!(apply(&empty, "modes_allowed", &json!("auto")).is_err());
    // An unreadable stored value falls back to the default, and says so.
    let stored = json!({"modes_allowed": "auto"});
    assert_eq!(modes_allowed(&stored), DEFAULT_MODES_ALLOWED.to_vec());
    assert!(shown(&stored, "modes_allowed").contains("not valid"));
    assert!(shown(&empty, "modes_allowed").starts_with("(default: discuss, plan, interactive"));
}

#[test]
fn shell_choices_and_web_fetch_hosts() {
    let empty = json!({});
    assert!(!shell_standing_choices(&empty));
    let on = apply(&empty, "shell_standing_choices", &json!(true)).unwrap();
    assert!(shell_standing_choices(&on));
    assert!(apply(&empty, "shell_standing_choices", &json!("yes")).is_err());
    assert!(web_fetch_allow(&empty).is_empty());
    assert!(network_tools(&empty).is_empty());
    let online = apply(&empty, "network_tools", &json!(["run_shell", "run_shell"])).unwrap();
    assert_eq!(network_tools(&online), ["run_shell"]);
    assert!(apply(&empty, "network_tools", &json!(["rm -rf"])).is_err());
    assert!(apply(&empty, "network_tools", &json!("run_shell")).is_err());
    let hosts = apply(
        &empty,
        "web_fetch_allow",
        &json!([" Docs.rs ", "*.example.com"]),
    )
    .unwrap();
    assert_eq!(
        hosts,
        json!({"web_fetch_allow": ["docs.rs", "*.example.com"]})
    );
    assert_eq!(web_fetch_allow(&hosts), vec!["docs.rs", "*.example.com"]);
    for bad in [
        json!(["*"]),
        json!(["https://docs.rs"]),
        json!("docs.rs"),
        json!([1]),
    ] {
        assert!(apply(&empty, "web_fetch_allow", &bad).is_err(), "{bad}");
    }
}

#[test]
fn a_batch_is_applied_whole_or_not_at_all() {
    let current = json!({"timezone": "Europe/Berlin"});
    let mut changes = Map::new();
    changes.insert("automation_creators".into(), json!("approver"));
    changes.insert("timezone".into(), json!("Asia/Tokyo"));
    assert_eq!(
        apply_all(&current, &changes).unwrap(),
        json!({"automation_creators": "approver", "timezone": "Asia/Tokyo"})
    );
    changes.insert("separation_of_duties".into(), json!("yes"));
    assert!(matches!(
        apply_all(&current, &changes),
        Err(SettingError::Invalid {
            key: "separation_of_duties",
            ..
        })
    ));
    assert!(matches!(
        apply_all(&current, &Map::new()),
        Err(SettingError::Empty)
    ));
}

#[test]
fn settings_are_described_with_their_defaults() {
    let described = describe(&json!({}));
    let keys: Vec<&str> = described.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, KNOWN);
    assert_eq!(shown(&json!({}), "timezone"), "(default: UTC)");
    assert_eq!(
        shown(&json!({}), "automation_creators"),
        "(default: member)"
    );
    assert_eq!(
        shown(&json!({}), "separation_of_duties"),
        "(default: false)"
    );

    let settings = json!({
        "timezone": "Asia/Shanghai",
        "separation_of_duties": true,
        "permissions": {"auto_allow": ["web_fetch"]},
        "automation_creators": "boss",
        "gateway": {"retries": 1},
    });
    assert_eq!(shown(&settings, "timezone"), "Asia/Shanghai");
    assert_eq!(shown(&settings, "separation_of_duties"), "true");
    assert_eq!(
        shown(&settings, "permissions"),
        r#"{"auto_allow":["web_fetch"]}"#
    );
    assert_eq!(
        shown(&settings, "automation_creators"),
        "boss (not valid, so the default applies: member)"
    );
    assert_eq!(shown(&settings, "gateway"), r#"{"retries":1}"#);
}

#[test]
fn a_quorum_may_name_a_group_the_same_change_defines() {
    let changes = json!({
        "approval_quorum": [{"category": "shell", "required": 2, "group": "sre"}],
        "approver_groups": {"sre": ["ana", "bo"]},
    });
    let settings = apply_all(&json!({}), changes.as_object().unwrap()).unwrap();
    assert_eq!(settings["approval_quorum"][0]["group"], "sre");
    let orphan = json!({"approval_quorum": [{"category": "shell", "required": 2, "group": "ops"}]});
    let error = apply_all(&settings, orphan.as_object().unwrap()).unwrap_err();
    assert!(error.to_string().contains("`ops`"), "{error}");
}
