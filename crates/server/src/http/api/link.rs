//! Chat accounts linked to directory subjects over HTTP: `GET /v1/auth/link?token=…` (sign in
//! if needed, then a page naming the account to link) and `POST /v1/auth/link` (the link), the
//! [`AccountLinks`] the chat layer makes its cards' URLs with, and every linked account brought
//! up to date with the directory at each sign-in.
//!
//! Invariants: nothing is linked on a `GET`; the `POST` needs a single-sign-on caller (session
//! cookie from workmate's own origin, or a provider-signed bearer token) and a token that
//! verifies and has not expired; the account is linked to the caller's subject only, never to
//! one named in the request; a role comes from the account's tenant's `auth_groups` when set,
//! else from `[auth.groups]` when any group is configured there, else the account keeps its
//! role; every page escapes what it shows.

use std::fmt;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};
use workmate_chat::{AccountLinks, LinkRequest};
use workmate_engine::binding::auth_groups;
use workmate_identity::{Clock, GroupRoles, Identity, LINK_TTL_SECS, LinkClaim, SessionKey};
use workmate_protocol::{TenantId, UserId};
use workmate_store::{DirectoryFacts, Role, Store, User};

use super::auth::{DEFAULT_TENANT, Principal};
use super::pages::{browser_principal, escape, page, sign_in_then};
use super::sso::{Sso, sso, store_role};
use crate::http::{ApiError, AppState};

/// Makes the link URLs of "link your account" cards: a token sealed with the session key.
pub struct SsoLinks {
    key: SessionKey,
    origin: String,
    clock: Clock,
}

impl fmt::Debug for SsoLinks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsoLinks")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl AccountLinks for SsoLinks {
    fn link_url(&self, account: &LinkRequest) -> String {
        let claim = LinkClaim {
            tenant: account.tenant.as_str().to_owned(),
            platform: account.platform.as_str().to_owned(),
            platform_user: account.platform_user.clone(),
            user_id: account.user.as_str().to_owned(),
            name: account.name.clone(),
            expires_at: self.clock.now().timestamp() + LINK_TTL_SECS,
        };
        // The token is base64url and a dot: nothing to escape in a query.
        format!(
            "{}/v1/auth/link?token={}",
            self.origin,
            self.key.seal_link(&claim)
        )
    }
}

impl Sso {
    /// What makes the chat layer's link URLs, on workmate's own origin (that of the redirect
    /// URL).
    pub fn links(&self) -> SsoLinks {
        SsoLinks {
            key: self.key.clone(),
            origin: self.oidc.redirect_url().origin().ascii_serialization(),
            clock: self.oidc.clock().clone(),
        }
    }

    /// The role `groups` give in a tenant with `settings`, if any mapping applies there.
    fn role_in(&self, settings: &Value, groups: &[String]) -> Option<Role> {
        let groups = groups.iter().map(String::as_str);
        match auth_groups(settings) {
            Some(mapping) => Some(store_role(
                GroupRoles::new(mapping.admin, mapping.approver).role_for(groups),
            )),
            None if !self.roles.is_empty() => Some(store_role(self.roles.role_for(groups))),
            None => None,
        }
    }

    /// Records the signed-in person's groups on their user, and brings every chat account
    /// linked to them up to date (e-mail, groups, role in its tenant). An account that cannot be
    /// updated (deactivated) is left as it is.
    pub(super) async fn refresh_directory(
        &self,
        store: &Store,
        user: &User,
        identity: &Identity,
    ) -> Result<(), ApiError> {
        let bindings = store.bindings();
        let facts = DirectoryFacts {
            subject: identity.subject.clone(),
            email: identity.email.clone(),
            groups: identity.groups.clone(),
            role: Some(user.role),
        };
        bindings
            .bind(&user.tenant_id, &user.id, &facts, "sign_in")
            .await?;
        for account in bindings.bound_to(&identity.subject).await? {
            if account.tenant_id == user.tenant_id && account.id == user.id {
                continue;
            }
            let settings = store.tenants().settings(&account.tenant_id).await?;
            let facts = DirectoryFacts {
                role: self.role_in(&settings, &identity.groups),
                ..facts.clone()
            };
            if let Err(e) = bindings
                .bind(&account.tenant_id, &account.id, &facts, "sign_in")
                .await
            {
                warn!(tenant = %account.tenant_id, user = %account.id, error = %e, "A linked chat account was not brought up to date.");
            }
        }
        Ok(())
    }
}

/// The token a link request carries.
#[derive(Debug, Deserialize)]
pub(crate) struct LinkToken {
    token: Option<String>,
}

/// The claim in `token`, or why not.
fn open_claim(sso: &Sso, token: Option<&str>) -> Result<LinkClaim, ApiError> {
    let token = token
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| ApiError::BadRequest("the link needs its `token`".into()))?;
    sso.key.open_link(token, sso.now()).map_err(|refusal| {
        ApiError::Refused(format!(
            "this link is not valid ({refusal}); ask workmate for a new one with `/workmate link`"
        ))
    })
}

fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// `GET /v1/auth/link?token=…`: sends a browser without a session to sign in first (and back
/// here); then shows which chat account the link is for, with a button that links it. Programs
/// (no `text/html` in `Accept`) get the same as JSON.
pub(crate) async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<LinkToken>,
) -> Result<Response, ApiError> {
    let sso = sso(&state)?;
    let claim = open_claim(&sso, query.token.as_deref())?;
    let Some(principal) = browser_principal(&state, &headers).await else {
        let back = format!(
            "/v1/auth/link?token={}",
            query.token.as_deref().unwrap_or_default()
        );
        return Ok(sign_in_then(&back));
    };
    if !wants_html(&headers) {
        return Ok(Json(json!({
            "account": account_json(&claim),
            "you": {"user_id": principal.actor.user_id.as_str(), "subject": principal.subject},
            "confirm": "POST /v1/auth/link with this token",
        }))
        .into_response());
    }
    let you = principal.actor.name.clone().unwrap_or_default();
    let body = format!(
        "<h1>Link your account</h1>\
         <p>Link the {platform} account <b>{name}</b> (<code>{platform_user}</code>) to your \
         company account <b>{you}</b> (<code>{subject}</code>)?</p>\
         <p>workmate will then act for that chat account with your directory groups. Link it \
         only if the chat account is yours.</p>\
         <form method=\"post\" action=\"/v1/auth/link\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button type=\"submit\">Link my account</button></form>",
        platform = escape(&platform_label(&claim.platform)),
        name = escape(&claim.name),
        platform_user = escape(&claim.platform_user),
        you = escape(&you),
        subject = escape(principal.subject.as_deref().unwrap_or_default()),
        token = escape(query.token.as_deref().unwrap_or_default()),
    );
    Ok(page(&body).into_response())
}

/// `POST /v1/auth/link`: links the token's chat account to the caller's directory subject. The
/// body is a form (`token=…`, from the page) or JSON (`{"token": "…"}`).
pub(crate) async fn link(
    State(state): State<AppState>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let sso = sso(&state)?;
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let token = if form {
        url::form_urlencoded::parse(&body)
            .find(|(k, _)| k == "token")
            .map(|(_, v)| v.into_owned())
    } else {
        serde_json::from_slice::<LinkToken>(&body)
            .map_err(|e| {
                ApiError::BadRequest(format!("the body must be {{\"token\": \"…\"}}: {e}"))
            })?
            .token
    };
    let claim = open_claim(&sso, token.as_deref())?;
    let Some(subject) = principal.subject.clone() else {
        return Err(ApiError::Forbidden(
            "only a person signed in through single sign-on can link a chat account to their \
             directory account"
                .into(),
        ));
    };
    let me = state
        .store
        .tenants()
        .get_user(&principal.tenant, &principal.actor.user_id)
        .await?
        .ok_or_else(|| ApiError::Refused("your user is gone; sign in again".into()))?;
    let tenant = TenantId::from(claim.tenant.as_str());
    // A person whose provider names their organisation (`tenant_claim`) links only accounts of
    // that organisation's workspace.
    if principal.tenant.as_str() != DEFAULT_TENANT && principal.tenant != tenant {
        return Err(ApiError::Forbidden(format!(
            "this link is for an account in workspace {}, and you are signed in to workspace {}; \
             sign in with an account of that workspace",
            tenant.as_str(),
            principal.tenant.as_str()
        )));
    }
    let settings = state.store.tenants().settings(&tenant).await?;
    let facts = DirectoryFacts {
        subject: subject.clone(),
        email: me.email.clone(),
        role: sso.role_in(&settings, &me.directory_groups),
        groups: me.directory_groups,
    };
    let account = UserId::from(claim.user_id.as_str());
    let (user, new) = match state
        .store
        .bindings()
        .bind(&tenant, &account, &facts, "link")
        .await
    {
        Ok(done) => done,
        Err(workmate_store::Error::NotFound { .. }) => {
            return Err(ApiError::Missing(
                "the chat account of this link no longer exists".into(),
            ));
        }
        Err(workmate_store::Error::Invalid(reason)) => {
            return Err(ApiError::Conflict {
                message: reason,
                detail: Value::Null,
            });
        }
        Err(e) => return Err(e.into()),
    };
    info!(tenant = %tenant, user = %user.id, subject = %subject, new, "A chat account was linked to the directory.");
    if form || wants_html(&headers) {
        let body = format!(
            "<h1>Linked</h1><p>Your {platform} account <b>{name}</b> is linked to your company \
             account. You can close this page and go back to the chat.</p>",
            platform = escape(&platform_label(&claim.platform)),
            name = escape(&claim.name),
        );
        return Ok(page(&body).into_response());
    }
    Ok(Json(json!({
        "linked": true,
        "new": new,
        "tenant": tenant.as_str(),
        "user_id": user.id.as_str(),
        "role": user.role,
        "account": account_json(&claim),
    }))
    .into_response())
}

fn account_json(claim: &LinkClaim) -> Value {
    json!({
        "tenant": claim.tenant,
        "platform": claim.platform,
        "platform_user": claim.platform_user,
        "user_id": claim.user_id,
        "name": claim.name,
    })
}

fn platform_label(platform: &str) -> String {
    platform.parse::<workmate_protocol::Surface>().map_or_else(
        |_| platform.to_owned(),
        |surface| surface.platform().label().to_owned(),
    )
}
