//! Busbar's own controls under `/$busbar/` (the contract is in [`crate::test_controls`]): route
//! (`route`), read a fault's body, call the [`NamespaceControl`], answer JSON. The request was
//! authorised before it got here; every failure is answered `{"error":"…"}`.

mod api;
mod route;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{ALLOW, HeaderValue};
use hyper::{Method, Response, StatusCode};
use serde::Serialize;
use tokio::time::{Instant, timeout_at};
use tracing::debug;

use super::answer::read_body;
use super::config::ServerConfig;
use super::request_url::RequestUrl;
use super::response::{Body, closing, json};
use crate::control::{ControlError, Fault, NamespaceControl};
use crate::test_controls::{ClockAnswer, ErrorAnswer, PurgeAnswer, parse_duration};
use crate::validate::{self, ValidationError};
use route::{Call, Unrouted, route};

/// The largest fault body read (`{"kind":"server-busy","count":4294967295}` is 40 bytes).
const MAX_BODY_BYTES: usize = 1024;
/// The answer of the controls that return nothing.
const EMPTY: &str = "{}";

/// Answers a request for `/$busbar/` followed by `segments`.
pub(super) async fn answer<C: NamespaceControl>(
    control: &C,
    config: &ServerConfig,
    method: &Method,
    url: &RequestUrl,
    segments: &[String],
    body: Incoming,
    deadline: Instant,
) -> Response<Body> {
    if let [first, rest @ ..] = segments
        && first.eq_ignore_ascii_case("api")
    {
        return api::answer(control, config, method, url, rest, body, deadline).await;
    }
    let call = match route(method, segments, control.test_controls()) {
        Ok(call) => call,
        Err(Unrouted::NotFound(message)) => return error(StatusCode::NOT_FOUND, message),
        Err(Unrouted::MethodNotAllowed(allow)) => {
            let message = format!("this control takes only {allow}");
            let mut response = error(StatusCode::METHOD_NOT_ALLOWED, &message);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
            return response;
        }
    };
    let limit = if matches!(call, Call::Fault { .. }) {
        MAX_BODY_BYTES
    } else {
        0
    };
    let body = match body_of(body, limit, config, deadline).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    respond(carry_out(control, url, call, &body), deadline, method, url).await
}

/// Reads a body of at most `limit` bytes (none when 0), or answers the refusal that closes the
/// connection.
pub(super) async fn body_of(
    body: Incoming,
    limit: usize,
    config: &ServerConfig,
    deadline: Instant,
) -> Result<Bytes, Response<Body>> {
    if limit == 0 {
        return Ok(Bytes::new());
    }
    read_body(body, limit, deadline).await.map_err(|refused| {
        let message = refused.message(limit, config.request_timeout);
        closing(error(refused.status(), &message))
    })
}

/// The JSON answer of `carried`, run until `deadline`, or its problem as `{"error":"…"}`.
pub(super) async fn respond(
    carried: impl Future<Output = Result<String, Problem>>,
    deadline: Instant,
    method: &Method,
    url: &RequestUrl,
) -> Response<Body> {
    let result = timeout_at(deadline, carried).await.unwrap_or_else(|_| {
        Err(Problem {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: "the broker did not answer in time".to_owned(),
        })
    });
    match result {
        Ok(text) => json(StatusCode::OK, text),
        Err(problem) => {
            let (status, reason) = (problem.status, &problem.message);
            debug!(%method, path = url.path(), %status, reason, "control failed");
            error(problem.status, &problem.message)
        }
    }
}

/// Carries out a routed control; the JSON answer, or why not.
async fn carry_out<C: NamespaceControl>(
    control: &C,
    url: &RequestUrl,
    call: Call,
    body: &[u8],
) -> Result<String, Problem> {
    match call {
        Call::Purge { entity } => {
            let entity = entity_name(&entity)?;
            let dead_letter_only = dead_letter_only(url)?;
            let purged = (control.purge(&entity, dead_letter_only).await)
                .map_err(|error| Problem::control(error, || no_entity(&entity)))?;
            Ok(to_json(&PurgeAnswer { purged }))
        }
        Call::Reset => {
            (control.reset().await).map_err(|error| {
                Problem::control(error, || {
                    "this broker cannot reset its namespace".to_owned()
                })
            })?;
            Ok(EMPTY.to_owned())
        }
        Call::Clock => {
            let clock = (control.clock().await).map_err(|error| {
                Problem::control(error, || "this broker has no virtual clock".to_owned())
            })?;
            Ok(to_json(&ClockAnswer::from(clock)))
        }
        Call::AdvanceClock => {
            let by = url.query_value("by").ok_or_else(|| {
                Problem::bad_request("say how far to advance the clock: ?by=PT2H (or 90s, 2h …)")
            })?;
            let by = parse_duration(&by).ok_or_else(|| {
                Problem::bad_request(format!(
                    "{by:?} is not a duration: write ISO 8601 (PT1H30M) or a number and unit \
                     (90s, 2h, 15m, 500ms)"
                ))
            })?;
            let clock = (control.advance_clock(by).await).map_err(|error| {
                Problem::control(error, || "this broker has no virtual clock".to_owned())
            })?;
            Ok(to_json(&ClockAnswer::from(clock)))
        }
        Call::Fault { entity } => {
            let entity = entity_name(&entity)?;
            let fault: Fault = serde_json::from_slice(body).map_err(|error| {
                Problem::bad_request(format!(
                    "the body must be {{\"kind\":\"server-busy\"|\"lock-lost\",\"count\":N}}, \
                     {{\"kind\":\"detach-link\"|\"drop-connection\",\"condition\":\"…\"}} or \
                     {{\"kind\":\"delay\",\"millis\":N,\"count\":N}}: {error}"
                ))
            })?;
            (control.inject_fault(&entity, fault).await)
                .map_err(|error| Problem::control(error, || no_entity(&entity)))?;
            Ok(EMPTY.to_owned())
        }
    }
}

/// A failed control: its status and what the user is told.
#[derive(Debug)]
pub(crate) struct Problem {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl Problem {
    pub(super) fn bad_request(message: impl Into<String>) -> Problem {
        Problem {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// The problem a control error means; `not_found` says what is missing.
    pub(super) fn control(error: ControlError, not_found: impl FnOnce() -> String) -> Problem {
        let status = match &error {
            ControlError::NotFound => {
                return Problem {
                    status: StatusCode::NOT_FOUND,
                    message: not_found(),
                };
            }
            ControlError::AlreadyExists => StatusCode::CONFLICT,
            ControlError::Invalid { .. } => StatusCode::BAD_REQUEST,
            ControlError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        };
        Problem {
            status,
            message: error.to_string(),
        }
    }
}

impl From<ValidationError> for Problem {
    fn from(error: ValidationError) -> Problem {
        Problem::bad_request(error.to_string())
    }
}

pub(super) fn no_entity(entity: &str) -> String {
    format!("there is no queue, topic or subscription {entity:?}")
}

/// The entity a control names: a queue or topic, or `{topic}/Subscriptions/{subscription}`
/// (returned with `Subscriptions` spelled so), each name validated.
pub(crate) fn entity_name(segments: &[String]) -> Result<String, Problem> {
    match segments {
        [topic @ .., subscriptions, subscription]
            if !topic.is_empty() && subscriptions.eq_ignore_ascii_case("Subscriptions") =>
        {
            let topic = topic.join("/");
            validate::entity_name(&topic)?;
            validate::subscription_name(subscription)?;
            Ok(format!("{topic}/Subscriptions/{subscription}"))
        }
        _ => {
            let name = segments.join("/");
            validate::entity_name(&name)?;
            Ok(name)
        }
    }
}

/// `?deadLetter=true|false` (absent: false).
fn dead_letter_only(url: &RequestUrl) -> Result<bool, Problem> {
    match url.query_value("deadLetter").as_deref() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(Problem::bad_request(format!(
            "deadLetter takes true or false, not {other:?}"
        ))),
    }
}

/// A control's answer as JSON (structs of strings and numbers, which always serialize).
pub(super) fn to_json(answer: &impl Serialize) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}

/// `{"error":"…"}` with `status`.
pub(super) fn error(status: StatusCode, message: &str) -> Response<Body> {
    let body = ErrorAnswer {
        error: message.to_owned(),
    };
    json(status, to_json(&body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str) -> Result<String, String> {
        let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
        entity_name(&segments).map_err(|problem| problem.message)
    }

    #[test]
    fn queues_and_subscriptions() {
        assert_eq!(names("orders"), Ok("orders".into()));
        assert_eq!(names("eu/orders"), Ok("eu/orders".into()));
        assert_eq!(
            names("a/b/subscriptions/s"),
            Ok("a/b/Subscriptions/s".into())
        );
        // Without a topic before it, `Subscriptions` is just a name.
        assert_eq!(names("Subscriptions/s"), Ok("Subscriptions/s".into()));
        for refused in [
            "q/$DeadLetterQueue",
            "t/Subscriptions/s@x",
            "a//b",
            "t/Subscriptions/",
        ] {
            assert!(names(refused).is_err(), "{refused}");
        }
    }
}
