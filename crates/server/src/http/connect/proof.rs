//! Whether the browser using a connect link is the person it was issued to.
//!
//! Invariants: a link is used only from workmate's own pages (a cross-site `POST` carries
//! another `Origin` and is refused); only once (its id is spent when what it connects is
//! stored, and a spent link is refused everywhere); and only by its person: with single sign-on,
//! one whose chat account is linked must be signed in as themselves; anyone else types the
//! confirmation code that only their private card shows.

use axum::http::{HeaderMap, header};
use workmate_identity::ConnectClaim;
use workmate_protocol::{TenantId, UserId};

use super::ConnectPages;
use crate::http::api::sso::{SESSION_COOKIE, cookie};

/// The form field holding the confirmation code.
pub(super) const CODE_FIELD: &str = "confirmation_code";

/// The confirmation code a form carries (as `confirmation_code`, or plain `code`), taken out of
/// the form so it is never stored with a connector's fields.
pub(super) fn typed_code(form: &mut std::collections::BTreeMap<String, String>) -> Option<String> {
    let named = form.remove(CODE_FIELD);
    let plain = form.remove("code");
    named.or(plain)
}

/// How the person at the browser is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proof {
    /// They are signed in to workmate as the link's person.
    SignedIn,
    /// They must type the card's confirmation code.
    Code,
    /// Their chat account is bound to a single sign-on identity, and this browser is not
    /// signed in as it.
    SignInFirst,
}

/// Why a use of a link is refused.
#[derive(Clone, Debug)]
pub(super) enum Refused {
    /// From another site's page.
    CrossSite,
    /// Used already.
    Spent,
    /// The confirmation code is missing or wrong.
    WrongCode,
    /// The browser is not signed in as the link's person.
    NotSignedIn,
    /// The store could not be asked.
    Unavailable(String),
}

impl ConnectPages {
    /// Whether a `POST` comes from workmate's own pages (no `Origin`, or this one).
    pub(super) fn same_origin(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|origin| origin.trim_end_matches('/') == self.origin)
    }

    /// How the browser sending `headers` is known as the claim's person.
    pub(super) async fn proof(&self, headers: &HeaderMap, claim: &ConnectClaim) -> Proof {
        let Some(sso) = &self.sso else {
            return Proof::Code;
        };
        let tenant = TenantId::from(claim.tenant.as_str());
        let linked = match self
            .store
            .tenants()
            .get_user(&tenant, &UserId::from(claim.user_id.as_str()))
            .await
        {
            Ok(Some(user)) => user.sso_subject,
            _ => None,
        };
        let Some(subject) = linked else {
            return Proof::Code;
        };
        let signed_in = match cookie(headers, SESSION_COOKIE) {
            Some(session) => sso.principal_from_session(&self.store, session).await.ok(),
            None => None,
        };
        // The directory identity is the person: their chat account (in its workspace) and their
        // signed-in user (in the directory's) share it.
        match signed_in {
            Some(p) if p.subject.as_deref() == Some(subject.as_str()) => Proof::SignedIn,
            _ => Proof::SignInFirst,
        }
    }

    /// Checks one use of a link (a form sent, a sign-in started): from here, not spent, by its
    /// person.
    pub(super) async fn check_use(
        &self,
        headers: &HeaderMap,
        claim: &ConnectClaim,
        typed_code: Option<&str>,
    ) -> Result<(), Refused> {
        if !self.same_origin(headers) {
            return Err(Refused::CrossSite);
        }
        self.check_unspent(claim).await?;
        match self.proof(headers, claim).await {
            Proof::SignedIn => Ok(()),
            Proof::SignInFirst => Err(Refused::NotSignedIn),
            Proof::Code => match typed_code {
                Some(code) if self.key.connect_code_matches(claim, code) => Ok(()),
                _ => Err(Refused::WrongCode),
            },
        }
    }

    /// Refuses a link that was used already.
    pub(super) async fn check_unspent(&self, claim: &ConnectClaim) -> Result<(), Refused> {
        let tenant = TenantId::from(claim.tenant.as_str());
        match self
            .store
            .spent_links()
            .is_spent(&tenant, &claim.link)
            .await
        {
            Ok(false) => Ok(()),
            Ok(true) => Err(Refused::Spent),
            Err(e) => Err(Refused::Unavailable(e.to_string())),
        }
    }

    /// Spends the link; refused when another use spent it first.
    pub(super) async fn spend(&self, claim: &ConnectClaim) -> Result<(), Refused> {
        let tenant = TenantId::from(claim.tenant.as_str());
        match self
            .store
            .spent_links()
            .spend(&tenant, &claim.link, "connect")
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refused::Spent),
            Err(e) => Err(Refused::Unavailable(e.to_string())),
        }
    }

    /// Gives the link back after what it was to store could not be stored.
    pub(super) async fn unspend(&self, claim: &ConnectClaim) {
        let tenant = TenantId::from(claim.tenant.as_str());
        if let Err(e) = self.store.spent_links().restore(&tenant, &claim.link).await {
            tracing::warn!(error = %e, "A connect link could not be given back after a failed store.");
        }
    }
}
