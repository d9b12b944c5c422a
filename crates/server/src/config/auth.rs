//! `[auth]`, `[auth.oidc]` and `[auth.groups]`: single sign-on and the break-glass admin token.
//!
//! Invariants: a configured `[auth.oidc]` has an http(s) issuer, a client id and secret, and a
//! redirect URL that is HTTPS (plain HTTP only on localhost, where cookies cannot be `Secure`);
//! the static admin token is accepted by default only without single sign-on, and turning it off
//! without single sign-on is refused (nobody could administer the service); the client secret is
//! a [`SecretString`] rendered as `***`.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ConfigError;

const OIDC: &str = "auth.oidc";
/// `groups_claim` by default.
pub(crate) const DEFAULT_GROUPS_CLAIM: &str = "groups";
/// `scopes` by default.
pub(crate) const DEFAULT_SCOPES: [&str; 3] = ["openid", "profile", "email"];

/// `[auth]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) break_glass_admin_token: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) oidc: Option<RawOidc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) groups: Option<RawGroups>,
}

impl RawAuth {
    pub(crate) fn is_empty(&self) -> bool {
        self.break_glass_admin_token.is_none() && self.oidc.is_none() && self.groups.is_none()
    }
}

/// `[auth.oidc]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOidc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redirect_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) groups_claim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tenant_claim: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scopes: Option<Vec<String>>,
}

/// `[auth.groups]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGroups {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) admin: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) approver: Option<Vec<String>>,
}

/// `[auth]`.
#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// `break_glass_admin_token`: whether the static admin token is accepted (default: `true`
    /// without `[auth.oidc]`, `false` with it).
    pub break_glass_admin_token: bool,
    /// `[auth.oidc]`, when single sign-on is configured.
    pub oidc: Option<OidcConfig>,
    /// `[auth.groups] admin`: directory groups whose members are admins.
    pub admin_groups: Vec<String>,
    /// `[auth.groups] approver`: directory groups whose members are approvers.
    pub approver_groups: Vec<String>,
}

/// `[auth.oidc]`.
#[derive(Clone, Debug)]
pub struct OidcConfig {
    /// `issuer`: the provider's issuer URL (discovery is read below it).
    pub issuer: String,
    /// `client_id`: workmate's client id at the provider.
    pub client_id: String,
    /// `client_secret`: workmate's client secret.
    pub client_secret: SecretString,
    /// `redirect_url`: `https://<workmate>/v1/auth/callback`, as registered at the provider.
    pub redirect_url: String,
    /// `groups_claim`: the ID-token claim listing the person's groups (default `groups`).
    pub groups_claim: String,
    /// `tenant_claim`: the ID-token claim naming the person's workmate tenant; unset, everyone
    /// signs in to the `default` tenant.
    pub tenant_claim: Option<String>,
    /// `scopes`: asked for at login (default `["openid", "profile", "email"]`).
    pub scopes: Vec<String>,
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_auth(
    raw: &RawAuth,
    invalid: Invalid<'_>,
) -> Result<AuthConfig, ConfigError> {
    let oidc = raw
        .oidc
        .as_ref()
        .map(|oidc| validate_oidc(oidc, invalid))
        .transpose()?;
    let break_glass_admin_token = raw.break_glass_admin_token.unwrap_or(oidc.is_none());
    if !break_glass_admin_token && oidc.is_none() {
        return Err(invalid(
            "auth",
            "break_glass_admin_token",
            "without [auth.oidc] the admin token is the only way to administer workmate; \
             configure single sign-on first, or leave this unset"
                .into(),
        ));
    }
    let groups = |list: Option<&Vec<String>>, key: &'static str| {
        let names: Vec<String> = list
            .into_iter()
            .flatten()
            .map(|g| g.trim().to_owned())
            .collect();
        if names.iter().any(String::is_empty) {
            return Err(invalid("auth.groups", key, "a group name is empty".into()));
        }
        Ok(names)
    };
    let raw_groups = raw.groups.as_ref();
    Ok(AuthConfig {
        break_glass_admin_token,
        oidc,
        admin_groups: groups(raw_groups.and_then(|g| g.admin.as_ref()), "admin")?,
        approver_groups: groups(raw_groups.and_then(|g| g.approver.as_ref()), "approver")?,
    })
}

fn validate_oidc(raw: &RawOidc, invalid: Invalid<'_>) -> Result<OidcConfig, ConfigError> {
    let required = |value: &Option<String>, key: &'static str, example: &str| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                invalid(
                    OIDC,
                    key,
                    format!("is required with [auth.oidc], e.g. {example}"),
                )
            })
    };
    let issuer = required(&raw.issuer, "issuer", "https://login.example.com")?;
    let parsed = url::Url::parse(&issuer).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https") && u.host().is_some() && u.query().is_none()
    });
    if parsed.is_none() {
        return Err(invalid(
            OIDC,
            "issuer",
            format!("`{issuer}` is not an http(s) URL without a query"),
        ));
    }
    let client_id = required(&raw.client_id, "client_id", "workmate")?;
    let client_secret = required(
        &raw.client_secret,
        "client_secret",
        "the secret the provider issued",
    )?;
    let redirect_url = required(
        &raw.redirect_url,
        "redirect_url",
        "https://workmate.example.com/v1/auth/callback",
    )?;
    let redirect = url::Url::parse(&redirect_url).map_err(|e| {
        invalid(
            OIDC,
            "redirect_url",
            format!("`{redirect_url}` is not a URL ({e})"),
        )
    })?;
    let local = matches!(
        redirect.host_str(),
        Some("localhost" | "127.0.0.1" | "[::1]")
    );
    match redirect.scheme() {
        "https" => {}
        "http" if local => {}
        _ => {
            return Err(invalid(
                OIDC,
                "redirect_url",
                format!(
                    "`{redirect_url}` must be https (plain http only on localhost): the session \
                     cookie is Secure"
                ),
            ));
        }
    }
    let groups_claim = raw
        .groups_claim
        .as_deref()
        .unwrap_or(DEFAULT_GROUPS_CLAIM)
        .trim()
        .to_owned();
    if groups_claim.is_empty() {
        return Err(invalid(
            OIDC,
            "groups_claim",
            "name a claim such as groups".into(),
        ));
    }
    let tenant_claim = raw.tenant_claim.as_deref().map(str::trim);
    if tenant_claim.is_some_and(str::is_empty) {
        return Err(invalid(
            OIDC,
            "tenant_claim",
            "name a claim such as org, or leave it unset (everyone in the default tenant)".into(),
        ));
    }
    let tenant_claim = tenant_claim.map(str::to_owned);
    let scopes: Vec<String> = match &raw.scopes {
        Some(scopes) => scopes.iter().map(|s| s.trim().to_owned()).collect(),
        None => DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
    };
    if !scopes.iter().any(|s| s == "openid")
        || scopes.iter().any(|s| s.is_empty() || s.contains(' '))
    {
        return Err(invalid(
            OIDC,
            "scopes",
            "list scopes one by one, including \"openid\", e.g. [\"openid\", \"profile\", \"email\"]"
                .into(),
        ));
    }
    Ok(OidcConfig {
        issuer,
        client_id,
        client_secret: SecretString::from(client_secret),
        redirect_url,
        groups_claim,
        tenant_claim,
        scopes,
    })
}

/// `[auth]` as the rendered configuration shows it: the secret as `***`; nothing when neither
/// single sign-on nor groups are configured and the admin token is on (the defaults).
pub(crate) fn render_auth(config: &AuthConfig) -> RawAuth {
    let groups =
        (!config.admin_groups.is_empty() || !config.approver_groups.is_empty()).then(|| {
            RawGroups {
                admin: Some(config.admin_groups.clone()),
                approver: Some(config.approver_groups.clone()),
            }
        });
    if config.oidc.is_none() && groups.is_none() {
        return RawAuth::default();
    }
    RawAuth {
        break_glass_admin_token: Some(config.break_glass_admin_token),
        oidc: config.oidc.as_ref().map(|oidc| RawOidc {
            issuer: Some(oidc.issuer.clone()),
            client_id: Some(oidc.client_id.clone()),
            client_secret: Some("***".to_owned()),
            redirect_url: Some(oidc.redirect_url.clone()),
            groups_claim: Some(oidc.groups_claim.clone()),
            tenant_claim: oidc.tenant_claim.clone(),
            scopes: Some(oidc.scopes.clone()),
        }),
        groups,
    }
}
