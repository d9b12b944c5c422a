//! The connectors as the server runs them: one set, shared by the engine (their tools), the
//! chat layer (`/workmate connectors`) and the connect pages (storing what people connect).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use tracing::info;
use url::Url;
use workmate_connectors::{ConnectorSource, CredentialStore, builtin_connectors};
use workmate_identity::{Clock, OAuthApp, SessionKey};
use workmate_store::Store;

use crate::config::Config;
use crate::error::StartupError;
use crate::http::ConnectPages;

/// The connectors, reading each person's credentials from the vault; `None` without a vault
/// (then no connector is offered, and the log says why).
pub fn connectors(config: &Config, store: &Store) -> Option<Arc<ConnectorSource>> {
    let Some(vault) = crate::engine::vault(config, store) else {
        info!(
            "Connectors are off: they keep credentials in the vault, and no master key is configured ([vault] key_file)."
        );
        return None;
    };
    let network = Arc::clone(&config.network.policy);
    match ConnectorSource::new(builtin_connectors(), CredentialStore::new(vault), network) {
        Ok(source) => Some(Arc::new(source)),
        Err(e) => {
            tracing::error!(error = %e, "Connectors are off.");
            None
        }
    }
}

/// The origin browsers reach workmate at: `[connectors] public_url`, else that of the single
/// sign-on redirect URL, else the listening address (loopback when it listens on all).
fn public_origin(config: &Config, listening: SocketAddr) -> Result<Url, StartupError> {
    if let Some(url) = &config.connectors.public_url {
        return Ok(url.clone());
    }
    if let Some(oidc) = &config.auth.oidc
        && let Ok(url) = Url::parse(&oidc.redirect_url)
    {
        return Ok(url);
    }
    let mut address = listening;
    if address.ip().is_unspecified() {
        address.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    info!(
        origin = %format!("http://{address}"),
        "Connect links point at the listening address; set [connectors] public_url to where people's browsers reach workmate."
    );
    Url::parse(&format!("http://{address}"))
        .map_err(|e| StartupError::Usage(format!("connect links for {address}: {e}")))
}

/// The connect pages for `connectors` and for signing in to `mcp`'s servers that ask for it,
/// their links sealed with the data directory's session key.
pub fn connect_pages(
    config: &Config,
    store: &Store,
    connectors: Arc<ConnectorSource>,
    mcp: Arc<workmate_mcp::McpManager>,
    sso: Option<Arc<crate::http::api::Sso>>,
    listening: SocketAddr,
) -> Result<Arc<ConnectPages>, StartupError> {
    let (key, _) = SessionKey::load_or_generate(&config.server.data_dir).map_err(|e| {
        StartupError::Usage(format!(
            "the session key in {}: {e}",
            config.server.data_dir.display()
        ))
    })?;
    let oauth: HashMap<String, OAuthApp> = config
        .connectors
        .oauth
        .iter()
        .map(|c| {
            let app = OAuthApp {
                client_id: c.client_id.clone(),
                client_secret: c.client_secret.clone(),
                authorize_url: c.authorize_url.clone(),
                token_url: c.token_url.clone(),
                scopes: c.scopes.clone(),
                extra_params: c.extra_params.clone(),
                resource: None,
            };
            (c.connector.clone(), app)
        })
        .collect();
    // The token endpoints the operator configured are theirs to place (an internal IdP).
    let endpoints: Vec<&str> = config
        .connectors
        .oauth
        .iter()
        .map(|c| c.token_url.as_str())
        .collect();
    let http = crate::serve::auth_egress(config, &endpoints).map_err(StartupError::Usage)?;
    let origin = public_origin(config, listening)?;
    let pages = ConnectPages::new(
        connectors,
        store.clone(),
        key,
        &origin,
        oauth,
        http,
        Clock::system(),
    )
    .map_err(StartupError::Usage)?
    .with_mcp(mcp)
    .with_sso(sso);
    Ok(Arc::new(pages))
}
