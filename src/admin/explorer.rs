//! The explorer's calls on the broker's control interface: the namespace overview with counts,
//! peek, send, re-drive and sessions, translated between busbar-admin's plain types and the
//! broker's.

use busbar_admin::control::ControlResult;
use busbar_admin::explorer::{
    EntityCounts, EntityKind, OutgoingMessage, PeekedMessage, Redriven, SessionInfo, SubQueue,
};
use busbar_broker::runtime::{self, Control, SessionView};
use busbar_core::MessageCounts;

use super::{BrokerNamespace, control_error};

/// Every queue, topic and subscription in name order, each topic followed by its subscriptions.
pub(super) async fn overview(control: &Control) -> ControlResult<Vec<EntityCounts>> {
    let row = |path: String, kind, counts: &MessageCounts, requires_session| EntityCounts {
        path,
        kind,
        active: count(counts.active),
        dead_letter: count(counts.dead_lettered),
        scheduled: count(counts.scheduled),
        deferred: count(counts.deferred),
        requires_session,
    };
    let mut rows = Vec::new();
    for queue in control.queues().await.map_err(control_error)? {
        let requires_session = queue.config.delivery.requires_session;
        let name = queue.config.name.to_string();
        rows.push(row(
            name,
            EntityKind::Queue,
            &queue.counts,
            requires_session,
        ));
    }
    for topic in control.topics().await.map_err(control_error)? {
        let name = topic.config.name.to_string();
        rows.push(row(name.clone(), EntityKind::Topic, &topic.counts, false));
        let subscriptions = control.subscriptions(&name).await;
        for subscription in subscriptions.map_err(control_error)? {
            let path = format!("{name}/Subscriptions/{}", subscription.config.name);
            let requires_session = subscription.config.delivery.requires_session;
            let kind = EntityKind::Subscription;
            rows.push(row(path, kind, &subscription.counts, requires_session));
        }
    }
    rows.sort_by_cached_key(|row| row.path.to_lowercase());
    Ok(rows)
}

pub(super) async fn peek(
    control: &Control,
    entity: &str,
    sub_queue: SubQueue,
    from: i64,
    count: usize,
) -> ControlResult<Vec<PeekedMessage>> {
    let dead_letter = sub_queue == SubQueue::DeadLetter;
    let peeked = control.peek(entity, dead_letter, from, count).await;
    Ok(peeked
        .map_err(control_error)?
        .into_iter()
        .map(|message| PeekedMessage {
            sequence_number: message.sequence,
            state: message.state.to_owned(),
            enqueued_time: message.enqueued_at,
            delivery_count: message.delivery_count,
            expires_at: message.expires_at,
            scheduled_enqueue_time: message.scheduled_enqueue_time,
            system_properties: message
                .system_properties
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect(),
            application_properties: message.application_properties,
            body: message.body.to_vec(),
            dead_letter_reason: message.dead_letter_reason,
            dead_letter_description: message.dead_letter_description,
        })
        .collect())
}

pub(super) async fn send(
    control: &Control,
    entity: &str,
    message: OutgoingMessage,
) -> ControlResult<()> {
    let message = runtime::OutgoingMessage {
        body: message.body.into(),
        content_type: message.content_type,
        message_id: message.message_id,
        session_id: message.session_id,
        subject: message.subject,
        correlation_id: message.correlation_id,
        application_properties: message.application_properties,
        scheduled_enqueue_time: message.scheduled_enqueue_time,
    };
    control.send(entity, message).await.map_err(control_error)
}

pub(super) async fn redrive(
    control: &Control,
    entity: &str,
    sequences: Option<Vec<i64>>,
    destination: Option<String>,
) -> ControlResult<Redriven> {
    let done = control
        .redrive(entity, sequences, destination.as_deref())
        .await;
    let done = done.map_err(control_error)?;
    Ok(Redriven {
        moved: done.moved,
        kept: done.kept,
    })
}

pub(super) async fn sessions(
    control: &Control,
    entity: &str,
    skip: usize,
    top: usize,
) -> ControlResult<Vec<SessionInfo>> {
    let sessions = control.sessions(entity, skip, top).await;
    Ok(sessions
        .map_err(control_error)?
        .into_iter()
        .map(|SessionView { id, state, lock }| SessionInfo {
            id,
            state: state.map(|state| String::from_utf8_lossy(&state).into_owned()),
            locked_by: lock
                .as_ref()
                .map(|lock| format!("connection {}, receiver {}", lock.connection, lock.receiver)),
            locked_until: lock.map(|lock| lock.locked_until),
        })
        .collect())
}

/// Purge for the explorer: unlike `/$busbar/purge`, served without `--test-controls`.
pub(super) async fn purge(
    namespace: &BrokerNamespace,
    entity: &str,
    dead_letter_only: bool,
) -> ControlResult<u64> {
    let purged = namespace.control.purge(entity, dead_letter_only).await;
    purged
        .map(|count| u64::try_from(count).unwrap_or(u64::MAX))
        .map_err(control_error)
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
