//! What every platform's configuration section (`[platforms.NAME]`) reads the same way: a
//! secret, a plain value, a `mode`, an `api_base` and a list of `admins`.
//!
//! Invariant: a blank value counts as unset; every rejection is a typed error whose message says
//! what is wrong and what to write instead, and each platform's error names the key it is about
//! through [`InvalidKey`]. Nothing here knows where a value came from (file, environment, flag)
//! or how to set it: the caller that does adds that.

use secrecy::SecretString;

/// What a rendered configuration shows instead of a secret.
pub const REDACTED: &str = "***";

/// A platform section's validation error: it knows the key it is about.
pub trait InvalidKey: std::error::Error {
    /// The offending key within the section (`mode`, `api_base`, …).
    fn key(&self) -> &'static str;
}

/// A `mode` that is not one of the platform's.
#[derive(Debug, thiserror::Error)]
#[error("`{given}` is not a {platform} mode; use {choices}")]
pub struct UnknownMode {
    /// The mode as written.
    pub given: String,
    /// The platform, as people write it ("Feishu").
    pub platform: &'static str,
    /// The accepted names, quoted and joined with "or".
    pub choices: String,
}

/// An `api_base`-like value that is not an http(s) URL.
#[derive(Debug, thiserror::Error)]
pub enum BadUrl {
    /// It does not parse.
    #[error("{value:?} is not a URL ({reason})")]
    NotAUrl {
        /// The value as written.
        value: String,
        /// Why it does not parse.
        reason: url::ParseError,
    },
    /// It parses but is not http:// or https://.
    #[error("{value:?} must be http:// or https://")]
    NotHttp {
        /// The value as written.
        value: String,
    },
}

/// An `admins` entry that cannot be a platform user id.
#[derive(Debug, thiserror::Error)]
#[error("{given:?} is not a user id (like \"{example}\")")]
pub struct BadAdminId {
    /// The entry, trimmed.
    pub given: String,
    /// What one of this platform's user ids looks like.
    pub example: &'static str,
}

/// A set, non-blank secret.
pub fn secret(value: Option<&str>) -> Option<SecretString> {
    plain(value).map(SecretString::from)
}

/// A set, non-blank value, trimmed.
pub fn plain(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// A secret as a rendered configuration shows it: [`REDACTED`] when set.
pub fn hidden(value: Option<&SecretString>) -> Option<String> {
    value.map(|_| REDACTED.to_owned())
}

/// A platform's `mode`: the first of `modes` when unset, else the one named.
pub fn mode_of<M: Copy>(
    platform: &'static str,
    raw: Option<&str>,
    modes: &[(&'static str, M)],
) -> Result<M, UnknownMode> {
    let wanted = raw.or_else(|| modes.first().map(|(name, _)| *name));
    if let Some((_, mode)) = modes.iter().find(|(name, _)| Some(*name) == wanted) {
        return Ok(*mode);
    }
    let choices: Vec<String> = modes
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    Err(UnknownMode {
        given: wanted.unwrap_or_default().to_owned(),
        platform,
        choices: choices.join(" or "),
    })
}

/// An `api_base`: an http(s) URL, or `default` when unset.
pub fn api_base(raw: Option<&str>, default: &str) -> Result<String, BadUrl> {
    let value = raw.unwrap_or(default).to_owned();
    match url::Url::parse(&value) {
        Err(reason) => Err(BadUrl::NotAUrl { value, reason }),
        Ok(parsed) if !matches!(parsed.scheme(), "http" | "https") => {
            Err(BadUrl::NotHttp { value })
        }
        Ok(_) => Ok(value),
    }
}

/// `admins`: platform user ids, trimmed, none blank or with spaces.
pub fn admin_ids(raw: Option<&[String]>, example: &'static str) -> Result<Vec<String>, BadAdminId> {
    let mut admins = Vec::new();
    for admin in raw.into_iter().flatten().map(|a| a.trim()) {
        if admin.is_empty() || admin.contains(char::is_whitespace) {
            return Err(BadAdminId {
                given: admin.to_owned(),
                example,
            });
        }
        admins.push(admin.to_owned());
    }
    Ok(admins)
}

#[cfg(test)]
mod tests {
    use secrecy::ExposeSecret;

    use super::*;

    #[test]
    fn blank_values_count_as_unset() {
        assert!(secret(Some("  ")).is_none());
        assert!(plain(None).is_none());
        let set = secret(Some(" s3cret ")).map(|s| s.expose_secret().to_owned());
        assert_eq!(set.as_deref(), Some("s3cret"));
    }

    #[test]
    fn mode_defaults_to_the_first_and_names_the_choices() {
        let modes = [("http", 1), ("socket", 2)];
        assert_eq!(mode_of("Slack", None, &modes).ok(), Some(1));
        assert_eq!(mode_of("Slack", Some("socket"), &modes).ok(), Some(2));
        let wrong = mode_of("Slack", Some("smoke"), &modes)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            wrong.as_deref(),
            Some("`smoke` is not a Slack mode; use \"http\" or \"socket\"")
        );
    }

    #[test]
    fn api_base_must_be_http() {
        assert_eq!(
            api_base(None, "https://x.test").ok().as_deref(),
            Some("https://x.test")
        );
        let ftp = api_base(Some("ftp://x.test"), "https://x.test").err();
        assert_eq!(
            ftp.map(|e| e.to_string()).as_deref(),
            Some("\"ftp://x.test\" must be http:// or https://")
        );
        assert!(matches!(
            api_base(Some("not a url"), "https://x.test"),
            Err(BadUrl::NotAUrl { .. })
        ));
    }

    #[test]
    fn admins_are_trimmed_ids() {
        let ok = admin_ids(Some(&[" U1 ".to_owned()]), "U0123ABCD");
        assert_eq!(ok.ok(), Some(vec!["U1".to_owned()]));
        let bad = admin_ids(Some(&["a b".to_owned()]), "U0123ABCD").err();
        assert_eq!(
            bad.map(|e| e.to_string()).as_deref(),
            Some("\"a b\" is not a user id (like \"U0123ABCD\")")
        );
    }
}
