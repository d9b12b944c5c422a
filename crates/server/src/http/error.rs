//! The one place errors become HTTP responses.
//!
//! Invariant: 5xx answers are logged at error and 4xx at warn, here and nowhere else; a 5xx body
//! never carries internal detail beyond what an operator needs (readiness reasons name the failing
//! dependency, internal errors only say that one happened).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tracing::{error, warn};

/// Why a request was not answered normally.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No route has this path.
    #[error("no route for {method} {path}")]
    NotFound {
        /// The request method.
        method: String,
        /// The request path.
        path: String,
    },
    /// The path exists but not with this method.
    #[error("{method} is not allowed on {path}")]
    MethodNotAllowed {
        /// The request method.
        method: String,
        /// The request path.
        path: String,
    },
    /// A dependency the service needs is not available.
    #[error("not ready: {reason}")]
    NotReady {
        /// Which dependency, and why, e.g. "database: pool closed".
        reason: String,
    },
    /// The request carries no valid bearer token.
    #[error(
        "missing or invalid bearer token; send `Authorization: Bearer <token>` (or sign in at \
         /v1/auth/login when single sign-on is configured)"
    )]
    Unauthorized,
    /// A credential was presented and refused; the message says why (never the credential).
    #[error("{0}")]
    Refused(String),
    /// A platform webhook whose signature does not verify; the message says why.
    #[error("request signature rejected: {0}")]
    BadSignature(String),
    /// The caller may not do this; the message says why.
    #[error("{0}")]
    Forbidden(String),
    /// The request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// The addressed thing does not exist (for this tenant).
    #[error("{0}")]
    Missing(String),
    /// The request conflicts with the current state; `detail` says what stands instead.
    #[error("{message}")]
    Conflict {
        /// What conflicts.
        message: String,
        /// The state that won, e.g. the inbox item as resolved by someone else.
        detail: serde_json::Value,
    },
    /// The request body is larger than `[server] max_body_bytes`.
    #[error("the request body is larger than {limit} bytes ([server] max_body_bytes)")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The request took longer than `[server] request_timeout_ms` to be answered.
    #[error("the request took longer than {ms} ms ([server] request_timeout_ms)")]
    TimedOut {
        /// The limit, in milliseconds.
        ms: u128,
    },
    /// The client's address holds as many event streams open as it may.
    #[error(
        "this address already holds {max} event streams open; close one (or reuse one stream per \
         session) and try again"
    )]
    TooManyStreams {
        /// The share of one address.
        max: usize,
    },
    /// The request is well-formed but cannot be applied.
    #[error("{0}")]
    Unprocessable(String),
    /// Something failed inside the service.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<workmate_engine::Error> for ApiError {
    fn from(error: workmate_engine::Error) -> Self {
        use workmate_engine::Error as E;
        match error {
            E::SessionNotFound(session) => Self::Missing(format!("session {session} not found")),
            E::Busy(_) => Self::Conflict {
                message: error.to_string(),
                detail: json!(null),
            },
            // Another replica's turn runs in the session: once it is over, any replica takes
            // the next command.
            E::DrivenElsewhere(_) => Self::Conflict {
                message: error.to_string(),
                detail: json!(null),
            },
            E::Rejected(reason) => Self::Unprocessable(reason),
            E::Forbidden(reason) => Self::Forbidden(reason),
            E::ShuttingDown => Self::NotReady {
                reason: "shutting down".into(),
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<workmate_engine::automations::AutomationError> for ApiError {
    fn from(error: workmate_engine::automations::AutomationError) -> Self {
        use workmate_engine::automations::AutomationError as E;
        match error {
            E::Invalid(reason) => Self::BadRequest(reason),
            E::Forbidden(reason) => Self::Forbidden(reason),
            E::Store(e) => e.into(),
        }
    }
}

impl From<workmate_personas::Error> for ApiError {
    fn from(error: workmate_personas::Error) -> Self {
        match error {
            workmate_personas::Error::Store(e) => e.into(),
            other => Self::Unprocessable(other.to_string()),
        }
    }
}

impl From<workmate_mcp::Error> for ApiError {
    fn from(error: workmate_mcp::Error) -> Self {
        match error {
            workmate_mcp::Error::Store(e) => e.into(),
            workmate_mcp::Error::NotFound(_) => Self::Missing(error.to_string()),
            workmate_mcp::Error::Invalid(_) => Self::Unprocessable(error.to_string()),
            workmate_mcp::Error::NotAllowed(_) => Self::BadRequest(error.to_string()),
            workmate_mcp::Error::Unavailable { .. } => Self::NotReady {
                reason: error.to_string(),
            },
        }
    }
}

impl From<workmate_store::Error> for ApiError {
    fn from(error: workmate_store::Error) -> Self {
        Self::Internal(error.to_string())
    }
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound { .. } => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::NotReady { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Unauthorized | Self::BadSignature(_) | Self::Refused(_) => {
                StatusCode::UNAUTHORIZED
            }
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Missing(_) => StatusCode::NOT_FOUND,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::TimedOut { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::TooManyStreams { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            error!(status = status.as_u16(), error = %self, "Request failed.");
        } else {
            warn!(status = status.as_u16(), error = %self, "Request rejected.");
        }
        let body = match &self {
            // Readiness answers keep the probe's own shape.
            Self::NotReady { reason } => json!({ "status": "unavailable", "reason": reason }),
            Self::Internal(_) => json!({ "error": "internal error" }),
            Self::Conflict { message, detail } if !detail.is_null() => {
                json!({ "error": message, "detail": detail })
            }
            _ => json!({ "error": self.to_string() }),
        };
        (status, Json(body)).into_response()
    }
}
