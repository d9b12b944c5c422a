//! The OpenID provider as workmate's client sees it: discovery, the authorization-code login with
//! PKCE, state and nonce, and the provider's signing keys.
//!
//! Invariants: discovery happens on first use and is retried on the next use after a failure (a
//! provider that is down does not stop workmate from starting, and its first answer is kept); the
//! keys are refreshed when a token names an unknown `kid`, at most once per token and at most once
//! per [`KEY_REFRESH_COOLDOWN`] overall, so random key ids cannot make workmate hammer the
//! provider; the callback is accepted only with the `state` this login started with.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use openidconnect::core::{CoreClient, CoreJsonWebKeySet, CoreResponseType};
use openidconnect::{
    AuthenticationFlow, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl,
    LogoutRequest, Nonce, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadataWithLogout,
    RedirectUrl, Scope, TokenResponse,
};
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{Mutex, OnceCell};
use tracing::{info, warn};
use url::Url;

use crate::error::{Error, Refusal, Result};
use crate::http::Http;
use crate::session::LoginState;
use crate::token::{self, Clock, Expected, Failure, Identity};

/// The shortest time between two fetches of the provider's keys.
pub const KEY_REFRESH_COOLDOWN: Duration = Duration::from_secs(10);

/// How long a started login may take before its callback is refused.
const LOGIN_TTL_SECS: i64 = 600;

/// `[auth.oidc]`.
#[derive(Clone, Debug)]
pub struct OidcSettings {
    /// The issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    /// This client's id at the provider; ID tokens must name it in `aud`.
    pub client_id: String,
    /// This client's secret.
    pub client_secret: SecretString,
    /// Where the provider sends the browser back (`…/v1/auth/callback`).
    pub redirect_url: String,
    /// The claim holding the person's groups.
    pub groups_claim: String,
    /// The claim naming the person's workmate tenant, if tenants come from the directory.
    pub tenant_claim: Option<String>,
    /// The scopes asked for (`openid` is always asked for).
    pub scopes: Vec<String>,
}

/// A login to send the browser to.
#[derive(Debug)]
pub struct LoginStart {
    /// The provider's authorization URL.
    pub url: Url,
    /// What the callback must find again (keep it in a signed cookie).
    pub state: LoginState,
}

/// The provider, discovered on first use.
pub struct Oidc {
    settings: OidcSettings,
    issuer: IssuerUrl,
    client_id: ClientId,
    redirect: RedirectUrl,
    http: Http,
    clock: Clock,
    metadata: OnceCell<ProviderMetadataWithLogout>,
    keys: RwLock<Arc<CoreJsonWebKeySet>>,
    last_refresh: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.settings.issuer)
            .field("client_id", &self.settings.client_id)
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// A client of the provider in `settings`, calling it through `http`.
    pub fn new(settings: OidcSettings, http: workmate_net::Egress, clock: Clock) -> Result<Self> {
        let issuer = IssuerUrl::new(settings.issuer.clone())
            .map_err(|e| Error::Settings(format!("issuer: {e}")))?;
        let redirect = RedirectUrl::new(settings.redirect_url.clone())
            .map_err(|e| Error::Settings(format!("redirect_url: {e}")))?;
        Ok(Self {
            client_id: ClientId::new(settings.client_id.clone()),
            settings,
            issuer,
            redirect,
            http: Http(http),
            clock,
            metadata: OnceCell::new(),
            keys: RwLock::new(Arc::new(CoreJsonWebKeySet::new(Vec::new()))),
            last_refresh: Mutex::new(None),
        })
    }

    /// The clock the checks use.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Where the provider sends the browser back; its origin is workmate's, as browsers see it.
    pub fn redirect_url(&self) -> &Url {
        self.redirect.url()
    }

    /// Whether cookies must be `Secure`: always, unless the redirect URL is plain HTTP on
    /// localhost (a developer's machine).
    pub fn secure_cookies(&self) -> bool {
        let url = self.redirect.url();
        !(url.scheme() == "http"
            && matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")))
    }

    /// The provider's metadata, discovering it (and its keys) on first use.
    async fn metadata(&self) -> Result<&ProviderMetadataWithLogout> {
        self.metadata
            .get_or_try_init(|| async {
                let metadata =
                    ProviderMetadataWithLogout::discover_async(self.issuer.clone(), &self.http)
                        .await
                        .map_err(|e| {
                            Error::Provider(format!(
                                "discovery at {}: {}",
                                self.issuer.as_str(),
                                with_causes(&e)
                            ))
                        })?;
                self.set_keys(metadata.jwks().clone());
                info!(issuer = %self.issuer.as_str(), "Discovered the OpenID provider.");
                Ok(metadata)
            })
            .await
    }

    fn set_keys(&self, keys: CoreJsonWebKeySet) {
        *self.keys.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(keys);
    }

    fn keys(&self) -> Arc<CoreJsonWebKeySet> {
        Arc::clone(&self.keys.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Fetches the keys again unless that was done within the cooldown.
    async fn refresh_keys(&self) -> Result<()> {
        let metadata = self.metadata().await?;
        let mut last = self.last_refresh.lock().await;
        if last.is_some_and(|at| at.elapsed() < KEY_REFRESH_COOLDOWN) {
            return Ok(());
        }
        *last = Some(Instant::now());
        let keys = CoreJsonWebKeySet::fetch_async(metadata.jwks_uri(), &self.http)
            .await
            .map_err(|e| {
                Error::Provider(format!("keys at {}: {e}", metadata.jwks_uri().as_str()))
            })?;
        info!(
            keys = keys.keys().len(),
            "Refreshed the provider's signing keys."
        );
        self.set_keys(keys);
        Ok(())
    }

    /// Starts a login: the authorization URL (code flow, PKCE S256, fresh state and nonce) and
    /// what the callback needs to finish it.
    pub async fn start_login(&self) -> Result<LoginStart> {
        let metadata = self.metadata().await?;
        let client = CoreClient::from_provider_metadata(
            metadata.clone(),
            self.client_id.clone(),
            Some(ClientSecret::new(
                self.settings.client_secret.expose_secret().to_owned(),
            )),
        )
        .set_redirect_uri(self.redirect.clone());
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in self.settings.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        Ok(LoginStart {
            url,
            state: LoginState {
                state: state.secret().clone(),
                nonce: nonce.secret().clone(),
                verifier: verifier.secret().clone(),
                expires_at: self.clock.now().timestamp() + LOGIN_TTL_SECS,
                return_to: None,
            },
        })
    }

    /// Finishes a login: `state` must be the login's, the code is exchanged (with the PKCE
    /// verifier) and the ID token checked, nonce included.
    pub async fn finish_login(
        &self,
        login: &LoginState,
        code: &str,
        state: &str,
    ) -> Result<Identity> {
        if !constant_time_eq(login.state.as_bytes(), state.as_bytes()) {
            return Err(Refusal::LoginMismatch("the state does not match".into()).into());
        }
        let metadata = self.metadata().await?;
        let client = CoreClient::from_provider_metadata(
            metadata.clone(),
            self.client_id.clone(),
            Some(ClientSecret::new(
                self.settings.client_secret.expose_secret().to_owned(),
            )),
        )
        .set_redirect_uri(self.redirect.clone());
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| Error::Provider(format!("token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(login.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| Error::Provider(format!("code exchange: {}", describe(&e))))?;
        let id_token = response
            .id_token()
            .ok_or_else(|| Error::Provider("the token response has no ID token".into()))?
            .to_string();
        self.verify(&id_token, Some(&Nonce::new(login.nonce.clone())))
            .await
    }

    /// Checks a bearer token a program presents: an ID token for this client, signed by the
    /// provider, same checks as at login except the nonce.
    pub async fn verify_bearer(&self, jwt: &str) -> Result<Identity> {
        self.verify(jwt, None).await
    }

    async fn verify(&self, jwt: &str, nonce: Option<&Nonce>) -> Result<Identity> {
        self.metadata().await?;
        let expected = Expected {
            issuer: &self.issuer,
            client_id: &self.client_id,
            groups_claim: &self.settings.groups_claim,
            tenant_claim: self.settings.tenant_claim.as_deref(),
            clock: &self.clock,
        };
        match token::verify(jwt, &self.keys(), &expected, nonce) {
            Ok(identity) => return Ok(identity),
            Err(Failure::Refused(refusal)) => return Err(refusal.into()),
            Err(Failure::UnknownKey) => {}
        }
        // The provider may have rotated its keys since they were fetched.
        self.refresh_keys().await?;
        match token::verify(jwt, &self.keys(), &expected, nonce) {
            Ok(identity) => Ok(identity),
            Err(Failure::Refused(refusal)) => Err(refusal.into()),
            Err(Failure::UnknownKey) => {
                warn!("A token was signed with a key the provider does not publish.");
                Err(Refusal::UnknownKey.into())
            }
        }
    }

    /// The provider's end-session URL for this client, when discovery published one.
    pub async fn end_session_url(&self) -> Option<Url> {
        let metadata = self.metadata().await.ok()?;
        let endpoint = metadata
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        Some(
            LogoutRequest::from(endpoint)
                .set_client_id(self.client_id.clone())
                .http_get_url(),
        )
    }
}

/// A token-endpoint failure, with the provider's error code when it sent one.
fn describe<RE: std::error::Error + 'static, T: openidconnect::ErrorResponse + 'static>(
    error: &openidconnect::RequestTokenError<RE, T>,
) -> String {
    match error {
        openidconnect::RequestTokenError::ServerResponse(response) => response.to_string(),
        other => other.to_string(),
    }
}

/// An error's message followed by its causes' (the library's own says only "Request failed").
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::testing::{TestKey, claims};

    async fn provider(server: &MockServer) -> Oidc {
        let issuer = server.uri();
        let metadata = serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "end_session_endpoint": format!("{issuer}/session/end"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        });
        Mock::given(method("GET"))
            .and(path("/.well-known/openid-configuration"))
            .respond_with(ResponseTemplate::new(200).set_body_json(metadata))
            .mount(server)
            .await;
        Oidc::new(
            OidcSettings {
                issuer,
                client_id: "workmate".into(),
                client_secret: SecretString::from("secret"),
                redirect_url: "http://localhost:8080/v1/auth/callback".into(),
                groups_claim: "groups".into(),
                tenant_claim: None,
                scopes: vec!["openid".into(), "profile".into()],
            },
            workmate_net::Egress::new(
                std::sync::Arc::new(
                    workmate_net::NetworkPolicy::allow_private(["127.0.0.1"]).unwrap(),
                ),
                workmate_net::EgressOptions::credentialed(),
            )
            .unwrap(),
            Clock::system(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn an_unknown_key_id_fetches_the_keys_once_then_is_refused_until_the_cooldown() {
        let server = MockServer::start().await;
        let oidc = provider(&server).await;
        let (old, rotated) = (TestKey::a("old"), TestKey::b("new"));
        // Discovery reads the old key; the provider has rotated to the new one since.
        Mock::given(method("GET"))
            .and(path("/jwks"))
            .respond_with(ResponseTemplate::new(200).set_body_json(old.jwks_json()))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path("/jwks"))
            .respond_with(ResponseTemplate::new(200).set_body_json(rotated.jwks_json()))
            .mount(&server)
            .await;
        let exp = Utc::now() + chrono::Duration::minutes(5);
        let issuer = server.uri();
        let first = oidc
            .verify_bearer(&old.sign(claims(&issuer, "workmate", "alice", exp, &["ops"])))
            .await
            .unwrap();
        assert_eq!(first.groups, ["ops"]);
        let jwks_calls = |requests: Vec<wiremock::Request>| {
            requests.iter().filter(|r| r.url.path() == "/jwks").count()
        };
        assert_eq!(jwks_calls(server.received_requests().await.unwrap()), 1);

        // A token under the rotated key: one refresh, then it verifies.
        let second = oidc
            .verify_bearer(&rotated.sign(claims(&issuer, "workmate", "bob", exp, &[])))
            .await
            .unwrap();
        assert_eq!(second.subject, "bob");
        assert_eq!(jwks_calls(server.received_requests().await.unwrap()), 2);

        // A key id nobody publishes: refused, and within the cooldown no further fetch.
        let stranger = TestKey::a("nobody").sign(claims(&issuer, "workmate", "eve", exp, &[]));
        let err = oidc.verify_bearer(&stranger).await.unwrap_err();
        assert!(matches!(err, Error::Refused(Refusal::UnknownKey)), "{err}");
        assert_eq!(jwks_calls(server.received_requests().await.unwrap()), 2);
    }

    #[tokio::test]
    async fn a_login_asks_for_code_with_pkce_state_nonce_and_the_scopes() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/jwks"))
            .respond_with(ResponseTemplate::new(200).set_body_json(TestKey::a("k").jwks_json()))
            .mount(&server)
            .await;
        let oidc = provider(&server).await;
        let start = oidc.start_login().await.unwrap();
        let query: std::collections::HashMap<String, String> =
            start.url.query_pairs().into_owned().collect();
        assert_eq!(query["response_type"], "code");
        assert_eq!(query["client_id"], "workmate");
        assert_eq!(query["scope"], "openid profile");
        assert_eq!(query["code_challenge_method"], "S256");
        assert_eq!(query["state"], start.state.state);
        assert_eq!(query["nonce"], start.state.nonce);
        assert!(!query.contains_key("code_verifier"));
        assert!(start.state.verifier.len() >= 43);
        // A callback with another state is refused before any exchange.
        let err = oidc
            .finish_login(&start.state, "code", "forged")
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Refused(Refusal::LoginMismatch(_))));
        assert!(!oidc.secure_cookies());
        let logout = oidc.end_session_url().await.unwrap();
        assert_eq!(logout.path(), "/session/end");
        assert!(logout.query().unwrap().contains("client_id=workmate"));
    }
}
