//! Configuration loading, built in code: the environment is a list passed to the loader, never
//! the process's own.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use workmate_server::config::{Config, ConfigError, ConfigSources, LogFormat, Overrides, Source};

fn sources(dir: &Path, env: &[(&str, &str)], flags: Overrides) -> ConfigSources {
    ConfigSources {
        config_file: None,
        working_dir: dir.to_owned(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        flags,
    }
}

fn load(dir: &Path, env: &[(&str, &str)], flags: Overrides) -> Result<Config, ConfigError> {
    Config::load(&sources(dir, env, flags))
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

#[test]
fn defaults_with_no_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let config = load(dir.path(), &[], Overrides::default()).unwrap();
    assert_eq!(config.server.listen, addr("127.0.0.1:8080"));
    assert_eq!(config.server.data_dir, PathBuf::from("./data"));
    assert_eq!(config.server.shutdown_grace, Duration::from_millis(1500));
    assert_eq!(config.database.url.expose(), "sqlite://./data/workmate.db");
    assert_eq!(config.database.max_connections, 10);
    assert_eq!(config.log.format, LogFormat::Text);
    assert_eq!(config.log.level, "info");
    assert_eq!(config.origin("server", "listen"), Source::Default);
}

#[test]
fn file_then_environment_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workmate.toml");
    std::fs::write(
        &file,
        "[server]\nlisten = \"127.0.0.1:1001\"\ndata_dir = \"/srv/file\"\nshutdown_grace_ms = 250\n\
         [database]\nmax_connections = 3\n[log]\nformat = \"json\"\nlevel = \"warn\"\n",
    )
    .unwrap();
    let env = [
        ("WORKMATE__SERVER__LISTEN", "127.0.0.1:1002"),
        ("WORKMATE__SERVER__DATA_DIR", "/srv/env"),
        ("WORKMATE__LOG__LEVEL", "debug"),
        ("UNRELATED", "x"),
    ];

    let config = load(dir.path(), &env, Overrides::default()).unwrap();
    assert_eq!(config.server.listen, addr("127.0.0.1:1002"));
    assert_eq!(config.server.data_dir, PathBuf::from("/srv/env"));
    assert_eq!(config.server.shutdown_grace, Duration::from_millis(250));
    assert_eq!(config.database.max_connections, 3);
    assert_eq!(config.log.format, LogFormat::Json);
    assert_eq!(config.log.level, "debug");
    // The default database follows the winning data directory.
    assert_eq!(
        config.database.url.expose(),
        "sqlite:///srv/env/workmate.db"
    );
    assert_eq!(
        config.origin("database", "max_connections"),
        Source::File(file)
    );
    assert_eq!(
        config.origin("server", "listen"),
        Source::Env("WORKMATE__SERVER__LISTEN".into())
    );

    let flags = Overrides {
        listen: Some("127.0.0.1:1003".into()),
        log_format: Some(LogFormat::Text),
        ..Overrides::default()
    };
    let config = load(dir.path(), &env, flags).unwrap();
    assert_eq!(config.server.listen, addr("127.0.0.1:1003"));
    assert_eq!(config.log.format, LogFormat::Text);
    assert_eq!(config.server.data_dir, PathBuf::from("/srv/env"));
    assert_eq!(config.origin("server", "listen"), Source::Flag("--listen"));
}

#[test]
fn rust_log_sits_below_the_specific_variable_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[log]\nlevel = \"warn\"\n",
    )
    .unwrap();
    let level = |env: &[(&str, &str)], flag: Option<&str>| {
        let flags = Overrides {
            log_level: flag.map(str::to_owned),
            ..Overrides::default()
        };
        load(dir.path(), env, flags).unwrap().log.level
    };
    assert_eq!(level(&[], None), "warn");
    assert_eq!(level(&[("RUST_LOG", "debug")], None), "debug");
    assert_eq!(
        level(
            &[("RUST_LOG", "debug"), ("WORKMATE__LOG__LEVEL", "error")],
            None
        ),
        "error"
    );
    assert_eq!(level(&[("RUST_LOG", "debug")], Some("trace")), "trace");
}

#[test]
fn explicit_config_file_replaces_the_default_one_and_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[server]\nlisten = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "[server]\nlisten = \"127.0.0.1:2\"\n").unwrap();

    let mut given = sources(dir.path(), &[], Overrides::default());
    given.config_file = Some(other);
    assert_eq!(
        Config::load(&given).unwrap().server.listen,
        addr("127.0.0.1:2")
    );

    given.config_file = Some(dir.path().join("missing.toml"));
    let err = Config::load(&given).unwrap_err().to_string();
    assert!(
        err.contains("missing.toml") && err.contains("not found"),
        "{err}"
    );
}

#[test]
fn unknown_key_in_the_file_is_named_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("workmate.toml"),
        "[server]\nlisen = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    let err = load(dir.path(), &[], Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown key `server.lisen`"), "{err}");
    assert!(err.contains("workmate.toml"), "{err}");
    assert!(
        err.contains("listen"),
        "the message lists the known keys: {err}"
    );

    std::fs::write(
        dir.path().join("workmate.toml"),
        "[serverr]\nlisten = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    let err = load(dir.path(), &[], Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown section [serverr]"), "{err}");
}

#[test]
fn unknown_environment_key_is_named_with_its_variable() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(
        dir.path(),
        &[("WORKMATE__SERVER__LISTN", "x")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("server.listn"), "{err}");
    assert!(
        err.contains("environment variable WORKMATE__SERVER__LISTN"),
        "{err}"
    );

    let err = load(
        dir.path(),
        &[("WORKMATE__LISTEN", "x")],
        Overrides::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("WORKMATE__LISTEN") && err.contains("WORKMATE__SECTION__KEY"),
        "{err}"
    );
}

#[test]
fn malformed_database_url_is_rejected_with_its_origin() {
    let dir = tempfile::tempdir().unwrap();
    let flags = Overrides {
        database_url: Some("not-a-url".into()),
        ..Overrides::default()
    };
    let err = load(dir.path(), &[], flags).unwrap_err().to_string();
    assert!(
        err.contains("database.url") && err.contains("flag --database-url"),
        "{err}"
    );
    assert!(
        err.contains("sqlite:, mysql: or postgres:"),
        "says what is expected: {err}"
    );

    let env = [("WORKMATE__DATABASE__URL", "postgres://db.internal")];
    let err = load(dir.path(), &env, Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("WORKMATE__DATABASE__URL") && err.contains("no database name"),
        "{err}"
    );
}

#[test]
fn values_are_checked_by_type_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[database]\nmax_connections = \"ten\"\n",
            "must be an integer, not a string",
        ),
        (
            "[database]\nmax_connections = 0\n",
            "not between 1 and 10000",
        ),
        (
            "[server]\nlisten = \"localhost\"\n",
            "is not an IP:PORT address",
        ),
        (
            "[server]\nshutdown_grace_ms = -1\n",
            "not between 0 and 600000",
        ),
        ("[log]\nformat = \"xml\"\n", "neither \"text\" nor \"json\""),
        ("[log]\nlevel = \"info,[\"\n", "is not a tracing filter"),
        ("listen = \"127.0.0.1:1\"\n", "is not a section"),
        ("[server\n", "is not valid TOML at line 1"),
    ];
    for (file, expected) in cases {
        std::fs::write(dir.path().join("workmate.toml"), file).unwrap();
        let err = load(dir.path(), &[], Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{file:?}: {err}");
        assert!(!err.contains('\n'), "one line: {err:?}");
    }
}

#[test]
fn rendered_config_redacts_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let flags = Overrides {
        database_url: Some("postgres://wm:hunter2@db.internal:5432/wm".into()),
        ..Overrides::default()
    };
    let config = load(dir.path(), &[], flags).unwrap();
    let text = config.to_redacted_toml();
    assert!(
        text.contains(r#"url = "postgres://wm:***@db.internal:5432/wm""#),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!format!("{config:?}").contains("hunter2"));

    // The output is itself a configuration that loads to the same values.
    std::fs::write(dir.path().join("workmate.toml"), &text).unwrap();
    let reloaded = load(dir.path(), &[], Overrides::default()).unwrap();
    assert_eq!(reloaded.server.listen, config.server.listen);
    assert_eq!(
        reloaded.database.max_connections,
        config.database.max_connections
    );
}

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
