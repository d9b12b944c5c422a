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

pub(crate) fn load(
    dir: &Path,
    env: &[(&str, &str)],
    flags: Overrides,
) -> Result<Config, ConfigError> {
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
    assert_eq!(config.server.shutdown_grace, Duration::from_millis(30_000));
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
