//! An entity's page: its counts, one page of its active or dead-lettered messages (filtered by
//! state on request), and its actions: send, purge, re-drive, session state, rules.

use maud::{Markup, html};

use super::layout::{Frame, page, time};
use super::{SubQueue, entity_url, message_url};
use crate::control::RuleEntry;
use crate::explorer::{EntityCounts, PeekedMessage, SessionInfo};

/// What an entity's page shows.
pub(crate) struct EntityView<'a> {
    /// The queue or subscription.
    pub(crate) path: &'a str,
    /// Its counts now.
    pub(crate) counts: &'a EntityCounts,
    /// Which sub-queue is listed.
    pub(crate) sub_queue: SubQueue,
    /// Only messages in this state (`active`, `scheduled`, `deferred`), or all.
    pub(crate) state: Option<&'a str>,
    /// The page's messages, from `from` on.
    pub(crate) messages: &'a [PeekedMessage],
    /// Where this page started.
    pub(crate) from: i64,
    /// Where the next page starts, if there is one.
    pub(crate) next_from: Option<i64>,
    /// Its sessions, for a session-enabled entity.
    pub(crate) sessions: &'a [SessionInfo],
    /// Its rules, for a subscription.
    pub(crate) rules: &'a [RuleEntry],
}

/// The page.
pub(crate) fn entity(frame: &Frame<'_>, csrf: &str, view: &EntityView<'_>) -> Markup {
    let path = view.path;
    let counts = view.counts;
    let tab = |sub_queue: SubQueue, state: Option<&str>, label: &str| {
        let on = view.sub_queue == sub_queue && view.state == state;
        let mut href = entity_url(path, sub_queue, 1);
        if let Some(state) = state {
            href.push_str("&state=");
            href.push_str(state);
        }
        html! { a.on[on] href=(href) { (label) } }
    };
    page(
        path,
        frame,
        html! {
            h1 { (path) }
            p {
                "Active " strong data-count=(format!("{path}|active")) { (counts.active) } " · "
                "dead-letter " strong data-count=(format!("{path}|deadLetter")) { (counts.dead_letter) } " · "
                "scheduled " strong data-count=(format!("{path}|scheduled")) { (counts.scheduled) } " · "
                "deferred " strong data-count=(format!("{path}|deferred")) { (counts.deferred) }
            }
            nav.tabs {
                (tab(SubQueue::Active, None, "All active"))
                (tab(SubQueue::Active, Some("active"), "Active"))
                (tab(SubQueue::Active, Some("scheduled"), "Scheduled"))
                (tab(SubQueue::Active, Some("deferred"), "Deferred"))
                (tab(SubQueue::DeadLetter, None, "Dead-letter"))
            }
            (messages(csrf, view))
            div.row {
                (send_form(csrf, path, counts.requires_session))
                (purge_forms(csrf, path))
            }
            @if counts.requires_session { (sessions(csrf, path, view.sessions)) }
            @if !view.rules.is_empty() {
                h2 { "Rules" }
                table #rules {
                    thead { tr { th { "Name" } th { "Filter" } th { "Action" } } }
                    tbody { @for rule in view.rules { tr {
                        td { (rule.properties.name) }
                        td { code { (format!("{:?}", rule.properties.filter)) } }
                        td { code { (format!("{:?}", rule.properties.action)) } }
                    } } }
                }
            }
        },
    )
}

fn messages(csrf: &str, view: &EntityView<'_>) -> Markup {
    let dead_letter = view.sub_queue == SubQueue::DeadLetter;
    let table = html! {
        table #messages {
            thead { tr {
                @if dead_letter { th { "" } }
                th.n { "Seq" } th { "State" } th { "Enqueued" } th { "Message id" }
                th { "Session" } th { "Body" }
                @if dead_letter { th { "Reason" } }
            } }
            tbody {
                @for message in view.messages {
                    tr {
                        @if dead_letter { td { input type="checkbox" name="seq" value=(message.sequence_number) aria-label=(format!("select {}", message.sequence_number)); } }
                        td.n { a href=(message_url(view.path, view.sub_queue, message.sequence_number)) { (message.sequence_number) } }
                        td { (message.state) }
                        td { (time(message.enqueued_time)) }
                        td { (property(message, "message-id")) }
                        td { (property(message, "session-id")) }
                        td { code { (preview(&message.body)) } }
                        @if dead_letter { td { (message.dead_letter_reason.as_deref().unwrap_or("")) } }
                    }
                }
            }
        }
        @if view.messages.is_empty() { p.muted { "No messages here." } }
        p {
            @if view.from > 1 { a href=(entity_url(view.path, view.sub_queue, 1)) { "⇤ first" } " " }
            @if let Some(next) = view.next_from {
                a href=(format!("{}{}", entity_url(view.path, view.sub_queue, next), view.state.map(|s| format!("&state={s}")).unwrap_or_default())) { "next page →" }
            }
        }
    };
    if !dead_letter {
        return table;
    }
    html! {
        form #redrive method="post" action="/explorer/redrive" {
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="path" value=(view.path);
            (table)
            div.card {
                label { "Re-drive to (empty: back to " (view.path) ")"
                    input type="text" name="destination" placeholder=(view.path);
                }
                button type="submit" name="which" value="selected" { "Re-drive selected" } " "
                button type="submit" name="which" value="all" { "Re-drive all" }
            }
        }
    }
}

fn send_form(csrf: &str, path: &str, requires_session: bool) -> Markup {
    html! {
        form.card #send method="post" action="/explorer/send" {
            h2 { "Send a message" }
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="path" value=(path);
            label { "Body" textarea name="body" {} }
            label { "Content type" input type="text" name="content_type" placeholder="application/json"; }
            label { "Message id" input type="text" name="message_id"; }
            label { "Session id" @if requires_session { " (required)" }
                input type="text" name="session_id"; }
            label { "Subject" input type="text" name="subject"; }
            label { "Application properties (one name=value a line)" textarea name="properties" {} }
            label { "Scheduled enqueue time (UTC, empty: now)" input type="datetime-local" name="scheduled" step="1"; }
            button type="submit" { "Send" }
        }
    }
}

fn purge_forms(csrf: &str, path: &str) -> Markup {
    html! {
        div.card {
            h2 { "Purge" }
            p.muted { "Removes messages for good." }
            @for (dead_letter, label) in [("false", "Purge all messages"), ("true", "Purge the dead-letter queue")] {
                form method="post" action="/explorer/purge" {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="path" value=(path);
                    input type="hidden" name="dead_letter" value=(dead_letter);
                    button.danger type="submit" { (label) }
                }
            }
        }
    }
}

fn sessions(csrf: &str, path: &str, sessions: &[SessionInfo]) -> Markup {
    html! {
        h2 { "Sessions" }
        @if sessions.is_empty() { p.muted { "No session holds messages or state." } }
        @for session in sessions {
            form.card.session method="post" action="/explorer/session-state" data-session=(session.id) {
                input type="hidden" name="csrf" value=(csrf);
                input type="hidden" name="path" value=(path);
                input type="hidden" name="session" value=(session.id);
                strong { (session.id) } " "
                span.muted {
                    @match (&session.locked_by, session.locked_until) {
                        (Some(holder), Some(until)) => { "locked by " (holder) " until " (time(until)) }
                        _ => { "not locked" }
                    }
                }
                label { "State" textarea name="state" { (session.state.as_deref().unwrap_or("")) } }
                button type="submit" name="action" value="save" { "Save state" } " "
                button type="submit" name="action" value="clear" { "Clear state" }
            }
        }
    }
}

fn property<'a>(message: &'a PeekedMessage, name: &str) -> &'a str {
    message
        .system_properties
        .iter()
        .find(|(key, _)| key == name)
        .map_or("", |(_, value)| value.as_str())
}

/// The body's first 80 characters, as text.
fn preview(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(320)]);
    let mut preview: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        preview.push('…');
    }
    preview
}
