//! Who is calling the API: a person signed in through single sign-on (session cookie or a
//! provider-signed bearer token, see [`super::sso`]), a surface's token acting for a person, or
//! the admin token (always without single sign-on; with it, only as the break-glass switch
//! `[auth] break_glass_admin_token` allows).
//!
//! Invariants: every `/v1` route except the published contract and the login routes requires a
//! credential; a presented bearer token is checked as a static token first, then (when it looks
//! like a JWT and single sign-on is configured) as a provider-signed token; tokens are
//! trimmed, compared in constant time and never logged; only a surface token
//! (`[server.surface_tokens]`) may name the person it acts for (`X-Workmate-Acting-User`), and it
//! must (a surface is not a person, so it gets no authority of its own); the admin token always
//! acts as the admin and is refused when it names someone else; a token file in the data directory
//! is readable by its owner only, which is enforced (and repaired) on every start.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use secrecy::{ExposeSecret, SecretString};
use tracing::warn;
use workmate_protocol::{Actor, TenantId, UserId};

use super::sso::{SESSION_COOKIE, Sso, cookie};
use crate::config::SurfaceGrants;
use crate::http::{ApiError, AppState};

/// The file a generated admin token is kept in, inside the data directory.
pub const TOKEN_FILE: &str = "admin_token";

/// The tenant the admin token and surface tokens act in.
pub const DEFAULT_TENANT: &str = "default";

/// The user the admin token acts as.
pub const ADMIN_USER: &str = "admin";

/// The header a surface names the person it acts for with; that person must be a user of the
/// tenant.
pub const ACTING_USER_HEADER: &str = "x-workmate-acting-user";

/// The caller of an authenticated request.
#[derive(Clone, Debug)]
pub struct Principal {
    /// The tenant every call of this caller is scoped to.
    pub tenant: TenantId,
    /// Who they are.
    pub actor: Actor,
    /// The surface that acts for them (`None`: the admin token or single sign-on).
    pub surface: Option<String>,
    /// How they proved it.
    pub via: Via,
    /// Their single-sign-on subject, when they signed in that way.
    pub subject: Option<String>,
}

impl Principal {
    /// Refuses anyone but an admin of the caller's tenant: `403` saying that only admins may
    /// `action` (e.g. "change its settings").
    pub(crate) async fn require_admin(
        &self,
        store: &workmate_store::Store,
        action: &str,
    ) -> Result<(), ApiError> {
        if self.is_admin(store).await? {
            return Ok(());
        }
        Err(ApiError::Forbidden(format!(
            "only the tenant's admins may {action}; {} is not one",
            self.actor.user_id
        )))
    }
}

impl Principal {
    /// Whether the caller is an admin of their tenant.
    pub(crate) async fn is_admin(&self, store: &workmate_store::Store) -> Result<bool, ApiError> {
        Ok(store
            .tenants()
            .get_user(&self.tenant, &self.actor.user_id)
            .await?
            .is_some_and(|u| u.role == workmate_store::Role::Admin))
    }
}

/// How a caller authenticated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// The static admin token.
    AdminToken,
    /// A surface's token, acting for a person.
    SurfaceToken,
    /// A single-sign-on session cookie.
    Session,
    /// A bearer JWT signed by the OpenID provider.
    Bearer,
}

impl Via {
    /// The name `/v1/auth/me` reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AdminToken => "admin_token",
            Self::SurfaceToken => "surface_token",
            Self::Session => "session",
            Self::Bearer => "bearer",
        }
    }
}

/// Checks callers' credentials.
#[derive(Clone, Debug)]
pub struct Auth {
    admin: SecretString,
    admin_allowed: bool,
    surfaces: Vec<(String, SecretString, SurfaceGrants)>,
    sso: Option<Arc<Sso>>,
}

/// Whose token was presented.
enum Caller<'a> {
    Admin,
    Surface(&'a str, SurfaceGrants),
}

impl Auth {
    /// The admin token's authority: the default tenant, as the `admin` user. No surface tokens.
    pub fn admin(token: SecretString) -> Self {
        Self {
            admin: trimmed(token),
            admin_allowed: true,
            surfaces: Vec::new(),
            sso: None,
        }
    }

    /// Adds single sign-on; `admin_token_allowed` is `[auth] break_glass_admin_token`.
    #[must_use]
    pub fn with_sso(mut self, sso: Sso, admin_token_allowed: bool) -> Self {
        self.sso = Some(Arc::new(sso));
        self.admin_allowed = admin_token_allowed;
        self
    }

    /// Single sign-on, when configured.
    pub fn sso(&self) -> Option<Arc<Sso>> {
        self.sso.clone()
    }

    /// Adds surface tokens (`name`, token, whom it may act for); each acts for the user its
    /// requests name, within its grants.
    #[must_use]
    pub fn with_surfaces(
        mut self,
        surfaces: impl IntoIterator<Item = (String, SecretString, SurfaceGrants)>,
    ) -> Self {
        self.surfaces.extend(
            surfaces
                .into_iter()
                .map(|(name, t, grants)| (name, trimmed(t), grants)),
        );
        self
    }

    /// The surface whose token equals the admin token, if one does (a startup error).
    pub fn surface_sharing_admin_token(&self) -> Option<&str> {
        self.surfaces
            .iter()
            .find(|(_, t, _)| t.expose_secret() == self.admin.expose_secret())
            .map(|(name, _, _)| name.as_str())
    }

    /// Whose token `presented` is, if anyone's. Every token is compared, so the time taken does
    /// not tell which one matched.
    fn check(&self, presented: &str) -> Option<Caller<'_>> {
        let presented = presented.trim().as_bytes();
        let mut found = None;
        for (name, token, grants) in &self.surfaces {
            if constant_time_eq(presented, token.expose_secret().as_bytes()) && found.is_none() {
                found = Some(Caller::Surface(name.as_str(), *grants));
            }
        }
        if constant_time_eq(presented, self.admin.expose_secret().as_bytes()) {
            return Some(Caller::Admin);
        }
        found
    }
}

fn trimmed(token: SecretString) -> SecretString {
    let text = token.expose_secret();
    if text.trim().len() == text.len() {
        return token;
    }
    SecretString::from(text.trim().to_owned())
}

/// Rejects requests without a valid token or with an acting user the token may not name; passes
/// the caller on as a request extension.
pub(crate) async fn require_token(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let sso = state.auth.sso();
    let caller = match (presented, &sso) {
        (Some(presented), _) => match state.auth.check(presented) {
            Some(Caller::Admin) if !state.auth.admin_allowed => {
                return Err(ApiError::Refused(
                    "the static admin token is off while single sign-on is configured \
                     ([auth] break_glass_admin_token = false); sign in through /v1/auth/login"
                        .into(),
                ));
            }
            Some(caller) => caller,
            // Three dot-separated parts: a JWT for the provider's keys to judge.
            None if presented.split('.').count() == 3 => {
                let Some(sso) = &sso else {
                    return Err(ApiError::Unauthorized);
                };
                let principal = sso.principal_from_bearer(&state.store, presented).await?;
                request.extensions_mut().insert(principal);
                return Ok(next.run(request).await);
            }
            None => return Err(ApiError::Unauthorized),
        },
        (None, Some(sso)) => {
            let Some(value) = cookie(request.headers(), SESSION_COOKIE).filter(|v| !v.is_empty())
            else {
                return Err(ApiError::Unauthorized);
            };
            if !sso.allows_origin(request.method(), request.headers()) {
                return Err(ApiError::Forbidden(
                    "a signed-in browser may change things only from workmate's own origin".into(),
                ));
            }
            let principal = sso.principal_from_session(&state.store, value).await?;
            request.extensions_mut().insert(principal);
            return Ok(next.run(request).await);
        }
        (None, None) => return Err(ApiError::Unauthorized),
    };
    let acting = match request.headers().get(ACTING_USER_HEADER) {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| ApiError::BadRequest(format!("{ACTING_USER_HEADER} must be text")))?
                .trim()
                .to_owned(),
        ),
        None => None,
    };
    let tenant = TenantId::from(DEFAULT_TENANT);
    let principal = match (caller, acting) {
        (Caller::Admin, None) => Principal {
            tenant,
            actor: Actor::named(ADMIN_USER, "Admin"),
            surface: None,
            via: Via::AdminToken,
            subject: None,
        },
        (Caller::Admin, Some(_)) => {
            return Err(ApiError::Forbidden(format!(
                "the admin token acts only as the admin and may not send {ACTING_USER_HEADER}; \
                 a surface acting for people needs its own token ([server.surface_tokens])"
            )));
        }
        (Caller::Surface(surface, _), None) => {
            return Err(ApiError::Forbidden(format!(
                "surface {surface} must name the person it acts for in {ACTING_USER_HEADER}"
            )));
        }
        (Caller::Surface(surface, grants), Some(user)) => {
            if user.is_empty() {
                return Err(ApiError::BadRequest(format!(
                    "{ACTING_USER_HEADER} must name a user"
                )));
            }
            if user == ADMIN_USER {
                let why = format!(
                    "surface {surface} may not act as the built-in {ADMIN_USER} (the admin \
                     token's own user); it acts only for people"
                );
                return Err(refuse_surface(&state, &tenant, surface, &user, why).await);
            }
            let known = state
                .store
                .tenants()
                .get_user(&tenant, &UserId::from(user.as_str()))
                .await?
                .ok_or_else(|| {
                    ApiError::Forbidden(format!("{user} is not a user of this tenant"))
                })?;
            if known.is_disabled() {
                return Err(ApiError::Forbidden(format!(
                    "{user} was deactivated; workmate no longer acts for them"
                )));
            }
            if !grants.allows(known.role) {
                let why = format!(
                    "surface {surface} may not act for {user}, whose role is {role:?}: the \
                     operator grants it only {granted} ([server.surface_grants] {surface})",
                    role = known.role,
                    granted = grants.words().join(" and "),
                );
                return Err(refuse_surface(&state, &tenant, surface, &user, why).await);
            }
            Principal {
                tenant,
                actor: Actor::named(known.id, known.display_name),
                surface: Some(surface.to_owned()),
                via: Via::SurfaceToken,
                subject: None,
            }
        }
    };
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}

/// Records that a surface tried to act for someone it may not, and the `403` that says why.
async fn refuse_surface(
    state: &AppState,
    tenant: &TenantId,
    surface: &str,
    user: &str,
    why: String,
) -> ApiError {
    warn!(
        surface,
        user, "A surface token tried to act beyond its grants."
    );
    let record = workmate_store::NewAuditRecord {
        session_id: None,
        actor: Some(format!("surface:{surface}")),
        stage: "surface_refused".into(),
        tool: None,
        status: Some("refused".into()),
        detail: serde_json::json!({"surface": surface, "acting_user": user, "reason": why}),
    };
    if let Err(e) = state.store.audit().append(tenant, &record).await {
        warn!(error = %e, "Cannot record the refused surface request.");
    }
    ApiError::Forbidden(why)
}

/// The configured token, or the one kept in the data directory, or a new one written there.
/// The flag is `true` when the token was generated by this call. A token file that others could
/// read is made owner-only, with a warning.
pub fn load_or_generate(
    configured: Option<&SecretString>,
    data_dir: &Path,
) -> std::io::Result<(SecretString, bool)> {
    let path = data_dir.join(TOKEN_FILE);
    if let Some(token) = configured {
        if path.exists() {
            restrict(&path)?;
        }
        return Ok((trimmed(token.clone()), false));
    }
    match std::fs::read_to_string(&path) {
        Ok(token) if !token.trim().is_empty() => {
            restrict(&path)?;
            return Ok((SecretString::from(token.trim().to_owned()), false));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let token = format!(
        "wm_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    // An empty file left from before keeps its mode through `open`; restrict it first.
    if path.exists() {
        restrict(&path)?;
    }
    options.open(&path)?.write_all(token.as_bytes())?;
    Ok((SecretString::from(token), true))
}

/// Makes the token file readable and writable by its owner only.
#[cfg(unix)]
fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if mode != 0o600 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        warn!(
            path = %path.display(),
            was = format!("{mode:o}"),
            "The admin token file was not owner-only; its mode is now 600."
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_token_is_kept_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let (first, generated) = load_or_generate(None, dir.path()).unwrap();
        assert!(generated);
        assert!(first.expose_secret().len() >= 64);
        let (second, generated) = load_or_generate(None, dir.path()).unwrap();
        assert!(!generated);
        assert_eq!(first.expose_secret(), second.expose_secret());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_loose_token_file_is_made_owner_only_on_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE);
        std::fs::write(&path, "wm_kept-token-0123456789\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (token, generated) = load_or_generate(None, dir.path()).unwrap();
        assert!(!generated);
        assert_eq!(token.expose_secret(), "wm_kept-token-0123456789");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn tokens_must_match_exactly_after_trimming() {
        let auth = Auth::admin(SecretString::from(" s3cret-token-value\n")).with_surfaces([(
            "slack".to_owned(),
            SecretString::from("surface-token-0123456"),
            SurfaceGrants::default(),
        )]);
        assert!(matches!(
            auth.check("s3cret-token-value"),
            Some(Caller::Admin)
        ));
        assert!(matches!(
            auth.check(" surface-token-0123456 "),
            Some(Caller::Surface("slack", _))
        ));
        assert!(auth.check("s3cret-token-valuE").is_none());
        assert!(auth.check("").is_none());
        assert_eq!(auth.surface_sharing_admin_token(), None);
    }
}
