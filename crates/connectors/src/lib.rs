//! Connectors: the company's systems (GitHub, Jira, …) as workmate tools. Each call is made with
//! the credentials of the person it acts for (or the tenant's, where an admin set them), read
//! from the vault when the call runs.
//!
//! Invariants: a tool's risk comes from its descriptor's annotation alone, and a tool without one
//! is high risk (it asks); every write names its target (a repository, a project), so a standing
//! rule allows exactly that one; a connector's tools reach a turn only when its persona may use
//! the connector and the requester (or the tenant) connected it; credentials never appear in a
//! result, an error or a log.

mod connector;
mod credentials;
mod descriptor;
mod github;
mod http;
mod jira;
mod source;
mod tool;

pub use connector::Connector;
pub use credentials::{CredentialStore, Credentials, Owner, secret_name};
pub use descriptor::{AuthKind, CATEGORY, Descriptor, Field, Risk, ToolDef};
pub use github::GitHub;
pub use http::{Api, Auth, Http};
pub use jira::Jira;
pub use source::{ConnectorSource, builtin_connectors};
