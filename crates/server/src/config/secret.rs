//! The database URL as a secret.
//!
//! Invariant: the only way to see the password in a database URL is [`DatabaseUrl::expose`], which
//! is called where the URL is handed to the store; `Debug` and [`DatabaseUrl::redacted`] show `***`
//! in its place, both in the user-info part and in `password=` query parameters.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

/// Query parameters that carry a password in some drivers' URLs.
const PASSWORD_PARAMS: &[&str] = &["password", "sslpassword"];

/// Query parameters that carry a credential in an HTTP API's URL (Gemini's `key=`, say).
const CREDENTIAL_PARAMS: &[&str] = &[
    "password",
    "sslpassword",
    "key",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_token",
    "secret",
    "client_secret",
    "sig",
    "signature",
];

/// A database URL that may hold a password.
#[derive(Clone)]
pub struct DatabaseUrl(SecretString);

impl DatabaseUrl {
    pub(crate) fn new(url: String) -> Self {
        Self(SecretString::from(url))
    }

    /// The URL with its password, for connecting. Never log the result.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// The URL with any password replaced by `***`, safe to print and log.
    pub fn redacted(&self) -> String {
        redact(self.expose())
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DatabaseUrl")
            .field(&self.redacted())
            .finish()
    }
}

/// Replaces passwords in a URL with `***`, keeping the rest of the text as written.
pub(crate) fn redact(url: &str) -> String {
    redact_with(url, PASSWORD_PARAMS)
}

/// Replaces the credentials in an HTTP URL (user info, `key=`, `token=`, …) with `***`.
pub(crate) fn redact_credentials(url: &str) -> String {
    redact_with(url, CREDENTIAL_PARAMS)
}

fn redact_with(url: &str, params: &[&str]) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = redact_userinfo(base);
    if let Some(query) = query {
        out.push('?');
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((k, _)) if params.contains(&k.to_ascii_lowercase().as_str()) => {
                    format!("{k}=***")
                }
                _ => param.to_owned(),
            })
            .collect();
        out.push_str(&params.join("&"));
    }
    // A password holding characters the simple split above misreads (an unescaped `/`, say):
    // fall back to the URL parser's idea of it.
    if let Ok(mut parsed) = url::Url::parse(url)
        && let Some(password) = parsed.password().map(str::to_owned)
        && out.contains(&password)
        && parsed.set_password(Some("***")).is_ok()
    {
        return redact_with(parsed.as_str(), params);
    }
    out
}

fn redact_userinfo(base: &str) -> String {
    let Some((scheme, rest)) = base.split_once("://") else {
        return base.to_owned();
    };
    // The last `@` ends the user info even when the password holds an unescaped `/` or `@`; a
    // path containing `@` may then be over-redacted, which errs on the safe side.
    let Some((userinfo, host_and_path)) = rest.rsplit_once('@') else {
        return base.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host_and_path}"),
        None => base.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_replaced() {
        assert_eq!(
            redact("mysql://root:s3cret@db:3306/wm"),
            "mysql://root:***@db:3306/wm"
        );
        assert_eq!(
            redact("postgres://u@db/wm?sslmode=require&password=s3cret"),
            "postgres://u@db/wm?sslmode=require&password=***"
        );
        assert_eq!(
            redact("sqlite://./data/workmate.db"),
            "sqlite://./data/workmate.db"
        );
        assert_eq!(redact("postgres://u@db/wm"), "postgres://u@db/wm");
    }

    #[test]
    fn credentials_in_http_urls_are_replaced() {
        assert_eq!(
            redact_credentials("https://bot:hunter2@llm.internal/v1?key=AIza123&region=eu"),
            "https://bot:***@llm.internal/v1?key=***&region=eu"
        );
        assert_eq!(
            redact_credentials("https://llm.internal/v1"),
            "https://llm.internal/v1"
        );
    }

    #[test]
    fn awkward_passwords_never_survive() {
        for url in [
            "mysql://root:pa/ss@db/wm",
            "mysql://root:p@ss@db/wm",
            "mysql://root:p%40ss@db/wm",
        ] {
            let shown = redact(url);
            assert!(
                !shown.contains("pa/ss") && !shown.contains("p@ss") && !shown.contains("p%40ss"),
                "{shown}"
            );
        }
    }

    #[test]
    fn debug_does_not_show_the_password() {
        let url = DatabaseUrl::new("mysql://root:s3cret@db/wm".into());
        assert!(!format!("{url:?}").contains("s3cret"));
        assert_eq!(url.expose(), "mysql://root:s3cret@db/wm");
    }
}
