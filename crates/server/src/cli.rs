//! The `workmate` command line.
//!
//! Invariant: flags only feed the highest-precedence configuration layer; nothing here reads the
//! environment or files itself (clap's own `env` feature is not used, so precedence stays in one
//! place: [`crate::config`]).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{ConfigSources, LogFormat, Overrides};

/// workmate: a multi-tenant AI coworker for chat apps.
#[derive(Debug, Parser)]
#[command(name = "workmate", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Flags shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalFlags,
}

/// The subcommands.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Run the HTTP server (migrates the database first).
    Serve,
    /// Run the HTTP server on the bundled offline demo script (no model gateway needed).
    Demo,
    /// Bring the database schema up to date, then exit.
    Migrate,
    /// Print the resolved configuration as TOML, passwords redacted.
    Config,
    /// Check the database, platforms, providers and shell sandbox; exit 1 if any has a problem.
    Doctor,
    /// List the configured model providers and models; `models check` calls each once.
    Models {
        /// What to do with them.
        #[command(subcommand)]
        action: Option<ModelsCommand>,
    },
    /// Inspect the permission policy.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Grant or revoke a user's role in a tenant, as the operator (audited).
    #[command(subcommand)]
    Role(RoleCommand),
    /// The credential vault: re-wrap secrets with the current master key, or show which keys
    /// the stored secrets use.
    #[command(subcommand)]
    Vault(VaultCommand),
    /// Copy an embedded deployment while it runs, into one file: a consistent copy of its
    /// database, its local object store, and which vault keys its secrets need (never a key).
    Backup {
        /// The backup file to write; it must not exist.
        #[arg(long)]
        to: PathBuf,
    },
    /// Put a backup back into an empty data folder, then check it: the vault keys it needs are
    /// configured, the schema is brought up to date, every audit chain verifies.
    Restore {
        /// The backup file.
        #[arg(long)]
        from: PathBuf,
    },
    /// The audit trail: export a tenant's records as JSON lines, or verify the hash chains.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Measure the service under load; prints figures beside their targets.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// The load client `bench` starts in a second process.
    #[command(hide = true)]
    BenchClient(crate::bench::ClientArgs),
}

/// `workmate bench …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Subcommand)]
pub enum BenchCommand {
    /// Post signed Slack events from a second process; compare with an empty axum handler.
    Webhooks(crate::bench::WebhooksArgs),
    /// Post signed Slack events at a steady pace, each a new thread, and print resident memory
    /// after the warm-up and after each further block.
    Soak(crate::bench::SoakArgs),
}

/// `workmate vault …`.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum VaultCommand {
    /// Re-wrap every secret's data key with the current master key ([vault] key_file or
    /// WORKMATE_VAULT_KEY); the keys rows use now must be configured as previous keys. Rows
    /// already on the current key are skipped, so it can be run again after an interruption.
    Rotate {
        /// Rows re-wrapped per transaction.
        #[arg(long, value_name = "ROWS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        batch_size: u64,
    },
    /// Print the current master key's id and how many secrets each key id wraps.
    Status,
    /// Store a secret read from standard input (never from the command line, which shells and
    /// process lists keep), replacing any previous value. The configuration names a tenant-wide
    /// secret of the default tenant as `vault:<NAME>`.
    Put(SecretPlace),
    /// List the names (never the values) of a tenant's or a user's secrets.
    List {
        /// The tenant.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// A user of the tenant, for their own secrets (none: the tenant-wide ones).
        #[arg(long)]
        user: Option<String>,
    },
    /// Delete a secret.
    Delete(SecretPlace),
}

/// `workmate audit …`.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum AuditCommand {
    /// Write a tenant's sealed records, in chain order, as JSON lines on standard output.
    Export {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// Only records written at or after this time (2026-12-01 or 2026-12-01T09:00:00Z).
        #[arg(long)]
        from: Option<String>,
        /// Only records written before this time.
        #[arg(long)]
        to: Option<String>,
    },
    /// Check every tenant's hash chain (or one tenant's) for edited, missing or removed
    /// records; exit code 1 when one is broken.
    Verify {
        /// Only this tenant.
        #[arg(long)]
        tenant: Option<String>,
    },
}

/// Which secret: a name, of a tenant or one of its users.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct SecretPlace {
    /// The secret's name, e.g. `platform/slack/bot_token`.
    pub name: String,
    /// The tenant.
    #[arg(long, default_value = "default")]
    pub tenant: String,
    /// A user of the tenant, for their own secret (none: tenant-wide).
    #[arg(long)]
    pub user: Option<String>,
}

/// `workmate models …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Subcommand)]
pub enum ModelsCommand {
    /// Call every listed model once and report what works (exit code 1 if any fails).
    Check,
}

/// `workmate policy …`.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum PolicyCommand {
    /// Print whether a call would be allowed, asked about or denied, and why.
    Explain(Box<crate::explain::ExplainArgs>),
}

/// `workmate role …`.
#[derive(Clone, Debug, PartialEq, Eq, Subcommand)]
pub enum RoleCommand {
    /// Give the user a role (admin, approver or member); creates the tenant and user if missing.
    Grant(RoleArgs),
    /// Take an approver or admin role back; the user becomes a member.
    Revoke(RoleArgs),
}

/// Whose role changes, and to or from what.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct RoleArgs {
    /// The tenant, e.g. `slack-T0123` for a Slack workspace, or `default` for the API's.
    #[arg(long, value_name = "TENANT")]
    pub tenant: String,
    /// The tenant's user id, e.g. `slack-U0123` for a Slack user.
    #[arg(long, value_name = "USER")]
    pub user: String,
    /// The role to grant or revoke.
    #[arg(long, value_name = "ROLE")]
    pub role: RoleWord,
}

/// A role as written on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleWord {
    /// May also change tenant settings and roles.
    Admin,
    /// May also answer other people's approvals.
    Approver,
    /// Talks to workmate; answers in their own sessions.
    Member,
}

/// Flags accepted before or after the subcommand.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct GlobalFlags {
    /// Configuration file (default: ./workmate.toml if it exists).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on, e.g. 127.0.0.1:8080 ([server] listen).
    #[arg(long, global = true, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Directory for local state ([server] data_dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<String>,
    /// Database URL: sqlite:, mysql: or postgres: ([database] url).
    #[arg(long, global = true, value_name = "URL")]
    pub database_url: Option<String>,
    /// Log format on stderr ([log] format).
    #[arg(long, global = true, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Log filter, e.g. info or info,sqlx=warn ([log] level).
    #[arg(long, global = true, value_name = "FILTER")]
    pub log_level: Option<String>,
}

impl GlobalFlags {
    /// The configuration sources for these flags, the given environment and working directory.
    pub fn sources(
        &self,
        working_dir: PathBuf,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> ConfigSources {
        ConfigSources {
            config_file: self.config.clone(),
            working_dir,
            env: env.into_iter().collect(),
            flags: Overrides {
                listen: self.listen.clone(),
                data_dir: self.data_dir.clone(),
                database_url: self.database_url.clone(),
                log_format: self.log_format,
                log_level: self.log_level.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_go_before_or_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "workmate",
            "--listen",
            "0.0.0.0:1",
            "serve",
            "--log-format",
            "json",
        ])
        .unwrap();
        assert_eq!(cli.command, Command::Serve);
        assert_eq!(cli.global.listen.as_deref(), Some("0.0.0.0:1"));
        assert_eq!(cli.global.log_format, Some(LogFormat::Json));
        assert!(Cli::try_parse_from(["workmate", "serve", "--log-format", "xml"]).is_err());
    }
}
