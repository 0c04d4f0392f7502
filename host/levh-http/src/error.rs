//! One error type for every route: a status and a message that names what was wrong.
//! Server-side failures are logged in full and answered with a generic message.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Serialize;

/// An error answer: `{"error": "..."}` with a 4xx or 5xx status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

/// The body of every error response.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What was wrong, naming the field or item at fault. Nothing was changed.
    pub error: String,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// 400: the request failed validation.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 500: logged here, sent as a generic message.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(%detail, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error (details are in the server log)",
        )
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response()
    }
}

impl From<levh_core::Error> for ApiError {
    fn from(error: levh_core::Error) -> Self {
        use levh_core::Error;
        match error {
            Error::Invalid { .. } => Self::bad_request(format!("{error} (nothing was changed)")),
            Error::NotFound(id) => Self::new(
                StatusCode::NOT_FOUND,
                format!("no memory with id {id} in this workspace"),
            ),
            Error::HeldNotFound(_) => Self::new(StatusCode::NOT_FOUND, error.to_string()),
            Error::AlreadyDecided { .. } | Error::AdmissionIncomplete(_) => {
                Self::new(StatusCode::CONFLICT, error.to_string())
            }
            _ => Self::internal(error),
        }
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::JsonRejection) -> Self {
        use axum::extract::rejection::JsonRejection;
        // axum's text names the field path (`content: invalid type ...`). Data and syntax
        // errors are both "the request failed validation": 400, one status to document.
        let status = match rejection {
            JsonRejection::JsonDataError(_) | JsonRejection::JsonSyntaxError(_) => {
                StatusCode::BAD_REQUEST
            }
            _ => rejection.status(),
        };
        Self::new(status, rejection.body_text())
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::PathRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}
