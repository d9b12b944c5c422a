//! `workmate doctor`: one line per thing the service depends on, each `ok`, `warning` (it works,
//! but is weaker than it could be) or `problem`.
//!
//! Invariant: the doctor changes nothing (it applies no migration and calls no model); it only
//! connects, reads and runs `true` in the shell sandbox, so it is safe beside a running server.

use std::fmt::Write as _;

use crate::config::Config;
use crate::database;

/// One checked thing.
struct Line {
    ok: bool,
    what: &'static str,
    detail: String,
}

impl Line {
    /// Whether it works but should be changed.
    fn is_warning(&self) -> bool {
        self.ok && self.detail.starts_with(WARNING)
    }
}

/// How a line that works but should be changed begins.
const WARNING: &str = "beware: ";

/// Runs every check. Returns the report and whether everything is ok.
pub async fn run(config: &Config) -> (String, bool) {
    let lines = [
        database(config).await,
        coordinator(config).await,
        platforms(config),
        providers(config),
        sandbox(config).await,
    ];
    let mut out = String::new();
    for line in &lines {
        let status = match (line.ok, line.is_warning()) {
            (false, _) => "problem",
            (true, true) => "warning",
            (true, false) => "ok     ",
        };
        let _ = writeln!(out, "{status} {:<11} {}", line.what, line.detail);
    }
    (out, lines.iter().all(|l| l.ok))
}

/// The coordinator: in process, or the Redis it connects to (and subscribes on) answers.
async fn coordinator(config: &Config) -> Line {
    let line = |ok, detail| Line {
        ok,
        what: "coordinator",
        detail,
    };
    match &config.coordinator.redis_url {
        None => line(
            true,
            "in process (set [coordinator] redis_url to share events, limits and dedupe between replicas)".into(),
        ),
        Some(url) => match crate::engine::coordinator(config).await {
            Ok(_) => line(
                true,
                format!("Redis {} answers", crate::config::redacted_url(url)),
            ),
            Err(e) => line(false, e.to_string()),
        },
    }
}

async fn database(config: &Config) -> Line {
    let url = config.database.url.redacted();
    let line = |ok, detail| Line {
        ok,
        what: "database",
        detail,
    };
    let store = match database::open(config).await {
        Ok(store) => store,
        Err(e) => return line(false, e.to_string()),
    };
    let pending = store.pending_migrations().await;
    store.close().await;
    match pending {
        Ok(pending) if pending.is_empty() => line(true, format!("{url}: schema up to date")),
        Ok(pending) => line(
            false,
            format!(
                "{url}: {} migration(s) not applied ({}); run `workmate migrate`",
                pending.len(),
                pending.join(", ")
            ),
        ),
        Err(e) => line(false, format!("{url}: cannot read the migrations: {e}")),
    }
}

fn platforms(config: &Config) -> Line {
    let p = &config.platforms;
    let configured: Vec<String> = [
        p.slack
            .as_ref()
            .map(|c| format!("slack ({} mode)", c.mode.as_str())),
        p.feishu
            .as_ref()
            .map(|c| format!("feishu ({} mode)", c.mode.as_str())),
        p.wecom
            .as_ref()
            .map(|c| format!("wecom ({} mode)", c.mode.as_str())),
        p.dingtalk
            .as_ref()
            .map(|c| format!("dingtalk ({} mode)", c.mode.as_str())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let detail = if configured.is_empty() {
        "none configured: only the HTTP API and the demo sandbox answer".to_owned()
    } else {
        format!("{}; the HTTP API", configured.join(", "))
    };
    let dingtalk_http = p
        .dingtalk
        .as_ref()
        .is_some_and(|c| c.mode == crate::config::DingTalkMode::Http);
    let detail = if dingtalk_http {
        format!(
            "{WARNING}DingTalk takes HTTP callbacks, whose card signatures cover only a timestamp \
             (workmate refuses old and reused ones); the Stream connection is authenticated and \
             needs no public endpoint: set [platforms.dingtalk] mode = \"stream\"; {detail}"
        )
    } else {
        detail
    };
    Line {
        ok: true,
        what: "platforms",
        detail,
    }
}

fn providers(config: &Config) -> Line {
    let mut names: Vec<String> = config
        .providers
        .gateways
        .iter()
        .map(|g| format!("{} ({} models)", g.name, g.models.len()))
        .collect();
    if config.providers.scripted_script.is_some() {
        names.push("scripted".to_owned());
    }
    let default = &config.engine.default_model;
    let provider = default.split_once(':').map_or("", |(p, _)| p);
    let known = provider == "scripted"
        || config.providers.gateways.iter().any(|g| g.name == provider)
        || config
            .providers
            .gateways
            .iter()
            .any(|g| g.kind == workmate_providers::ProviderKind::Openai);
    let listed = if names.is_empty() {
        "none configured (the scripted demo model only)".to_owned()
    } else {
        names.join(", ")
    };
    Line {
        ok: known,
        what: "providers",
        detail: if known {
            format!("{listed}; default model {default}")
        } else {
            format!("{listed}; the default model {default} names no configured provider")
        },
    }
}

async fn sandbox(config: &Config) -> Line {
    let (ok, detail) = match config.tools.shell_sandbox.sandbox().probe().await {
        Ok(described) => (true, described),
        Err(why) => (false, why),
    };
    Line {
        ok,
        what: "sandbox",
        detail,
    }
}
