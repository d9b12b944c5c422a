//! What the connect pages show: the form, the notices, and the refusals, every value escaped.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use workmate_identity::ConnectClaim;

use super::proof::{CODE_FIELD, Proof, Refused};
use super::{ConnectPages, LINK_FIELD, OAUTH_PATH, Target};
use crate::http::api::pages::{escape, page};

/// Why a connect link does not count.
#[derive(Clone, Copy, Debug)]
pub(super) enum BadLink {
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

pub(super) fn notice(status: StatusCode, title: &str, body_html: &str) -> Response {
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

/// The page asking a person whose chat account is bound to single sign-on to sign in first.
pub(super) fn sign_in_first(claim: &ConnectClaim, token: &str) -> Response {
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

pub(super) fn form_page(
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

/// The page for a link whose target cannot be signed in to (`why`), with what to do (`then`,
/// HTML).
pub(super) fn no_sign_in(why: &str, then: &str) -> Response {
    notice(
        StatusCode::NOT_FOUND,
        "No sign-in for this",
        &format!("{}. {then}", escape(why)),
    )
}

pub(super) fn connected(target: &Target<'_>, claim: &ConnectClaim) -> Response {
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
