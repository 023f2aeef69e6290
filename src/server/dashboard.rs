//! The dashboard's static files, compiled into the binary from `assets/dashboard/`.
//!
//! No build step and no third-party script: plain HTML, CSS and JavaScript. The page
//! reads the same API as game servers (with a viewer token kept in a session cookie)
//! and follows a bracket live through its server-sent events.
//!
//! Owns: serving the compiled-in dashboard files and their headers.
//! Must not: compute anything: the page reads the same API as game servers.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::model::P;

/// The sign-in page, sent with status 401 to a browser that has no valid token.
pub(super) const SIGN_IN: &str = include_str!("../../assets/dashboard/sign-in.html");

const INDEX: &str = include_str!("../../assets/dashboard/index.html");
const APP_JS: &str = include_str!("../../assets/dashboard/app.js");
const STYLE: &str = include_str!("../../assets/dashboard/style.css");
const ICON: &str = include_str!("../../assets/dashboard/icon.svg");

fn file(content_type: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // The files change with the binary: revalidate rather than cache blindly.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// `GET /`: the dashboard.
pub(super) async fn index() -> Response {
    let mut r = file("text/html; charset=utf-8", INDEX);
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data: https:; style-src 'self'; \
             script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    r
}

/// `GET /assets/{file}`.
pub(super) async fn asset(P(name): P<String>) -> Result<Response, ApiError> {
    match name.as_str() {
        "app.js" => Ok(file("text/javascript; charset=utf-8", APP_JS)),
        "style.css" => Ok(file("text/css; charset=utf-8", STYLE)),
        "icon.svg" => Ok(file("image/svg+xml", ICON)),
        _ => Err(ApiError::not_found("not_found", "no such dashboard file")),
    }
}
