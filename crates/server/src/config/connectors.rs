//! `[connectors]`: where people's browsers reach workmate's connect pages, and the OAuth clients
//! connectors sign people in with (`[connectors.oauth.<connector>]`).
//!
//! Invariants: `public_url` is an http(s) origin; an OAuth client names a connector workmate
//! ships, has an id and a secret, and endpoints that are https URLs (Google's and Feishu's are
//! known, so their connectors need only the id and secret); the secret renders as `***`.

use std::collections::BTreeMap;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use url::Url;

use super::ConfigError;

/// `[connectors]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConnectors {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) public_url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) oauth: BTreeMap<String, RawOAuth>,
}

impl RawConnectors {
    pub(crate) fn is_empty(&self) -> bool {
        self.public_url.is_none() && self.oauth.is_empty()
    }
}

/// `[connectors.oauth.<connector>]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) authorize_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) token_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scopes: Option<Vec<String>>,
}

/// One connector's OAuth client.
#[derive(Clone, Debug)]
pub struct OAuthClientConfig {
    /// The connector it signs people in for (`gmail`).
    pub connector: String,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`.
    pub client_secret: SecretString,
    /// `authorize_url` (known for Google's and Feishu's connectors).
    pub authorize_url: Url,
    /// `token_url` (known for Google's and Feishu's connectors).
    pub token_url: Url,
    /// `scopes` (known for Google's and Feishu's connectors).
    pub scopes: Vec<String>,
    /// More parameters of the authorization request (Google's `access_type=offline`).
    pub extra_params: Vec<(String, String)>,
}

/// `[connectors]`.
#[derive(Clone, Debug, Default)]
pub struct ConnectorsConfig {
    /// `public_url`: the origin browsers reach workmate at, for connect links (default: that
    /// of `[auth.oidc] redirect_url`, else `http://<listen address>`).
    pub public_url: Option<Url>,
    /// `[connectors.oauth.*]`, by connector.
    pub oauth: Vec<OAuthClientConfig>,
}

/// The endpoints, scopes and parameters a connector's provider is known to use.
struct Known {
    authorize_url: &'static str,
    token_url: &'static str,
    scopes: &'static [&'static str],
    extra_params: &'static [(&'static str, &'static str)],
}

const GOOGLE_AUTHORIZE: &str = "https://accounts.google.com/o/oauth2/v2/auth";
const GOOGLE_TOKEN: &str = "https://oauth2.googleapis.com/token";
/// A refresh token every time, so the connection outlives the hour an access token lasts.
const GOOGLE_OFFLINE: &[(&str, &str)] = &[("access_type", "offline"), ("prompt", "consent")];

fn known(connector: &str) -> Option<Known> {
    Some(match connector {
        "gmail" => Known {
            authorize_url: GOOGLE_AUTHORIZE,
            token_url: GOOGLE_TOKEN,
            scopes: &[
                "https://www.googleapis.com/auth/gmail.readonly",
                "https://www.googleapis.com/auth/gmail.compose",
                "https://www.googleapis.com/auth/gmail.send",
            ],
            extra_params: GOOGLE_OFFLINE,
        },
        "google_calendar" => Known {
            authorize_url: GOOGLE_AUTHORIZE,
            token_url: GOOGLE_TOKEN,
            scopes: &["https://www.googleapis.com/auth/calendar.events"],
            extra_params: GOOGLE_OFFLINE,
        },
        "feishu" => Known {
            authorize_url: "https://accounts.feishu.cn/open-apis/authen/v1/authorize",
            token_url: "https://open.feishu.cn/open-apis/authen/v2/oauth/token",
            scopes: &["docx:document", "drive:drive:readonly", "calendar:calendar"],
            extra_params: &[],
        },
        _ => return None,
    })
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

fn https_url(text: &str, what: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("{what} `{text}` is not a URL: {e}"))?;
    if url.scheme() != "https" && url.scheme() != "http" {
        return Err(format!("{what} `{text}` must be an http(s) URL"));
    }
    Ok(url)
}

pub(crate) fn validate_connectors(
    raw: &RawConnectors,
    invalid: Invalid<'_>,
) -> Result<ConnectorsConfig, ConfigError> {
    let public_url = match raw.public_url.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => {
            let url = https_url(text, "public_url")
                .map_err(|e| invalid("connectors", "public_url", e))?;
            Some(url)
        }
    };
    let shipped: Vec<&str> = workmate_connectors::builtin_connectors()
        .iter()
        .map(|c| c.descriptor().name)
        .collect();
    let mut oauth = Vec::new();
    for (connector, client) in &raw.oauth {
        let bad = |key: &'static str, why: String| {
            invalid(
                "connectors.oauth",
                key,
                format!("[connectors.oauth.{connector}]: {why}"),
            )
        };
        if !shipped.contains(&connector.as_str()) {
            return Err(bad(
                "client_id",
                format!(
                    "there is no connector `{connector}`; there are {}",
                    shipped.join(", ")
                ),
            ));
        }
        let known = known(connector);
        let need = |value: &Option<String>, key: &'static str| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| bad(key, format!("`{key}` is missing")))
        };
        let client_id = need(&client.client_id, "client_id")?;
        let client_secret = SecretString::from(need(&client.client_secret, "client_secret")?);
        let endpoint = |value: &Option<String>, default: Option<&str>, key: &'static str| {
            let text = value.as_deref().or(default).ok_or_else(|| {
                bad(
                    key,
                    format!("`{key}` is missing (workmate knows no default for {connector})"),
                )
            })?;
            https_url(text, key).map_err(|e| bad(key, e))
        };
        let authorize_url = endpoint(
            &client.authorize_url,
            known.as_ref().map(|k| k.authorize_url),
            "authorize_url",
        )?;
        let token_url = endpoint(
            &client.token_url,
            known.as_ref().map(|k| k.token_url),
            "token_url",
        )?;
        let scopes = client.scopes.clone().unwrap_or_else(|| {
            known
                .as_ref()
                .map(|k| k.scopes.iter().map(|s| (*s).to_owned()).collect())
                .unwrap_or_default()
        });
        let extra_params = known
            .as_ref()
            .map(|k| {
                k.extra_params
                    .iter()
                    .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        oauth.push(OAuthClientConfig {
            connector: connector.clone(),
            client_id,
            client_secret,
            authorize_url,
            token_url,
            scopes,
            extra_params,
        });
    }
    Ok(ConnectorsConfig { public_url, oauth })
}

pub(crate) fn render_connectors(config: &ConnectorsConfig) -> RawConnectors {
    RawConnectors {
        public_url: config
            .public_url
            .as_ref()
            .map(|u| u.as_str().trim_end_matches('/').to_owned()),
        oauth: config
            .oauth
            .iter()
            .map(|c| {
                let raw = RawOAuth {
                    client_id: Some(c.client_id.clone()),
                    client_secret: Some("***".to_owned()),
                    authorize_url: Some(c.authorize_url.to_string()),
                    token_url: Some(c.token_url.to_string()),
                    scopes: Some(c.scopes.clone()),
                };
                (c.connector.clone(), raw)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(section: &'static str, key: &'static str, problem: String) -> ConfigError {
        ConfigError::Invalid {
            section,
            key,
            problem,
            origin: super::super::Source::Default,
            how: String::new(),
        }
    }

    fn client(id: &str) -> RawOAuth {
        RawOAuth {
            client_id: Some(id.into()),
            client_secret: Some("s".into()),
            ..RawOAuth::default()
        }
    }

    #[test]
    fn google_needs_only_its_client_and_others_their_endpoints() {
        let raw = RawConnectors {
            public_url: Some("https://workmate.acme.com".into()),
            oauth: BTreeMap::from([("gmail".to_owned(), client("cid"))]),
        };
        let config = validate_connectors(&raw, &invalid).unwrap();
        let gmail = &config.oauth[0];
        assert_eq!(gmail.token_url.as_str(), GOOGLE_TOKEN);
        assert!(
            gmail
                .extra_params
                .contains(&("access_type".into(), "offline".into()))
        );
        assert!(
            render_connectors(&config).oauth["gmail"]
                .client_secret
                .as_deref()
                == Some("***")
        );

        let github = RawConnectors {
            public_url: None,
            oauth: BTreeMap::from([("github".to_owned(), client("cid"))]),
        };
        let error = validate_connectors(&github, &invalid)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("authorize_url") && error.contains("no default"),
            "{error}"
        );

        let unknown = RawConnectors {
            public_url: None,
            oauth: BTreeMap::from([("jenkins".to_owned(), client("cid"))]),
        };
        let error = validate_connectors(&unknown, &invalid)
            .unwrap_err()
            .to_string();
        assert!(error.contains("no connector `jenkins`"), "{error}");

        let bad_url = RawConnectors {
            public_url: Some("ftp://x".into()),
            oauth: BTreeMap::new(),
        };
        assert!(validate_connectors(&bad_url, &invalid).is_err());
    }
}
