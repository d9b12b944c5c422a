//! Minting signed ID tokens in tests, with a local RSA key or the test provider's own key.
#![allow(
    clippy::expect_used,
    reason = "test support: a bad fixture key should stop the test"
)]

use chrono::{DateTime, Utc};
use openidconnect::core::{
    CoreGenderClaim, CoreJsonWebKey, CoreJwsSigningAlgorithm, CoreRsaPrivateSigningKey,
};
use openidconnect::{
    Audience, EndUserName, IdTokenClaims, IssuerUrl, JsonWebKeyId, LocalizedClaim,
    PrivateSigningKey, StandardClaims, SubjectIdentifier,
};

use crate::token::{GroupsIdToken, OtherClaims};

/// ID-token claims, as minted.
pub type Claims = IdTokenClaims<OtherClaims, CoreGenderClaim>;

/// An RSA key that signs ID tokens with RS256 under a key id.
pub struct TestKey(CoreRsaPrivateSigningKey);

impl std::fmt::Debug for TestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestKey")
    }
}

impl TestKey {
    /// A PKCS#1 PEM key under `kid`.
    pub fn from_pem(pem: &str, kid: &str) -> Self {
        Self(
            CoreRsaPrivateSigningKey::from_pem(pem, Some(JsonWebKeyId::new(kid.to_owned())))
                .expect("a PKCS#1 RSA key"),
        )
    }

    /// The fixed test key A.
    pub fn a(kid: &str) -> Self {
        Self::from_pem(include_str!("../testdata/rsa-a.pem"), kid)
    }

    /// The fixed test key B, another key.
    pub fn b(kid: &str) -> Self {
        Self::from_pem(include_str!("../testdata/rsa-b.pem"), kid)
    }

    /// The public half, as a JWKS entry.
    pub fn public(&self) -> CoreJsonWebKey {
        self.0.as_verification_key()
    }

    /// The JWKS document holding the public half.
    pub fn jwks_json(&self) -> serde_json::Value {
        serde_json::json!({ "keys": [self.public()] })
    }

    /// `claims`, signed with RS256.
    pub fn sign(&self, claims: Claims) -> String {
        GroupsIdToken::new(
            claims,
            &self.0,
            CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
            None,
            None,
        )
        .expect("signing")
        .to_string()
    }
}

/// Claims of an ID token from `issuer` for `audience` about `subject`, expiring at `exp`, with
/// `groups` (issued a minute ago, named after the subject).
pub fn claims(
    issuer: &str,
    audience: &str,
    subject: &str,
    exp: DateTime<Utc>,
    groups: &[&str],
) -> Claims {
    claims_with(issuer, audience, subject, exp, groups, &[])
}

/// [`claims`] with `extra` claims besides (a tenant claim, …).
pub fn claims_with(
    issuer: &str,
    audience: &str,
    subject: &str,
    exp: DateTime<Utc>,
    groups: &[&str],
    extra: &[(&str, serde_json::Value)],
) -> Claims {
    let mut other = OtherClaims::default();
    other
        .all
        .insert("groups".into(), serde_json::json!(groups.to_vec()));
    for (name, value) in extra {
        other.all.insert((*name).to_owned(), value.clone());
    }
    Claims::new(
        IssuerUrl::new(issuer.to_owned()).expect("an issuer URL"),
        vec![Audience::new(audience.to_owned())],
        exp,
        Utc::now() - chrono::Duration::minutes(1),
        StandardClaims::new(SubjectIdentifier::new(subject.to_owned())).set_name(Some(
            LocalizedClaim::from(EndUserName::new(subject.to_owned())),
        )),
        other,
    )
}
