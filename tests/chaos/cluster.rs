//! Three `workmate serve` replicas on one database and one Redis: each with a folder and a
//! replica id of its own, kept across restarts (as a pod keeps its name and volume), and the
//! logs of every process it ran.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::slack::SECRET;
use crate::crash::scripted;
use crate::kill::recovered_at_start;
use crate::support::Server;

/// `[coordinator] session_lease_ms`: a dead replica's sessions are free after this long.
pub(crate) const SESSION_LEASE_MS: u64 = 3000;

/// A model that, for each user message, runs one counting command (which appends its marker,
/// the turn's index, to `count.txt` in the session's folder) and then streams its answer; three
/// rounds, so a run told to carry on after a restart has turns left.
fn script(dir: &Path) -> Vec<(String, String)> {
    let turns: Vec<Value> = (0..3)
        .flat_map(|round| {
            let command = format!("sh -c 'echo m{} >> count.txt; sleep 1'", round * 2);
            let call = json!({"text": "Counting.", "chunk_delay_ms": 10, "tool_calls": [
                {"name": "run_shell", "arguments": {"command": command}}]});
            let answer =
                json!({"text": "Counted, all of it, nothing left.", "chunk_delay_ms": 100});
            [call, answer]
        })
        .collect();
    scripted(
        dir,
        &json!({"conversations": [{"when": "*", "turns": turns}]}),
    )
}

/// One replica: its folder, its settings and the process running now, if any.
pub(crate) struct Replica {
    pub(crate) name: String,
    pub(crate) dir: tempfile::TempDir,
    env: Vec<(String, String)>,
    pub(crate) server: Option<Server>,
    /// The logs of the processes it ran before this one.
    pub(crate) past_logs: String,
    pub(crate) starts: usize,
}

impl Replica {
    fn start(&mut self) {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        self.server = Some(Server::start_with(self.dir.path(), &[], &env));
        self.starts += 1;
    }

    fn keep_log(&mut self, server: &Server, how: &str) {
        self.past_logs.push_str(&format!(
            "===== {} process {} ({how}) =====\n{}",
            self.name,
            self.starts,
            server.log_text()
        ));
    }

    /// Every log line of every process so far.
    pub(crate) fn logs(&self) -> String {
        let current = self.server.as_ref().map(Server::log_text);
        format!("{}{}", self.past_logs, current.unwrap_or_default())
    }
}

/// Where the replicas meet.
pub(crate) struct Shared<'a> {
    pub(crate) database: &'a str,
    pub(crate) redis: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) slack_api: &'a str,
}

pub(crate) struct Cluster {
    pub(crate) replicas: Vec<Replica>,
    /// Turns the processes took up after a kill, by how (from their metrics, read just before
    /// each process was killed or stopped).
    pub(crate) recovered: BTreeMap<String, u64>,
}

impl Cluster {
    /// Starts `count` replicas, one after the other (the first migrates the database).
    pub(crate) fn start(count: usize, shared: &Shared<'_>) -> Self {
        let replicas = (0..count)
            .map(|index| {
                let dir = tempfile::tempdir().unwrap();
                let name = format!("replica-{index}");
                let mut env = script(dir.path());
                let lease = SESSION_LEASE_MS.to_string();
                for (key, value) in [
                    ("WORKMATE__DATABASE__URL", shared.database),
                    ("WORKMATE__COORDINATOR__REDIS_URL", shared.redis),
                    ("WORKMATE__COORDINATOR__KEY_PREFIX", shared.prefix),
                    ("WORKMATE__COORDINATOR__SESSION_LEASE_MS", &lease),
                    ("WORKMATE__SERVER__REPLICA_ID", &name),
                    ("WORKMATE__SERVER__SHUTDOWN_GRACE_MS", "3000"),
                    ("WORKMATE__SCHEDULER__TICK_SECONDS", "1"),
                    ("WORKMATE__PLATFORMS__SLACK__SIGNING_SECRET", SECRET),
                    ("WORKMATE__PLATFORMS__SLACK__BOT_TOKEN", "xoxb-chaos"),
                    ("WORKMATE__PLATFORMS__SLACK__API_BASE", shared.slack_api),
                ] {
                    env.push((key.to_owned(), value.to_owned()));
                }
                Replica {
                    name,
                    dir,
                    env,
                    server: None,
                    past_logs: String::new(),
                    starts: 0,
                }
            })
            .collect();
        let mut cluster = Self {
            replicas,
            recovered: BTreeMap::new(),
        };
        for index in 0..count {
            cluster.replicas[index].start();
        }
        cluster
    }

    /// The replicas running now.
    pub(crate) fn up(&self) -> Vec<usize> {
        (0..self.replicas.len())
            .filter(|&i| self.replicas[i].server.is_some())
            .collect()
    }

    pub(crate) fn server(&self, index: usize) -> Option<&Server> {
        self.replicas[index].server.as_ref()
    }

    /// SIGKILL.
    pub(crate) fn kill(&mut self, index: usize) {
        let replica = &mut self.replicas[index];
        if let Some(server) = replica.server.take() {
            recovered_at_start(&server, &mut self.recovered);
            replica.keep_log(&server, "killed with SIGKILL");
            server.crash();
        }
    }

    /// Starts the replica again, on the same folder and replica id.
    pub(crate) fn restart(&mut self, index: usize) {
        if self.replicas[index].server.is_none() {
            self.replicas[index].start();
        }
    }

    /// SIGTERM to every replica, in turn; the exit codes.
    pub(crate) fn stop_all(&mut self) -> Vec<Option<i32>> {
        let mut codes = Vec::new();
        for replica in &mut self.replicas {
            if let Some(server) = replica.server.take() {
                recovered_at_start(&server, &mut self.recovered);
                let log = server.log_text();
                let code = server.terminate(Duration::from_secs(20)).code();
                replica.past_logs.push_str(&format!(
                    "===== {} process {} (stopped, exit {code:?}) =====\n{log}",
                    replica.name, replica.starts
                ));
                codes.push(code);
            }
        }
        codes
    }

    pub(crate) fn start_all(&mut self) {
        for index in 0..self.replicas.len() {
            self.restart(index);
        }
    }

    /// The folders the replicas keep session workspaces in.
    pub(crate) fn workspaces(&self) -> Vec<std::path::PathBuf> {
        self.replicas
            .iter()
            .map(|r| r.dir.path().join("workspaces"))
            .collect()
    }

    /// Log lines of every replica that mention any of `needles`, at most `limit` per replica.
    pub(crate) fn lines_about(&self, needles: &[String], limit: usize) -> String {
        let mut out = String::new();
        for replica in &self.replicas {
            let logs = replica.logs();
            let lines: Vec<&str> = logs
                .lines()
                .filter(|l| l.starts_with("=====") || needles.iter().any(|n| l.contains(n)))
                .collect();
            let start = lines.len().saturating_sub(limit);
            out.push_str(&format!(
                "--- {}:\n{}\n",
                replica.name,
                lines[start..].join("\n")
            ));
        }
        out
    }

    /// Writes every replica's full logs to files in a folder that outlives the test; its path.
    pub(crate) fn save_logs(&self, seed: u64) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("workmate-chaos-{seed}"));
        std::fs::create_dir_all(&dir).unwrap();
        for replica in &self.replicas {
            std::fs::write(dir.join(format!("{}.log", replica.name)), replica.logs()).unwrap();
        }
        dir
    }
}
