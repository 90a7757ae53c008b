//! Busbar's own JSON API under `/$busbar/api/` (docs/explorer-api.md): what the web explorer
//! does, for scripts and test suites, authorised by the same SAS token as the administration
//! API. Every failure is `{"error":"…"}` with a 4xx or 5xx status; bodies are bounded.

use hyper::body::Incoming;
use hyper::{Method, Response, StatusCode};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Problem, body_of, entity_name, no_entity, respond, to_json};
use crate::control::NamespaceControl;
use crate::explorer::{
    EntityCounts, MAX_PAGE, OutgoingMessage, PeekedMessage, SessionInfo, SubQueue,
};
use crate::http::config::ServerConfig;
use crate::http::request_url::RequestUrl;
use crate::http::response::Body;

/// The largest request body read (a message's body is at most 256 KiB; JSON escapes it).
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// `POST /$busbar/api/redrive/{entity}`'s body.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RedriveRequest {
    /// The dead-lettered messages to move; absent: all.
    sequence_numbers: Option<Vec<i64>>,
    /// Where to; absent: the entity itself.
    destination: Option<String>,
}

/// `PUT /$busbar/api/session-state/{entity}?session=…`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionStateRequest {
    /// The new state as text; `null` clears it.
    state: Option<String>,
}

#[derive(Serialize)]
struct NamespaceAnswer {
    entities: Vec<EntityCounts>,
    total: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MessagesAnswer {
    messages: Vec<PeekedMessage>,
    /// Where the next page starts; `null` when this one was the last.
    next_from: Option<i64>,
}

#[derive(Serialize)]
struct SessionsAnswer {
    sessions: Vec<SessionInfo>,
}

#[derive(Serialize)]
struct PurgeAnswer {
    purged: u64,
}

/// Answers `/$busbar/api/` followed by `segments`.
pub(super) async fn answer<C: NamespaceControl>(
    control: &C,
    config: &ServerConfig,
    method: &Method,
    url: &RequestUrl,
    segments: &[String],
    body: Incoming,
    deadline: Instant,
) -> Response<Body> {
    let limit = if *method == Method::POST || *method == Method::PUT {
        MAX_BODY_BYTES
    } else {
        0
    };
    let body = match body_of(body, limit, config, deadline).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let carried = carry_out(control, method, url, segments, &body);
    respond(carried, deadline, method, url).await
}

async fn carry_out<C: NamespaceControl>(
    control: &C,
    method: &Method,
    url: &RequestUrl,
    segments: &[String],
    body: &[u8],
) -> Result<String, Problem> {
    let Some((operation, entity)) = segments.split_first() else {
        return Err(not_found());
    };
    let entity_of = || entity_name(entity);
    let failed = |entity: &str| {
        let entity = entity.to_owned();
        move |error| Problem::control(error, || no_entity(&entity))
    };
    match (method.as_str(), operation.as_str()) {
        ("GET", "namespace") if entity.is_empty() => {
            let entities = control.overview().await.map_err(failed("namespace"))?;
            let (skip, top) = (number(url, "skip", 0)?, number(url, "top", usize::MAX)?);
            let total = entities.len();
            let entities = entities.into_iter().skip(skip).take(top).collect();
            Ok(to_json(&NamespaceAnswer { entities, total }))
        }
        ("GET", "messages") => {
            let entity = entity_of()?;
            let sub_queue = sub_queue(url)?;
            let from = i64::try_from(number(url, "from", 1)?).unwrap_or(i64::MAX);
            let count = number(url, "count", 50)?.min(MAX_PAGE);
            let messages =
                (control.peek(&entity, sub_queue, from, count).await).map_err(failed(&entity))?;
            let next_from = (messages.len() == count && count > 0)
                .then(|| messages.last().map(|m| m.sequence_number.saturating_add(1)))
                .flatten();
            Ok(to_json(&MessagesAnswer {
                messages,
                next_from,
            }))
        }
        ("POST", "messages") => {
            let entity = entity_of()?;
            let message: OutgoingMessage = parse(body)?;
            (control.send(&entity, message).await).map_err(failed(&entity))?;
            Ok("{}".to_owned())
        }
        ("POST", "purge") => {
            let entity = entity_of()?;
            let dead_letter = sub_queue(url)? == SubQueue::DeadLetter;
            let purged =
                (control.purge_messages(&entity, dead_letter).await).map_err(failed(&entity))?;
            Ok(to_json(&PurgeAnswer { purged }))
        }
        ("POST", "redrive") => {
            let entity = entity_of()?;
            let request: RedriveRequest = if body.is_empty() {
                RedriveRequest::default()
            } else {
                parse(body)?
            };
            let destination = match request.destination {
                Some(name) => Some(entity_name(&split(&name))?),
                None => None,
            };
            let redriven = control
                .redrive(&entity, request.sequence_numbers, destination)
                .await
                .map_err(failed(&entity))?;
            Ok(to_json(&redriven))
        }
        ("GET", "sessions") => {
            let entity = entity_of()?;
            let (skip, top) = (number(url, "skip", 0)?, number(url, "top", 100)?);
            let sessions = (control.sessions(&entity, skip, top).await).map_err(failed(&entity))?;
            Ok(to_json(&SessionsAnswer { sessions }))
        }
        ("PUT", "session-state") => {
            let entity = entity_of()?;
            let session = url
                .query_value("session")
                .filter(|session| !session.is_empty())
                .ok_or_else(|| Problem::bad_request("name the session: ?session=…"))?;
            let request: SessionStateRequest = parse(body)?;
            let state = request.state.map(String::into_bytes);
            (control.set_session_state(&entity, &session, state).await).map_err(failed(&entity))?;
            Ok("{}".to_owned())
        }
        _ => Err(not_found()),
    }
}

fn not_found() -> Problem {
    Problem {
        status: StatusCode::NOT_FOUND,
        message: "no API operation is at this path (see docs/explorer-api.md)".to_owned(),
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('/').map(str::to_owned).collect()
}

fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, Problem> {
    serde_json::from_slice(body)
        .map_err(|error| Problem::bad_request(format!("the body is not acceptable JSON: {error}")))
}

/// A non-negative integer query parameter, `default` when absent.
fn number(url: &RequestUrl, key: &str, default: usize) -> Result<usize, Problem> {
    match url.query_value(key) {
        None => Ok(default),
        Some(text) => text.parse().map_err(|_| {
            Problem::bad_request(format!("{key} takes a non-negative integer, not {text:?}"))
        }),
    }
}

/// `?subQueue=active|dead-letter` (absent: active).
fn sub_queue(url: &RequestUrl) -> Result<SubQueue, Problem> {
    match url.query_value("subQueue") {
        None => Ok(SubQueue::Active),
        Some(text) => SubQueue::parse(&text).ok_or_else(|| {
            Problem::bad_request(format!(
                "subQueue takes active or dead-letter, not {text:?}"
            ))
        }),
    }
}
