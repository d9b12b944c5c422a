//! The OpenID provider the tests start (npm `oidc-provider`), and workmate set up against it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::Router;
use workmate_identity::testing::TestKey;
use workmate_identity::{Clock, GroupRoles, Oidc, OidcSettings, SessionKey};
use workmate_server::http::api::{Auth, Sso};
use workmate_server::http::router;

use crate::router::{TOKEN, app};
use crate::support::free_port;

use super::*;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// What is missing to run the provider, if anything.
fn missing(repo: &Path) -> Option<&'static str> {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !node {
        Some("node")
    } else if !repo.join("tests/oidc/node_modules/oidc-provider").is_dir() {
        Some("tests/oidc/node_modules/oidc-provider")
    } else {
        None
    }
}

/// The running provider; stopped when dropped.
pub(crate) struct Provider {
    pub(crate) child: Child,
    pub(crate) issuer: String,
    pub(crate) keys: tempfile::TempDir,
}

impl Provider {
    /// The provider, started; `None` (the test saying it was skipped) when node or the npm
    /// package is not installed.
    pub(crate) fn start_or_skip() -> Option<Self> {
        let repo = repo_root();
        if let Some(what) = missing(&repo) {
            #[allow(clippy::print_stderr, reason = "a skipped test must say so")]
            {
                eprintln!(
                    "skipped: {what} not installed (bash .ci/run installs it: npm ci in tests/oidc)"
                );
            }
            return None;
        }
        Some(Self::start(&repo))
    }

    pub(crate) fn start(repo: &Path) -> Self {
        let keys = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut child = Command::new("node")
            .arg(repo.join("tests/oidc/provider.mjs"))
            .arg(port.to_string())
            .arg(REDIRECT)
            .arg(keys.path())
            .current_dir(repo.join("tests/oidc"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The provider prints one line once it accepts connections.
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let issuer = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.starts_with("listening ") => {
                    break line.trim_start_matches("listening ").to_owned();
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = child.kill();
                    panic!("the OpenID provider did not start within 30 s: {e}");
                }
            }
        };
        Self {
            child,
            issuer,
            keys,
        }
    }

    /// The provider's own signing key (what it publishes under `test-key-1`).
    pub(crate) fn signing_key(&self) -> TestKey {
        let pem = std::fs::read_to_string(self.keys.path().join("signing.pem")).unwrap();
        TestKey::from_pem(&pem, PROVIDER_KID)
    }

    /// A key the provider does not hold, claiming the provider's key id.
    pub(crate) fn impostor_key(&self) -> TestKey {
        let pem = std::fs::read_to_string(self.keys.path().join("impostor.pem")).unwrap();
        TestKey::from_pem(&pem, PROVIDER_KID)
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Single sign-on through `provider`, its cookie key kept in `data_dir`; `wm-admins` are admins
/// and `wm-approvers` approvers.
pub(crate) fn sso_for(provider: &Provider, data_dir: &Path) -> Sso {
    let oidc = Oidc::new(
        OidcSettings {
            issuer: provider.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: CLIENT_SECRET.to_owned().into(),
            redirect_url: REDIRECT.into(),
            groups_claim: "groups".into(),
            tenant_claim: None,
            scopes: ["openid", "profile", "email", "groups"]
                .map(str::to_owned)
                .to_vec(),
        },
        crate::support::local_egress(),
        Clock::system(),
    )
    .unwrap();
    let (key, _) = SessionKey::load_or_generate(data_dir).unwrap();
    let roles = GroupRoles::new(["wm-admins".to_owned()], ["wm-approvers".to_owned()]);
    Sso::new(oidc, key, roles)
}

/// `state` with `/v1` accepting single sign-on through `sso` (the static admin token only when
/// `break_glass` is on), and its chat layer making "link your account" URLs with it.
pub(crate) fn with_sso(
    mut state: workmate_server::http::AppState,
    sso: Sso,
    break_glass: bool,
) -> Router {
    state
        .chat
        .set_account_links(std::sync::Arc::new(sso.links()));
    state.auth =
        std::sync::Arc::new(Auth::admin(TOKEN.to_owned().into()).with_sso(sso, break_glass));
    router(state)
}

/// A test app whose `/v1` accepts single sign-on through `provider`; the static admin token is
/// accepted only when `break_glass` is.
pub(crate) async fn sso_app(
    provider: &Provider,
    break_glass: bool,
) -> (Router, crate::router::App) {
    let app = app().await;
    let sso = sso_for(provider, app.dir.path());
    (with_sso(app.state.clone(), sso, break_glass), app)
}
