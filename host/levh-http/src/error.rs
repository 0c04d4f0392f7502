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
    /// What went wrong on the server side, for the log only.
    detail: Option<String>,
}

/// A server-side failure's detail, carried from the handler to [`log_errors`].
#[derive(Debug, Clone)]
struct FailureDetail(String);

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
            detail: None,
        }
    }

    /// 400: the request failed validation.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 500: sent as a generic message; the detail rides on the response to the
    /// logging middleware ([`log_errors`]), which logs it once with the request.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: "internal error (details are in the server log)".into(),
            detail: Some(detail.to_string()),
        }
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response();
        if let Some(detail) = self.detail {
            response.extensions_mut().insert(FailureDetail(detail));
        }
        response
    }
}

/// Middleware: logs every server-side failure once, inside the request's span (method,
/// path), with the detail its handler left on the response; 4xx answers are the
/// caller's to read and are logged at debug.
pub(crate) async fn log_errors(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if let Some(FailureDetail(detail)) = response.extensions().get::<FailureDetail>() {
        tracing::error!(%status, %detail, "request failed");
    } else if status.is_server_error() {
        tracing::error!(%status, "request failed");
    } else if status.is_client_error() {
        tracing::debug!(%status, "request refused");
    }
    response
}

impl From<levh_api::Error> for ApiError {
    fn from(error: levh_api::Error) -> Self {
        use levh_api::Error as E;
        let status = match &error {
            E::Invalid(_) => StatusCode::BAD_REQUEST,
            E::NotFound(_) => StatusCode::NOT_FOUND,
            E::Conflict(_) => StatusCode::CONFLICT,
            E::Denied(_) => StatusCode::FORBIDDEN,
            E::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            E::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            E::InsufficientStorage(_) => StatusCode::INSUFFICIENT_STORAGE,
            E::Internal(detail) => return Self::internal(detail),
            _ => return Self::internal(&error),
        };
        Self::new(status, error.to_string())
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
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::new(
                status,
                "the request body is larger than this route accepts (2 MiB; 32 MiB for \
                 /api/memories:batch; a 10 MiB file as base64 for /api/memories/{id}/attachments): send fewer or shorter items per request. Nothing was changed."
                    .to_owned(),
            );
        }
        Self::new(
            status,
            levh_api::requests::suggest_known_field(&rejection.body_text()),
        )
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        Self::bad_request(levh_api::requests::suggest_known_field(
            &rejection.body_text(),
        ))
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::PathRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}
