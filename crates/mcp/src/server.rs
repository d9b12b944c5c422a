//! One registered server of one tenant, and its connection's life: started on first use,
//! restarted with backoff when it crashes.
//!
//! Invariants: at most one connection per server is being opened at a time; a server that failed
//! is not started again before its backoff (1 s, doubling to 60 s; reset once a connection has
//! stayed up a minute) has passed, and calls meanwhile fail at once with why and when it comes
//! back; a stdio server that was in use is restarted by its supervisor without waiting for a
//! call; nothing outlives its `Server` (the supervisor ends, the connection's process is killed).

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use workmate_protocol::{TenantId, UserId};
use workmate_tools::ShellSandbox;

use crate::folders::FolderPolicy;

use crate::client::{CallError, Connection, Resolved};
use crate::definition::{ServerDef, Transport};
use crate::secrets::Secrets;

/// The first wait before a failed server is started again.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How long a connection must stay up for its failures to be forgotten.
const STABLE: Duration = Duration::from_secs(60);
/// How often the supervisor looks at a stdio server.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// What a server needs to (re)start.
#[derive(Debug)]
pub(crate) struct Launcher {
    pub(crate) sandbox: ShellSandbox,
    pub(crate) secrets: Secrets,
    /// What authorization servers are reached through (each call with a deadline).
    pub(crate) egress: workmate_net::Egress,
    /// What http servers' sessions are reached through (no overall deadline).
    pub(crate) sessions: workmate_net::Egress,
    /// Which host folders stdio servers may see.
    pub(crate) folders: FolderPolicy,
}

/// A registered server.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) tenant: TenantId,
    pub(crate) name: String,
    /// The person it is connected as, for a server people sign in to.
    pub(crate) user: Option<UserId>,
    pub(crate) def: ServerDef,
    launcher: Arc<Launcher>,
    state: tokio::sync::Mutex<State>,
    /// The tail of what the stdio server last wrote to stderr.
    stderr: Arc<std::sync::Mutex<String>>,
}

#[derive(Debug, Default)]
struct State {
    connection: Option<Arc<Connection>>,
    /// The tools of the last connection, kept while it is down.
    tools: Option<Vec<rmcp::model::Tool>>,
    connected_at: Option<Instant>,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<String>,
    restarts: u32,
    /// Whether something used it (only then is it restarted unasked).
    wanted: bool,
}

/// What a server is doing, for `/workmate mcp list`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ServerState {
    /// `connected`, `down` or `not started`.
    pub status: &'static str,
    /// Its process id on the host, for a running stdio server.
    pub pid: Option<u32>,
    /// Tools it lists (as last seen), when it has connected once.
    pub tools: Option<usize>,
    /// Why it last failed.
    pub last_error: Option<String>,
    /// The end of what the stdio server last wrote to stderr, capped and redacted: for admins
    /// only (it can echo anything the server read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// How often it was restarted after a failure.
    pub restarts: u32,
    /// Seconds until it is started again, while it is down.
    pub retry_in_s: Option<u64>,
}

impl Server {
    pub(crate) fn new(
        tenant: TenantId,
        name: String,
        user: Option<UserId>,
        def: ServerDef,
        launcher: Arc<Launcher>,
    ) -> Arc<Self> {
        let stdio = matches!(def.transport(), Ok(Transport::Stdio { .. }));
        let server = Arc::new(Self {
            tenant,
            name,
            user,
            def,
            launcher,
            state: tokio::sync::Mutex::default(),
            stderr: Arc::default(),
        });
        if stdio {
            tokio::spawn(supervise(Arc::downgrade(&server)));
        }
        server
    }

    /// The live connection, started (or restarted) if needed and allowed.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut state = self.state.lock().await;
        state.wanted = true;
        self.connect_locked(&mut state).await
    }

    async fn connect_locked(&self, state: &mut State) -> Result<Arc<Connection>, String> {
        if let Some(connection) = &state.connection {
            if !connection.is_closed() {
                return Ok(Arc::clone(connection));
            }
            self.note_failure(
                state,
                "it stopped (crashed or closed the connection)".into(),
            );
        }
        if let Some(at) = state.retry_at
            && at > Instant::now()
        {
            let wait = at
                .saturating_duration_since(Instant::now())
                .as_secs()
                .max(1);
            let why = state.last_error.as_deref().unwrap_or("it failed");
            return Err(format!(
                "it is down ({why}); it is started again in {wait} s"
            ));
        }
        let restarting = state.failures > 0;
        let opened = match self.launcher.secrets.resolve(&self.tenant, &self.def).await {
            Ok((env, headers)) => {
                let mut resolved = Resolved {
                    def: &self.def,
                    env,
                    headers,
                    bearer: None,
                    stderr: Arc::clone(&self.stderr),
                };
                self.open(&mut resolved).await
            }
            Err(e) => Err(e),
        };
        match opened {
            Ok(connection) => {
                let connection = Arc::new(connection);
                state.tools = Some(connection.tools.clone());
                state.connection = Some(Arc::clone(&connection));
                state.connected_at = Some(Instant::now());
                state.retry_at = None;
                if restarting {
                    state.restarts += 1;
                }
                tracing::info!(tenant = %self.tenant, server = %self.name, pid = connection.pid(), tools = connection.tools.len(), "MCP server connected.");
                Ok(connection)
            }
            Err(error) => {
                self.note_failure(state, error.clone());
                Err(error)
            }
        }
    }

    /// Opens a connection; to a server people sign in to, with the person's token (renewed
    /// once if the server no longer takes it).
    async fn open(&self, resolved: &mut Resolved<'_>) -> Result<Connection, String> {
        let launcher = &*self.launcher;
        let Some(user) = self.user.as_ref().filter(|_| self.def.oauth.is_some()) else {
            return Connection::open(resolved, launcher).await;
        };
        let again = format!("sign in with /workmate mcp connect {}", self.name);
        let grant = self
            .launcher
            .grant(&self.tenant, user, &self.name)
            .await?
            .ok_or_else(|| format!("{user} has not signed in to it: {again}"))?;
        resolved.bearer = Some(grant.token.clone());
        match Connection::open(resolved, launcher).await {
            Err(e) if refuses_the_token(&e) => {
                let fresh = self
                    .launcher
                    .refreshed(&self.tenant, user, &self.name, &self.def, &grant)
                    .await?;
                let Some(token) = fresh else {
                    return Err(format!("it no longer takes {user}'s sign-in: {again}"));
                };
                resolved.bearer = Some(token);
                Connection::open(resolved, launcher).await
            }
            other => other,
        }
    }

    fn note_failure(&self, state: &mut State, error: String) {
        if state.connected_at.is_some_and(|at| at.elapsed() >= STABLE) {
            state.failures = 0;
        }
        state.connection = None;
        state.connected_at = None;
        state.failures += 1;
        let backoff = FIRST_BACKOFF
            .saturating_mul(1 << (state.failures - 1).min(6))
            .min(MAX_BACKOFF);
        state.retry_at = Some(Instant::now() + backoff);
        tracing::warn!(tenant = %self.tenant, server = %self.name, failures = state.failures, retry_in_s = backoff.as_secs(), %error, "MCP server failed.");
        state.last_error = Some(error);
    }

    /// The tools to offer: the live connection's (listed again when the server said they
    /// changed), else the last ones seen (calls then say the server is down), else a first
    /// connection's.
    pub(crate) async fn tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        let mut state = self.state.lock().await;
        let live = state.connection.clone().filter(|c| !c.is_closed());
        if let Some(connection) = live
            && let Some(relisted) = connection.changed_tools().await
        {
            match relisted {
                Ok(tools) => {
                    tracing::info!(tenant = %self.tenant, server = %self.name, tools = tools.len(), "MCP server's tools changed; listed again.");
                    state.tools = Some(tools);
                }
                Err(e) => {
                    tracing::warn!(tenant = %self.tenant, server = %self.name, error = %e, "MCP server said its tools changed but cannot list them; the last ones stay.");
                }
            }
        }
        if let Some(tools) = &state.tools {
            return Ok(tools.clone());
        }
        state.wanted = true;
        self.connect_locked(&mut state)
            .await
            .map(|c| c.tools.clone())
    }

    /// Calls `tool`; a broken connection counts as a failure (the next use restarts it after
    /// the backoff).
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<rmcp::model::CallToolResult, String> {
        let connection = self.connection().await?;
        match connection.call(tool, arguments, self.def.timeout()).await {
            Ok(result) => Ok(result),
            Err(CallError::Timeout(after)) => Err(format!(
                "{tool} did not answer within {} s (timeout_seconds of the server)",
                after.as_secs()
            )),
            Err(CallError::Refused(message)) => Err(message),
            Err(CallError::Broken(why)) => {
                let mut state = self.state.lock().await;
                if state
                    .connection
                    .as_ref()
                    .is_some_and(|c| Arc::ptr_eq(c, &connection))
                {
                    self.note_failure(&mut state, why.clone());
                }
                Err(format!("the connection broke: {why}"))
            }
        }
    }

    /// What it is doing now.
    pub(crate) async fn state(&self) -> ServerState {
        let state = self.state.lock().await;
        let live = state.connection.as_ref().filter(|c| !c.is_closed());
        let now = Instant::now();
        ServerState {
            status: match (live, state.retry_at) {
                (Some(_), _) => "connected",
                (None, Some(_)) => "down",
                (None, None) => "not started",
            },
            pid: live.and_then(|c| c.pid()),
            tools: state.tools.as_ref().map(Vec::len),
            last_error: state.last_error.clone(),
            stderr: self.stderr_tail(),
            restarts: state.restarts,
            retry_in_s: state
                .retry_at
                .filter(|_| live.is_none())
                .map(|at| at.saturating_duration_since(now).as_secs()),
        }
    }
}

impl Server {
    /// What the server last wrote to stderr, redacted, if anything.
    fn stderr_tail(&self) -> Option<String> {
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let tail = tail.trim();
        (!tail.is_empty()).then(|| workmate_dlp::global().text(tail).value.into_owned())
    }
}

/// Whether opening failed because the server wants another token (HTTP 401).
fn refuses_the_token(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    error.contains("auth required")
        || error.contains("authorization required")
        || error.contains("401")
}

/// Restarts a stdio server that was in use when it stops, after its backoff. Ends with the server.
async fn supervise(server: Weak<Server>) {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let Some(server) = server.upgrade() else {
            return;
        };
        let mut state = server.state.lock().await;
        if !state.wanted {
            continue;
        }
        let down = state.connection.as_ref().is_none_or(|c| c.is_closed());
        let due = state.retry_at.is_none_or(|at| at <= Instant::now());
        if down && due {
            // Errors are recorded in the state (and logged); the next round tries again.
            let _ = server.connect_locked(&mut state).await;
        } else if down && state.connection.is_some() {
            server.note_failure(
                &mut state,
                "it stopped (crashed or closed the connection)".into(),
            );
        }
    }
}
