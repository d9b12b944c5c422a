//! The callback URL's query string: `msg_signature`, `timestamp`, `nonce`, and on URL
//! verification `echostr`.
//!
//! Invariant: values are percent-decoded and nothing else. `echostr` is base64, whose `+` and `/`
//! WeCom sends as `%2B` and `%2F`; a literal `+` stays a `+` (form decoding would turn it into a
//! space and break the signature).

use std::str::FromStr;

use super::CallbackError;

/// The parameters WeCom puts on every callback request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// `msg_signature`: SHA-1 over the token, `timestamp`, `nonce` and the ciphertext.
    pub msg_signature: String,
    /// `timestamp`, as sent.
    pub timestamp: String,
    /// `nonce`, as sent.
    pub nonce: String,
    /// `echostr`: the ciphertext to decrypt and answer on URL verification (`GET`).
    pub echostr: Option<String>,
}

/// How far a callback's `timestamp` may be from the clock, either way.
pub(crate) const MAX_AGE_S: u64 = 300;

impl Query {
    /// Whether the callback's `timestamp` is within [`MAX_AGE_S`] of `now` (Unix seconds): an
    /// older one is a replay of something captured, refused even when its signature holds.
    pub fn is_fresh(&self, now: u64) -> bool {
        self.timestamp
            .trim()
            .parse::<u64>()
            .is_ok_and(|at| at.abs_diff(now) <= MAX_AGE_S)
    }

    /// Reads a raw query string (with or without its leading `?`). Parameters other than the
    /// four are ignored; each of the four may appear once, and the first three must be there.
    pub fn parse(raw: &str) -> Result<Self, CallbackError> {
        let raw = raw.strip_prefix('?').unwrap_or(raw);
        let mut msg_signature = None;
        let mut timestamp = None;
        let mut nonce = None;
        let mut echostr = None;
        for pair in raw.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let slot = match percent_decode(key)?.as_str() {
                "msg_signature" => &mut msg_signature,
                "timestamp" => &mut timestamp,
                "nonce" => &mut nonce,
                "echostr" => &mut echostr,
                _ => continue,
            };
            if slot.is_some() {
                return Err(CallbackError::BadQuery(format!(
                    "{key} appears twice in the query"
                )));
            }
            *slot = Some(percent_decode(value)?);
        }
        let required = |value: Option<String>, name: &str| {
            value.filter(|v| !v.is_empty()).ok_or_else(|| {
                CallbackError::BadQuery(format!(
                    "{name} is missing (WeCom sends msg_signature, timestamp and nonce on every \
                     callback; is the URL configured in WeCom this one?)"
                ))
            })
        };
        Ok(Self {
            msg_signature: required(msg_signature, "msg_signature")?,
            timestamp: required(timestamp, "timestamp")?,
            nonce: required(nonce, "nonce")?,
            echostr,
        })
    }
}

impl FromStr for Query {
    type Err = CallbackError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        Self::parse(raw)
    }
}

/// `%XX` escapes decoded; a `%` not followed by two hex digits stays as it is, and `+` stays `+`.
fn percent_decode(text: &str) -> Result<String, CallbackError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escaped = match (b, bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&hi), Some(&lo)) => hex(hi).zip(hex(lo)).map(|(hi, lo)| hi << 4 | lo),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out)
        .map_err(|_| CallbackError::BadQuery(format!("{text:?} is not UTF-8 once percent-decoded")))
}

/// A hex digit's value.
fn hex(digit: u8) -> Option<u8> {
    char::from(digit)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn percent_escapes_decode_and_plus_stays() {
        assert_eq!(percent_decode("a%2Bb%2fc%3D%3D").unwrap(), "a+b/c==");
        assert_eq!(percent_decode("a+b").unwrap(), "a+b");
        assert_eq!(percent_decode("100%").unwrap(), "100%");
        assert_eq!(percent_decode("%zz%4").unwrap(), "%zz%4");
        assert_eq!(percent_decode("%E4%B8%AD").unwrap(), "中");
        assert!(percent_decode("%FF").is_err());
    }
}
