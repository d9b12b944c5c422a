//! Checking a signed JWT (an ID token) against the provider's keys and turning its claims into an
//! [`Identity`].
//!
//! Invariant: [`verify`] returns an identity only when the signature verifies with an asymmetric
//! key from the given key set, `iss` is the configured issuer, `aud` names the client (and no
//! untrusted other audience), `exp` is after the clock's now and, when a nonce is expected, it
//! matches. Every failure maps to one [`Refusal`] that names the check, never the token.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use openidconnect::core::{
    CoreGenderClaim, CoreJsonWebKey, CoreJsonWebKeySet, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AdditionalClaims, ClaimsVerificationError, ClientId, IdToken, IdTokenVerifier, IssuerUrl,
    Nonce, SignatureVerificationError,
};
use serde::{Deserialize, Serialize};

use crate::error::Refusal;

/// ID-token claims beyond the standard ones, kept whole so the groups claim can be configured by name.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct OtherClaims {
    /// Every claim beyond the standard ones, by name.
    #[serde(flatten)]
    pub all: HashMap<String, serde_json::Value>,
}

impl AdditionalClaims for OtherClaims {}

/// An ID token whose extra claims (the groups) are kept.
pub(crate) type GroupsIdToken = IdToken<
    OtherClaims,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;

/// The time the checks use; injected so tests need not wait for a token to expire.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(Arc::new(Utc::now))
    }

    /// A clock reading `now`.
    pub fn new(now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    /// The current time.
    pub fn now(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// Who a verified token says the caller is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The provider's subject (`sub`).
    pub subject: String,
    /// `name`, else `preferred_username`, else the subject.
    pub display_name: String,
    /// `email`, when present and the provider says it verified it (`email_verified`): an
    /// address anyone may type is never used to link accounts.
    pub email: Option<String>,
    /// The groups claim: an array of strings, or one string; empty when absent.
    pub groups: Vec<String>,
    /// The tenant claim, when one is configured and the token carries it.
    pub tenant: Option<String>,
    /// The token's expiry.
    pub expires_at: DateTime<Utc>,
}

/// The asymmetric algorithms accepted: never `none`, never a shared-secret MAC.
const ALGORITHMS: [CoreJwsSigningAlgorithm; 9] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// What a check needs besides the token.
#[derive(Clone, Debug)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a IssuerUrl,
    pub(crate) client_id: &'a ClientId,
    pub(crate) groups_claim: &'a str,
    pub(crate) tenant_claim: Option<&'a str>,
    pub(crate) clock: &'a Clock,
}

/// The failure of a check, and whether fresh keys might make it pass (an unknown `kid`).
#[derive(Debug)]
pub(crate) enum Failure {
    UnknownKey,
    Refused(Refusal),
}

/// Checks `jwt` against `keys`; `nonce` is the login's, `None` for a bearer token.
pub(crate) fn verify(
    jwt: &str,
    keys: &CoreJsonWebKeySet,
    expected: &Expected<'_>,
    nonce: Option<&Nonce>,
) -> Result<Identity, Failure> {
    let token = GroupsIdToken::from_str(jwt.trim())
        .map_err(|e| Failure::Refused(Refusal::Malformed(e.to_string())))?;
    let clock = expected.clock.clone();
    let verifier: IdTokenVerifier<'_, CoreJsonWebKey> = IdTokenVerifier::new_public_client(
        expected.client_id.clone(),
        expected.issuer.clone(),
        keys.clone(),
    )
    .set_allowed_algs(ALGORITHMS)
    .set_time_fn(move || clock.now());
    let checked = match nonce {
        Some(nonce) => token.claims(&verifier, nonce),
        None => token.claims(&verifier, |_: Option<&Nonce>| Ok(())),
    };
    let claims = checked.map_err(|e| match e {
        ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey,
        ) => Failure::UnknownKey,
        other => Failure::Refused(refusal(other)),
    })?;
    let name = claims
        .name()
        .and_then(|n| n.get(None))
        .map(|n| n.as_str().to_owned())
        .or_else(|| claims.preferred_username().map(|u| u.as_str().to_owned()))
        .unwrap_or_else(|| claims.subject().as_str().to_owned());
    let tenant = match expected.tenant_claim {
        Some(name) => tenant(claims.additional_claims(), name).map_err(Failure::Refused)?,
        None => None,
    };
    Ok(Identity {
        tenant,
        subject: claims.subject().as_str().to_owned(),
        display_name: name,
        email: claims
            .email()
            .filter(|_| claims.email_verified() == Some(true))
            .map(|e| e.as_str().to_owned()),
        groups: groups(claims.additional_claims(), expected.groups_claim),
        expires_at: claims.expiration(),
    })
}

fn groups(claims: &OtherClaims, name: &str) -> Vec<String> {
    match claims.all.get(name) {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(serde_json::Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

/// The tenant claim `name`: absent is `None`; present, it must be a tenant id (1 to 64 of
/// `a-z`, `0-9`, `-`, `_`, `.`).
fn tenant(claims: &OtherClaims, name: &str) -> Result<Option<String>, Refusal> {
    let Some(value) = claims.all.get(name) else {
        return Ok(None);
    };
    let ok = value.as_str().filter(|t| {
        (1..=64).contains(&t.len())
            && t.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
    });
    match ok {
        Some(tenant) => Ok(Some(tenant.to_owned())),
        None => Err(Refusal::Other(format!(
            "the `{name}` claim must name a tenant: 1 to 64 of a-z, 0-9, '-', '_', '.'"
        ))),
    }
}

fn refusal(error: ClaimsVerificationError) -> Refusal {
    match error {
        ClaimsVerificationError::Expired(_) => Refusal::Expired,
        ClaimsVerificationError::InvalidAudience(_) => Refusal::WrongAudience,
        ClaimsVerificationError::InvalidIssuer(_) => Refusal::WrongIssuer,
        ClaimsVerificationError::InvalidNonce(_) => Refusal::WrongNonce,
        ClaimsVerificationError::SignatureVerification(e) => match e {
            SignatureVerificationError::CryptoError(_)
            | SignatureVerificationError::NoSignature
            | SignatureVerificationError::InvalidKey(_)
            | SignatureVerificationError::AmbiguousKeyId(_) => Refusal::BadSignature,
            other => Refusal::Other(other.to_string()),
        },
        other => Refusal::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::testing::{TestKey, claims, claims_with};

    const ISSUER: &str = "https://idp.example.com";

    fn expected<'a>(issuer: &'a IssuerUrl, client: &'a ClientId, clock: &'a Clock) -> Expected<'a> {
        Expected {
            issuer,
            client_id: client,
            groups_claim: "groups",
            tenant_claim: Some("org"),
            clock,
        }
    }

    fn check(
        jwt: &str,
        keys: &CoreJsonWebKeySet,
        nonce: Option<&Nonce>,
    ) -> Result<Identity, Failure> {
        let issuer = IssuerUrl::new(ISSUER.into()).unwrap();
        let client = ClientId::new("workmate".into());
        let clock = Clock::system();
        verify(jwt, keys, &expected(&issuer, &client, &clock), nonce)
    }

    fn refused(result: Result<Identity, Failure>) -> Refusal {
        match result {
            Err(Failure::Refused(r)) => r,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_tenant_claim_names_a_tenant_or_the_token_is_refused() {
        let key = TestKey::a("k1");
        let keys = CoreJsonWebKeySet::new(vec![key.public()]);
        let exp = Utc::now() + Duration::minutes(5);
        let with_org = |org: serde_json::Value| {
            key.sign(claims_with(
                ISSUER,
                "workmate",
                "alice",
                exp,
                &[],
                &[("org", org)],
            ))
        };
        let identity = check(&with_org(serde_json::json!("acme-eu")), &keys, None).unwrap();
        assert_eq!(identity.tenant.as_deref(), Some("acme-eu"));
        let none = key.sign(claims(ISSUER, "workmate", "alice", exp, &[]));
        assert_eq!(check(&none, &keys, None).unwrap().tenant, None);
        for bad in [
            serde_json::json!("Acme EU"),
            serde_json::json!(""),
            serde_json::json!(7),
        ] {
            let refusal = refused(check(&with_org(bad), &keys, None));
            assert!(refusal.to_string().contains("`org` claim"), "{refusal}");
        }
    }

    #[test]
    fn a_good_token_gives_the_identity_and_each_bad_one_is_refused_for_its_reason() {
        let key = TestKey::a("k1");
        let keys = CoreJsonWebKeySet::new(vec![key.public()]);
        let now = Utc::now();
        let good = key.sign(claims(
            ISSUER,
            "workmate",
            "alice",
            now + Duration::minutes(5),
            &["ops", "staff"],
        ));
        let identity = check(&good, &keys, None).unwrap();
        assert_eq!(identity.subject, "alice");
        assert_eq!(identity.groups, ["ops", "staff"]);
        assert_eq!(identity.display_name, "alice");

        let expired = key.sign(claims(
            ISSUER,
            "workmate",
            "alice",
            now - Duration::minutes(1),
            &[],
        ));
        assert_eq!(refused(check(&expired, &keys, None)), Refusal::Expired);
        let audience = key.sign(claims(
            ISSUER,
            "someone-else",
            "alice",
            now + Duration::minutes(5),
            &[],
        ));
        assert_eq!(
            refused(check(&audience, &keys, None)),
            Refusal::WrongAudience
        );
        let issuer = key.sign(claims(
            "https://evil.example.com",
            "workmate",
            "alice",
            now + Duration::minutes(5),
            &[],
        ));
        assert_eq!(refused(check(&issuer, &keys, None)), Refusal::WrongIssuer);
        // Signed by another key under the same key id.
        let impostor = TestKey::b("k1").sign(claims(
            ISSUER,
            "workmate",
            "alice",
            now + Duration::minutes(5),
            &[],
        ));
        assert_eq!(
            refused(check(&impostor, &keys, None)),
            Refusal::BadSignature
        );
        assert!(matches!(
            refused(check("not.a.jwt", &keys, None)),
            Refusal::Malformed(_)
        ));
        // A key the set does not hold: fresh keys might help.
        let unknown = TestKey::b("k2").sign(claims(
            ISSUER,
            "workmate",
            "alice",
            now + Duration::minutes(5),
            &[],
        ));
        assert!(matches!(
            check(&unknown, &keys, None),
            Err(Failure::UnknownKey)
        ));
    }

    #[test]
    fn the_login_nonce_must_match() {
        let key = TestKey::a("k1");
        let keys = CoreJsonWebKeySet::new(vec![key.public()]);
        let mut with_nonce = claims(
            ISSUER,
            "workmate",
            "alice",
            Utc::now() + Duration::minutes(5),
            &[],
        );
        with_nonce = with_nonce.set_nonce(Some(Nonce::new("n-1".into())));
        let jwt = key.sign(with_nonce);
        assert!(check(&jwt, &keys, Some(&Nonce::new("n-1".into()))).is_ok());
        assert_eq!(
            refused(check(&jwt, &keys, Some(&Nonce::new("n-2".into())))),
            Refusal::WrongNonce
        );
    }

    #[test]
    fn expiry_follows_the_injected_clock() {
        let key = TestKey::a("k1");
        let keys = CoreJsonWebKeySet::new(vec![key.public()]);
        let exp = Utc::now() + Duration::minutes(5);
        let jwt = key.sign(claims(ISSUER, "workmate", "alice", exp, &[]));
        let issuer = IssuerUrl::new(ISSUER.into()).unwrap();
        let client = ClientId::new("workmate".into());
        let later = Clock::new(move || exp + Duration::seconds(1));
        let result = verify(&jwt, &keys, &expected(&issuer, &client, &later), None);
        assert_eq!(refused(result), Refusal::Expired);
        let before = Clock::new(move || exp - Duration::seconds(1));
        assert!(verify(&jwt, &keys, &expected(&issuer, &client, &before), None).is_ok());
    }

    #[test]
    fn groups_may_be_one_string_or_absent() {
        let mut claims = OtherClaims::default();
        assert!(groups(&claims, "groups").is_empty());
        claims.all.insert("roles".into(), serde_json::json!("ops"));
        assert_eq!(groups(&claims, "roles"), ["ops"]);
        claims
            .all
            .insert("groups".into(), serde_json::json!(["a", 1, "b"]));
        assert_eq!(groups(&claims, "groups"), ["a", "b"]);
    }
}
