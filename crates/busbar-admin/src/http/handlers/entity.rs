//! `GET`, `PUT` and `DELETE /{name}`: queues and topics, which share one name space. Only a
//! PUT's body says which kind it means; a GET or DELETE tries the queue, then the topic.

use hyper::StatusCode;
use uuid::Uuid;

use super::{Exchange, Failure, Reply, check_forward_targets, namespace_name, wrong_description};
use crate::atom::{
    EntityDescription, Entry, EntryContent, QueueDescription, TopicDescription, parse_entry,
    write_entry, write_not_found_feed,
};
use crate::control::{ControlError, NamespaceControl, QueueEntry, TopicEntry};
use crate::validate;

/// The entry of the queue or topic `name`, or the service's empty "Publicly Listed Services"
/// feed with 200 when neither exists (admin-api.md §0 item 1): every SDK reads that as
/// not-found.
pub(super) async fn get<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    name: &str,
) -> Result<Reply, Failure> {
    validate::entity_name(name)?;
    let author = namespace_name(control).await?;
    let id = exchange.url.entry_id();
    match control.queue(name).await {
        Ok(queue) => return Ok(queue_reply(&queue, &id, &author, StatusCode::OK)),
        Err(ControlError::NotFound) => {}
        Err(error) => return Err(Failure::from_control(error, name)),
    }
    match control.topic(name).await {
        Ok(topic) => Ok(topic_reply(&topic, &id, &author, StatusCode::OK)),
        Err(ControlError::NotFound) => {
            let feed_id = format!("uuid:{};id=1", Uuid::new_v4());
            Ok(Reply::Feed(write_not_found_feed(&feed_id, exchange.now)))
        }
        Err(error) => Err(Failure::from_control(error, name)),
    }
}

/// Creates (201) or, with `If-Match`, updates (200) the queue or topic the body describes.
pub(super) async fn put<C: NamespaceControl>(
    control: &C,
    exchange: &Exchange<'_>,
    name: &str,
) -> Result<Reply, Failure> {
    validate::entity_name(name)?;
    // Asked before the change: once the broker has made it, the answer must not fail.
    let author = namespace_name(control).await?;
    let id = exchange.url.entry_id();
    match parse_entry(&exchange.body)? {
        EntityDescription::Queue(sent) => {
            let (queue, status) = put_queue(control, name, sent, exchange.if_match).await?;
            Ok(queue_reply(&queue, &id, &author, status))
        }
        EntityDescription::Topic(sent) => {
            let (topic, status) = put_topic(control, name, sent, exchange.if_match).await?;
            Ok(topic_reply(&topic, &id, &author, status))
        }
        EntityDescription::Subscription(_) | EntityDescription::Rule(_) => Err(wrong_description(
            "queue or topic",
            "QueueDescription or TopicDescription",
        )),
    }
}

async fn put_queue<C: NamespaceControl>(
    control: &C,
    name: &str,
    sent: QueueDescription,
    update: bool,
) -> Result<(QueueEntry, StatusCode), Failure> {
    let failed = |error| Failure::from_control(error, name);
    if update {
        let stored = control.queue(name).await.map_err(failed)?.properties;
        let mut properties = stored.clone();
        sent.apply_to(&mut properties);
        validate::queue_update(&stored, &properties)?;
        validate::queue(name, &properties)?;
        check_forward_targets(control, queue_forwards(&properties)).await?;
        let queue = control
            .update_queue(name, properties)
            .await
            .map_err(failed)?;
        Ok((queue, StatusCode::OK))
    } else {
        let properties = sent.into_properties();
        validate::queue(name, &properties)?;
        check_forward_targets(control, queue_forwards(&properties)).await?;
        let queue = control
            .create_queue(name, properties)
            .await
            .map_err(failed)?;
        Ok((queue, StatusCode::CREATED))
    }
}

async fn put_topic<C: NamespaceControl>(
    control: &C,
    name: &str,
    sent: TopicDescription,
    update: bool,
) -> Result<(TopicEntry, StatusCode), Failure> {
    let failed = |error| Failure::from_control(error, name);
    if update {
        let stored = control.topic(name).await.map_err(failed)?.properties;
        let mut properties = stored.clone();
        sent.apply_to(&mut properties);
        validate::topic_update(&stored, &properties)?;
        validate::topic(name, &properties)?;
        let targets = validate::forward_targets(properties.forward_to.as_deref(), None);
        check_forward_targets(control, targets).await?;
        let topic = control
            .update_topic(name, properties)
            .await
            .map_err(failed)?;
        Ok((topic, StatusCode::OK))
    } else {
        let properties = sent.into_properties();
        validate::topic(name, &properties)?;
        let targets = validate::forward_targets(properties.forward_to.as_deref(), None);
        check_forward_targets(control, targets).await?;
        let topic = control
            .create_topic(name, properties)
            .await
            .map_err(failed)?;
        Ok((topic, StatusCode::CREATED))
    }
}

/// Deletes the queue or topic `name`; 404 when neither exists.
pub(super) async fn delete<C: NamespaceControl>(control: &C, name: &str) -> Result<Reply, Failure> {
    validate::entity_name(name)?;
    match control.delete_queue(name).await {
        Ok(()) => return Ok(Reply::Deleted),
        Err(ControlError::NotFound) => {}
        Err(error) => return Err(Failure::from_control(error, name)),
    }
    control
        .delete_topic(name)
        .await
        .map(|()| Reply::Deleted)
        .map_err(|error| Failure::from_control(error, name))
}

fn queue_forwards(queue: &crate::atom::QueueProperties) -> Vec<validate::ForwardTarget<'_>> {
    validate::forward_targets(
        queue.forward_to.as_deref(),
        queue.forward_dead_lettered_messages_to.as_deref(),
    )
}

/// The entry of a queue; listings use it too, with the entry's own id.
pub(super) fn queue_entry<'a>(queue: &'a QueueEntry, id: &'a str, author: &'a str) -> Entry<'a> {
    Entry {
        id,
        title: &queue.name,
        published: queue.runtime.times.created_at,
        updated: queue.runtime.times.updated_at,
        author: Some(author),
        content: EntryContent::Queue(&queue.properties, &queue.runtime),
    }
}

/// The entry of a topic.
pub(super) fn topic_entry<'a>(topic: &'a TopicEntry, id: &'a str, author: &'a str) -> Entry<'a> {
    Entry {
        id,
        title: &topic.name,
        published: topic.runtime.times.created_at,
        updated: topic.runtime.times.updated_at,
        author: Some(author),
        content: EntryContent::Topic(&topic.properties, &topic.runtime),
    }
}

fn queue_reply(queue: &QueueEntry, id: &str, author: &str, status: StatusCode) -> Reply {
    Reply::Entry {
        status,
        xml: write_entry(&queue_entry(queue, id, author)),
    }
}

fn topic_reply(topic: &TopicEntry, id: &str, author: &str, status: StatusCode) -> Reply {
    Reply::Entry {
        status,
        xml: write_entry(&topic_entry(topic, id, author)),
    }
}
