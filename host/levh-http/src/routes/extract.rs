//! Extractors: JSON bodies, optional bodies and query strings whose errors become
//! [`ApiError`]s naming the field (one rejection type for every route, as in axum's
//! error-handling example), and the caller's scope.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Extension, Query};
use axum::http::HeaderMap;
use levh_core::{Principal, Scope, Surface};

use crate::ApiError;

/// A JSON body whose errors become [`ApiError`]s naming the field.
pub(crate) struct Body<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for Body<T>
where
    Json<T>: axum::extract::FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let Json(value) = Json::<T>::from_request(request, state).await?;
        Ok(Self(value))
    }
}

/// A JSON body that may be left out (an empty body is the type's default).
pub(crate) struct OptionalBody<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for OptionalBody<T>
where
    T: serde::de::DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|e| ApiError::bad_request(e.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(T::default()));
        }
        serde_json::from_slice(&bytes).map(Self).map_err(|e| {
            ApiError::bad_request(format!(
                "invalid JSON body: {}",
                levh_api::requests::suggest_known_field(&e.to_string())
            ))
        })
    }
}

/// A query string whose errors become [`ApiError`]s naming the field.
pub(crate) struct Params<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for Params<T>
where
    Query<T>: axum::extract::FromRequestParts<S, Rejection = QueryRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let Query(value) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(Self(value))
    }
}

/// The caller, as the auth layer established.
pub(crate) type Caller = Extension<Principal>;

/// The scope of a REST call: surface `http`, client as the caller names itself — or
/// surface `dashboard` for the dashboard's own calls, so that a person's decision in the
/// held queue is recorded as a person's. The name is attribution, not authority: the
/// token still decides what the call may do, whoever claims to be the dashboard.
pub(crate) fn scope(principal: &Principal, headers: &HeaderMap) -> Scope {
    let client = client(headers);
    let surface = if client.as_deref() == Some(DASHBOARD_CLIENT) {
        Surface::Dashboard
    } else {
        Surface::Http
    };
    principal.scope(surface, client)
}

/// What the dashboard sends as `X-LEVH-Client`.
const DASHBOARD_CLIENT: &str = "dashboard";

/// The client name a caller gives in `X-LEVH-Client` (recorded as the source).
pub(crate) fn client(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-levh-client")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.len() <= 64)
        .map(str::to_owned)
}

/// The engine scope of the call: the authenticated principal (put on the request by the
/// auth layer), through surface `http`, with the client it names.
pub(crate) struct CallerScope(pub Scope);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for CallerScope {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, ApiError> {
        let principal = parts
            .extensions
            .get::<Principal>()
            .ok_or_else(|| ApiError::new(axum::http::StatusCode::UNAUTHORIZED, "no credentials"))?;
        Ok(Self(scope(principal, &parts.headers)))
    }
}
