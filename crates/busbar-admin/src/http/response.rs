//! HTTP responses with the service's content types (admin-api.md §3): entries, feeds, the
//! `<Error>` bodies of failures (§6.9), the bare 401, the emulator's health document, the
//! JSON of Busbar's controls, and redirects.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ALLOW, CONNECTION, CONTENT_TYPE, HeaderValue, LOCATION};
use hyper::{Response, StatusCode};
use uuid::Uuid;

use super::handlers::{Failure, Reply};
use super::request_url::RequestUrl;
use crate::atom::{ErrorBody, ErrorContext, Timestamp};
use crate::auth::Unauthorized;
use crate::control::Health;

/// Every response's body: written whole before it is sent (documents are small).
pub(crate) type Body = Full<Bytes>;

const ENTRY: &str = "application/atom+xml;type=entry;charset=utf-8";
const FEED: &str = "application/atom+xml;type=feed;charset=utf-8";
const ERROR: &str = "application/xml; charset=utf-8";
const JSON: &str = "application/json";

/// The response to a successful operation.
pub(crate) fn reply(reply: Reply) -> Response<Body> {
    match reply {
        Reply::Entry { status, xml } => document(status, ENTRY, xml),
        Reply::Feed(xml) => document(StatusCode::OK, FEED, xml),
        Reply::Deleted => Response::new(Body::default()),
    }
}

/// The response to a failed operation.
pub(crate) fn failure(failure: &Failure, url: &RequestUrl, now: Timestamp) -> Response<Body> {
    error(url, now, |context| match failure {
        Failure::BadRequest(detail) => ErrorBody::bad_request(detail, context),
        Failure::NotFound { entity } => ErrorBody::not_found(entity, context),
        Failure::Conflict => ErrorBody::conflict(context),
        Failure::Unavailable(detail) => ErrorBody::new(
            StatusCode::SERVICE_UNAVAILABLE.as_u16(),
            &format!("SubCode=50004. The server is busy: {detail}."),
            context,
        ),
    })
}

/// A failure outside the operations (unknown path, wrong method, oversized or late body): its
/// status and message, with the service's tracking suffix.
pub(crate) fn refusal(
    status: StatusCode,
    message: &str,
    url: &RequestUrl,
    now: Timestamp,
) -> Response<Body> {
    error(url, now, |context| {
        ErrorBody::new(status.as_u16(), message, context)
    })
}

/// 405 with the methods the resource takes.
pub(crate) fn method_not_allowed(
    allow: &'static str,
    url: &RequestUrl,
    now: Timestamp,
) -> Response<Body> {
    let message = format!("SubCode=40000. The resource takes only {allow}.");
    let mut response = refusal(StatusCode::METHOD_NOT_ALLOWED, &message, url, now);
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// Marks a response as the connection's last: sent when the request body was left unread or
/// half read, so the connection cannot carry another request.
pub(crate) fn closing(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// 401: with an empty body for a request without a token, as the service answers it, and
/// with the service's `<Error>` body saying why for a refused token (every SDK's admin client
/// raises its unauthorized error on the status, and shows the detail).
pub(crate) fn unauthorized(
    reason: &Unauthorized,
    url: &RequestUrl,
    now: Timestamp,
) -> Response<Body> {
    match reason.detail() {
        Some(detail) => refusal(StatusCode::UNAUTHORIZED, detail, url, now),
        None => {
            let mut response = Response::new(Body::default());
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            response
        }
    }
}

/// `GET /health`: the emulator's answer (`ServiceBus-Emulator/Schema/HealthCheckApiSchema.md`)
/// when healthy, `degraded` or `unhealthy` (503) with why otherwise, plus whether the broker
/// runs with `--test-controls`.
pub(crate) fn health(health: &Health, test_controls: bool) -> Response<Body> {
    let (status, word, message) = match health {
        Health::Healthy => (StatusCode::OK, "healthy", "Service is healthy."),
        Health::Degraded(why) => (StatusCode::OK, "degraded", why.as_str()),
        Health::Unhealthy(why) => (StatusCode::SERVICE_UNAVAILABLE, "unhealthy", why.as_str()),
    };
    // In the emulator's field order (a `json!` map would sort the keys).
    let message = serde_json::Value::from(message);
    let text =
        format!(r#"{{"status":"{word}","message":{message},"testControls":{test_controls}}}"#);
    json(status, text)
}

/// A text document of `content_type` (the Prometheus scrape's).
pub(crate) fn text(status: StatusCode, content_type: &'static str, text: String) -> Response<Body> {
    document(status, content_type, text)
}

/// A `303 See Other` to `location` (a path of this server).
pub(crate) fn see_other(location: &str) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, location);
    }
    response
}

/// A JSON document.
pub(crate) fn json(status: StatusCode, text: String) -> Response<Body> {
    document(status, JSON, text)
}

/// An `<Error>` response; `body` writes the detail with the tracking suffix of `context`.
fn error(
    url: &RequestUrl,
    now: Timestamp,
    body: impl FnOnce(&ErrorContext<'_>) -> ErrorBody,
) -> Response<Body> {
    let tracking_id = Uuid::new_v4().to_string();
    let tracker = url.tracker();
    let body = body(&ErrorContext {
        tracking_id: &tracking_id,
        system_tracker: &tracker,
        timestamp: now,
    });
    let status = StatusCode::from_u16(body.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    document(status, ERROR, body.to_xml())
}

fn document(status: StatusCode, content_type: &'static str, text: String) -> Response<Body> {
    let mut response = Response::new(Body::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
