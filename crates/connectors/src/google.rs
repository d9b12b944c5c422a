//! What Gmail and Google Calendar share: a person's Google OAuth grant. The credentials hold a
//! refresh token with the OAuth client it was issued to (exchanged for an access token, reused
//! until shortly before it expires), or a bare access token.

use secrecy::ExposeSecret;
use workmate_identity::TokenClient;
use workmate_tools::ToolError;

use crate::http::Issued;
use crate::{Credentials, Field, Http};

/// Google's token endpoint.
const TOKEN_URL: &str = "https://oauth2.googleapis.com/token";

/// The connect form of a Google connector (filled in by the OAuth connect flow).
pub(crate) fn fields() -> Vec<Field> {
    vec![
        Field {
            key: "refresh_token",
            label: "Refresh token",
            secret: true,
            required: false,
            help: "Set by signing in with Google (/workmate connectors).",
        },
        Field {
            key: "client_id",
            label: "OAuth client id",
            secret: false,
            required: false,
            help: "The OAuth client the refresh token was issued to.",
        },
        Field {
            key: "client_secret",
            label: "OAuth client secret",
            secret: true,
            required: false,
            help: "That client's secret.",
        },
        Field {
            key: "token",
            label: "Access token",
            secret: true,
            required: false,
            help: "Instead of a refresh token: an access token (valid for an hour).",
        },
    ]
}

/// An access token for the owner of `credentials` (the `connector`'s).
pub(crate) async fn access_token(
    http: &Http,
    credentials: &Credentials,
    connector: &str,
) -> Result<String, ToolError> {
    let Some(refresh) = credentials.get("refresh_token") else {
        return credentials
            .require(connector, "token")
            .map(str::to_owned)
            .map_err(|_| {
                ToolError::new(format!(
                    "the {connector} credentials have neither a refresh token nor an access token: connect {connector} again (/workmate connectors {connector})"
                ))
            });
    };
    let client_id = crate::connector::field(credentials, connector, "client_id")?;
    let client_secret = crate::connector::field(credentials, connector, "client_secret")?;
    let token_url = credentials.get("token_url").unwrap_or(TOKEN_URL);
    let token_url = url::Url::parse(token_url)
        .map_err(|e| ToolError::new(format!("the {connector} token_url is not a URL: {e}")))?;
    let token = http
        .access_token(&["google", token_url.as_str(), client_id, refresh], || async {
            let endpoint = TokenClient {
                client_id,
                client_secret,
                token_url: &token_url,
                resource: None,
            };
            let grant = endpoint.refresh(http.egress(), refresh).await.map_err(|e| {
                ToolError::new(format!(
                    "Google did not renew the {connector} sign-in ({e}): connect it again with /workmate connectors {connector}"
                ))
            })?;
            Ok(Issued::new(
                grant.access_token.expose_secret(),
                grant.expires_in.unwrap_or(3600),
            ))
        })
        .await?;
    Ok(token.expose_secret().to_owned())
}
