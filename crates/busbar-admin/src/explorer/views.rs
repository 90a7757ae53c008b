//! The explorer's pages: the namespace overview, the live counts they poll, an entity's page
//! (one page of messages, read from a sequence number on), and one message.

use hyper::StatusCode;

use super::form::Form;
use super::pages::{self, EntityView, Frame};
use super::routes::Outcome;
use super::{EntityCounts, EntityKind, SubQueue};
use crate::atom::PageRequest;
use crate::control::{ControlError, ControlResult, NamespaceControl, RuleEntry};

/// Overview rows a page.
const OVERVIEW_PAGE: usize = 500;
/// Messages an entity page lists.
const MESSAGES_PAGE: usize = 50;

/// `GET /explorer?skip=N`.
pub(super) async fn overview<C: NamespaceControl>(
    control: &C,
    query: &Form,
    csrf: &str,
) -> ControlResult<Outcome> {
    let rows = control.overview().await?;
    let skip = number(query, "skip", 0).min(rows.len());
    let shown = &rows[skip..rows.len().min(skip + OVERVIEW_PAGE)];
    let frame = Frame {
        csrf: Some(csrf),
        notice: query.get("notice"),
        counts_url: Some(format!("/explorer/counts?skip={skip}&top={OVERVIEW_PAGE}")),
        ..Frame::default()
    };
    let markup = pages::overview(&frame, shown, skip, rows.len(), OVERVIEW_PAGE);
    Ok(Outcome::Page(StatusCode::OK, markup))
}

/// `GET /explorer/counts?path=P` (one entity) or `?skip=N&top=M` (overview rows), as
/// `{"entities":[…]}`.
pub(super) async fn counts<C: NamespaceControl>(
    control: &C,
    query: &Form,
) -> ControlResult<Outcome> {
    let entities = match query.non_empty("path") {
        Some(path) => vec![entity_counts(control, &path).await?],
        None => {
            let rows = control.overview().await?;
            let skip = number(query, "skip", 0);
            let top = number(query, "top", OVERVIEW_PAGE);
            rows.into_iter().skip(skip).take(top).collect()
        }
    };
    let text = serde_json::json!({ "entities": entities }).to_string();
    Ok(Outcome::Json(text))
}

/// `GET /explorer/entity?path=P&queue=active|dead-letter&from=N&state=S`.
pub(super) async fn entity<C: NamespaceControl>(
    control: &C,
    query: &Form,
    csrf: &str,
) -> ControlResult<Outcome> {
    let path = entity_path(query)?;
    let sub_queue = sub_queue(query);
    let from = i64::try_from(number(query, "from", 1)).unwrap_or(i64::MAX);
    let state = query
        .get("state")
        .filter(|state| matches!(*state, "active" | "scheduled" | "deferred"));
    let counts = entity_counts(control, &path).await?;
    let peeked = control.peek(&path, sub_queue, from, MESSAGES_PAGE).await?;
    let next_from = (peeked.len() == MESSAGES_PAGE)
        .then(|| peeked.last().map(|m| m.sequence_number.saturating_add(1)))
        .flatten();
    let messages: Vec<_> = peeked
        .into_iter()
        .filter(|message| state.is_none_or(|state| message.state == state))
        .collect();
    let sessions = if counts.requires_session {
        control.sessions(&path, 0, 100).await?
    } else {
        Vec::new()
    };
    let rules = rules(control, &counts).await?;
    let frame = Frame {
        csrf: Some(csrf),
        notice: query.get("notice"),
        counts_url: Some(format!("/explorer/counts?path={}", pages::encode(&path))),
        ..Frame::default()
    };
    let view = EntityView {
        path: &path,
        counts: &counts,
        sub_queue,
        state,
        messages: &messages,
        from,
        next_from,
        sessions: &sessions,
        rules: &rules,
    };
    Ok(Outcome::Page(
        StatusCode::OK,
        pages::entity(&frame, csrf, &view),
    ))
}

/// `GET /explorer/message?path=P&queue=Q&seq=N`.
pub(super) async fn message<C: NamespaceControl>(
    control: &C,
    query: &Form,
    csrf: &str,
) -> ControlResult<Outcome> {
    let path = entity_path(query)?;
    let sub_queue = sub_queue(query);
    let sequence = query
        .get("seq")
        .and_then(|seq| seq.parse::<i64>().ok())
        .ok_or_else(|| invalid("seq must be a sequence number"))?;
    let found = control.peek(&path, sub_queue, sequence, 1).await?;
    let message = found
        .into_iter()
        .find(|message| message.sequence_number == sequence)
        .ok_or(ControlError::NotFound)?;
    let frame = Frame {
        csrf: Some(csrf),
        ..Frame::default()
    };
    let markup = pages::message(&frame, &path, sub_queue, &message);
    Ok(Outcome::Page(StatusCode::OK, markup))
}

/// The counts of one queue or subscription, asked of it alone (not of the whole namespace).
pub(super) async fn entity_counts<C: NamespaceControl>(
    control: &C,
    path: &str,
) -> ControlResult<EntityCounts> {
    let (kind, counts, requires_session) = match path.split_once("/Subscriptions/") {
        Some((topic, name)) => {
            let entry = control.subscription(topic, name).await?;
            let requires_session = entry.properties.requires_session;
            (
                EntityKind::Subscription,
                entry.runtime.counts,
                requires_session,
            )
        }
        None => {
            let entry = control.queue(path).await?;
            let requires_session = entry.properties.requires_session;
            (EntityKind::Queue, entry.runtime.counts, requires_session)
        }
    };
    Ok(EntityCounts {
        path: path.to_owned(),
        kind,
        active: counts.active,
        dead_letter: counts.dead_letter,
        scheduled: counts.scheduled,
        deferred: counts.deferred,
        requires_session,
    })
}

async fn rules<C: NamespaceControl>(
    control: &C,
    counts: &EntityCounts,
) -> ControlResult<Vec<RuleEntry>> {
    let Some((topic, name)) = counts.path.split_once("/Subscriptions/") else {
        return Ok(Vec::new());
    };
    let page = PageRequest {
        skip: 0,
        top: PageRequest::DEFAULT_TOP,
    };
    Ok(control.list_rules(topic, name, page).await?.items)
}

/// The `path` field: a queue or `{topic}/Subscriptions/{subscription}`, names validated.
pub(super) fn entity_path(form: &Form) -> ControlResult<String> {
    let path = form.text("path");
    let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
    crate::http::controls::entity_name(&segments).map_err(|problem| invalid(&problem.message))
}

fn sub_queue(query: &Form) -> SubQueue {
    query
        .get("queue")
        .and_then(SubQueue::parse)
        .unwrap_or(SubQueue::Active)
}

fn number(query: &Form, name: &str, default: usize) -> usize {
    query
        .get(name)
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

pub(super) fn invalid(detail: &str) -> ControlError {
    ControlError::Invalid {
        detail: detail.to_owned(),
    }
}
