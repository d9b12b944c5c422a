//! What can be wrong with a configuration.
//!
//! Invariant: every message is one line that names the offending key or file, where the value came
//! from, and what to do about it; none of them ever contains a database password.

use std::path::PathBuf;

use super::Source;

/// A configuration that cannot be used. The process reports it and exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--config` names a file that does not exist.
    #[error("configuration file {} not found; check the --config path", path.display())]
    FileMissing {
        /// The path given.
        path: PathBuf,
    },
    /// The configuration file exists but cannot be read.
    #[error("cannot read configuration file {}: {reason}", path.display())]
    FileUnreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The configuration file is not valid TOML.
    #[error("{} is not valid TOML at line {line}, column {column}: {message}", path.display())]
    FileSyntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The parser's description.
        message: String,
    },
    /// A top-level value that is not a section.
    #[error("`{name}` in {origin} is not a section; put keys under [server], [database] or [log]")]
    NotASection {
        /// The top-level key.
        name: String,
        /// Where it came from.
        origin: Source,
    },
    /// A section workmate does not know.
    #[error("unknown section [{section}] in {origin}; known sections: {known}")]
    UnknownSection {
        /// The section.
        section: String,
        /// Where it came from.
        origin: Source,
        /// The known sections, comma-separated.
        known: String,
    },
    /// A key workmate does not know.
    #[error("unknown key `{section}.{key}` in {origin}; known keys in [{section}]: {known}")]
    UnknownKey {
        /// The section.
        section: String,
        /// The key.
        key: String,
        /// Where it came from.
        origin: Source,
        /// The section's known keys, comma-separated.
        known: String,
    },
    /// An environment variable that starts with `WORKMATE__` but does not name a section and key.
    #[error(
        "environment variable {name} is not of the form WORKMATE__SECTION__KEY \
         (e.g. WORKMATE__SERVER__LISTEN); rename or unset it"
    )]
    MalformedEnvName {
        /// The variable's name.
        name: String,
    },
    /// A value of the wrong TOML type.
    #[error("`{section}.{key}` in {origin} must be {expected}, not {found}")]
    WrongType {
        /// The section.
        section: String,
        /// The key.
        key: String,
        /// Where it came from.
        origin: Source,
        /// The type wanted.
        expected: &'static str,
        /// The type given.
        found: &'static str,
    },
    /// A value of the right type that is not acceptable.
    #[error("invalid `{section}.{key}` (from {origin}): {problem}; set {how}")]
    Invalid {
        /// The section.
        section: &'static str,
        /// The key.
        key: &'static str,
        /// Where it came from.
        origin: Source,
        /// What is wrong with it.
        problem: String,
        /// How to set it.
        how: String,
    },
    /// A `[server.surface_tokens] NAME` entry cannot be used.
    #[error("invalid [server.surface_tokens] {name} (from {origin}): {problem}")]
    SurfaceToken {
        /// The surface's name.
        name: String,
        /// Where the offending value came from.
        origin: Source,
        /// What is wrong, and what would be accepted.
        problem: String,
    },
    /// A `[providers.NAME]` section cannot be used.
    #[error("invalid [providers.{name}] (from {origin}): {problem}")]
    Provider {
        /// The provider's name.
        name: String,
        /// Where the offending value came from.
        origin: Source,
        /// What is wrong, and what would be accepted.
        problem: String,
    },
    /// The merged layers do not fit the configuration structs: the key list and the structs
    /// disagree, which is a bug in workmate rather than in the configuration.
    #[error("configuration does not fit the schema ({message}); please report this as a bug")]
    Schema {
        /// The deserializer's description.
        message: String,
    },
}
