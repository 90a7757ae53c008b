//! The explorer's forms: send a message, purge an entity or its dead-letter queue, re-drive
//! dead-lettered messages, set or clear a session's state. Each answers with a redirect to the
//! entity's page saying what was done (post/redirect/get, so a reload repeats nothing).

use super::form::Form;
use super::pages::{self, encode};
use super::routes::Outcome;
use super::views::{entity_path, invalid};
use super::{OutgoingMessage, SubQueue};
use crate::atom::Timestamp;
use crate::control::{ControlResult, NamespaceControl};

/// `POST /explorer/send`.
pub(super) async fn send<C: NamespaceControl>(control: &C, form: &Form) -> ControlResult<Outcome> {
    let path = entity_path(form)?;
    let scheduled_enqueue_time = match form.non_empty("scheduled") {
        Some(text) => Some(scheduled_time(&text)?),
        None => None,
    };
    let message = OutgoingMessage {
        body: form.text("body").to_owned(),
        content_type: form.non_empty("content_type"),
        message_id: form.non_empty("message_id"),
        session_id: form.non_empty("session_id"),
        subject: form.non_empty("subject"),
        correlation_id: form.non_empty("correlation_id"),
        application_properties: properties(form.text("properties"))?,
        scheduled_enqueue_time,
    };
    control.send(&path, message).await?;
    Ok(back(&path, SubQueue::Active, "Message sent."))
}

/// `POST /explorer/purge` (`dead_letter=true` for the dead-letter queue only).
pub(super) async fn purge<C: NamespaceControl>(control: &C, form: &Form) -> ControlResult<Outcome> {
    let path = entity_path(form)?;
    let dead_letter = form.get("dead_letter") == Some("true");
    let purged = control.purge_messages(&path, dead_letter).await?;
    let sub_queue = if dead_letter {
        SubQueue::DeadLetter
    } else {
        SubQueue::Active
    };
    Ok(back(
        &path,
        sub_queue,
        &format!("Purged {purged} messages."),
    ))
}

/// `POST /explorer/redrive`: `which=all`, or `which=selected` with `seq` fields.
pub(super) async fn redrive<C: NamespaceControl>(
    control: &C,
    form: &Form,
) -> ControlResult<Outcome> {
    let path = entity_path(form)?;
    let sequences = match form.get("which") {
        Some("all") => None,
        _ => {
            let selected = form
                .all("seq")
                .map(|seq| {
                    seq.parse::<i64>()
                        .map_err(|_| invalid("seq must be a number"))
                })
                .collect::<ControlResult<Vec<_>>>()?;
            if selected.is_empty() {
                return Err(invalid("select the messages to re-drive"));
            }
            Some(selected)
        }
    };
    let destination = match form.non_empty("destination") {
        Some(name) => {
            let segments: Vec<String> = name.split('/').map(str::to_owned).collect();
            let checked = crate::http::controls::entity_name(&segments);
            Some(checked.map_err(|problem| invalid(&problem.message))?)
        }
        None => None,
    };
    let done = control.redrive(&path, sequences, destination).await?;
    let notice = format!(
        "Re-drove {} messages; {} stayed in the dead-letter queue.",
        done.moved, done.kept
    );
    Ok(back(&path, SubQueue::DeadLetter, &notice))
}

/// `POST /explorer/session-state`: `action=save` with `state`, or `action=clear`.
pub(super) async fn session_state<C: NamespaceControl>(
    control: &C,
    form: &Form,
) -> ControlResult<Outcome> {
    let path = entity_path(form)?;
    let session = form
        .non_empty("session")
        .ok_or_else(|| invalid("name the session"))?;
    let state = match form.get("action") {
        Some("clear") => None,
        _ => Some(form.text("state").as_bytes().to_vec()),
    };
    let cleared = state.is_none();
    control.set_session_state(&path, &session, state).await?;
    let notice = if cleared {
        format!("Cleared the state of session {session}.")
    } else {
        format!("Saved the state of session {session}.")
    };
    Ok(back(&path, SubQueue::Active, &notice))
}

/// The entity's page with `notice`.
fn back(path: &str, sub_queue: SubQueue, notice: &str) -> Outcome {
    let url = pages::entity_url(path, sub_queue, 1);
    Outcome::Redirect(format!("{url}&notice={}", encode(notice)))
}

/// `name=value` lines.
fn properties(text: &str) -> ControlResult<Vec<(String, String)>> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| invalid(&format!("property line {line:?} has no '='")))?;
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

/// A `datetime-local` value (`2026-01-02T03:04`, seconds optional), taken as UTC.
fn scheduled_time(text: &str) -> ControlResult<i64> {
    let with_seconds = match text.split_once('T') {
        Some((_, time)) if time.len() == 5 => format!("{text}:00"),
        _ => text.to_owned(),
    };
    Timestamp::parse(&with_seconds)
        .map(Timestamp::unix_millis)
        .ok_or_else(|| invalid(&format!("{text:?} is not a date and time")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_lines_and_schedules() {
        assert_eq!(
            properties("a=1\n\n b = two=2 ").unwrap(),
            [("a".into(), "1".into()), ("b".into(), "two=2".into())]
        );
        assert!(properties("nothing").is_err());
        assert_eq!(scheduled_time("1970-01-01T00:01").unwrap(), 60_000);
        assert_eq!(scheduled_time("1970-01-01T00:00:02").unwrap(), 2_000);
        assert!(scheduled_time("soon").is_err());
    }
}
