//! Reading requests: the JSON body, query and path extractors whose rejections are
//! API errors (JSON, with a message that helps), and event times.
//!
//! Owns: turning raw request parts into typed input or a 400/413 answer.
//! Must not: check league rules (ids, ranges): the library does.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;

use super::error::{ApiError, too_large};

/// RFC 3339 in UTC with a `Z`.
pub(super) fn rfc3339(t: DateTime<Utc>) -> String {
    let ms = DateTime::<Utc>::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t);
    ms.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// Parses an event time.
pub(super) fn parse_time(s: &str) -> Result<DateTime<Utc>, ApiError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            let shown: String = s.chars().take(64).collect();
            ApiError::bad_request(
                "invalid_time",
                format!("invalid time {shown:?}: {e}; use RFC 3339, e.g. 2026-01-05T12:00:00Z"),
            )
        })
}

// ---------------------------------------------------------------------------------
// Extractors whose rejections are API errors (JSON, with a message that helps).
// ---------------------------------------------------------------------------------

/// The whole request body, or the API error for one too large or unreadable.
async fn read_body<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, state).await.map_err(|r| {
        if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            ApiError::bad_request(
                "bad_request",
                format!("cannot read the request body: {}", r.body_text()),
            )
        }
    })
}

/// A JSON object request body. An empty body reads as `{}`, so bodies whose fields are
/// all optional may be left out; any other JSON than an object is refused (serde
/// would read a struct from an array of its fields). The content type is not checked.
#[derive(Debug)]
pub(super) struct Body<T>(pub(super) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = read_body(request, state).await?;
        // Only an absent body is the empty object: whitespace alone is not JSON.
        if bytes.is_empty() {
            return json(b"{}").map(Body);
        }
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return Err(ApiError::bad_request(
                "invalid_json",
                "invalid JSON body: expected a JSON object; see /openapi.json for this endpoint's body",
            ));
        }
        json(&bytes).map(Body)
    }
}

/// A JSON array request body (a batch's items).
#[derive(Debug)]
pub(super) struct Items<T>(pub(super) Vec<T>);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Items<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = read_body(request, state).await?;
        json(&bytes).map(Items)
    }
}

/// Reads a JSON body, or says why it cannot.
///
/// A JSON Schema `integer` includes integral floats, so a client generated from the
/// OpenAPI document may send `801.0` where the body holds a whole number. Only a body
/// refused for a float is read again, with each integral float below 2^53 (exact in a
/// double) written as the integer it is: the common body pays nothing for it, and
/// `801.5` is still refused.
fn json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).or_else(|e| {
        let refused = || {
            ApiError::bad_request(
                "invalid_json",
                format!("invalid JSON body: {e}; see /openapi.json for this endpoint's body"),
            )
        };
        if !e.to_string().contains("floating point") {
            return Err(refused());
        }
        let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(|_| refused())?;
        if !whole_floats_to_integers(&mut value) {
            return Err(refused());
        }
        serde_json::from_value(value).map_err(|_| refused())
    })
}

/// Writes every integral float of `v` below 2^53 in magnitude as an integer; whether
/// it changed any.
fn whole_floats_to_integers(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                *v = Value::from(f as i64);
                true
            }
            _ => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
            whole_floats_to_integers(item) | changed
        }),
        Value::Object(fields) => fields.values_mut().fold(false, |changed, item| {
            whole_floats_to_integers(item) | changed
        }),
        _ => false,
    }
}

/// A JSON request body that must be there: an empty body is a 400 `bad_request` and
/// reaches no handler (for a write whose meaning needs one: a profile's fields).
#[derive(Debug)]
pub(super) struct Required<T>(pub(super) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Required<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = read_body(request, state).await?;
        if bytes.trim_ascii().is_empty() {
            return Err(ApiError::bad_request(
                "bad_request",
                "this request needs a JSON body; see /openapi.json for this endpoint's body",
            ));
        }
        json(&bytes).map(Required)
    }
}

/// A query string.
#[derive(Debug)]
pub(super) struct Q<T>(pub(super) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Q<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Q(q.0))
            .map_err(|r| {
                ApiError::bad_request(
                    "bad_request",
                    format!("invalid query string: {}", r.body_text()),
                )
            })
    }
}

/// Path parameters.
#[derive(Debug)]
pub(super) struct P<T>(pub(super) T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for P<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| P(p.0))
            .map_err(|r| {
                ApiError::bad_request("bad_request", format!("invalid path: {}", r.body_text()))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Score {
        value: i64,
        by: Option<u64>,
        name: Option<String>,
    }

    #[test]
    fn integral_floats_read_as_whole_numbers() {
        let s: Score = json(br#"{"value": -801.0, "by": 3.0, "name": "1.0"}"#).unwrap();
        assert_eq!(
            s,
            Score {
                value: -801,
                by: Some(3),
                name: Some("1.0".into())
            }
        );
        let items: Vec<Score> = json(br#"[{"value": 2}, {"value": 1e3}]"#).unwrap();
        assert_eq!(items[1].value, 1000);
        for bad in [
            &br#"{"value": 801.5}"#[..],
            br#"{"value": 1e300}"#,
            br#"{"value": "801"}"#,
            br#"{"value": 1, "by": -1.0}"#,
        ] {
            assert!(
                json::<Score>(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
