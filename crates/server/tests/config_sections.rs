//! Configuration of each section: the engine and providers, the gateway, Slack, the HTTP limits,
//! and what `workmate config` shows of them.

use std::time::Duration;

use workmate_server::config::{Overrides, Source};

use crate::config::load;

#[test]
fn engine_and_provider_settings_from_file_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, "{\"conversations\": []}").unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        format!(
            "[engine]\nmax_iterations = 12\n[providers.scripted]\nscript = \"{}\"\n[server]\nadmin_token = \"file-token-0123456789\"\n",
            script.display()
        ),
    )
    .unwrap();
    let env = [("WORKMATE__ENGINE__DEFAULT_MODEL", "scripted:ops")];
    let config = load(dir.path(), &env, Overrides::default()).unwrap();
    assert_eq!(config.engine.max_iterations, 12);
    assert_eq!(config.engine.default_model, "scripted:ops");
    assert_eq!(
        config.providers.scripted_script.as_deref(),
        Some(script.as_path())
    );
    let shown = config.to_redacted_toml();
    assert!(
        shown.contains("admin_token = \"***\"") && !shown.contains("file-token"),
        "{shown}"
    );
    assert!(shown.contains("[providers.scripted]"), "{shown}");

    let nested_env = [(
        "WORKMATE__PROVIDERS__SCRIPTED__SCRIPT",
        "/no/such/script.json",
    )];
    let err = load(dir.path(), &nested_env, Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("providers.scripted") && err.contains("/no/such/script.json"),
        "{err}"
    );
    assert!(
        err.contains("WORKMATE__PROVIDERS__SCRIPTED__SCRIPT"),
        "says how to set it: {err}"
    );
}

#[test]
fn engine_settings_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(
        dir.path(),
        &[("WORKMATE__ENGINE__MAX_ITERATIONS", "0")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("max_iterations") && err.contains("between 1 and 10000"),
        "{err}"
    );
    let err = load(
        dir.path(),
        &[("WORKMATE__SERVER__ADMIN_TOKEN", "short")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("at least 16 characters"), "{err}");
    let err = load(
        dir.path(),
        &[("WORKMATE__PROVIDERS__OPENAI__SCRIPT", "x")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("providers.openai"), "{err}");
    let defaults = load(dir.path(), &[], Overrides::default()).unwrap();
    assert_eq!(
        (
            defaults.engine.max_iterations,
            defaults.engine.default_model.as_str()
        ),
        (150, "scripted:demo")
    );
    assert!(defaults.server.admin_token.is_none() && defaults.providers.scripted_script.is_none());
}

#[test]
fn gateway_providers_are_configured_per_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[providers.gateway]\nkind = \"openai\"\nbase_url = \"https://llm.internal/v1\"\napi_key_env = \"GATEWAY_KEY\"\ntimeout_ms = 30000\n\
         [providers.gateway.headers]\nx-cost-center = \"ops\"\n\
         [providers.claude]\nkind = \"anthropic\"\nbase_url = \"https://llm.internal/anthropic\"\napi_key = \"sk-secret-value\"\n",
    )
    .unwrap();
    let config = load(
        dir.path(),
        &[("GATEWAY_KEY", "k-from-env")],
        Overrides::default(),
    )
    .unwrap();
    let names: Vec<&str> = config
        .providers
        .gateways
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(names, vec!["claude", "gateway"]);
    let gateway = &config.providers.gateways[1];
    assert_eq!(
        gateway.headers,
        vec![("x-cost-center".to_owned(), "ops".to_owned())]
    );
    assert_eq!(gateway.timeout, Duration::from_millis(30_000));
    assert!(gateway.api_key.is_some());
    let shown = config.to_redacted_toml();
    assert!(
        !shown.contains("sk-secret-value") && !shown.contains("k-from-env"),
        "{shown}"
    );
    assert!(shown.contains("[providers.gateway.headers]"), "{shown}");

    let bad = |toml: &str, env: &[(&str, &str)]| {
        std::fs::write(dir.path().join("workmate.toml"), toml).unwrap();
        load(dir.path(), env, Overrides::default())
            .unwrap_err()
            .to_string()
    };
    let err = bad(
        "[providers.x]\nkind = \"mistral\"\nbase_url = \"https://a\"\n",
        &[],
    );
    assert!(
        err.contains("[providers.x]") && err.contains("not one of openai"),
        "{err}"
    );
    let err = bad(
        "[providers.x]\nkind = \"openai\"\nbase_url = \"llm.internal\"\n",
        &[],
    );
    assert!(err.contains("base_url"), "{err}");
    let err = bad(
        "[providers.x]\nkind = \"openai\"\nbase_url = \"https://a\"\napi_key = \"k\"\napi_key_env = \"K\"\n",
        &[],
    );
    assert!(err.contains("not both"), "{err}");
    let err = bad(
        "[providers.x]\nkind = \"openai\"\nbase_url = \"https://a\"\napi_key_env = \"MISSING_KEY\"\n",
        &[],
    );
    assert!(
        err.contains("MISSING_KEY") && err.contains("not set"),
        "{err}"
    );
    let err = bad(
        "[providers.x]\nkind = \"openai\"\nbase_url = \"https://a\"\nmodel = \"gpt\"\n",
        &[],
    );
    assert!(
        err.contains("unknown key") && err.contains("model"),
        "{err}"
    );
}

#[test]
fn slack_socket_mode_needs_an_app_token_and_no_signing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let slack = |extra: &[(&'static str, &'static str)]| {
        let mut env = vec![("WORKMATE__PLATFORMS__SLACK__BOT_TOKEN", "xoxb-1")];
        env.extend_from_slice(extra);
        load(dir.path(), &env, Overrides::default())
    };
    let err = slack(&[("WORKMATE__PLATFORMS__SLACK__MODE", "socket")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("app_token") && err.contains("mode = \"socket\""),
        "{err}"
    );
    let config = slack(&[
        ("WORKMATE__PLATFORMS__SLACK__MODE", "socket"),
        ("WORKMATE__PLATFORMS__SLACK__APP_TOKEN", "xapp-1-secret"),
    ])
    .unwrap();
    let slack_config = config.platforms.slack.as_ref().unwrap();
    assert_eq!(slack_config.mode.as_str(), "socket");
    assert!(slack_config.signing_secret.is_none() && slack_config.app_token.is_some());
    let rendered = config.to_redacted_toml();
    assert!(
        rendered.contains("app_token = \"***\"") && !rendered.contains("xapp-1-secret"),
        "{rendered}"
    );
    let err = slack(&[("WORKMATE__PLATFORMS__SLACK__MODE", "http")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("signing_secret is required"), "{err}");
    let err = slack(&[
        ("WORKMATE__PLATFORMS__SLACK__MODE", "rtm"),
        ("WORKMATE__PLATFORMS__SLACK__SIGNING_SECRET", "s"),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("\"socket\""), "{err}");
}

#[test]
fn rendered_config_redacts_provider_headers_url_credentials_and_surface_tokens() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[server]\nadmin_token = \"  admin-token-0123456789\\n\"\n\
         [server.surface_tokens]\nslack-bridge = \"bridge-secret-0123456789\"\n\
         [providers.gateway]\nkind = \"openai\"\nbase_url = \"https://bot:hunter2@llm.internal/v1?key=AIzaSecret\"\n\
         [providers.gateway.headers]\nx-api-key = \"header-secret\"\n",
    )
    .unwrap();
    let config = load(
        dir.path(),
        &[(
            "WORKMATE__SERVER__SURFACE_TOKENS__TEAMS",
            "teams-secret-0123456789",
        )],
        Overrides::default(),
    )
    .unwrap();
    use secrecy::ExposeSecret;
    assert_eq!(
        config.server.admin_token.as_ref().unwrap().expose_secret(),
        "admin-token-0123456789",
        "the configured token is trimmed like a presented one"
    );
    let surfaces: Vec<(&str, &str)> = config
        .server
        .surface_tokens
        .iter()
        .map(|s| (s.name.as_str(), s.token.expose_secret()))
        .collect();
    assert_eq!(
        surfaces,
        [
            ("slack-bridge", "bridge-secret-0123456789"),
            ("teams", "teams-secret-0123456789")
        ]
    );
    assert_eq!(
        config.origin("server.surface_tokens", "teams"),
        Source::Env("WORKMATE__SERVER__SURFACE_TOKENS__TEAMS".into())
    );
    let shown = config.to_redacted_toml();
    for secret in [
        "hunter2",
        "AIzaSecret",
        "header-secret",
        "bridge-secret",
        "teams-secret",
        "admin-token",
    ] {
        assert!(!shown.contains(secret), "{secret} shown in {shown}");
    }
    assert!(
        shown.contains(r#"base_url = "https://bot:***@llm.internal/v1?key=***""#),
        "{shown}"
    );
    assert!(shown.contains(r#"x-api-key = "***""#), "{shown}");
    assert!(shown.contains(r#"slack-bridge = "***""#), "{shown}");
}

#[test]
fn http_limits_have_defaults_and_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let config = load(dir.path(), &[], Overrides::default()).unwrap();
    let limits = config.server.limits;
    assert_eq!(limits.request_timeout, Duration::from_millis(30_000));
    assert_eq!(limits.header_read_timeout, Duration::from_millis(10_000));
    assert_eq!(limits.max_body_bytes, 2 * 1024 * 1024);
    assert_eq!(limits.max_connections, 1024);
    assert!(config.server.surface_tokens.is_empty());

    let config = load(
        dir.path(),
        &[
            ("WORKMATE__SERVER__REQUEST_TIMEOUT_MS", "500"),
            ("WORKMATE__SERVER__MAX_BODY_BYTES", "4096"),
            ("WORKMATE__SERVER__MAX_CONNECTIONS", "8"),
            ("WORKMATE__SERVER__HEADER_READ_TIMEOUT_MS", "250"),
        ],
        Overrides::default(),
    )
    .unwrap();
    let limits = config.server.limits;
    assert_eq!(
        (
            limits.request_timeout,
            limits.header_read_timeout,
            limits.max_body_bytes,
            limits.max_connections
        ),
        (
            Duration::from_millis(500),
            Duration::from_millis(250),
            4096,
            8
        )
    );

    for (name, value, says) in [
        (
            "WORKMATE__SERVER__REQUEST_TIMEOUT_MS",
            "0",
            "request_timeout_ms",
        ),
        ("WORKMATE__SERVER__MAX_CONNECTIONS", "0", "max_connections"),
        ("WORKMATE__SERVER__MAX_BODY_BYTES", "10", "max_body_bytes"),
        (
            "WORKMATE__SERVER__SURFACE_TOKENS__SHORT",
            "short",
            "at least 16",
        ),
    ] {
        let err = load(dir.path(), &[(name, value)], Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{name}={value}: {err}");
    }
    let err = load(
        dir.path(),
        &[
            ("WORKMATE__SERVER__ADMIN_TOKEN", "same-token-0123456789"),
            (
                "WORKMATE__SERVER__SURFACE_TOKENS__BRIDGE",
                "same-token-0123456789",
            ),
        ],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("differ from the admin token"), "{err}");
}

#[test]
fn single_sign_on_settings_defaults_rendering_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[auth.oidc]\nissuer = \"https://login.example.com/realms/corp\"\nclient_id = \"workmate\"\n\
         client_secret = \"oidc-client-secret-value\"\n\
         redirect_url = \"https://workmate.example.com/v1/auth/callback\"\n\
         [auth.groups]\nadmin = [\"wm-admins\"]\napprover = [\"wm-approvers\", \"leads\"]\n",
    )
    .unwrap();
    let config = load(dir.path(), &[], Overrides::default()).unwrap();
    let oidc = config.auth.oidc.as_ref().unwrap();
    assert_eq!(oidc.groups_claim, "groups");
    assert_eq!(oidc.scopes, ["openid", "profile", "email"]);
    assert_eq!(config.auth.admin_groups, ["wm-admins"]);
    assert_eq!(config.auth.approver_groups, ["wm-approvers", "leads"]);
    // With single sign-on the static admin token is off unless the break-glass switch says so.
    assert!(!config.auth.break_glass_admin_token);
    let shown = config.to_redacted_toml();
    assert!(
        shown.contains("client_secret = \"***\"") && !shown.contains("oidc-client-secret-value"),
        "{shown}"
    );
    assert!(shown.contains("break_glass_admin_token = false"), "{shown}");

    let env = [
        ("WORKMATE__AUTH__BREAK_GLASS_ADMIN_TOKEN", "true"),
        ("WORKMATE__AUTH__OIDC__GROUPS_CLAIM", "roles"),
        ("WORKMATE__AUTH__OIDC__SCOPES", "openid,groups"),
    ];
    let config = load(dir.path(), &env, Overrides::default()).unwrap();
    assert!(config.auth.break_glass_admin_token);
    let oidc = config.auth.oidc.as_ref().unwrap();
    assert_eq!(oidc.groups_claim, "roles");
    assert_eq!(oidc.scopes, ["openid", "groups"]);

    // Without single sign-on the admin token is on, and cannot be turned off.
    let bare = tempfile::tempdir().unwrap();
    let config = load(bare.path(), &[], Overrides::default()).unwrap();
    assert!(config.auth.oidc.is_none() && config.auth.break_glass_admin_token);
    assert!(!config.to_redacted_toml().contains("[auth"));
    let err = load(
        bare.path(),
        &[("WORKMATE__AUTH__BREAK_GLASS_ADMIN_TOKEN", "false")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("break_glass_admin_token"), "{err}");

    for (env, key) in [
        (
            (
                "WORKMATE__AUTH__OIDC__REDIRECT_URL",
                "http://workmate.example.com/cb",
            ),
            "redirect_url",
        ),
        (
            ("WORKMATE__AUTH__OIDC__ISSUER", "login.example.com"),
            "issuer",
        ),
        (("WORKMATE__AUTH__OIDC__SCOPES", "profile,email"), "scopes"),
        (
            ("WORKMATE__AUTH__BREAK_GLASS_ADMIN_TOKEN", "maybe"),
            "break_glass_admin_token",
        ),
    ] {
        let err = load(dir.path(), &[env], Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
    // Plain HTTP is allowed on localhost only.
    let local = [(
        "WORKMATE__AUTH__OIDC__REDIRECT_URL",
        "http://localhost:8080/v1/auth/callback",
    )];
    assert!(load(dir.path(), &local, Overrides::default()).is_ok());
    let missing = tempfile::tempdir().unwrap();
    std::fs::write(
        missing.path().join("workmate.toml"),
        "[auth.oidc]\nissuer = \"https://login.example.com\"\n",
    )
    .unwrap();
    let err = load(missing.path(), &[], Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("client_id"), "{err}");
}
