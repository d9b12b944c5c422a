//! Connectors: the company's systems (GitHub, Jira, …) as workmate tools. Each call is made with
//! the credentials of the person it acts for (or the tenant's, where an admin set them), read
//! from the vault when the call runs.
//!
//! Invariants: a tool's risk comes from its descriptor's annotation alone, and a tool without one
//! is high risk (it asks); every write names its target (a repository, a project), so a standing
//! rule allows exactly that one; a connector's tools reach a turn only when its persona may use
//! the connector and the requester (or the tenant) connected it; credentials never appear in a
//! result, an error or a log.

mod atlassian;
mod confluence;
mod connect;
mod connector;
mod credentials;
mod descriptor;
mod dingtalk_docs;
mod feishu;
mod github;
mod gitlab;
mod gmail;
mod google;
mod google_calendar;
mod http;
mod jira;
mod markup;
mod notion;
mod source;
mod tool;

pub use confluence::Confluence;
pub use connect::ConnectorStatus;
pub use connector::Connector;
pub use credentials::{CredentialStore, Credentials, Owner, secret_name};
pub use descriptor::{AuthKind, CATEGORY, Descriptor, Field, Risk, ToolDef};
pub use dingtalk_docs::DingTalkDocs;
pub use feishu::FeishuWorkspace;
pub use github::GitHub;
pub use gitlab::GitLab;
pub use gmail::Gmail;
pub use google_calendar::GoogleCalendar;
pub use http::{Api, Auth, Http};
pub use jira::Jira;
pub use notion::Notion;
pub use source::{ConnectorSource, builtin_connectors};
