//! Servers people sign in to (OAuth 2.0, as the MCP authorization spec has it): each person's
//! grant is kept in the vault as their own secret `mcp/<server>`; their connection to the server
//! carries their access token; an access token the server no longer takes is refreshed once with
//! the refresh token, and the new grant kept. The authorization server's endpoints are the
//! definition's, else found from the server's protected-resource metadata (RFC 9728) and the
//! authorization server's metadata (RFC 8414); tokens are bound to the server's URL (RFC 8707).
//!
//! Invariants: a person's token is only ever sent to the server it was granted for; a server
//! that needs sign-in offers its tools only to people who signed in; tokens never reach a log.

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use url::Url;
use workmate_identity::{OAuthApp, OAuthGrant};
use workmate_protocol::{TenantId, UserId};

use crate::definition::{ServerDef, Transport};
use crate::{Error, McpManager, Result};

/// The vault name of a person's grant for `server`.
pub fn grant_secret(server: &str) -> String {
    format!("mcp/{server}")
}

/// The OAuth client workmate signs people in with.
#[derive(Debug, Deserialize, Serialize)]
struct Client {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// The redirect URI it was registered with (registered clients only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redirect_uri: Option<String>,
}

/// A person's grant, as kept in the vault.
#[derive(Debug, Deserialize, Serialize)]
pub(crate) struct StoredGrant {
    pub(crate) token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refresh_token: Option<String>,
}

impl StoredGrant {
    fn from_grant(grant: &OAuthGrant, previous_refresh: Option<String>) -> Self {
        Self {
            token: grant.access_token.expose_secret().to_owned(),
            refresh_token: grant
                .refresh_token
                .as_ref()
                .map(|t| t.expose_secret().to_owned())
                .or(previous_refresh),
        }
    }
}

/// The most of a metadata document or registration answer read.
const MAX_METADATA: usize = 256 * 1024;

/// The JSON at `url`, if it answers 200 with JSON (fetched through the guarded egress: the URL
/// comes from a third party's metadata).
async fn metadata(http: &workmate_net::Egress, url: &Url) -> Option<serde_json::Value> {
    let request = http
        .request(reqwest::Method::GET, url.clone())
        .header("Accept", "application/json");
    let response = http.send_once(request).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = workmate_net::read_within(response, MAX_METADATA)
        .await
        .ok()?;
    serde_json::from_slice(&body).ok()
}

/// A third party's words, short enough to show.
fn their_words(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    workmate_dlp::global().text(&cut).value.into_owned()
}

/// `base`'s origin with `/.well-known/<name>` before its path (RFC 8414 §3 and RFC 9728 §3),
/// then at the root.
fn well_known(base: &Url, name: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut urls = Vec::new();
    for suffix in [path, ""] {
        if let Ok(url) = base.join(&format!("/.well-known/{name}{suffix}"))
            && !urls.contains(&url)
        {
            urls.push(url);
        }
    }
    urls
}

/// What an authorization server's metadata says.
struct Endpoints {
    authorize: Url,
    token: Url,
    /// Where clients register themselves (RFC 7591), if it lets them.
    registration: Option<Url>,
}

/// The authorization server's endpoints for the server at `server_url`.
async fn discover(
    http: &workmate_net::Egress,
    server_url: &Url,
) -> std::result::Result<Endpoints, String> {
    let mut issuer = None;
    for url in well_known(server_url, "oauth-protected-resource") {
        if let Some(found) = metadata(http, &url).await
            && let Some(first) = found["authorization_servers"][0].as_str()
        {
            issuer = Some(
                Url::parse(first).map_err(|e| format!("{url} names {first:?}, not a URL: {e}"))?,
            );
            break;
        }
    }
    // Servers without resource metadata are their own authorization server.
    let issuer = issuer.unwrap_or_else(|| server_url.clone());
    let mut candidates = well_known(&issuer, "oauth-authorization-server");
    candidates.extend(well_known(&issuer, "openid-configuration"));
    for url in candidates {
        let Some(found) = metadata(http, &url).await else {
            continue;
        };
        let endpoint = |key: &str| {
            found[key]
                .as_str()
                .and_then(|u| Url::parse(u).ok())
                .ok_or_else(|| format!("{url} has no usable {key}"))
        };
        return Ok(Endpoints {
            authorize: endpoint("authorization_endpoint")?,
            token: endpoint("token_endpoint")?,
            registration: endpoint("registration_endpoint").ok(),
        });
    }
    Err(format!(
        "found no authorization server metadata for {server_url}; give \"authorize_url\" and \"token_url\" in the server's \"oauth\""
    ))
}

impl McpManager {
    /// The OAuth client people sign in to server `name` with, their browser coming back to
    /// `redirect` (workmate registers itself as a client where the server lets it and the
    /// definition names none).
    pub async fn oauth_app(
        &self,
        tenant: &TenantId,
        name: &str,
        redirect: &Url,
    ) -> Result<OAuthApp> {
        let definitions = self.definitions(tenant).await?;
        let Some((_, def)) = definitions.iter().find(|(n, _)| n == name) else {
            return Err(Error::NotFound(name.to_owned()));
        };
        self.launcher
            .oauth_app(tenant, name, def, Some(redirect))
            .await
    }

    /// Keeps what `user` was granted for server `name`; their next turn connects with it.
    pub async fn store_grant(
        &self,
        tenant: &TenantId,
        user: &UserId,
        name: &str,
        grant: &OAuthGrant,
    ) -> Result<()> {
        let stored = StoredGrant::from_grant(grant, None);
        self.launcher
            .keep_grant(tenant, user, name, &stored)
            .await?;
        self.forget_user(tenant, name, user);
        Ok(())
    }

    /// Whether `user` has signed in to server `name`.
    pub async fn signed_in(&self, tenant: &TenantId, user: &UserId, name: &str) -> bool {
        matches!(self.launcher.grant(tenant, user, name).await, Ok(Some(_)))
    }
}

impl crate::server::Launcher {
    /// The OAuth client for server `name`: the definition's, else the one registered for
    /// workmate at its authorization server (registered now, with `redirect`, when there is none
    /// yet and the server lets clients register).
    pub(crate) async fn oauth_app(
        &self,
        tenant: &TenantId,
        name: &str,
        def: &ServerDef,
        redirect: Option<&Url>,
    ) -> Result<OAuthApp> {
        let (Some(oauth), Ok(Transport::Http { url })) = (&def.oauth, def.transport()) else {
            return Err(Error::Invalid(format!(
                "MCP server {name} does not ask people to sign in (it has no \"oauth\")"
            )));
        };
        let unavailable = |message: String| Error::Unavailable {
            server: name.to_owned(),
            message,
        };
        let server_url = Url::parse(url).map_err(|e| Error::Invalid(format!("{url}: {e}")))?;
        let endpoint = |text: &Option<String>| {
            text.as_deref()
                .map(Url::parse)
                .transpose()
                .map_err(|e| Error::Invalid(e.to_string()))
        };
        let (authorize, token) = (endpoint(&oauth.authorize_url)?, endpoint(&oauth.token_url)?);
        let found = if authorize.is_none() || token.is_none() || oauth.client_id.is_none() {
            Some(
                discover(&self.egress, &server_url)
                    .await
                    .map_err(unavailable)?,
            )
        } else {
            None
        };
        let (authorize_url, token_url) = match (authorize, token, &found) {
            (Some(a), Some(t), _) => (a, t),
            (a, t, Some(found)) => (
                a.unwrap_or_else(|| found.authorize.clone()),
                t.unwrap_or_else(|| found.token.clone()),
            ),
            (_, _, None) => return Err(unavailable("no authorization endpoints".into())),
        };
        let client = match &oauth.client_id {
            Some(id) => {
                let secret = match &oauth.client_secret {
                    Some(secret) => self
                        .secrets
                        .fill(tenant, secret)
                        .await
                        .map_err(unavailable)?,
                    None => String::new(),
                };
                Client {
                    client_id: id.clone(),
                    client_secret: Some(secret),
                    redirect_uri: None,
                }
            }
            None => {
                let registration = found.and_then(|f| f.registration);
                self.registered_client(tenant, name, registration.as_ref(), redirect)
                    .await
                    .map_err(unavailable)?
            }
        };
        Ok(OAuthApp {
            client_id: client.client_id,
            client_secret: SecretString::from(client.client_secret.unwrap_or_default()),
            authorize_url,
            token_url,
            scopes: oauth.scopes.clone(),
            extra_params: Vec::new(),
            resource: Some(url.to_owned()),
        })
    }

    /// The client registered for workmate at server `name`'s authorization server (kept in the
    /// tenant's vault as `mcp-client/<name>`), registered at `registration` now when there is
    /// none for `redirect` yet.
    async fn registered_client(
        &self,
        tenant: &TenantId,
        name: &str,
        registration: Option<&Url>,
        redirect: Option<&Url>,
    ) -> std::result::Result<Client, String> {
        let vault = self
            .secrets
            .vault
            .as_ref()
            .ok_or("signing in to MCP servers needs the vault ([vault])")?;
        let secret = format!("mcp-client/{name}");
        let kept = vault
            .get(tenant, None, &secret)
            .await
            .map_err(|e| format!("cannot read the registered client: {e}"))?
            .and_then(|v| serde_json::from_str::<Client>(v.expose_secret()).ok());
        let wanted = redirect.map(Url::as_str);
        if let Some(client) =
            kept.filter(|c| wanted.is_none() || c.redirect_uri.as_deref() == wanted)
        {
            return Ok(client);
        }
        let (Some(registration), Some(redirect)) = (registration, redirect) else {
            return Err(format!(
                "MCP server {name} has no \"client_id\" and its authorization server lets no client register; give one in its \"oauth\""
            ));
        };
        let body = serde_json::json!({
            "client_name": "workmate",
            "redirect_uris": [redirect.as_str()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        let request = self
            .egress
            .request(reqwest::Method::POST, registration.clone())
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .body(body.to_string());
        let response = self
            .egress
            .send_once(request)
            .await
            .map_err(|e| format!("cannot reach the client registration: {e}"))?;
        let status = response.status();
        let answer = workmate_net::read_within(response, MAX_METADATA)
            .await
            .map_err(|e| format!("the client registration's answer: {e}"))?;
        let answer: serde_json::Value = serde_json::from_slice(&answer).map_err(|e| {
            format!("the client registration answered with something other than JSON: {e}")
        })?;
        let Some(client_id) = answer["client_id"].as_str().filter(|_| status.is_success()) else {
            return Err(format!(
                "the authorization server refused to register workmate (HTTP {}): {}",
                status.as_u16(),
                their_words(
                    answer["error_description"]
                        .as_str()
                        .or(answer["error"].as_str())
                        .unwrap_or("no reason given")
                )
            ));
        };
        let client = Client {
            client_id: client_id.to_owned(),
            client_secret: answer["client_secret"].as_str().map(str::to_owned),
            redirect_uri: Some(redirect.to_string()),
        };
        let value = serde_json::to_string(&client).map_err(|e| e.to_string())?;
        vault
            .put(tenant, None, &secret, &SecretString::from(value))
            .await
            .map_err(|e| format!("cannot keep the registered client: {e}"))?;
        tracing::info!(tenant = %tenant, server = name, "Registered workmate as an OAuth client of an MCP server.");
        Ok(client)
    }

    /// `user`'s grant for server `name`, if they signed in.
    pub(crate) async fn grant(
        &self,
        tenant: &TenantId,
        user: &UserId,
        name: &str,
    ) -> std::result::Result<Option<StoredGrant>, String> {
        let Some(vault) = &self.secrets.vault else {
            return Err("signing in to MCP servers needs the vault ([vault])".into());
        };
        let Some(value) = vault
            .get(tenant, Some(user), &grant_secret(name))
            .await
            .map_err(|e| format!("cannot read the sign-in: {e}"))?
        else {
            return Ok(None);
        };
        serde_json::from_str(value.expose_secret())
            .map(Some)
            .map_err(|e| format!("the stored sign-in does not parse ({e}); sign in again"))
    }

    pub(crate) async fn keep_grant(
        &self,
        tenant: &TenantId,
        user: &UserId,
        name: &str,
        grant: &StoredGrant,
    ) -> Result<()> {
        let vault = self.secrets.vault.as_ref().ok_or_else(|| {
            Error::Invalid("signing in to MCP servers needs the vault ([vault])".into())
        })?;
        let value = serde_json::to_string(grant)
            .map_err(|e| Error::Invalid(format!("cannot store the sign-in: {e}")))?;
        vault
            .put(
                tenant,
                Some(user),
                &grant_secret(name),
                &SecretString::from(value),
            )
            .await?;
        Ok(())
    }

    /// A fresh grant for `user` from their refresh token, kept; `None` without one.
    pub(crate) async fn refreshed(
        &self,
        tenant: &TenantId,
        user: &UserId,
        name: &str,
        def: &ServerDef,
        grant: &StoredGrant,
    ) -> std::result::Result<Option<String>, String> {
        let Some(refresh) = &grant.refresh_token else {
            return Ok(None);
        };
        let app = self
            .oauth_app(tenant, name, def, None)
            .await
            .map_err(|e| e.to_string())?;
        let fresh = app
            .refresh(&self.egress, refresh)
            .await
            .map_err(|e| format!("the sign-in could not be renewed ({e}); sign in again"))?;
        let stored = StoredGrant::from_grant(&fresh, Some(refresh.clone()));
        self.keep_grant(tenant, user, name, &stored)
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!(tenant = %tenant, server = name, "Renewed a person's MCP sign-in.");
        Ok(Some(stored.token))
    }
}
