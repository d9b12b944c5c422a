//! Why an outbound request did not get an answer.

/// What kind of failure an [`EgressError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgressErrorKind {
    /// The guard refused the destination (a forbidden address, a scheme, plain http with
    /// credentials, a redirect it would not follow).
    Refused,
    /// The destination could not be reached, or broke off.
    Unreachable,
    /// No answer within the time allowed.
    TimedOut,
    /// The answer was larger than the caller accepts.
    TooLarge,
}

/// An outbound request that did not get an answer; the message is complete, naming the URL and
/// what to do, and fit to show to the person or model who asked.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct EgressError {
    kind: EgressErrorKind,
    message: String,
}

impl EgressError {
    pub(crate) fn new(kind: EgressErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn refused(message: impl Into<String>) -> Self {
        Self::new(EgressErrorKind::Refused, message)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> EgressErrorKind {
        self.kind
    }

    /// Whether the guard refused the destination.
    pub fn is_refused(&self) -> bool {
        self.kind == EgressErrorKind::Refused
    }

    /// The error a failed `reqwest` call stands for: the guard's own refusal when the resolver
    /// refused the host, else the cause, with the URL.
    pub(crate) fn from_reqwest(url: &url::Url, error: &reqwest::Error) -> Self {
        use std::error::Error as _;
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
        while let Some(e) = cause {
            if let Some(refusal) = e.downcast_ref::<crate::resolve::Refusal>() {
                return Self::refused(refusal.to_string());
            }
            cause = e.source();
        }
        if error.is_timeout() {
            return Self::new(
                EgressErrorKind::TimedOut,
                format!("{} did not answer in time", origin(url)),
            );
        }
        // reqwest's own text names the whole URL (with its query); the causes say what failed.
        let mut message = format!("{} cannot be reached", origin(url));
        let mut cause = error.source();
        if cause.is_none() {
            message.push_str(&format!(": {error}"));
        }
        while let Some(e) = cause {
            message.push_str(": ");
            message.push_str(&e.to_string());
            cause = e.source();
        }
        Self::new(EgressErrorKind::Unreachable, message)
    }
}

/// `scheme://host[:port]` of a URL: what errors name, never a path or query that may carry a
/// token.
pub(crate) fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}
