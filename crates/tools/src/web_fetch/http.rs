//! A minimal HTTP/1.1 GET over a connection to an already vetted socket address.
//!
//! Invariant: the connection goes to the address given (never a fresh DNS lookup), and memory is
//! bounded — headers to `MAX_HEADER_BYTES`, the body to the caller's limit.

use std::net::SocketAddr;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// A response, its body possibly cut at the limit.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) body_truncated: bool,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// GETs `target` (path and query) from `addr`, sending `host` as the Host header.
pub(crate) async fn get(
    addr: SocketAddr,
    host: &str,
    target: &str,
    max_body: usize,
) -> Result<Response, String> {
    if host.contains(['\r', '\n']) || target.contains(['\r', '\n', ' ']) {
        return Err("the URL contains characters that cannot be sent".to_owned());
    }
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: workmate/{}\r\nAccept: text/html, \
         text/plain, application/json;q=0.9, */*;q=0.5\r\nAccept-Encoding: identity\r\n\
         Connection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("sending the request: {e}"))?;
    let mut reader = BufReader::new(stream);

    let mut head = Vec::new();
    let mut limited = (&mut reader).take(MAX_HEADER_BYTES);
    loop {
        let before = head.len();
        let n = limited
            .read_until(b'\n', &mut head)
            .await
            .map_err(|e| format!("reading the response: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection before sending a full response".into());
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = parse_status(status_line)
        .ok_or_else(|| format!("not an HTTP response: '{}'", status_line.trim()))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
        body_truncated: false,
    };

    if status == 204 || status == 304 || (100..200).contains(&status) {
        return Ok(response);
    }
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let (body, truncated) = if chunked {
        read_chunked(&mut reader, max_body).await?
    } else {
        let length = response
            .header("content-length")
            .and_then(|v| v.parse::<u64>().ok());
        read_plain(&mut reader, length, max_body).await?
    };
    response.body = body;
    response.body_truncated = truncated;
    Ok(response)
}

fn parse_status(line: &str) -> Option<u16> {
    let mut parts = line.split_whitespace();
    let version = parts.next()?;
    if !version.starts_with("HTTP/1.") {
        return None;
    }
    parts.next()?.parse().ok()
}

async fn read_plain(
    reader: &mut (impl AsyncRead + Unpin),
    length: Option<u64>,
    max_body: usize,
) -> Result<(Vec<u8>, bool), String> {
    let cap = max_body as u64 + 1;
    let want = length.map_or(cap, |l| l.min(cap));
    let mut body = Vec::new();
    reader
        .take(want)
        .read_to_end(&mut body)
        .await
        .map_err(|e| format!("reading the body: {e}"))?;
    let truncated = body.len() > max_body;
    body.truncate(max_body);
    Ok((body, truncated))
}

async fn read_chunked(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    max_body: usize,
) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    loop {
        let mut size_line = Vec::new();
        (&mut *reader)
            .take(1024)
            .read_until(b'\n', &mut size_line)
            .await
            .map_err(|e| format!("reading the body: {e}"))?;
        let size_text = String::from_utf8_lossy(&size_line);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        if size_text.is_empty() {
            // The connection ended without the final chunk: keep what arrived.
            return Ok((body, false));
        }
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("malformed chunk size '{size_text}'"))?;
        if size == 0 {
            return Ok((body, false));
        }
        let room = max_body - body.len();
        let mut chunk = Vec::new();
        (&mut *reader)
            .take(size.min(room) as u64)
            .read_to_end(&mut chunk)
            .await
            .map_err(|e| format!("reading the body: {e}"))?;
        body.extend_from_slice(&chunk);
        if size > room {
            return Ok((body, true));
        }
        let mut crlf = Vec::new();
        (&mut *reader)
            .take(2)
            .read_to_end(&mut crlf)
            .await
            .map_err(|e| format!("reading the body: {e}"))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn decodes_chunked_bodies_and_caps_them() {
        let raw: &[u8] = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n";
        let (body, cut) = read_chunked(&mut BufReader::new(raw), 100).await.unwrap();
        assert_eq!((body.as_slice(), cut), (&b"Wikipedia"[..], false));
        let (body, cut) = read_chunked(&mut BufReader::new(raw), 6).await.unwrap();
        assert_eq!((body.as_slice(), cut), (&b"Wikipe"[..], true));
        assert!(
            read_chunked(&mut BufReader::new(&b"zz\r\n"[..]), 10)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn plain_bodies_respect_length_and_cap() {
        let (body, cut) = read_plain(&mut &b"hello world"[..], Some(5), 100)
            .await
            .unwrap();
        assert_eq!((body.as_slice(), cut), (&b"hello"[..], false));
        let (body, cut) = read_plain(&mut &b"hello world"[..], None, 4).await.unwrap();
        assert_eq!((body.as_slice(), cut), (&b"hell"[..], true));
    }

    #[test]
    fn status_lines() {
        assert_eq!(parse_status("HTTP/1.1 200 OK"), Some(200));
        assert_eq!(parse_status("HTTP/1.0 302"), Some(302));
        assert_eq!(parse_status("SSH-2.0-OpenSSH"), None);
        assert_eq!(parse_status(""), None);
    }
}
