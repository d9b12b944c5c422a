//! Output capture for `run_shell`.
//!
//! Invariant: memory per stream is bounded — only the last `TAIL_CHARS` characters survive, and a
//! cut is always announced in the rendered text.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

/// Characters kept of each stream.
pub(crate) const TAIL_CHARS: usize = 20_000;
/// Bytes kept: enough for `TAIL_CHARS` characters of any width.
const TAIL_BYTES: usize = TAIL_CHARS * 4;

/// The shared tail of one output stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tail {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    bytes: Vec<u8>,
    dropped: bool,
}

impl Tail {
    /// Reads `stream` to its end into the tail.
    pub(crate) async fn drain(self, stream: Option<impl AsyncRead + Unpin>) {
        let Some(mut stream) = stream else { return };
        let mut buf = vec![0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => self.push(&buf[..n]),
            }
        }
    }

    fn push(&self, chunk: &[u8]) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.bytes.extend_from_slice(chunk);
        if inner.bytes.len() > TAIL_BYTES {
            let excess = inner.bytes.len() - TAIL_BYTES;
            inner.bytes.drain(..excess);
            inner.dropped = true;
        }
    }

    /// The captured text: the last `TAIL_CHARS` characters, prefixed by a note when cut.
    pub(crate) fn render(&self) -> String {
        let Ok(inner) = self.inner.lock() else {
            return String::new();
        };
        let text = String::from_utf8_lossy(&inner.bytes);
        let count = text.chars().count();
        if count <= TAIL_CHARS && !inner.dropped {
            return text.into_owned();
        }
        let tail: String = text
            .chars()
            .skip(count.saturating_sub(TAIL_CHARS))
            .collect();
        format!("[… earlier output truncated; showing the last {TAIL_CHARS} characters]\n{tail}")
    }
}

/// What a stopped program had printed, for the error message (short).
pub(crate) fn partial_output(stdout: &Tail, stderr: &Tail) -> String {
    const SHOWN: usize = 2000;
    let mut out = String::new();
    for (name, tail) in [("stdout", stdout), ("stderr", stderr)] {
        let text = tail.render();
        if text.trim().is_empty() {
            continue;
        }
        let count = text.chars().count();
        let last: String = text.chars().skip(count.saturating_sub(SHOWN)).collect();
        out.push_str(&format!(
            "\n{name} so far (last {SHOWN} characters at most):\n{last}"
        ));
    }
    out
}

/// Kills a process group (best effort). `kill(1)` is used because the standard library has no
/// group kill and this crate forbids `unsafe`.
pub(crate) async fn kill_group(pgid: u32) {
    let killed = tokio::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .env_clear()
        .env("PATH", super::SAFE_PATH)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .status();
    let _ = tokio::time::timeout(std::time::Duration::from_millis(300), killed).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_tail_and_says_so() {
        let tail = Tail::default();
        tail.push(b"start ");
        assert_eq!(tail.render(), "start ");
        for _ in 0..(TAIL_BYTES / 10 + 10) {
            tail.push(b"0123456789");
        }
        tail.push(b"END");
        let text = tail.render();
        assert!(text.starts_with("[… earlier output truncated"));
        assert!(text.ends_with("789END"));
        assert!(!text.contains("start"));
        let body = text.split_once('\n').unwrap().1;
        assert_eq!(body.chars().count(), TAIL_CHARS);
    }
}
