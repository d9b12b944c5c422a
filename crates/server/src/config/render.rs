//! The resolved configuration rendered back as TOML, for `workmate config`.
//!
//! Invariant: the output is a valid `workmate.toml` (same schema as the input, sections in the
//! documented order) that reproduces the configuration, except that a database password is `***`.

use super::Config;
use super::validate::{
    RawConfig, RawDatabase, RawEngine, RawLog, RawProviders, RawScripted, RawServer,
};

pub(crate) fn redacted_toml(config: &Config) -> String {
    let raw = RawConfig {
        server: RawServer {
            listen: Some(config.server.listen.to_string()),
            data_dir: Some(config.server.data_dir.display().to_string()),
            shutdown_grace_ms: Some(
                i64::try_from(config.server.shutdown_grace.as_millis()).unwrap_or(i64::MAX),
            ),
            admin_token: config.server.admin_token.as_ref().map(|_| "***".to_owned()),
        },
        engine: RawEngine {
            max_iterations: Some(i64::from(config.engine.max_iterations)),
            default_model: Some(config.engine.default_model.clone()),
        },
        providers: RawProviders {
            scripted: config
                .providers
                .scripted_script
                .as_ref()
                .map(|path| RawScripted {
                    script: Some(path.display().to_string()),
                }),
        },
        database: RawDatabase {
            url: Some(config.database.url.redacted()),
            max_connections: Some(i64::from(config.database.max_connections)),
        },
        log: RawLog {
            format: Some(config.log.format.as_str().to_owned()),
            level: Some(config.log.level.clone()),
        },
    };
    // Serializing plain strings and integers into TOML cannot fail; an empty document would be
    // the visible symptom if it ever did.
    toml::to_string(&raw).unwrap_or_default()
}
