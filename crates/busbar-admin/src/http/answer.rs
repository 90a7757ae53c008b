//! One request from its headers to its response: route, authorise, read the body under the
//! cap and the deadline, dispatch, and answer. Every request gets an answer; a request whose
//! body is too large or too late gets one that closes the connection. Busbar's own controls
//! (`/$busbar/…`) are handed to [`super::controls`] once authorised, and the data plane's
//! requests (`…/messages…`) to `super::data_plane`; the health probe and the Prometheus scrape
//! (`GET /metrics`) are answered without a token, and the web explorer (`/explorer…`,
//! [`crate::explorer`]) checks its own sign-in sessions.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use hyper::header::{ACCEPT, IF_MATCH};
use hyper::{Request, Response, StatusCode};
use tokio::sync::watch;
use tokio::time::{Instant, timeout_at};
use tracing::debug;

use super::accept;
use super::config::{Scheme, ServerConfig};
use super::controls;
use super::data_plane::{self, DataExchange};
use super::handlers::{Exchange, Failure, dispatch};
use super::request_url::RequestUrl;
use super::response::{self, Body, closing, refusal};
use super::route::{
    Operation, RouteError, Routed, is_browser_home, is_health_probe, is_metrics_scrape, route,
};
use crate::atom::MAX_DOCUMENT_BYTES;
use crate::auth::{Need, Right};
use crate::control::{ControlError, NamespaceControl};
use crate::explorer;
use crate::metrics::{self, render};

/// Answers one request.
pub(crate) async fn answer<C: NamespaceControl>(
    control: &C,
    config: &ServerConfig,
    scheme: Scheme,
    shutting_down: &watch::Receiver<bool>,
    request: Request<Incoming>,
) -> Response<Body> {
    let deadline = Instant::now() + config.request_timeout;
    let now = config.clock.now();
    let (parts, body) = request.into_parts();
    let url = RequestUrl::new(scheme, &parts);
    if is_health_probe(&parts.method, url.path(), url.has_api_version()) {
        return response::health(&control.health(), control.test_controls());
    }
    let accept = parts
        .headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if is_metrics_scrape(&parts.method, url.path(), url.has_api_version()) {
        let openmetrics = accept::names(accept, OPENMETRICS);
        return scrape(control, deadline, openmetrics).await;
    }
    if is_browser_home(&parts.method, url.path(), url.has_api_version())
        && accept::names(accept, "text/html")
    {
        return response::see_other("/explorer");
    }
    if explorer::is_explorer_path(url.path()) {
        return explorer::answer(control, config, scheme, &parts, &url, body, deadline).await;
    }
    let routed = route(&parts.method, url.path());
    let data_request = data_plane::route(&parts.method, url.path());
    // Authorisation before anything else, so a refused caller learns nothing of what exists.
    let need = match (&data_request, &routed) {
        (Some(request), _) => Need {
            right: request.operation.right(),
            entity: Some(&request.entity),
        },
        (None, Ok(Routed::Api(operation))) => Need {
            right: Right::Manage,
            entity: operation.own_entity(),
        },
        (None, _) => Need::MANAGE,
    };
    if let Err(reason) = config
        .authorization
        .check(&parts.headers, need, now.unix_millis())
    {
        debug!(method = %parts.method, path = url.path(), %reason, "unauthorized");
        return response::unauthorized(&reason, &url, now);
    }
    if let Some(request) = data_request {
        let exchange = DataExchange {
            parts: &parts,
            url: &url,
            now,
            deadline,
            request_timeout: config.request_timeout,
            closing: shutting_down.clone(),
        };
        return data_plane::answer(control, exchange, request, body).await;
    }
    let operation = match routed {
        Ok(Routed::Api(operation)) => operation,
        Ok(Routed::Controls(segments)) => {
            let method = &parts.method;
            return controls::answer(control, config, method, &url, &segments, body, deadline)
                .await;
        }
        Err(RouteError::NotFound) => {
            let message = "SubCode=40400. No resource of the administration API is at this path.";
            return refusal(StatusCode::NOT_FOUND, message, &url, now);
        }
        Err(RouteError::MethodNotAllowed { allow }) => {
            return response::method_not_allowed(allow, &url, now);
        }
    };
    let body = if matches!(operation, Operation::Put(_)) {
        // The codec refuses more than MAX_DOCUMENT_BYTES anyway; past it, answer 413 here.
        let limit = config.body_limit.min(MAX_DOCUMENT_BYTES);
        match read_body(body, limit, deadline).await {
            Ok(body) => body,
            Err(error) => {
                debug!(path = url.path(), ?error, "request body refused");
                let message = error.message(limit, config.request_timeout);
                return closing(refusal(error.status(), &message, &url, now));
            }
        }
    } else {
        Bytes::new()
    };
    let exchange = Exchange {
        url: &url,
        now,
        if_match: parts.headers.contains_key(IF_MATCH),
        body,
    };
    let result = timeout_at(deadline, dispatch(control, &exchange, operation))
        .await
        .unwrap_or_else(|_| {
            Err(Failure::Unavailable(
                "the broker did not answer in time".to_owned(),
            ))
        });
    match result {
        Ok(reply) => response::reply(reply),
        Err(failure) => {
            debug!(method = %parts.method, path = url.path(), ?failure, "request failed");
            response::failure(&failure, &url, now)
        }
    }
}

/// The media type a scraper names to get OpenMetrics (Prometheus does, first).
const OPENMETRICS: &str = "application/openmetrics-text";

/// `GET /metrics`: the control's counts in Prometheus's 0.0.4 text format (OpenMetrics when
/// `openmetrics`), or a plain-text 404 (not served) or 503.
async fn scrape<C: NamespaceControl>(
    control: &C,
    deadline: Instant,
    openmetrics: bool,
) -> Response<Body> {
    match timeout_at(deadline, control.metrics()).await {
        Ok(Ok(snapshot)) if openmetrics => {
            response::text(StatusCode::OK, metrics::CONTENT_TYPE, render(&snapshot))
        }
        Ok(Ok(snapshot)) => {
            let text = metrics::to_text_format(&render(&snapshot));
            response::text(StatusCode::OK, metrics::TEXT_CONTENT_TYPE, text)
        }
        Ok(Err(ControlError::NotFound)) => response::text(
            StatusCode::NOT_FOUND,
            PLAIN,
            "metrics are not served\n".into(),
        ),
        Ok(Err(error)) => {
            response::text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, format!("{error}\n"))
        }
        Err(_) => response::text(
            StatusCode::SERVICE_UNAVAILABLE,
            PLAIN,
            "the broker did not answer in time\n".into(),
        ),
    }
}

/// The `Content-Type` of a scrape's error text.
const PLAIN: &str = "text/plain; charset=utf-8";

/// Why a request body was not read whole.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Over the cap: announced by `Content-Length` (then not read at all) or found reading.
    TooLarge,
    /// Still arriving at the request's deadline.
    Late,
    /// The connection broke or the chunked encoding was malformed.
    Broken(String),
}

impl BodyError {
    /// The status that answers it.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Late => StatusCode::REQUEST_TIMEOUT,
            BodyError::Broken(_) => StatusCode::BAD_REQUEST,
        }
    }

    /// What the client is told, given the body cap and the request deadline.
    pub(crate) fn message(&self, limit: usize, deadline: Duration) -> String {
        match self {
            BodyError::TooLarge => {
                format!("SubCode=40000. The request body is larger than {limit} bytes.")
            }
            BodyError::Late => format!(
                "SubCode=40000. The request did not arrive within {} s.",
                deadline.as_secs_f64()
            ),
            BodyError::Broken(reason) => {
                format!("SubCode=40000. The request body could not be read: {reason}.")
            }
        }
    }
}

/// How far past its cap a body is still read, and dropped, before the refusal: most clients
/// write their whole request before they read the answer, and would see a broken pipe instead
/// of the 413 if the connection closed under them (nginx lingers likewise). A body announced
/// larger than that is refused unread.
const LINGER_BYTES: u64 = 8 * 1024 * 1024;

/// Reads a body of at most `limit` bytes by `deadline`. One over the limit is read on, and
/// dropped, for [`LINGER_BYTES`] more at most before it is refused; one whose `Content-Length`
/// is over even that is refused before a byte of it is read.
pub(crate) async fn read_body(
    mut body: Incoming,
    limit: usize,
    deadline: Instant,
) -> Result<Bytes, BodyError> {
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    let linger_limit = limit.saturating_add(LINGER_BYTES);
    if body.size_hint().lower() > linger_limit {
        return Err(BodyError::TooLarge);
    }
    let mut collected = BytesMut::new();
    let mut seen: u64 = 0;
    loop {
        let frame = match timeout_at(deadline, body.frame()).await {
            Err(_) if seen > limit => return Err(BodyError::TooLarge),
            Err(_) => return Err(BodyError::Late),
            Ok(None) if seen > limit => return Err(BodyError::TooLarge),
            Ok(None) => return Ok(collected.freeze()),
            Ok(Some(Err(error))) => return Err(BodyError::Broken(error.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        seen = seen.saturating_add(u64::try_from(data.len()).unwrap_or(u64::MAX));
        if seen > linger_limit {
            return Err(BodyError::TooLarge);
        }
        if seen <= limit {
            collected.extend_from_slice(&data);
        }
    }
}
