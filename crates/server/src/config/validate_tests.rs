//! The schema and the list of known keys agree.

use super::*;

#[test]
fn known_keys_match_the_schema() {
    let full = RawConfig {
        server: RawServer {
            listen: Some(String::new()),
            data_dir: Some(String::new()),
            shutdown_grace_ms: Some(0),
            admin_token: Some(String::new()),
            replica_id: Some(String::new()),
            request_timeout_ms: Some(0),
            header_read_timeout_ms: Some(0),
            max_body_bytes: Some(0),
            max_connections: Some(0),
            max_connections_per_client: Some(0),
            idle_timeout_ms: Some(0),
            max_streams_per_client: Some(0),
            surface_tokens: BTreeMap::from([("*".to_owned(), String::new())]),
            surface_grants: BTreeMap::from([("*".to_owned(), Vec::new())]),
        },
        engine: RawEngine {
            max_iterations: Some(0),
            default_model: Some(String::new()),
            recover_within_seconds: Some(0),
            idle_session_seconds: Some(0),
        },
        scheduler: RawScheduler {
            tick_seconds: Some(0),
        },
        // `*` is the section pattern of every provider name (and header name).
        providers: BTreeMap::from([(
            "*".to_owned(),
            RawProvider {
                kind: Some(String::new()),
                base_url: Some(String::new()),
                api_key: Some(String::new()),
                api_key_env: Some(String::new()),
                timeout_ms: Some(0),
                models: Some(vec![String::new()]),
                vision_models: Some(vec![String::new()]),
                pdf_models: Some(vec![String::new()]),
                context_window: Some(0),
                script: Some(String::new()),
                headers: BTreeMap::from([("*".to_owned(), String::new())]),
            },
        )]),
        platforms: super::super::platforms::RawPlatforms {
            slack: Some(workmate_slack::config::RawSlack {
                signing_secret: Some(String::new()),
                bot_token: Some(String::new()),
                app_token: Some(String::new()),
                api_base: Some(String::new()),
                mode: Some(String::new()),
                admins: Some(vec![String::new()]),
            }),
            feishu: Some(workmate_feishu::config::RawFeishu {
                app_id: Some(String::new()),
                app_secret: Some(String::new()),
                encrypt_key: Some(String::new()),
                verification_token: Some(String::new()),
                mode: Some(String::new()),
                api_base: Some(String::new()),
                admins: Some(vec![String::new()]),
            }),
            wecom: Some(workmate_wecom::config::RawWeCom {
                corp_id: Some(String::new()),
                token: Some(String::new()),
                encoding_aes_key: Some(String::new()),
                bot_id: Some(String::new()),
                agent_id: Some(workmate_wecom::config::AgentId::Text(String::new())),
                secret: Some(String::new()),
                mode: Some(String::new()),
                api_base: Some(String::new()),
                admins: Some(vec![String::new()]),
            }),
            dingtalk: Some(workmate_dingtalk::config::RawDingTalk {
                client_id: Some(String::new()),
                client_secret: Some(String::new()),
                card_template_id: Some(String::new()),
                answer_template_id: Some(String::new()),
                mode: Some(String::new()),
                api_base: Some(String::new()),
                gateway_base: Some(String::new()),
                callback_route_key: Some(String::new()),
                token: Some(String::new()),
                encoding_aes_key: Some(String::new()),
                admins: Some(vec![String::new()]),
                corp_id: Some(String::new()),
            }),
        },
        database: RawDatabase {
            url: Some(String::new()),
            max_connections: Some(0),
        },
        log: RawLog {
            format: Some(String::new()),
            level: Some(String::new()),
        },
        tools: super::super::tools::RawTools {
            workspaces_dir: Some(String::new()),
            shell_sandbox: Some(String::new()),
        },
        vault: super::super::vault::RawVault {
            key_file: Some(String::new()),
            previous_key_files: Some(vec![String::new()]),
        },
        auth: super::super::auth::RawAuth {
            break_glass_admin_token: Some(false),
            oidc: Some(super::super::auth::RawOidc {
                issuer: Some(String::new()),
                client_id: Some(String::new()),
                client_secret: Some(String::new()),
                redirect_url: Some(String::new()),
                groups_claim: Some(String::new()),
                tenant_claim: Some(String::new()),
                scopes: Some(vec![String::new()]),
            }),
            groups: Some(super::super::auth::RawGroups {
                admin: Some(vec![String::new()]),
                approver: Some(vec![String::new()]),
            }),
        },
        audit: super::super::audit::RawAudit {
            redis: Some(super::super::audit::RawRedisSink {
                url: Some(String::new()),
                stream_prefix: Some(String::new()),
            }),
            nats: Some(super::super::audit::RawNatsSink {
                url: Some(String::new()),
                subject_prefix: Some(String::new()),
                stream: Some(String::new()),
            }),
        },
        dlp: super::super::dlp::RawDlp {
            fields: Some(vec![String::new()]),
            patterns: Some(vec![String::new()]),
        },
        connectors: super::super::connectors::RawConnectors {
            public_url: Some(String::new()),
            oauth: BTreeMap::from([(
                "*".to_owned(),
                super::super::connectors::RawOAuth {
                    client_id: Some(String::new()),
                    client_secret: Some(String::new()),
                    authorize_url: Some(String::new()),
                    token_url: Some(String::new()),
                    scopes: Some(vec![String::new()]),
                },
            )]),
        },
        tracing: super::super::tracing::RawTracing {
            otlp_endpoint: Some(String::new()),
            service_name: Some(String::new()),
        },
        coordinator: super::super::coordinator::RawCoordinator {
            redis_url: Some(String::new()),
            key_prefix: Some(String::new()),
            session_lease_ms: Some(0),
            connection_lease_ms: Some(0),
            deliveries_per_minute: Some(0),
        },
        network: super::super::network::RawNetwork {
            allow_private: Some(Vec::new()),
        },
        mcp: super::super::network::RawMcp {
            folder_roots: Some(Vec::new()),
        },
        personas: super::super::network::RawPersonas {
            folder_roots: Some(Vec::new()),
        },
    };
    let table = toml::Table::try_from(full).unwrap();
    let mut from_schema = Vec::new();
    leaves("", &table, &mut from_schema);
    let mut listed: Vec<(String, String)> = keys::KNOWN_KEYS
        .iter()
        .map(|k| (k.section.to_owned(), k.key.to_owned()))
        .collect();
    from_schema.sort();
    listed.sort();
    assert_eq!(from_schema, listed);
}

/// `(section, key)` of every scalar, with nested tables as dotted sections.
fn leaves(section: &str, table: &toml::Table, out: &mut Vec<(String, String)>) {
    for (key, value) in table {
        match value {
            toml::Value::Table(inner) if section.is_empty() => leaves(key, inner, out),
            toml::Value::Table(inner) => leaves(&format!("{section}.{key}"), inner, out),
            _ => out.push((section.to_owned(), key.clone())),
        }
    }
}

#[test]
fn default_database_url_lives_in_the_data_dir() {
    assert_eq!(
        default_database_url("./data"),
        "sqlite://./data/workmate.db"
    );
    assert_eq!(
        default_database_url("/var/lib/wm/"),
        "sqlite:///var/lib/wm/workmate.db"
    );
    assert_eq!(
        default_database_url("/tmp/a?b"),
        "sqlite:///tmp/a%3Fb/workmate.db"
    );
}
