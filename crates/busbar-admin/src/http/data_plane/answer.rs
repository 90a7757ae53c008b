//! Answering a data-plane request: read and check the send's body and headers, ask the
//! [`DataPlane`], and write the message, its `BrokerProperties` and custom-property headers
//! and its lock's `Location`, or the service's status and `<Error>` body. A receive waits
//! (long-polls) up to its `timeout` (default 60 s) or the server's shutdown, whichever is first,
//! without holding anything but its own task.

use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, LOCATION};
use hyper::http::request::Parts;
use hyper::{HeaderMap, Response, StatusCode};
use tokio::sync::watch;
use tokio::time::{Instant, timeout_at};
use tracing::debug;
use uuid::Uuid;

use super::{DataOperation, DataRequest};
use crate::atom::Timestamp;
use crate::data_plane::{
    BrokerProperties, DataPlane, DataPlaneError, HttpMessage, LockAction, ReceiveMode, batch,
    custom_properties,
};
use crate::http::answer::read_body;
use crate::http::request_url::RequestUrl;
use crate::http::response::{Body, closing, refusal};

/// How long a receive waits when the request names no `timeout`.
const DEFAULT_RECEIVE_WAIT: Duration = Duration::from_secs(60);
/// The longest wait a receive may ask for.
const MAX_RECEIVE_WAIT: Duration = Duration::from_secs(3_600);
const BROKER_PROPERTIES: HeaderName = HeaderName::from_static("brokerproperties");

/// What an answer needs of the request besides its operation.
pub(crate) struct DataExchange<'a> {
    /// The request line and headers.
    pub(crate) parts: &'a Parts,
    /// The request's URL, for `Location` and error details.
    pub(crate) url: &'a RequestUrl,
    /// The time now, for error details.
    pub(crate) now: Timestamp,
    /// When the body and the broker's answer to a send or settlement are due.
    pub(crate) deadline: Instant,
    /// How long a request may take, for the refusal of a late body.
    pub(crate) request_timeout: Duration,
    /// Turns true when the server shuts down: long polls end.
    pub(crate) closing: watch::Receiver<bool>,
}

/// Answers one data-plane request.
pub(crate) async fn answer<D: DataPlane>(
    plane: &D,
    exchange: DataExchange<'_>,
    request: DataRequest,
    body: Incoming,
) -> Response<Body> {
    let DataRequest { entity, operation } = request;
    let result = match operation {
        DataOperation::Send => send(plane, &exchange, &entity, body).await,
        DataOperation::Receive(mode) => receive(plane, &exchange, &entity, mode).await,
        DataOperation::Lock { token, action } => {
            locked_message(plane, &exchange, &entity, &token, action).await
        }
    };
    result.unwrap_or_else(|refused| {
        debug!(method = %exchange.parts.method, path = exchange.url.path(), ?refused, "data-plane request refused");
        let status = StatusCode::from_u16(refused.error.status)
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let response = refusal(status, &refused.error.detail, exchange.url, exchange.now);
        if refused.body_unread {
            closing(response)
        } else {
            response
        }
    })
}

/// A refusal, and whether the request's body was left unread (the connection then closes).
#[derive(Debug)]
struct Refused {
    error: DataPlaneError,
    body_unread: bool,
}

impl From<DataPlaneError> for Refused {
    fn from(error: DataPlaneError) -> Refused {
        Refused {
            error,
            body_unread: false,
        }
    }
}

/// `POST …/messages`: one message (body, `Content-Type`, `BrokerProperties`, custom property
/// headers) or a JSON batch; 201 once stored.
async fn send<D: DataPlane>(
    plane: &D,
    exchange: &DataExchange<'_>,
    entity: &str,
    body: Incoming,
) -> Result<Response<Body>, Refused> {
    let limit = plane.max_message_size(entity);
    let body = read_body(body, limit, exchange.deadline)
        .await
        .map_err(|error| Refused {
            error: DataPlaneError {
                status: error.status().as_u16(),
                detail: error.message(limit, exchange.request_timeout),
            },
            body_unread: true,
        })?;
    let headers = &exchange.parts.headers;
    let content_type = header_text(headers, &CONTENT_TYPE)?;
    let messages = if content_type.is_some_and(batch::is_batch) {
        batch::parse(&body).map_err(|error| bad_request(error.to_string()))?
    } else {
        let properties = match header_text(headers, &BROKER_PROPERTIES)? {
            None => BrokerProperties::default(),
            Some(text) => {
                BrokerProperties::parse(text).map_err(|error| bad_request(error.to_string()))?
            }
        };
        vec![HttpMessage {
            body,
            content_type: content_type.map(str::to_owned),
            properties,
            custom_properties: custom_properties::from_headers(headers),
        }]
    };
    within_deadline(exchange, plane.send_messages(entity, messages)).await?;
    Ok(status_only(StatusCode::CREATED))
}

/// `POST` / `DELETE` of `…/messages/head`: the next message (201 locked, 200 removed), or 204
/// when none arrived within the wait.
async fn receive<D: DataPlane>(
    plane: &D,
    exchange: &DataExchange<'_>,
    entity: &str,
    mode: ReceiveMode,
) -> Result<Response<Body>, Refused> {
    let wait = match exchange.url.query_value("timeout") {
        None => DEFAULT_RECEIVE_WAIT,
        Some(text) => text
            .parse::<u64>()
            .map(|seconds| Duration::from_secs(seconds).min(MAX_RECEIVE_WAIT))
            .map_err(|_| bad_request(format!("the timeout {text:?} is not a number of seconds")))?,
    };
    let mut closing = exchange.closing.clone();
    let give_up = async move {
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            // An error means the server is gone, which is a shutdown too.
            _ = closing.wait_for(|&closing| closing) => {}
        }
    };
    let Some(message) = plane.receive_message(entity, mode, give_up).await? else {
        return Ok(status_only(StatusCode::NO_CONTENT));
    };
    let status = match mode {
        ReceiveMode::PeekLock => StatusCode::CREATED,
        ReceiveMode::ReceiveAndDelete => StatusCode::OK,
    };
    let location = match (mode, message.properties.lock_token) {
        (ReceiveMode::PeekLock, Some(token)) => {
            let id = message.properties.sequence_number.unwrap_or_default();
            Some(lock_location(exchange.url, &format!("{id}/{token}")))
        }
        _ => None,
    };
    let mut response = message_response(status, message);
    if let Some(location) = location.and_then(|text| HeaderValue::from_str(&text).ok()) {
        response.headers_mut().insert(LOCATION, location);
    }
    Ok(response)
}

/// `DELETE` / `PUT` / `POST` of `…/messages/{id}/{lock token}`: 200, a renewal with the new
/// `LockedUntilUtc` in `BrokerProperties`; 410 when the lock is lost or unknown.
async fn locked_message<D: DataPlane>(
    plane: &D,
    exchange: &DataExchange<'_>,
    entity: &str,
    token: &str,
    action: LockAction,
) -> Result<Response<Body>, Refused> {
    let token = Uuid::parse_str(token)
        .map_err(|_| bad_request(format!("the lock token {token:?} is not a GUID")))?;
    let renewed = within_deadline(exchange, plane.locked_message(entity, token, action)).await?;
    let mut response = status_only(StatusCode::OK);
    if let Some(until) = renewed {
        let properties = BrokerProperties {
            lock_token: Some(token),
            locked_until: Some(until),
            ..BrokerProperties::default()
        };
        if let Ok(value) = HeaderValue::from_str(&properties.to_json()) {
            response.headers_mut().insert(BROKER_PROPERTIES, value);
        }
    }
    Ok(response)
}

/// A received message: its body, `Content-Type`, `BrokerProperties` and custom properties.
fn message_response(status: StatusCode, message: HttpMessage) -> Response<Body> {
    let mut response = Response::new(Body::new(message.body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if let Some(value) = message
        .content_type
        .and_then(|text| HeaderValue::from_str(&text).ok())
    {
        headers.insert(CONTENT_TYPE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&message.properties.to_json()) {
        headers.insert(BROKER_PROPERTIES, value);
    }
    for (name, value) in message.custom_properties {
        // A property whose name or value cannot be a header is left out, as the service does.
        if let (Ok(name), Some(value)) = (HeaderName::try_from(name), value.to_header())
            && !headers.contains_key(&name)
        {
            headers.insert(name, value);
        }
    }
    response
}

/// `…/messages/{tail}` beside the request's `…/messages/head`.
fn lock_location(url: &RequestUrl, tail: &str) -> String {
    let head = url.path().trim_end_matches('/');
    let messages = head.strip_suffix("/head").unwrap_or(head);
    format!("{}{messages}/{tail}", url.origin())
}

/// The broker's answer by the request's deadline, or 503.
async fn within_deadline<T>(
    exchange: &DataExchange<'_>,
    operation: impl Future<Output = Result<T, DataPlaneError>>,
) -> Result<T, Refused> {
    match timeout_at(exchange.deadline, operation).await {
        Ok(result) => result.map_err(Refused::from),
        Err(_) => Err(Refused::from(DataPlaneError {
            status: 503,
            detail: "SubCode=50004. The server is busy: the broker did not answer in time.".into(),
        })),
    }
}

/// A header's text, if the request has it; 400 when it is not visible ASCII.
fn header_text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, Refused> {
    headers
        .get(name)
        .map(|value| {
            value
                .to_str()
                .map_err(|_| bad_request(format!("the {name} header is not text")))
        })
        .transpose()
}

fn bad_request(detail: impl Into<String>) -> Refused {
    let detail = detail.into();
    let detail = if detail.starts_with("SubCode=") {
        detail
    } else {
        format!("SubCode=40000. {detail}.")
    };
    Refused::from(DataPlaneError::bad_request(detail))
}

fn status_only(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = status;
    response
}
