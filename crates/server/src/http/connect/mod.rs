//! The connect pages: where a person, from the link on their private `/workmate connectors`
//! card, connects a connector. `GET /v1/connectors/connect?token=…` names the account and shows
//! the connector's form (and, where an OAuth client is configured, a sign-in button);
//! `POST /v1/connectors/connect` stores what the form holds; `POST /v1/connectors/oauth/start`
//! sends the browser to the other system's sign-in; `GET /v1/connectors/oauth/callback` stores
//! what it granted.
//!
//! Invariants: nothing is stored on a `GET` (link previews open links); every store needs a
//! token sealed by this installation for exactly that person (or, for `team`, that admin's
//! tenant) and connector, not expired, not used before, used from workmate's own page by that
//! person (see [`proof`]); the OAuth state and PKCE verifier live only in a sealed cookie of the
//! browser that started; each connection leaves a `connector_connected` audit record; no
//! credential is ever shown back, logged or put in a URL; every page escapes what it shows.

mod oauth;
mod pages;
mod proof;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use tracing::{info, warn};
use url::Url;
use workmate_chat::{ConnectLink, ConnectLinks, ConnectRequest, MCP_TARGET_PREFIX};
use workmate_connectors::{ConnectorSource, Descriptor};
use workmate_identity::{CONNECT_TTL_SECS, Clock, ConnectClaim, OAuthApp, SessionKey};
use workmate_mcp::McpManager;
use workmate_protocol::{TenantId, UserId};
use workmate_store::{NewAuditRecord, Store};

use self::oauth::{oauth_callback, oauth_start};
use self::pages::{BadLink, connected, form_page, notice, sign_in_first};
use self::proof::Proof;
use super::api::Sso;

/// The cookie holding a started OAuth flow.
const OAUTH_COOKIE: &str = "workmate_connect_oauth";
/// The form field holding the link's token (not `token`, which is many connectors' own field).
const LINK_FIELD: &str = "connect_token";
/// The OAuth routes, and the only path the OAuth cookie is sent to.
const OAUTH_PATH: &str = "/v1/connectors/oauth";

/// What the connect pages need.
pub struct ConnectPages {
    connectors: Arc<ConnectorSource>,
    store: Store,
    key: SessionKey,
    origin: String,
    redirect: Url,
    oauth: HashMap<String, OAuthApp>,
    mcp: Option<Arc<McpManager>>,
    /// Single sign-on, when on: a person whose chat account is bound to it proves who they are
    /// by being signed in.
    sso: Option<Arc<Sso>>,
    http: workmate_net::Egress,
    clock: Clock,
}

/// What a connect link connects.
#[derive(Debug)]
enum Target<'a> {
    /// A connector.
    Connector(&'a Descriptor),
    /// An MCP server people sign in to.
    Mcp(String),
}

impl Target<'_> {
    fn title(&self) -> String {
        match self {
            Self::Connector(d) => d.title.to_owned(),
            Self::Mcp(server) => format!("MCP server {server}"),
        }
    }
}

impl fmt::Debug for ConnectPages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectPages")
            .field("origin", &self.origin)
            .field("oauth", &self.oauth.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ConnectPages {
    /// Pages for `connectors`, on `origin` (`https://workmate.example.com`), their tokens sealed
    /// with `key`; `oauth` are the connectors' OAuth clients by connector. Fails when `origin`
    /// cannot hold the OAuth callback.
    pub fn new(
        connectors: Arc<ConnectorSource>,
        store: Store,
        key: SessionKey,
        origin: &Url,
        oauth: HashMap<String, OAuthApp>,
        http: workmate_net::Egress,
        clock: Clock,
    ) -> Result<Self, String> {
        let redirect = origin
            .join(&format!("{OAUTH_PATH}/callback"))
            .map_err(|e| format!("{origin} cannot be the connect pages' origin: {e}"))?;
        Ok(Self {
            connectors,
            store,
            key,
            origin: origin.origin().ascii_serialization(),
            redirect,
            oauth,
            mcp: None,
            sso: None,
            http,
            clock,
        })
    }

    /// Lets people signed in through `sso` prove who they are by their session.
    #[must_use]
    pub fn with_sso(mut self, sso: Option<Arc<Sso>>) -> Self {
        self.sso = sso;
        self
    }

    /// Lets people sign in to the tenants' MCP servers that ask for it (links for `mcp:<name>`).
    pub fn with_mcp(mut self, mcp: Arc<McpManager>) -> Self {
        self.mcp = Some(mcp);
        self
    }

    /// The routes, with their state.
    pub fn routes(self: Arc<Self>) -> Router {
        Router::new()
            .route("/v1/connectors/connect", get(show).post(submit))
            .route("/v1/connectors/oauth/start", post(oauth_start))
            .route("/v1/connectors/oauth/callback", get(oauth_callback))
            .with_state(self)
    }

    fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    fn secure(&self) -> bool {
        self.origin.starts_with("https://")
    }

    fn cookie(&self, value: &str, max_age: i64) -> HeaderValue {
        let secure = if self.secure() { "; Secure" } else { "" };
        let text = format!(
            "{OAUTH_COOKIE}={value}; Path={OAUTH_PATH}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
        );
        // The value is base64url and dots; the rest are constants.
        HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// The claim in `token` and what it connects, or why the link does not count.
    fn claim(&self, token: Option<&str>) -> Result<(ConnectClaim, Target<'_>), BadLink> {
        let claim = token
            .and_then(|t| self.key.open_connect(t, self.now()).ok())
            .ok_or(BadLink::Invalid)?;
        let target = match claim.connector.strip_prefix(MCP_TARGET_PREFIX) {
            Some(server) if self.mcp.is_some() => Target::Mcp(server.to_owned()),
            Some(_) => return Err(BadLink::NoConnector),
            None => Target::Connector(
                self.connectors
                    .descriptor(&claim.connector)
                    .ok_or(BadLink::NoConnector)?,
            ),
        };
        Ok((claim, target))
    }

    /// The claim of a form sent from a link's page, its target and its token, once the use is
    /// allowed (see [`proof`]); the link's and the code's fields are taken out of `form`.
    async fn used(
        &self,
        headers: &HeaderMap,
        form: &mut BTreeMap<String, String>,
    ) -> Result<(ConnectClaim, Target<'_>, Option<String>), Response> {
        let token = form.remove(LINK_FIELD);
        let code = proof::typed_code(form);
        let (claim, target) = self
            .claim(token.as_deref())
            .map_err(IntoResponse::into_response)?;
        self.check_use(headers, &claim, code.as_deref())
            .await
            .map_err(IntoResponse::into_response)?;
        Ok((claim, target, token))
    }

    /// The OAuth client that signs the claim's person in to `target`.
    async fn oauth_app(
        &self,
        claim: &ConnectClaim,
        target: &Target<'_>,
    ) -> Result<OAuthApp, String> {
        match target {
            Target::Connector(d) => self.oauth.get(d.name).cloned().ok_or_else(|| {
                "no OAuth client is configured for it ([connectors.oauth]); use the form instead"
                    .to_owned()
            }),
            Target::Mcp(server) => match &self.mcp {
                Some(mcp) => mcp
                    .oauth_app(
                        &TenantId::from(claim.tenant.as_str()),
                        server,
                        &self.redirect,
                    )
                    .await
                    .map_err(|e| e.to_string()),
                None => Err("MCP servers are not available here".to_owned()),
            },
        }
    }

    /// Runs `store` (the write for the claim's person, or tenant) and audits it.
    async fn stored(
        &self,
        claim: &ConnectClaim,
        via: &str,
        store: impl std::future::Future<Output = Result<bool, String>>,
    ) -> Result<(), String> {
        store.await?;
        let record = NewAuditRecord {
            session_id: None,
            actor: Some(claim.user_id.clone()),
            stage: "connector_connected".into(),
            tool: None,
            status: Some("ok".into()),
            detail: json!({"connector": claim.connector, "team": claim.team, "via": via}),
        };
        let tenant = TenantId::from(claim.tenant.as_str());
        if let Err(e) = self.store.audit().append(&tenant, &record).await {
            warn!(error = %e, "A connection was stored but its audit record was not.");
        }
        info!(tenant = %claim.tenant, user = %claim.user_id, connector = %claim.connector, team = claim.team, via, "Connector connected.");
        Ok(())
    }
}

impl ConnectLinks for ConnectPages {
    fn connect_link(&self, request: &ConnectRequest) -> ConnectLink {
        let claim = ConnectClaim {
            tenant: request.tenant.as_str().to_owned(),
            user_id: request.user.as_str().to_owned(),
            name: request.name.clone(),
            connector: request.connector.clone(),
            team: request.team,
            link: uuid::Uuid::new_v4().simple().to_string(),
            expires_at: self.now() + CONNECT_TTL_SECS,
        };
        // The token is base64url and a dot: nothing to escape in a query.
        ConnectLink {
            url: format!(
                "{}/v1/connectors/connect?token={}",
                self.origin,
                self.key.seal_connect(&claim)
            ),
            code: self.key.connect_code(&claim),
        }
    }

    fn valid_for(&self) -> &'static str {
        "15 minutes"
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct TokenQuery {
    token: Option<String>,
}

/// `GET /v1/connectors/connect?token=…`: the form.
async fn show(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    Query(query): Query<TokenQuery>,
) -> Response {
    let (claim, target) = match pages.claim(query.token.as_deref()) {
        Ok(found) => found,
        Err(bad) => return bad.into_response(),
    };
    if let Err(refused) = pages.check_unspent(&claim).await {
        return refused.into_response();
    }
    let token = query.token.as_deref().unwrap_or_default();
    match pages.proof(&headers, &claim).await {
        Proof::SignInFirst => sign_in_first(&claim, token),
        proof => form_page(&pages, &claim, &target, token, proof, None).into_response(),
    }
}

/// `POST /v1/connectors/connect`: stores the form.
async fn submit(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut form = form_of(&body);
    let (claim, target, token) = match pages.used(&headers, &mut form).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let Target::Connector(descriptor) = target else {
        return notice(
            StatusCode::BAD_REQUEST,
            "Sign in instead",
            "An MCP server is connected by signing in to it.",
        );
    };
    let (tenant, user) = (
        TenantId::from(claim.tenant.as_str()),
        UserId::from(claim.user_id.as_str()),
    );
    let owner = (!claim.team).then_some(&user);
    if let Err(refused) = pages.spend(&claim).await {
        return refused.into_response();
    }
    let store = pages
        .connectors
        .connect(&tenant, owner, descriptor.name, &form);
    match pages.stored(&claim, "form", store).await {
        Ok(()) => connected(&target, &claim),
        Err(why) => {
            // Nothing was stored: the link still works, for a corrected form.
            pages.unspend(&claim).await;
            let token = token.unwrap_or_default();
            let proof = pages.proof(&headers, &claim).await;
            (
                StatusCode::BAD_REQUEST,
                form_page(&pages, &claim, &target, &token, proof, Some(&why)),
            )
                .into_response()
        }
    }
}

/// A form body's fields (the last of a repeated name wins).
fn form_of(body: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}
