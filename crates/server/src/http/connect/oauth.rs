//! The connect pages' OAuth sign-in: `POST /v1/connectors/oauth/start` sends the browser to the
//! other system with PKCE (the flow sealed in a cookie of that browser),
//! `GET /v1/connectors/oauth/callback` stores what it granted and spends the link.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::Value;
use tracing::warn;
use workmate_identity::{OAuthApp, OAuthGrant};
use workmate_protocol::{TenantId, UserId};

use super::pages::{connected, no_sign_in, notice};
use super::{ConnectPages, OAUTH_COOKIE, Target, form_of};
use crate::http::api::pages::escape;
use crate::http::api::sso::cookie;

/// `POST /v1/connectors/oauth/start`: off to the other system's sign-in.
pub(super) async fn oauth_start(
    State(pages): State<Arc<ConnectPages>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut form = form_of(&body);
    let (claim, target, _) = match pages.used(&headers, &mut form).await {
        Ok(found) => found,
        Err(refused) => return refused,
    };
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
pub(super) async fn oauth_callback(
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
