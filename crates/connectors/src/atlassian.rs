//! What Jira and Confluence share: an Atlassian site, an account e-mail and an API token, sent as
//! HTTP basic authentication.

use workmate_tools::ToolError;

use crate::connector::{field, trimmed};
use crate::http::{Api, Auth};
use crate::{Credentials, Field, Http};

/// The connect form of an Atlassian connector.
pub(crate) fn fields() -> Vec<Field> {
    vec![
        Field {
            key: "base_url",
            label: "Site URL",
            secret: false,
            required: true,
            help: "e.g. https://acme.atlassian.net",
        },
        Field {
            key: "email",
            label: "Account e-mail",
            secret: false,
            required: true,
            help: "The Atlassian account the token belongs to.",
        },
        Field {
            key: "api_token",
            label: "API token",
            secret: true,
            required: true,
            help: "Create one at id.atlassian.com → Security → API tokens.",
        },
    ]
}

/// The site's API as the owner of `credentials` (the `connector`'s).
pub(crate) fn api<'a>(
    http: &'a Http,
    credentials: &'a Credentials,
    connector: &str,
    system: &'static str,
) -> Result<Api<'a>, ToolError> {
    Ok(Api {
        http,
        system,
        base: trimmed(field(credentials, connector, "base_url")?),
        auth: Auth::Basic(
            field(credentials, connector, "email")?,
            field(credentials, connector, "api_token")?,
        ),
        headers: &[],
    })
}
