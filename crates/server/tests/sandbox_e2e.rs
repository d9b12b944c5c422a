//! The sandbox in a real browser: `workmate demo` runs, and `e2e/sandbox.mjs` drives Debian's
//! headless Chromium through `/sandbox` on Slack, on Feishu, on WeCom and on DingTalk (pick the
//! platform, send a message, click "Approve once", find the answer, save a screenshot under
//! `target/e2e/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::support::Server;

const CHROMIUM: &str = "/usr/bin/chromium";

/// One browser run at a time: two Chromiums and two demo servers at once on a small CI machine
/// would compete for the same cores and slow each past its deadline.
static BROWSER: Mutex<()> = Mutex::new(());

/// The workspace root (this crate is `crates/server`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn node_found() -> bool {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What is missing to run the browser test, if anything.
fn missing(repo: &Path) -> Option<&'static str> {
    if !Path::new(CHROMIUM).exists() {
        Some(CHROMIUM)
    } else if !node_found() {
        Some("node")
    } else if !repo.join("e2e/node_modules/playwright-core").is_dir() {
        Some("e2e/node_modules/playwright-core")
    } else {
        None
    }
}

#[test]
fn a_browser_sends_a_message_approves_and_finds_the_answer_in_the_sandbox() {
    browser_flow("slack", "target/e2e/sandbox.png");
}

#[test]
fn a_browser_does_the_same_on_the_sandboxs_feishu() {
    browser_flow("feishu", "target/e2e/sandbox-feishu.png");
}

#[test]
fn a_browser_does_the_same_on_the_sandboxs_wecom() {
    browser_flow("wecom", "target/e2e/sandbox-wecom.png");
}

#[test]
fn a_browser_does_the_same_on_the_sandboxs_dingtalk() {
    browser_flow("dingtalk", "target/e2e/sandbox-dingtalk.png");
}

/// Runs `e2e/sandbox.mjs` on `platform` against a fresh `workmate demo`; it must succeed and
/// leave its screenshot at `screenshot` (relative to the repository).
#[allow(
    clippy::print_stderr,
    reason = "a skipped test must say so, and a failing one shows the browser script's output"
)]
fn browser_flow(platform: &str, screenshot: &str) {
    let repo = repo_root();
    if let Some(what) = missing(&repo) {
        eprintln!("skipped: {what} not installed (bash .ci/run installs it)");
        return;
    }
    let _one_at_a_time = BROWSER.lock().unwrap_or_else(PoisonError::into_inner);
    let screenshot = repo.join(screenshot);
    let _ = std::fs::remove_file(&screenshot);

    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(dir.path());

    let out = tempfile::NamedTempFile::new().unwrap();
    let err = tempfile::NamedTempFile::new().unwrap();
    let mut browser = Command::new("node")
        .arg(repo.join("e2e/sandbox.mjs"))
        .arg(format!("http://{}", server.addr))
        .arg(platform)
        .current_dir(&repo)
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(err.reopen().unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = browser.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = browser.kill();
            let _ = browser.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = format!(
        "--- e2e/sandbox.mjs {platform} stdout ---\n{}\n--- stderr ---\n{}\n--- workmate demo log ---\n{}",
        std::fs::read_to_string(out.path()).unwrap_or_default(),
        std::fs::read_to_string(err.path()).unwrap_or_default(),
        server.log_text()
    );
    eprintln!("{output}");
    let status = status.unwrap_or_else(|| panic!("the browser script ran past 90 s\n{output}"));
    assert!(
        status.success(),
        "the browser script failed on {platform}: {status}"
    );
    assert!(
        screenshot.is_file(),
        "no screenshot at {}",
        screenshot.display()
    );

    let exit = server.terminate(Duration::from_secs(10));
    assert!(exit.success(), "workmate demo exited with {exit}");
}
