//! The `workmate` binary: parse the command line, run, print, exit with the right code.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use workmate_server::StartupError;
use workmate_server::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let working_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = std::env::vars_os().map(|(name, value)| {
        (
            name.to_string_lossy().into_owned(),
            value.to_string_lossy().into_owned(),
        )
    });
    match workmate_server::run(&cli, working_dir, env) {
        Ok(output) => {
            // Written rather than `print!`ed so a closed stdout (`workmate config | head -0`)
            // is an exit code, not a panic.
            let written = output.map_or(Ok(()), |text| {
                std::io::stdout().lock().write_all(text.as_bytes())
            });
            if written.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(StartupError::DoctorFailed(report)) => {
            // Like `models check`: the report is the answer, the exit code says a line failed.
            let _ = std::io::stdout().lock().write_all(report.as_bytes());
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: workmate doctor found problems"
            );
            ExitCode::FAILURE
        }
        Err(StartupError::AuditBroken(report)) => {
            // The report is the answer; the exit code says a chain is broken.
            let _ = std::io::stdout().lock().write_all(report.as_bytes());
            let _ = writeln!(std::io::stderr().lock(), "error: the audit trail is broken");
            ExitCode::FAILURE
        }
        Err(StartupError::ModelsFailed(report)) => {
            // The report is the answer: every model's outcome, on stdout like a success's.
            let _ = std::io::stdout().lock().write_all(report.as_bytes());
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: some models did not answer"
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            // The one line a user sees; logs (if any) went to stderr before it.
            let _ = writeln!(std::io::stderr().lock(), "error: {}", error.one_line());
            ExitCode::from(error.exit_code())
        }
    }
}
