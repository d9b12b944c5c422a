//! One live connection to one server: a stdio program started in the exec sandbox, or a
//! streamable HTTP endpoint.
//!
//! Invariants: a stdio server's process never outlives its connection (dropping the connection
//! kills it, and the sandbox ends everything it started); its stderr is kept only as a short
//! tail beside the error, never in it (errors reach members and models; the tail only admins);
//! an http server is reached only through the guarded egress; every request has a deadline.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::NotificationContext;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use tokio::io::AsyncBufReadExt;
use workmate_tools::Root;

use crate::definition::{ServerDef, Transport};
use crate::server::Launcher;

/// How long starting a server (and its `initialize` handshake) may take.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of a server's stderr kept, for admins, when it dies.
const STDERR_TAIL_CHARS: usize = 1_500;

/// A connected server.
#[derive(Debug)]
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// Set when the server said its tools changed (`notifications/tools/list_changed`).
    tools_changed: Arc<AtomicBool>,
    /// The stdio server's process (killed on drop).
    child: Mutex<Option<tokio::process::Child>>,
    pid: Option<u32>,
    /// Its tools, as listed when it connected.
    pub(crate) tools: Vec<rmcp::model::Tool>,
}

/// A definition with its `${secret:…}` references replaced by their values.
#[derive(Debug)]
pub(crate) struct Resolved<'a> {
    pub(crate) def: &'a ServerDef,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) headers: HashMap<String, String>,
    /// http: the person's access token, sent as `Authorization: Bearer`.
    pub(crate) bearer: Option<String>,
    /// stdio: where the tail of what it writes to stderr is kept.
    pub(crate) stderr: Arc<Mutex<String>>,
}

/// What workmate tells a server about itself, and how it takes the server's notifications.
#[derive(Clone, Debug, Default)]
struct Handler {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("workmate", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.store(true, Ordering::Release);
        std::future::ready(())
    }
}

impl Connection {
    /// Starts (or reaches) the server and lists its tools.
    pub(crate) async fn open(server: &Resolved<'_>, launcher: &Launcher) -> Result<Self, String> {
        match server.def.transport().map_err(|e| e.to_string())? {
            Transport::Stdio { command } => Self::spawn(server, command, launcher).await,
            Transport::Http { url } => Self::reach(server, url, &launcher.sessions).await,
        }
    }

    async fn spawn(
        server: &Resolved<'_>,
        command: &str,
        launcher: &Launcher,
    ) -> Result<Self, String> {
        let def = server.def;
        // Checked again at every start: the operator's roots may have changed since the
        // definition was stored.
        let folders: Vec<Root> = launcher
            .folders
            .admit_all(&def.folders)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|f| Root {
                path: f.path,
                writable: f.writable,
            })
            .collect();
        let mut argv = vec![command.to_owned()];
        argv.extend(def.args.iter().cloned());
        let mut cmd = launcher
            .sandbox
            .server_command(&folders, &argv, &server.env, def.network)
            .await?;
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {command}: {e}"))?;
        let pid = child.id();
        server
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        if let Some(pipe) = child.stderr.take() {
            tokio::spawn(keep_tail(pipe, Arc::clone(&server.stderr)));
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err("cannot reach the server's stdin and stdout".into());
        };
        let handler = Handler::default();
        let started =
            tokio::time::timeout(START_TIMEOUT, handler.clone().serve((stdout, stdin))).await;
        let service = match started {
            Ok(Ok(service)) => service,
            failed => {
                let why = match failed {
                    Err(_) => format!(
                        "it did not answer initialize within {}s",
                        START_TIMEOUT.as_secs()
                    ),
                    Ok(Err(e)) => format!("initialize failed: {e}"),
                    Ok(Ok(_)) => String::new(),
                };
                let _ = child.start_kill();
                // The process has ended or is ending: let its last words reach the tail.
                let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(why);
            }
        };
        let mut connection = Self {
            service,
            tools_changed: handler.tools_changed,
            child: Mutex::new(Some(child)),
            pid,
            tools: Vec::new(),
        };
        connection.tools = connection.list_tools().await?;
        Ok(connection)
    }

    async fn reach(
        server: &Resolved<'_>,
        url: &str,
        egress: &workmate_net::Egress,
    ) -> Result<Self, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        let client = egress.client_for(&parsed).map_err(|e| e.to_string())?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        for (name, value) in &server.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| format!("header {name}: {e}"))?;
            let value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header {name} is not valid in HTTP"))?;
            config.custom_headers.insert(name, value);
        }
        config.auth_header = server.bearer.clone();
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let handler = Handler::default();
        let service = tokio::time::timeout(START_TIMEOUT, handler.clone().serve(transport))
            .await
            .map_err(|_| {
                format!(
                    "{url} did not answer initialize within {}s",
                    START_TIMEOUT.as_secs()
                )
            })?
            .map_err(|e| format!("initialize at {url} failed: {e}"))?;
        let mut connection = Self {
            service,
            tools_changed: handler.tools_changed,
            child: Mutex::new(None),
            pid: None,
            tools: Vec::new(),
        };
        connection.tools = connection.list_tools().await?;
        Ok(connection)
    }

    /// The server's tools listed again if it said they changed since they were last listed.
    pub(crate) async fn changed_tools(&self) -> Option<Result<Vec<rmcp::model::Tool>, String>> {
        if !self.tools_changed.swap(false, Ordering::AcqRel) {
            return None;
        }
        Some(self.list_tools().await)
    }

    async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        tokio::time::timeout(START_TIMEOUT, self.service.list_all_tools())
            .await
            .map_err(|_| {
                format!(
                    "tools/list did not answer within {}s",
                    START_TIMEOUT.as_secs()
                )
            })?
            .map_err(|e| format!("tools/list failed: {e}"))
    }

    /// Calls `tool`, waiting at most `timeout`.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match tokio::time::timeout(timeout, self.service.call_tool(params)).await {
            Err(_) => Err(CallError::Timeout(timeout)),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(rmcp::ServiceError::McpError(e))) => {
                Err(CallError::Refused(e.message.to_string()))
            }
            Ok(Err(e)) => Err(CallError::Broken(e.to_string())),
        }
    }

    /// Whether the connection is gone (the process ended, the transport closed).
    pub(crate) fn is_closed(&self) -> bool {
        if self.service.is_transport_closed() || self.service.is_closed() {
            return true;
        }
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        child
            .as_mut()
            .is_some_and(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// The stdio server's process id (on the host).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let child = self
            .child
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(child) = child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

/// Why a call failed.
#[derive(Debug)]
pub(crate) enum CallError {
    /// No answer in time.
    Timeout(Duration),
    /// The server answered with a protocol error (an unknown tool, invalid arguments).
    Refused(String),
    /// The connection broke: the server crashed or went away.
    Broken(String),
}

/// Keeps the last characters a server writes to stderr.
async fn keep_tail(pipe: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    let mut lines = tokio::io::BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut tail = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !tail.is_empty() {
            tail.push('\n');
        }
        tail.push_str(&line);
        let excess = tail.chars().count().saturating_sub(STDERR_TAIL_CHARS);
        if excess > 0 {
            let cut = tail
                .char_indices()
                .nth(excess)
                .map_or(tail.len(), |(i, _)| i);
            tail.drain(..cut);
        }
    }
}
