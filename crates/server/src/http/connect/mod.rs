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

mod proof;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};
use url::Url;
use workmate_chat::{ConnectLink, ConnectLinks, ConnectRequest, MCP_TARGET_PREFIX};
use workmate_connectors::{ConnectorSource, Descriptor};
use workmate_identity::{CONNECT_TTL_SECS, Clock, ConnectClaim, OAuthApp, OAuthGrant, SessionKey};
use workmate_mcp::McpManager;
use workmate_protocol::{TenantId, UserId};
use workmate_store::{NewAuditRecord, Store};

use self::proof::{CODE_FIELD, Proof, Refused};
use super::api::Sso;
use super::api::pages::{escape, page};
use super::api::sso::cookie;

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

/// Why a connect link does not count.
#[derive(Clone, Copy, Debug)]
enum BadLink {
    /// Forged, altered or expired.
    Invalid,
    /// For a connector this workmate no longer has.
    NoConnector,
}

impl IntoResponse for BadLink {
    fn into_response(self) -> Response {
        match self {
            Self::Invalid => notice(
                StatusCode::BAD_REQUEST,
                "This link has expired or is not valid",
                "Ask for a new one in the chat with <code>/workmate connectors</code>.",
            ),
            Self::NoConnector => notice(
                StatusCode::NOT_FOUND,
                "No such connector",
                "This workmate no longer has that connector.",
            ),
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let again = "Ask for a new link in the chat with <code>/workmate connectors</code>.";
        match self {
            Self::CrossSite => notice(
                StatusCode::FORBIDDEN,
                "Not sent from workmate's page",
                "This form was sent from another site. Open your link from the chat instead.",
            ),
            Self::Spent => notice(
                StatusCode::GONE,
                "This link was already used",
                &format!("A connect link works once. {again}"),
            ),
            Self::WrongCode => notice(
                StatusCode::FORBIDDEN,
                "The confirmation code does not match",
                "Type the code shown beside the link in your card in the chat.",
            ),
            Self::NotSignedIn => notice(
                StatusCode::FORBIDDEN,
                "Sign in first",
                "This link is for someone signed in to workmate as themselves: sign in, then open it again.",
            ),
            Self::Unavailable(why) => notice(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again in a moment",
                &escape(&why),
            ),
        }
    }
}

fn notice(status: StatusCode, title: &str, body_html: &str) -> Response {
    (
        status,
        page(&format!("<h1>{}</h1><p>{body_html}</p>", escape(title))),
    )
        .into_response()
}

/// Whose account a claim connects, for the page.
fn whom(claim: &ConnectClaim) -> String {
    if claim.team {
        format!(
            "for everyone in workspace <code>{}</code> (set up by {}); people who connect their own account use theirs",
            escape(&claim.tenant),
            escape(&claim.name)
        )
    } else {
        format!(
            "for <strong>{}</strong> (<code>{}</code>) only",
            escape(&claim.name),
            escape(&claim.user_id)
        )
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

/// The page asking a person whose chat account is bound to single sign-on to sign in first.
fn sign_in_first(claim: &ConnectClaim, token: &str) -> Response {
    let back = format!("/v1/connectors/connect?token={token}");
    let login: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("return_to", &back)
        .finish();
    notice(
        StatusCode::OK,
        "Sign in first",
        &format!(
            "This link is for <strong>{}</strong>. <a href=\"/v1/auth/login?{}\">Sign in to \
             workmate</a> as them, and you come back here.",
            escape(&claim.name),
            escape(&login)
        ),
    )
}

fn form_page(
    pages: &ConnectPages,
    claim: &ConnectClaim,
    target: &Target<'_>,
    token: &str,
    proof: Proof,
    error: Option<&str>,
) -> Html<String> {
    let title = escape(&target.title());
    let mut body = format!(
        "<h1>Connect {title}</h1><p>workmate will use {title} {}.</p>",
        whom(claim)
    );
    if let Some(error) = error {
        body.push_str(&format!(
            "<p style=\"color:#b00\" role=\"alert\">Not connected: {}</p>",
            escape(error)
        ));
    }
    let token = escape(token);
    // The code travels with each form: it is what shows the link is in its person's hands.
    let code = if proof == Proof::Code {
        format!(
            "<p><label>Confirmation code (beside the link in your card in the chat)<br>\
             <input type=\"text\" name=\"{CODE_FIELD}\" size=\"12\" required \
             autocomplete=\"off\"></label></p>"
        )
    } else {
        String::new()
    };
    let signs_in = match target {
        Target::Connector(d) => pages.oauth.contains_key(d.name),
        Target::Mcp(_) => true,
    };
    if signs_in {
        body.push_str(&format!(
            "<form method=\"post\" action=\"{OAUTH_PATH}/start\">\
             <input type=\"hidden\" name=\"{LINK_FIELD}\" value=\"{token}\">{code}\
             <button type=\"submit\">Sign in to {title}</button></form>"
        ));
    }
    let Target::Connector(descriptor) = target else {
        return page(&body);
    };
    if signs_in {
        body.push_str("<p>Or enter the credentials yourself:</p>");
    }
    body.push_str(&format!(
        "<form method=\"post\" action=\"/v1/connectors/connect\" autocomplete=\"off\">\
         <input type=\"hidden\" name=\"{LINK_FIELD}\" value=\"{token}\">{code}"
    ));
    for field in &descriptor.fields {
        let kind = if field.secret { "password" } else { "text" };
        let required = if field.required { " required" } else { "" };
        body.push_str(&format!(
            "<p><label>{}<br><input type=\"{kind}\" name=\"{}\" size=\"60\"{required}></label><br>\
             <small>{}</small></p>",
            escape(field.label),
            escape(field.key),
            escape(field.help)
        ));
    }
    body.push_str(&format!(
        "<button type=\"submit\">Connect {title}</button></form>\
         <p><small>Stored encrypted in workmate's vault and never shown again. Every write \
         workmate makes with it is approved first.</small></p>"
    ));
    page(&body)
}

/// `POST /v1/connectors/connect`: stores the form.
async fn submit(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut form = form_of(&body);
    let token = form.remove(LINK_FIELD);
    let code = form.remove(CODE_FIELD);
    let (claim, target) = match pages.claim(token.as_deref()) {
        Ok(found) => found,
        Err(bad) => return bad.into_response(),
    };
    if let Err(refused) = pages.check_use(&headers, &claim, code.as_deref()).await {
        return refused.into_response();
    }
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

/// The page for a link whose target cannot be signed in to (`why`), with what to do (`then`,
/// HTML).
fn no_sign_in(why: &str, then: &str) -> Response {
    notice(
        StatusCode::NOT_FOUND,
        "No sign-in for this",
        &format!("{}. {then}", escape(why)),
    )
}

/// A form body's fields (the last of a repeated name wins).
fn form_of(body: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn connected(target: &Target<'_>, claim: &ConnectClaim) -> Response {
    let title = escape(&target.title());
    (
        StatusCode::OK,
        page(&format!(
            "<h1>{title} is connected</h1><p>workmate uses {title} {} from the next message on. \
             You can close this tab and go back to the chat.</p>",
            whom(claim)
        )),
    )
        .into_response()
}

/// `POST /v1/connectors/oauth/start`: off to the other system's sign-in.
async fn oauth_start(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut form = form_of(&body);
    let token = form.remove(LINK_FIELD);
    let (claim, target) = match pages.claim(token.as_deref()) {
        Ok(found) => found,
        Err(bad) => return bad.into_response(),
    };
    let code = form.remove(CODE_FIELD);
    if let Err(refused) = pages.check_use(&headers, &claim, code.as_deref()).await {
        return refused.into_response();
    }
    let app = match pages.oauth_app(&claim, &target).await {
        Ok(app) => app,
        Err(why) => return no_sign_in(&why, ""),
    };
    let (url, pending) = app.start(&pages.redirect, claim, pages.now());
    let mut response =
        (StatusCode::SEE_OTHER, [(header::LOCATION, url.to_string())]).into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        pages.cookie(
            &pages.key.seal_oauth(&pending),
            pending.expires_at - pages.now(),
        ),
    );
    response
}

#[derive(Debug, Deserialize)]
pub(crate) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /v1/connectors/oauth/callback`: stores what the other system granted.
async fn oauth_callback(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    Query(query): Query<Callback>,
) -> Response {
    let mut response = oauth_finish(&pages, &headers, query).await;
    response
        .headers_mut()
        .append(header::SET_COOKIE, pages.cookie("", 0));
    response
}

async fn oauth_finish(pages: &ConnectPages, headers: &HeaderMap, query: Callback) -> Response {
    let again = "Ask for a new link in the chat with <code>/workmate connectors</code>.";
    let pending = cookie(headers, OAUTH_COOKIE)
        .filter(|v| !v.is_empty())
        .and_then(|v| pages.key.open_oauth(v, pages.now()).ok());
    let Some(pending) = pending else {
        return notice(
            StatusCode::BAD_REQUEST,
            "This sign-in was not started here, or took too long",
            again,
        );
    };
    if let Some(error) = query.error {
        let why = query.error_description.unwrap_or(error);
        return notice(
            StatusCode::BAD_REQUEST,
            "The sign-in was not completed",
            &format!("{}. {again}", escape(&why)),
        );
    }
    let (Some(code), Some(state)) = (query.code, query.state) else {
        return notice(
            StatusCode::BAD_REQUEST,
            "The sign-in answer is incomplete",
            again,
        );
    };
    let claim = pending.claim.clone();
    // The claim was sealed by this installation, so its target is known (unless removed since).
    let token = pages.key.seal_connect(&claim);
    let target = match pages.claim(Some(&token)) {
        Ok((_, target)) => target,
        Err(_) => return no_sign_in("it is no longer available", again),
    };
    let app = match pages.oauth_app(&claim, &target).await {
        Ok(app) => app,
        Err(why) => return no_sign_in(&why, again),
    };
    let grant = match app
        .finish(&pages.http, &pages.redirect, &pending, &code, &state)
        .await
    {
        Ok(grant) => grant,
        Err(e) => {
            warn!(connector = %claim.connector, error = %e, "An OAuth connection failed.");
            return notice(
                StatusCode::BAD_GATEWAY,
                "The sign-in could not be completed",
                &format!("{}. {again}", escape(&e.to_string())),
            );
        }
    };
    let (tenant, user) = (
        TenantId::from(claim.tenant.as_str()),
        UserId::from(claim.user_id.as_str()),
    );
    if let Err(refused) = pages.spend(&claim).await {
        return refused.into_response();
    }
    let stored = match &target {
        Target::Connector(descriptor) => {
            let owner = (!claim.team).then_some(&user);
            let store =
                pages
                    .connectors
                    .store(&tenant, owner, descriptor.name, granted(&app, &grant));
            pages.stored(&claim, "oauth", store).await
        }
        Target::Mcp(server) => {
            let store = async {
                let mcp = pages
                    .mcp
                    .as_ref()
                    .ok_or("MCP servers are not available here")?;
                mcp.store_grant(&tenant, &user, server, &grant)
                    .await
                    .map(|()| true)
                    .map_err(|e| e.to_string())
            };
            pages.stored(&claim, "oauth", store).await
        }
    };
    match stored {
        Ok(()) => connected(&target, &claim),
        Err(why) => {
            pages.unspend(&claim).await;
            notice(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Signed in, but the connection could not be stored",
                &format!("{}. Try again in a moment.", escape(&why)),
            )
        }
    }
}

/// What is stored of a grant: the access token, and the refresh token with what refreshes it.
fn granted(app: &OAuthApp, grant: &OAuthGrant) -> serde_json::Map<String, Value> {
    let mut fields = serde_json::Map::new();
    fields.insert("token".into(), grant.access_token.expose_secret().into());
    if let Some(refresh) = &grant.refresh_token {
        fields.insert("refresh_token".into(), refresh.expose_secret().into());
        fields.insert("client_id".into(), app.client_id.clone().into());
        fields.insert(
            "client_secret".into(),
            app.client_secret.expose_secret().into(),
        );
        fields.insert("token_url".into(), app.token_url.as_str().into());
    }
    fields
}
