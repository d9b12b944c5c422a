//! Why a Stream connection could not be opened, and whether the same request can ever succeed.

/// A failure of the Stream client.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The client cannot be built (TLS or HTTP set-up).
    #[error("cannot set up the DingTalk Stream client: {0}")]
    Setup(String),
    /// DingTalk refused the `open` call (HTTP 4xx): the same credentials keep failing until
    /// the operator fixes them. [`StreamClient::run`](super::StreamClient::run) still retries,
    /// at the backoff's pace, so a fixed app recovers without a restart.
    #[error("DingTalk refused the Stream connection (HTTP {status}, {code}: {message}); {hint}")]
    Refused {
        /// The HTTP status of the `open` answer.
        status: u16,
        /// DingTalk's error code (`code` of its error JSON, e.g. `InvalidAuthentication`).
        code: String,
        /// DingTalk's message.
        message: String,
        /// What the operator should do.
        hint: &'static str,
    },
    /// DingTalk or the network failed for now; the connection is tried again.
    #[error("the DingTalk Stream connection is unavailable: {0}")]
    Unavailable(String),
}

impl Error {
    /// A refusal with DingTalk's answer, and what to do about it.
    pub(crate) fn refused(status: u16, code: String, message: String) -> Self {
        let hint = match status {
            401 | 403 => {
                "check the app's Client ID (AppKey) and Client Secret (AppSecret), and that \
                 Stream mode is enabled for the app in the DingTalk developer console"
            }
            _ => "check the Client ID, the Client Secret and the API base URL",
        };
        Self::Refused {
            status,
            code,
            message,
            hint,
        }
    }

    /// Whether trying again later can succeed without a change of configuration.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}
