//! Reading an answer's body without letting the other side decide how much memory it takes.
//!
//! Invariant: at most the cap (plus one chunk's worth of what is already in flight, dropped at
//! once) is ever held; the rest is never downloaded.

use crate::error::{EgressError, EgressErrorKind, origin};

/// A body read up to a cap.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The bytes kept.
    pub bytes: Vec<u8>,
    /// Whether the body went on past the cap.
    pub truncated: bool,
}

/// The body of `response`, cut at `max` bytes.
pub async fn read_capped(response: reqwest::Response, max: usize) -> Result<Capped, EgressError> {
    let url = response.url().clone();
    let mut response = response;
    let mut body = Capped::default();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| EgressError::from_reqwest(&url, &e))?
    {
        let room = max - body.bytes.len();
        if chunk.len() > room {
            body.bytes.extend_from_slice(&chunk[..room]);
            body.truncated = true;
            break;
        }
        body.bytes.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The whole body of `response`, or an error when it is larger than `max` bytes.
pub async fn read_within(response: reqwest::Response, max: usize) -> Result<Vec<u8>, EgressError> {
    let url = response.url().clone();
    let body = read_capped(response, max).await?;
    if body.truncated {
        return Err(EgressError::new(
            EgressErrorKind::TooLarge,
            format!(
                "{} answered with more than {} KiB, which is more than workmate reads",
                origin(&url),
                max / 1024
            ),
        ));
    }
    Ok(body.bytes)
}
