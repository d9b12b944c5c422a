//! The crate's one integration-test binary: router tests in process, configuration loading, and
//! black-box runs of the real `workmate` binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod api;
mod audit;
mod audit_sinks;
mod authority;
mod automation_rules;
mod automations_api;
mod backends;
mod backup;
#[path = "../../../tests/chaos/mod.rs"]
mod chaos;
mod cli;
mod compaction;
mod config;
mod config_sections;
mod crash;
mod dingtalk;
mod documents;
#[path = "../../../tests/drain.rs"]
mod drain;
mod durable_commands;
mod engine_metrics;
mod explain;
mod feishu;
mod gateways;
mod idle;
mod intake_crash;
#[path = "../../../tests/kill.rs"]
mod kill;
#[path = "../../../tests/kill_reads.rs"]
mod kill_reads;
mod layout;
mod models;
mod observability;
mod offboarding;
mod oidc;
mod personas;
mod plans;
#[path = "../../../tests/replicas.rs"]
mod replicas;
mod router;
mod sandbox_e2e;
mod scheduler_processes;
#[path = "../../../tests/security/mod.rs"]
mod security;
mod slack;
mod support;
mod surfaces;
#[path = "../../../tests/takeover.rs"]
mod takeover;
mod tenant_settings;
mod traces;
mod vault;
mod visibility;
mod walkthrough;
mod wecom;
