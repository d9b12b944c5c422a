//! Secret names: `platform/slack/bot_token`, `connector/github/token`,
//! `provider/openai/api_key`.
//!
//! Invariant: a [`SecretName`] is 1 to 191 bytes of path segments joined by `/`, each segment
//! made of lowercase ASCII letters, digits, `_`, `-` and `.`, never empty, never `.` or `..`;
//! so a name is safe in a log line, a URL path and a database key.

use std::fmt;

use crate::{Error, Result};

/// The longest name (it is part of a database key).
pub const MAX_NAME_LEN: usize = 191;

/// A validated secret name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretName(String);

impl SecretName {
    /// Checks `name` and keeps it.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = |reason| Error::InvalidName {
            name: name.chars().take(MAX_NAME_LEN).collect(),
            reason,
        };
        if name.is_empty() {
            return Err(bad("it is empty"));
        }
        if name.len() > MAX_NAME_LEN {
            return Err(bad("it is longer than 191 bytes"));
        }
        for segment in name.split('/') {
            if segment.is_empty() {
                return Err(bad(
                    "it has an empty segment (leading, trailing or double `/`)",
                ));
            }
            if segment == "." || segment == ".." {
                return Err(bad("a segment is `.` or `..`"));
            }
            let allowed = |c: char| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.')
            };
            if !segment.chars().all(allowed) {
                return Err(bad(
                    "use lowercase letters, digits, `_`, `-` and `.`, in segments joined by `/`",
                ));
            }
        }
        Ok(Self(name.to_owned()))
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SecretName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_documented_names_and_refuses_odd_ones() {
        for ok in [
            "platform/slack/bot_token",
            "connector/github/token",
            "provider/openai/api_key",
            "a",
            "x.y-z_1",
        ] {
            assert_eq!(SecretName::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            "/a",
            "a/",
            "a//b",
            "a/../b",
            "A/b",
            "a b",
            "a/b\n",
            "ünï",
            &"a".repeat(192),
        ] {
            assert!(SecretName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(SecretName::parse(&"a".repeat(191)).is_ok());
    }
}
