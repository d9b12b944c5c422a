//! Helpers for the black-box tests: running the binary, free ports, a tiny HTTP client, fresh
//! databases on the test servers, polling until something holds, and the calls a platform's fake
//! received ([`calls`]).

mod calls;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub(crate) use calls::{Call, calls, wait_for};

/// The `workmate` binary, run in `dir`, with no workmate settings inherited from the test's
/// environment (a developer's `WORKMATE__…` or `RUST_LOG` must not change the outcome).
pub(crate) fn workmate(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workmate"));
    command.current_dir(dir);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WORKMATE__")
            || name == "RUST_LOG"
            || name == "WORKMATE_VAULT_KEY"
            || name == "WORKMATE_VAULT_PREVIOUS_KEYS"
        {
            command.env_remove(name);
        }
    }
    command
}

/// Runs `workmate` to completion.
pub(crate) fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    workmate(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// Runs `workmate` to completion with `env`, `input` on its standard input.
pub(crate) fn run_with_input(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: &str,
) -> Output {
    use std::process::Stdio;
    let mut child = workmate(dir)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A port nothing listens on right now.
/// The clock in Unix seconds, as text: the timestamp a platform signs a fresh request with.
pub(crate) fn unix_now_s() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string()
}

/// The guarded egress as an operator who allowed the local fakes (`[network] allow_private =
/// ["127.0.0.1", "localhost"]`) builds it for sign-in and token calls.
pub(crate) fn local_egress() -> workmate_net::Egress {
    workmate_net::Egress::new(
        local_network(),
        workmate_net::EgressOptions::credentialed().without_redirects(),
    )
    .unwrap()
}

/// Single sign-on settings for a provider at `issuer`, as the tests' provider knows workmate.
pub(crate) fn oidc_settings(issuer: &str) -> workmate_identity::OidcSettings {
    workmate_identity::OidcSettings {
        issuer: issuer.to_owned(),
        client_id: "workmate".into(),
        client_secret: "secret".to_owned().into(),
        redirect_url: "http://localhost:8080/v1/auth/callback".into(),
        groups_claim: "groups".into(),
        tenant_claim: None,
        scopes: vec!["openid".into()],
    }
}

/// The network policy of an operator who allowed the local fakes.
pub(crate) fn local_network() -> std::sync::Arc<workmate_net::NetworkPolicy> {
    let policy = workmate_net::NetworkPolicy::allow_private(["127.0.0.1", "localhost"]);
    std::sync::Arc::new(policy.unwrap())
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The names directly inside `dir`.
pub(crate) fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// `GET path` over HTTP/1.1; the status code and body.
pub(crate) fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    http_request(addr, "GET", path, None, None)
}

/// One HTTP/1.1 request with an optional bearer token and JSON body; the status code and body.
pub(crate) fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| ("Authorization", a))
        .into_iter()
        .collect();
    http_send(addr, method, path, &headers, body)
}

/// Like [`http_request`], with any extra headers (a platform's signature, say).
pub(crate) fn http_send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {response:?}")))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// Opens `path` as a Server-Sent Events stream and reads it until its text holds `marker`;
/// returns what was read. Fails when the stream ends or is silent for `patience`.
pub(crate) fn read_stream_until(
    addr: SocketAddr,
    path: &str,
    token: &str,
    marker: &str,
    patience: Duration,
) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(patience))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Accept: text/event-stream\r\n\r\n"
    )?;
    let mut read = Vec::new();
    let mut buffer = [0_u8; 8192];
    loop {
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            return Err(std::io::Error::other(format!(
                "the stream ended before {marker:?}: {}",
                String::from_utf8_lossy(&read)
            )));
        }
        read.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&read);
        if text.contains(marker) {
            return Ok(text.into_owned());
        }
    }
}

/// A running `workmate serve` (or `workmate demo`), killed if the test fails before stopping it.
pub(crate) struct Server {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
    log: tempfile::NamedTempFile,
}

/// The lease holder name of the `workmate` processes started in `dir`.
fn replica_id(dir: &Path) -> String {
    let name = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    format!("test-{}", name.chars().rev().take(48).collect::<String>())
}

impl Server {
    /// Starts `workmate serve` in `dir` listening on a free port given through the environment.
    pub(crate) fn start(dir: &Path, args: &[&str]) -> Self {
        Self::start_with(dir, args, &[])
    }

    /// Like [`Server::start`], with extra environment variables.
    pub(crate) fn start_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(dir, "serve", args, env)
    }

    /// Starts `workmate demo` (the offline script plus the `/sandbox` page) in `dir`.
    pub(crate) fn start_demo(dir: &Path) -> Self {
        Self::spawn(dir, "demo", &[], &[])
    }

    fn spawn(dir: &Path, subcommand: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = workmate(dir)
            .arg(subcommand)
            .args(args)
            .env("WORKMATE__SERVER__LISTEN", addr.to_string())
            // The same name across restarts in one folder, as a pod keeps its name.
            .env("WORKMATE__SERVER__REPLICA_ID", replica_id(dir))
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .unwrap();
        let mut server = Self {
            child: Some(child),
            addr,
            log,
        };
        server.wait_until_up();
        server
    }

    /// Polls `/healthz` until it answers, for at most 10 s.
    fn wait_until_up(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if http_get(self.addr, "/healthz").is_ok() {
                return;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("workmate exited early with {status}: {}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "not up within 10 s: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Kills the process with SIGKILL, as a crash or an OOM kill would.
    pub(crate) fn crash(mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Waits for the process to die by itself (at a kill point), for at most 10 s.
    pub(crate) fn died(mut self) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "still running 10 s after its kill point: {}",
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and returns the exit status, failing if it takes longer than `limit`.
    pub(crate) fn terminate(mut self, limit: Duration) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        let pid = child.id();
        let sent = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {pid} failed");
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let _ = tx.send(());
            status
        });
        if rx.recv_timeout(limit).is_err() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("still running {limit:?} after SIGTERM: {}", self.log_text());
        }
        waiter.join().unwrap().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A fresh database on the test server named by `variable`. A test calling this is declared
/// with `needs!` (ignored when the variable was unset at build time), so
/// an unset variable or an unreachable server fails it.
pub(crate) fn fresh_database(variable: &str) -> String {
    let server_url = workmate_test_support::Backend::from_variable(variable).url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(workmate_store::test_support::fresh_database(&server_url))
        .unwrap()
}

/// The test Redis (`WORKMATE_TEST_REDIS_URL`) and a key prefix, under `what`, that no other run
/// uses. A test calling this is declared with `needs!`.
pub(crate) fn test_redis(what: &str) -> (String, String) {
    let url = workmate_test_support::Backend::Redis.url();
    let prefix = format!("wmtest:{what}:{}", uuid::Uuid::new_v4().simple());
    (url, prefix)
}

/// How long a test waits for something the app does (generous: two cores run many tests).
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

pub(crate) use workmate_test_support::{eventually, eventually_ok};

/// The session of a chat thread on `surface` in installation `installation`, if the chat layer
/// created it.
pub(crate) async fn thread_session(
    store: &workmate_store::Store,
    surface: workmate_protocol::Surface,
    installation: &str,
    chat: &str,
    thread: &str,
) -> Option<workmate_store::SessionRecord> {
    let key = workmate_store::SessionKey {
        surface,
        chat_id: chat.into(),
        thread_id: thread.into(),
    };
    let tenant = workmate_chat::tenant_of(surface, installation);
    store.sessions().find_by_key(&tenant, &key).await.unwrap()
}

/// Makes `platform_id` on `platform` an approver of `tenant` named `name` (as an admin would,
/// before they ever wrote); their user id.
pub(crate) async fn approver_on(
    store: &workmate_store::Store,
    tenant: &workmate_protocol::TenantId,
    platform: &str,
    platform_id: &str,
    name: &str,
) -> workmate_protocol::UserId {
    let id = workmate_protocol::UserId::from(format!("{platform}-{platform_id}"));
    let new = workmate_store::NewUser {
        id: id.clone(),
        display_name: name.into(),
        email: None,
        role: workmate_store::Role::Approver,
        sso_subject: None,
    };
    store.tenants().upsert_user(tenant, &new).await.unwrap();
    store
        .tenants()
        .bind_platform_identity(tenant, platform, platform_id, &id)
        .await
        .unwrap();
    id
}

/// Turns on separation of duties in `tenant` (creating it): nobody approves a command they
/// asked for themselves.
pub(crate) async fn separation_of_duties(
    store: &workmate_store::Store,
    tenant: &workmate_protocol::TenantId,
) {
    store.tenants().ensure(tenant, "Acme").await.unwrap();
    store
        .tenants()
        .set_settings(tenant, &serde_json::json!({"separation_of_duties": true}))
        .await
        .unwrap();
}

/// Where inbox item `item` of `tenant` stands now.
pub(crate) async fn inbox_state(
    store: &workmate_store::Store,
    tenant: &workmate_protocol::TenantId,
    item: &workmate_protocol::InboxItemId,
) -> workmate_store::InboxItemState {
    store
        .inbox()
        .get(tenant, item)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no inbox item {item}"))
        .state
}

/// The texts of the user messages of the conversation at `thread` of `chat`, once there are
/// `count`.
pub(crate) async fn texts_in(
    store: &workmate_store::Store,
    surface: workmate_protocol::Surface,
    installation: &str,
    chat: &str,
    thread: &str,
    count: usize,
) -> Vec<String> {
    let tenant = workmate_chat::tenant_of(surface, installation);
    eventually("the thread's messages", PATIENCE, || async {
        let session = thread_session(store, surface, installation, chat, thread).await?;
        let texts: Vec<String> = store
            .messages()
            .list(&tenant, &session.id)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                workmate_protocol::Message::User {
                    content: workmate_protocol::UserContent::Text(text),
                    ..
                } => Some(text),
                _ => None,
            })
            .collect();
        (texts.len() >= count).then_some(texts)
    })
    .await
}
