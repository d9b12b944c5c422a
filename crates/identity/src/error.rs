//! The crate's errors. A [`Refusal`] is the caller's fault (a bad token or cookie) and its text is
//! safe to show them; other errors are the provider's or the installation's.

/// Why a token, cookie or login was refused. The text never contains the token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The token is not a well-formed signed JWT.
    #[error("the token is not a signed JWT: {0}")]
    Malformed(String),
    /// `exp` is in the past.
    #[error("the token has expired")]
    Expired,
    /// `aud` does not name this client.
    #[error("the token was issued for another audience")]
    WrongAudience,
    /// `iss` is not the configured issuer.
    #[error("the token was issued by another issuer")]
    WrongIssuer,
    /// The signature does not verify against the provider's keys.
    #[error("the token's signature does not verify against the provider's keys")]
    BadSignature,
    /// The login's nonce does not match.
    #[error("the token's nonce does not match this login")]
    WrongNonce,
    /// Signed with a key the provider does not publish, even after fetching its keys again.
    #[error("the token is signed with a key the provider does not publish")]
    UnknownKey,
    /// Any other failed check.
    #[error("the token was refused: {0}")]
    Other(String),
    /// A session or login cookie whose MAC does not verify, or that is malformed.
    #[error("the cookie is not valid")]
    BadCookie,
    /// A session or login cookie past its expiry.
    #[error("the cookie has expired")]
    CookieExpired,
    /// The provider's answer to the login does not match the login that was started.
    #[error("the login does not match: {0}")]
    LoginMismatch(String),
}

/// Everything that can go wrong in single sign-on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller's token, cookie or login is not acceptable.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The provider could not be reached or answered wrongly (discovery, keys, token endpoint).
    #[error("the OpenID provider: {0}")]
    Provider(String),
    /// The settings cannot work (a URL that does not parse, …).
    #[error("single sign-on settings: {0}")]
    Settings(String),
    /// The session key file could not be read or written.
    #[error("the session key file: {0}")]
    KeyFile(#[from] std::io::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
