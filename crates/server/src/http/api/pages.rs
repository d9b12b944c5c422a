//! Pages for people in a browser, behind single sign-on: the admin page (`GET /admin`) and the
//! sign-in guard of the demo's sandbox page.
//!
//! Invariants: a page is shown only to a valid session cookie (a browser without one is sent to
//! sign in and brought back); the admin page only to a tenant admin, and only their tenant's
//! settings and people; it changes nothing (changes go through the API, with the same session);
//! every value shown is escaped. Without single sign-on the sandbox stays open, as the local
//! demo it is, and the admin page says how to administer workmate instead.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use workmate_engine::tenant_settings::describe;
use workmate_store::{InboxFilter, InboxItemState, Role};

use super::auth::Principal;
use super::sso::{SESSION_COOKIE, cookie};
use crate::http::{ApiError, AppState};

/// The signed-in person a browser's session cookie names, when it is valid.
pub(super) async fn browser_principal(state: &AppState, headers: &HeaderMap) -> Option<Principal> {
    let sso = state.auth.sso()?;
    let value = cookie(headers, SESSION_COOKIE).filter(|v| !v.is_empty())?;
    sso.principal_from_session(&state.store, value).await.ok()
}

/// A redirect to sign in, then back to `path` (a path on workmate itself).
pub(super) fn sign_in_then(path: &str) -> Response {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("return_to", path)
        .finish();
    let to = format!("/v1/auth/login?{query}");
    (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
}

/// Whether `path` is one of the sandbox's pages or the calls its page makes (not the platform
/// APIs it stands in for, which workmate calls with the sandbox's generated secrets).
fn is_sandbox_page(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/sandbox") else {
        return false;
    };
    let rest = rest.trim_start_matches('/');
    let leaf = |p: &str| matches!(p, "state" | "say" | "click");
    match rest.split_once('/') {
        None => rest.is_empty() || leaf(rest),
        Some((platform, tail)) => matches!(platform, "feishu" | "wecom" | "dingtalk") && leaf(tail),
    }
}

/// With single sign-on, the sandbox page and its calls need a signed-in session: a browser
/// opening the page is sent to sign in first; a call without a session gets 401.
pub(crate) async fn guard_sandbox(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    if state.auth.sso().is_none() || !is_sandbox_page(&path) {
        return next.run(request).await;
    }
    if browser_principal(&state, request.headers()).await.is_some() {
        return next.run(request).await;
    }
    if path == "/sandbox" {
        return sign_in_then("/sandbox");
    }
    ApiError::Refused("sign in first: open /sandbox in the browser".into()).into_response()
}

/// `GET /admin`: who is signed in, the tenant's settings with their defaults, its admins and
/// approvers (and whether each is linked to the directory), and its pending prompts.
pub(crate) async fn admin(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if state.auth.sso().is_none() {
        let body = "<h1>workmate admin</h1><p>The admin page needs single sign-on \
                    (<code>[auth.oidc]</code>). Without it, administer workmate through the HTTP \
                    API with the admin token, or with <code>/workmate settings</code> in chat.</p>";
        return (StatusCode::NOT_FOUND, page(body)).into_response();
    }
    let Some(principal) = browser_principal(&state, &headers).await else {
        return sign_in_then("/admin");
    };
    match admin_page(&state, &principal).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn admin_page(state: &AppState, principal: &Principal) -> Result<Response, ApiError> {
    let tenants = state.store.tenants();
    let me = tenants
        .get_user(&principal.tenant, &principal.actor.user_id)
        .await?
        .ok_or_else(|| ApiError::Refused("your user is gone; sign in again".into()))?;
    let name = escape(&me.display_name);
    let signed_in = format!(
        "<p>Signed in as <b>{name}</b> ({role}) in tenant <code>{tenant}</code>. \
         <form method=\"post\" action=\"/v1/auth/logout\" style=\"display:inline\">\
         <button type=\"submit\">Sign out</button></form></p>",
        role = role_name(me.role),
        tenant = escape(principal.tenant.as_str()),
    );
    if me.role != Role::Admin {
        let body = format!(
            "<h1>workmate admin</h1>{signed_in}<p>This page is for tenant admins; your \
             directory groups do not make you one.</p>"
        );
        return Ok((StatusCode::FORBIDDEN, page(&body)).into_response());
    }
    let settings = tenants.settings(&principal.tenant).await?;
    let rows: String = describe(&settings)
        .iter()
        .map(|(key, value)| {
            format!(
                "<tr><td><code>{}</code></td><td>{}</td></tr>",
                escape(key),
                escape(value)
            )
        })
        .collect();
    let mut people = String::new();
    for role in [Role::Admin, Role::Approver] {
        for user in tenants.users_with_role(&principal.tenant, role).await? {
            let linked = match (&user.sso_subject, user.is_disabled()) {
                (_, true) => "deactivated".to_owned(),
                (Some(subject), false) => format!("linked to <code>{}</code>", escape(subject)),
                (None, false) => "not linked".to_owned(),
            };
            people.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{linked}</td></tr>",
                escape(&user.display_name),
                escape(user.id.as_str()),
                role_name(user.role),
            ));
        }
    }
    let pending = state
        .store
        .inbox()
        .list(
            &principal.tenant,
            &InboxFilter {
                state: Some(InboxItemState::Pending),
                ..InboxFilter::default()
            },
            500,
        )
        .await?
        .len();
    let body = format!(
        "<h1>workmate admin</h1>{signed_in}\
         <h2>Settings</h2><table>{rows}</table>\
         <p>Change one with <code>PATCH /v1/tenant/settings</code> (this session works) or \
         <code>/workmate settings &lt;key&gt; &lt;value&gt;</code> in chat.</p>\
         <h2>Admins and approvers</h2><table>{people}</table>\
         <p>Offboard someone with <code>POST /v1/users/&lt;id&gt;/deprovision</code>.</p>\
         <h2>Inbox</h2><p>{pending} pending prompt(s).</p>"
    );
    Ok(page(&body).into_response())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Member => "member",
        Role::Approver => "approver",
        Role::Admin => "admin",
    }
}

/// An HTML page around `body`.
pub(crate) fn page(body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>workmate</title>\
         <meta name=\"viewport\" content=\"width=device-width\"></head>\
         <body style=\"font-family: sans-serif; max-width: 48em; margin: 3em auto\">{body}\
         </body></html>"
    ))
}

/// `text` safe to put in HTML text or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_sandbox_pages_are_guarded() {
        for path in [
            "/sandbox",
            "/sandbox/state",
            "/sandbox/say",
            "/sandbox/feishu/click",
            "/sandbox/dingtalk/state",
        ] {
            assert!(is_sandbox_page(path), "{path}");
        }
        for path in [
            "/sandbox/api/chat.postMessage",
            "/sandbox/feishu/open-apis/im/v1/messages",
            "/sandboxes",
            "/admin",
        ] {
            assert!(!is_sandbox_page(path), "{path}");
        }
    }

    #[test]
    fn escaping_leaves_no_markup() {
        assert_eq!(
            escape("<b onclick='x'>\"&\""),
            "&lt;b onclick=&#39;x&#39;&gt;&quot;&amp;&quot;"
        );
    }
}
