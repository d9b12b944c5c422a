//! The chat platforms workmate answers on: each configured one is [`Mounted`] (its routes and
//! its long connection, wired to the chat layer), and the server holds them as one list,
//! [`Platforms`].
//!
//! Each platform's wire format lives in its adapter crate and everything platform-neutral in
//! `workmate-chat`; a platform module here only checks requests, mounts routes and starts
//! connections.
//!
//! Invariants: nothing outside [`Platforms::mount`] names a platform; a route of a platform that
//! is not configured answers 404 with "<platform> is not configured"; on shutdown every
//! platform's connection closes (handing its lease to another replica) before the chat layer
//! stops.

pub mod dingtalk;
pub mod feishu;
pub mod slack;
pub mod wecom;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::routing::any;
use workmate_adapter::BoxFuture;
use workmate_chat::Chat;
use workmate_protocol::Surface;

use crate::config::Config;
use crate::error::StartupError;
use crate::http::{ApiError, AppState};
use crate::sandbox::DemoSandbox;

/// A configured platform, as the server mounts it.
pub trait Mounted: Any + Send + Sync + fmt::Debug {
    /// The platform.
    fn surface(&self) -> Surface;

    /// Its routes, under `/v1/platforms/<surface>/`.
    fn routes(&self) -> Router<AppState>;

    /// Closes its long connection, if any, handing it to another replica. The chat layer is
    /// stopped by its owner.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// The configured platforms.
#[derive(Clone, Debug, Default)]
pub struct Platforms(Vec<Arc<dyn Mounted>>);

impl Platforms {
    /// The given platforms (tests mount one or two).
    pub fn of(mounted: impl IntoIterator<Item = Arc<dyn Mounted>>) -> Self {
        Self(mounted.into_iter().collect())
    }

    /// Every platform `config` (or the demo's `sandbox`, which takes precedence) configures,
    /// registered with `chat`. Must be called inside a tokio runtime.
    pub(crate) fn mount(
        config: &Config,
        sandbox: Option<&DemoSandbox>,
        chat: &Chat,
    ) -> Result<Self, StartupError> {
        let platforms = &config.platforms;
        let network = &config.network.policy;
        let refused = |section: &str, e: &dyn fmt::Display| {
            StartupError::Usage(format!("[platforms.{section}]: {e}"))
        };
        let mut mounted: Vec<Arc<dyn Mounted>> = Vec::new();
        if let Some(c) = sandbox.map(|s| &s.slack).or(platforms.slack.as_ref()) {
            mounted.push(slack::SlackSurface::new(c, chat).map_err(|e| refused("slack", &e))?);
        }
        if let Some(c) = sandbox.map(|s| &s.feishu).or(platforms.feishu.as_ref()) {
            mounted.push(feishu::FeishuSurface::new(c, chat).map_err(|e| refused("feishu", &e))?);
        }
        if let Some(c) = sandbox.map(|s| &s.wecom).or(platforms.wecom.as_ref()) {
            let surface = wecom::WeComSurface::new(c, chat, network);
            mounted.push(surface.map_err(|e| refused("wecom", &e))?);
        }
        if let Some(c) = sandbox.map(|s| &s.dingtalk).or(platforms.dingtalk.as_ref()) {
            let surface = dingtalk::DingTalkSurface::new(c, chat, network);
            mounted.push(surface.map_err(|e| refused("dingtalk", &e))?);
        }
        Ok(Self(mounted))
    }

    /// The mounted platform of type `T`, if configured.
    pub fn get<T: Mounted>(&self) -> Option<Arc<T>> {
        self.0.iter().find_map(|mounted| {
            let mounted: Arc<dyn Mounted> = Arc::clone(mounted);
            let any: Arc<dyn Any + Send + Sync> = mounted;
            any.downcast::<T>().ok()
        })
    }

    /// The mounted platform of type `T`, or the 404 that says `surface` is not configured.
    pub(crate) fn require<T: Mounted>(&self, surface: Surface) -> Result<Arc<T>, ApiError> {
        self.get::<T>().ok_or_else(|| not_configured(surface))
    }

    /// Every mounted platform's routes, and a 404 that says so under the others'.
    pub(crate) fn routes(&self) -> Router<AppState> {
        self.0.iter().fold(
            Router::new().route(
                "/v1/platforms/{platform}/{*rest}",
                any(|Path((platform, _)): Path<(String, String)>| async move {
                    match platform.parse::<Surface>() {
                        Ok(surface) if surface.is_chat() => not_configured(surface),
                        _ => ApiError::Missing(format!("no platform is called {platform:?}")),
                    }
                }),
            ),
            |router, mounted| router.merge(mounted.routes()),
        )
    }

    /// Closes every platform's long connection, one after the other.
    pub async fn shutdown(&self) {
        for mounted in &self.0 {
            mounted.close().await;
        }
    }
}

/// A request header's value as text, empty when absent or not text (the check that reads it
/// then fails).
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// A delivery the chat layer could not store: `503`, so the platform delivers it again.
pub(crate) fn not_stored(surface: Surface, error: impl fmt::Display) -> ApiError {
    ApiError::NotReady {
        reason: format!("{} delivery not stored: {error}", surface.label()),
    }
}

fn not_configured(surface: Surface) -> ApiError {
    ApiError::Missing(format!("{} is not configured", surface.label()))
}
