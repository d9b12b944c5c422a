//! Single sign-on over HTTP: `/v1/auth/login`, `/v1/auth/callback`, `/v1/auth/logout`,
//! `/v1/auth/me`, and the session cookie and provider-signed bearer tokens as callers of `/v1`.
//!
//! Invariants: a session cookie or bearer token becomes a [`Principal`] only after
//! `workmate_identity` verified it; the person is a user of the tenant the token's tenant claim
//! names (`[auth.oidc] tenant_claim`; the default tenant without one) whose id is
//! `sso:<subject>`, bound to the subject (`sso_subject`), whose role follows their directory groups
//! at every login and bearer call; cookies are `HttpOnly`, `SameSite=Lax` and `Secure` (except
//! for a redirect URL on plain-HTTP localhost); a refusal says why, never echoing the credential.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use tracing::info;
use workmate_identity::{Error as SsoError, GroupRoles, Identity, Oidc, Role, Session, SessionKey};
use workmate_protocol::{Actor, TenantId, UserId};
use workmate_store::{NewUser, Store, User};

use super::auth::{DEFAULT_TENANT, Principal, Via};
use crate::http::{ApiError, AppState};

/// The cookie holding a signed-in browser's session.
pub const SESSION_COOKIE: &str = "workmate_session";
/// The cookie holding a login in flight (state, nonce, PKCE verifier), for the callback only.
pub const LOGIN_COOKIE: &str = "workmate_login";
/// How long a browser session lasts.
pub const SESSION_TTL_SECS: i64 = 8 * 60 * 60;
/// The prefix of the user ids single sign-on creates.
pub const SSO_USER_PREFIX: &str = "sso:";

/// Single sign-on: the provider, the cookie key and the group-to-role mapping.
#[derive(Debug)]
pub struct Sso {
    pub(super) oidc: Oidc,
    pub(super) key: SessionKey,
    pub(super) roles: GroupRoles,
}

impl Sso {
    /// Single sign-on through `oidc`, cookies signed with `key`, roles from `roles`.
    pub fn new(oidc: Oidc, key: SessionKey, roles: GroupRoles) -> Self {
        Self { oidc, key, roles }
    }

    pub(super) fn now(&self) -> i64 {
        self.oidc.clock().now().timestamp()
    }

    /// The caller a provider-signed bearer token names.
    pub(crate) async fn principal_from_bearer(
        &self,
        store: &Store,
        jwt: &str,
    ) -> Result<Principal, ApiError> {
        let identity = self.oidc.verify_bearer(jwt).await.map_err(refused)?;
        let user = self.user_for(store, &identity).await?;
        Ok(principal(user, identity.subject, Via::Bearer))
    }

    /// The caller a session cookie names; the user must still exist.
    pub(crate) async fn principal_from_session(
        &self,
        store: &Store,
        cookie: &str,
    ) -> Result<Principal, ApiError> {
        let session = self
            .key
            .open_session(cookie, self.now())
            .map_err(|r| ApiError::Refused(format!("session refused: {r}; sign in again")))?;
        let tenant = TenantId::from(session.tenant.as_str());
        if store
            .spent_links()
            .is_spent(&signed_out_scope(), &cookie_digest(cookie))
            .await?
        {
            return Err(ApiError::Refused(
                "session refused: it was signed out; sign in again".into(),
            ));
        }
        let user = store
            .tenants()
            .get_user(&tenant, &UserId::from(session.user_id.as_str()))
            .await?
            .filter(|u| u.sso_subject.as_deref() == Some(session.subject.as_str()))
            .ok_or_else(|| ApiError::Refused("session refused: the user is gone".into()))?;
        refuse_deactivated(&user)?;
        Ok(principal(user, session.subject, Via::Session))
    }

    /// Whether a cookie-authenticated request may come from where it says it comes from: safe
    /// methods always; others only without an `Origin` or from workmate's own origin (that of
    /// the redirect URL). `SameSite=Lax` already keeps other sites' forms from sending the
    /// cookie; this also refuses sibling origins of the same site.
    pub(crate) fn allows_origin(&self, method: &Method, headers: &HeaderMap) -> bool {
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return true;
        }
        let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
            return true;
        };
        origin.trim_end_matches('/')
            == self
                .oidc
                .redirect_url()
                .origin()
                .ascii_serialization()
                .as_str()
    }

    /// The user bound to the identity's subject, created or brought up to date (name, email,
    /// role from groups).
    async fn user_for(&self, store: &Store, identity: &Identity) -> Result<User, ApiError> {
        let tenant = match &identity.tenant {
            // The provider names the tenant (`[auth.oidc] tenant_claim`).
            Some(tenant) => TenantId::from(tenant.as_str()),
            None => TenantId::from(DEFAULT_TENANT),
        };
        let wanted = NewUser {
            id: UserId::from(format!("{SSO_USER_PREFIX}{}", identity.subject)),
            display_name: identity.display_name.clone(),
            email: identity.email.clone(),
            role: store_role(
                self.roles
                    .role_for(identity.groups.iter().map(String::as_str)),
            ),
            sso_subject: Some(identity.subject.clone()),
        };
        let current = store.tenants().get_user(&tenant, &wanted.id).await?;
        if current.is_none() {
            // A tenant the provider names is made the first time someone of it signs in.
            store.tenants().ensure(&tenant, tenant.as_str()).await?;
        }
        if let Some(user) = &current {
            // Offboarded: signing in again does not bring them back.
            refuse_deactivated(user)?;
        }
        if let Some(user) = current.filter(|u| {
            u.display_name == wanted.display_name
                && u.email == wanted.email
                && u.role == wanted.role
                && u.sso_subject == wanted.sso_subject
        }) {
            return Ok(user);
        }
        let user = store.tenants().upsert_user(&tenant, &wanted).await?;
        info!(user = %user.id, role = ?user.role, "Single sign-on user brought up to date.");
        Ok(user)
    }

    pub(super) fn cookie(&self, name: &str, value: &str, path: &str, max_age: i64) -> HeaderValue {
        let secure = if self.oidc.secure_cookies() {
            "; Secure"
        } else {
            ""
        };
        let text = format!(
            "{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
        );
        // Cookie values are base64url and dots; names and paths are constants.
        HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

/// `path` if it is a path on workmate itself (`/…`, not `//host…`), the only place a login may
/// return to.
fn local_path(path: String) -> Result<String, ApiError> {
    let local = path.starts_with('/')
        && !path.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(char::is_control);
    if local && path.len() <= 2_048 {
        Ok(path)
    } else {
        Err(ApiError::BadRequest(
            "return_to must be a path on workmate itself, such as /v1/auth/link?token=…".into(),
        ))
    }
}

/// Refuses a deactivated (offboarded) user, whatever credential they present.
fn refuse_deactivated(user: &User) -> Result<(), ApiError> {
    if user.is_disabled() {
        return Err(ApiError::Forbidden(format!(
            "{} was deactivated; workmate no longer acts for them",
            user.id
        )));
    }
    Ok(())
}

fn principal(user: User, subject: String, via: Via) -> Principal {
    Principal {
        tenant: user.tenant_id,
        actor: Actor::named(user.id, user.display_name),
        surface: None,
        via,
        subject: Some(subject),
    }
}

pub(super) fn store_role(role: Role) -> workmate_store::Role {
    match role {
        Role::Member => workmate_store::Role::Member,
        Role::Approver => workmate_store::Role::Approver,
        Role::Admin => workmate_store::Role::Admin,
    }
}

/// A failed check: the caller's fault is a 401 with the reason; the provider's is a 503.
pub(super) fn refused(error: SsoError) -> ApiError {
    match error {
        SsoError::Refused(refusal) => ApiError::Refused(format!("token refused: {refusal}")),
        other => ApiError::NotReady {
            reason: other.to_string(),
        },
    }
}

pub(super) fn sso(state: &AppState) -> Result<Arc<Sso>, ApiError> {
    state
        .auth
        .sso()
        .ok_or_else(|| ApiError::Missing("single sign-on is not configured ([auth.oidc])".into()))
}

/// The value of cookie `name` in the request, if sent.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim())
}

/// Where to go after signing in.
#[derive(Debug, Deserialize)]
pub(crate) struct Login {
    return_to: Option<String>,
}

/// `GET /v1/auth/login[?return_to=/path]`: to the provider, with the login's state (and where
/// to return, a path on workmate itself) in a short-lived cookie.
pub(crate) async fn login(
    State(state): State<AppState>,
    Query(query): Query<Login>,
) -> Result<Response, ApiError> {
    let sso = sso(&state)?;
    let return_to = query.return_to.map(local_path).transpose()?;
    let mut start = sso.oidc.start_login().await.map_err(refused)?;
    start.state.return_to = return_to;
    let sealed = sso.key.seal_login(&start.state);
    let max_age = start.state.expires_at - sso.now();
    let mut response = (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, start.url.as_str().to_owned())],
    )
        .into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        sso.cookie(LOGIN_COOKIE, &sealed, "/v1/auth", max_age),
    );
    Ok(response)
}

/// What the provider sends back.
#[derive(Debug, Deserialize)]
pub(crate) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /v1/auth/callback`: exchanges the code, checks the ID token, brings the user up to date
/// and sets the session cookie. Browsers (`Accept: text/html`) are sent to `/`; others get JSON.
pub(crate) async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<Callback>,
) -> Result<Response, ApiError> {
    let sso = sso(&state)?;
    if let Some(error) = query.error {
        // Both come from the query string: shown bounded, as text.
        let error: String = error.chars().take(100).collect();
        let detail: String = query
            .error_description
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect();
        return Err(ApiError::Refused(format!(
            "the provider refused the login: {error} {detail}"
        )));
    }
    let (Some(code), Some(returned_state)) = (query.code, query.state) else {
        return Err(ApiError::BadRequest(
            "the callback needs `code` and `state`".into(),
        ));
    };
    let login = cookie(&headers, LOGIN_COOKIE)
        .ok_or_else(|| {
            ApiError::Refused(
                "no login in progress in this browser; start at /v1/auth/login".into(),
            )
        })
        .and_then(|c| {
            sso.key
                .open_login(c, sso.now())
                .map_err(|r| ApiError::Refused(format!("login refused: {r}; start again")))
        })?;
    let identity = sso
        .oidc
        .finish_login(&login, &code, &returned_state)
        .await
        .map_err(refused)?;
    let user = sso.user_for(&state.store, &identity).await?;
    sso.refresh_directory(&state.store, &user, &identity)
        .await?;
    let record = workmate_store::NewAuditRecord {
        actor: Some(user.id.as_str().to_owned()),
        stage: "signed_in".into(),
        status: Some("ok".into()),
        detail: json!({
            "subject": identity.subject,
            "role": user.role,
            "groups": identity.groups,
            "return_to": login.return_to,
        }),
        ..workmate_store::NewAuditRecord::default()
    };
    state.store.audit().append(&user.tenant_id, &record).await?;
    let expires_at = sso.now() + SESSION_TTL_SECS;
    let session = Session {
        subject: identity.subject.clone(),
        tenant: user.tenant_id.as_str().to_owned(),
        user_id: user.id.as_str().to_owned(),
        expires_at,
    };
    info!(user = %user.id, "Signed in through single sign-on.");
    let browser = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    let mut response = if browser {
        let to = login.return_to.as_deref().unwrap_or("/");
        (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
    } else {
        Json(json!({
            "user_id": user.id.as_str(),
            "display_name": user.display_name,
            "role": user.role,
            "groups": identity.groups,
            "expires_at": expires_at,
            "return_to": login.return_to,
        }))
        .into_response()
    };
    let cookies = response.headers_mut();
    cookies.append(
        header::SET_COOKIE,
        sso.cookie(
            SESSION_COOKIE,
            &sso.key.seal_session(&session),
            "/",
            SESSION_TTL_SECS,
        ),
    );
    cookies.append(
        header::SET_COOKIE,
        sso.cookie(LOGIN_COOKIE, "", "/v1/auth", 0),
    );
    Ok(response)
}

/// Where signed-out session cookies are remembered until they would have expired (not a tenant).
fn signed_out_scope() -> TenantId {
    TenantId::from("auth:signed-out")
}

/// What is remembered of a signed-out cookie: its SHA-256, in hex.
fn cookie_digest(cookie: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(cookie.as_bytes()))
}

/// `POST /v1/auth/logout`: clears the session cookie and ends it on the server too (a copy of
/// it, kept elsewhere, no longer signs anyone in); returns the provider's end-session URL
/// when it has one, to end the provider's own session too. Only from workmate's own origin (or
/// none): another site cannot sign people out.
pub(crate) async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let sso = sso(&state)?;
    if !sso.allows_origin(&Method::POST, &headers) {
        return Err(ApiError::Forbidden(
            "signing out is only accepted from workmate's own pages (the Origin is another \
             site's)"
                .into(),
        ));
    }
    if let Some(value) = cookie(&headers, SESSION_COOKIE).filter(|v| !v.is_empty())
        && sso.key.open_session(value, sso.now()).is_ok()
    {
        let spent = state.store.spent_links();
        spent
            .spend(&signed_out_scope(), &cookie_digest(value), "signed_out")
            .await?;
        // Cookies signed out longer ago than a session lives are expired anyway.
        let before_ms = (sso.now() - SESSION_TTL_SECS) * 1000;
        if let Err(e) = spent.forget_before(&signed_out_scope(), before_ms).await {
            tracing::debug!(error = %e, "Old signed-out sessions were not forgotten this time.");
        }
    }
    let end_session_url = sso.oidc.end_session_url().await.map(|u| u.to_string());
    let mut response = Json(json!({
        "signed_out": true,
        "end_session_url": end_session_url,
    }))
    .into_response();
    response
        .headers_mut()
        .append(header::SET_COOKIE, sso.cookie(SESSION_COOKIE, "", "/", 0));
    Ok(response)
}

/// `GET /v1/auth/me`: who the caller is, their role and how they authenticated.
pub(crate) async fn me(
    State(state): State<AppState>,
    axum::Extension(principal): axum::Extension<Principal>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let user = state
        .store
        .tenants()
        .get_user(&principal.tenant, &principal.actor.user_id)
        .await?;
    Ok(Json(json!({
        "tenant": principal.tenant.as_str(),
        "user_id": principal.actor.user_id.as_str(),
        "display_name": principal.actor.name,
        "role": user.map(|u| u.role),
        "via": principal.via.as_str(),
        "surface": principal.surface,
        "subject": principal.subject,
    })))
}
