//! Running one `workmate` subcommand to completion.
//!
//! Invariant: nothing is printed here; a command returns the text its user asked for (or an error
//! with its exit code) and the binary decides how to show it.

use std::path::PathBuf;

use crate::cli::{BenchCommand, Cli, Command, ModelsCommand, PolicyCommand};
use crate::config::Config;
use crate::engine::Script;
use crate::error::StartupError;
use crate::{
    audit, backup, bench, data_dir, database, doctor, explain, models, roles, serve, telemetry,
    vault,
};

/// Runs the command line's subcommand. `working_dir` is where `workmate.toml` is looked for and
/// `env` the process environment. Returns the text to print on stdout, if any.
pub fn run(
    cli: &Cli,
    working_dir: PathBuf,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Option<String>, StartupError> {
    // Explaining a policy decision needs neither configuration nor a database.
    if let Command::Policy(PolicyCommand::Explain(args)) = &cli.command {
        return explain::explain(args)
            .map(Some)
            .map_err(StartupError::Usage);
    }
    // Benchmarks build their own service in a temporary directory; no configuration applies.
    match &cli.command {
        Command::Bench(BenchCommand::Webhooks(args)) => return bench::webhooks(args).map(Some),
        Command::Bench(BenchCommand::Soak(args)) => return bench::soak(args).map(Some),
        Command::BenchClient(args) => return bench::client(args).map(Some),
        _ => {}
    }
    let config = Config::load(&cli.global.sources(working_dir, env))?;
    if cli.command == Command::Config {
        return Ok(Some(config.to_redacted_toml()));
    }
    if cli.command == (Command::Models { action: None }) {
        return Ok(Some(models::list(&config)));
    }
    // Before anything logs: the log lines pass through these rules.
    if let Ok(redactor) = config.dlp.redactor() {
        workmate_dlp::install(redactor);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartupError::Runtime)?;
    // Flushes the spans not yet exported when the command ends.
    let _telemetry = telemetry::init(&config.log, &config.tracing, runtime.handle())?;
    match cli.command {
        Command::Serve => runtime
            .block_on(Box::pin(serve::serve(&config, Script::Configured)))
            .map(|()| None),
        Command::Demo => runtime
            .block_on(Box::pin(serve::serve(&config, Script::Demo)))
            .map(|()| None),
        Command::Doctor => match runtime.block_on(doctor::run(&config)) {
            (report, true) => Ok(Some(report)),
            (report, false) => Err(StartupError::DoctorFailed(report)),
        },
        Command::Migrate => runtime.block_on(migrate(&config)).map(Some),
        Command::Backup { ref to } => runtime.block_on(backup::backup(&config, to)).map(Some),
        Command::Restore { ref from } => runtime.block_on(backup::restore(&config, from)).map(Some),
        Command::Role(ref action) => runtime.block_on(roles::run(&config, action)).map(Some),
        Command::Audit(ref action) => runtime.block_on(audit::run(&config, action)).map(Some),
        Command::Vault(ref action) => runtime
            .block_on(vault::run(&config, action.clone()))
            .map(Some),
        Command::Models {
            action: Some(ModelsCommand::Check),
        } => {
            let (report, all_ok) = runtime.block_on(async {
                let config = crate::secret_refs::resolve_opening(&config).await?;
                Ok::<_, StartupError>(models::check(&config).await)
            })?;
            if all_ok {
                Ok(Some(report))
            } else {
                Err(StartupError::ModelsFailed(report))
            }
        }
        // Answered above, before any runtime starts.
        Command::Config
        | Command::Policy(_)
        | Command::Models { action: None }
        | Command::Bench(_)
        | Command::BenchClient(_) => Ok(None),
    }
}

/// `workmate migrate`: applies pending migrations and describes what it did.
async fn migrate(config: &Config) -> Result<String, StartupError> {
    data_dir::prepare(&config.server.data_dir)?;
    let store = database::open(config).await?;
    let report = database::migrate(&store, config).await?;
    store.close().await;
    Ok(describe(&report))
}

/// One line per applied migration, or "schema up to date (N migrations)".
fn describe(report: &workmate_store::MigrationReport) -> String {
    if report.applied.is_empty() {
        return format!(
            "schema up to date ({} migrations)\n",
            report.already_applied
        );
    }
    report
        .applied
        .iter()
        .map(|name| format!("applied {name}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_applied_and_idle_runs() {
        let report = workmate_store::MigrationReport {
            applied: vec!["0001_a", "0002_b"],
            already_applied: 0,
        };
        assert_eq!(describe(&report), "applied 0001_a\napplied 0002_b\n");
        let report = workmate_store::MigrationReport {
            applied: vec![],
            already_applied: 2,
        };
        assert_eq!(describe(&report), "schema up to date (2 migrations)\n");
    }
}
