//! Runtime properties: what the broker reports about an entity rather than what a client sets
//! (§6.7). Written on every GET, list and PUT response, whatever `enrich` says, because Python
//! and JS read them from the plain GET.

use super::namespaces::SERVICE_BUS_COUNTS;
use super::timestamp::Timestamp;
use super::xml_writer::XmlWriter;

/// The five message counts of `CountDetails`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MessageCountDetails {
    /// `ActiveMessageCount`: messages a receiver can get now.
    pub active: u64,
    /// `DeadLetterMessageCount`.
    pub dead_letter: u64,
    /// `ScheduledMessageCount`.
    pub scheduled: u64,
    /// `TransferMessageCount`: messages waiting to be forwarded.
    pub transfer: u64,
    /// `TransferDeadLetterMessageCount`: messages that could not be forwarded.
    pub transfer_dead_letter: u64,
    /// Of the active messages, the deferred ones: Service Bus reports no such count (it is not
    /// written to `CountDetails`); the web explorer shows it.
    pub deferred: u64,
}

impl MessageCountDetails {
    /// `<CountDetails xmlns:{prefix}="…2011/06/servicebus">…`: the children must be in that
    /// namespace or Python reads no counts; the service binds it to `d2p1` in queues and topics
    /// and `d3p1` in subscriptions.
    pub(crate) fn encode(&self, writer: &mut XmlWriter, prefix: &str) {
        let declaration = format!("xmlns:{prefix}");
        writer.start("CountDetails", &[(&declaration, SERVICE_BUS_COUNTS)]);
        for (name, count) in [
            ("ActiveMessageCount", self.active),
            ("DeadLetterMessageCount", self.dead_letter),
            ("ScheduledMessageCount", self.scheduled),
            ("TransferMessageCount", self.transfer),
            ("TransferDeadLetterMessageCount", self.transfer_dead_letter),
        ] {
            writer.leaf_display(&format!("{prefix}:{name}"), count);
        }
        writer.end("CountDetails");
    }
}

/// When an entity was created, last changed and last used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntityTimes {
    /// `CreatedAt`.
    pub created_at: Timestamp,
    /// `UpdatedAt` (JS calls it `modifiedAt`).
    pub updated_at: Timestamp,
    /// `AccessedAt`; `None` is written as the service's "never", `0001-01-01T00:00:00`.
    pub accessed_at: Option<Timestamp>,
}

impl EntityTimes {
    /// Created, updated and accessed at the same moment.
    pub fn all_at(moment: Timestamp) -> EntityTimes {
        EntityTimes {
            created_at: moment,
            updated_at: moment,
            accessed_at: Some(moment),
        }
    }

    /// `<CreatedAt>`, `<UpdatedAt>`, `<AccessedAt>`, which always stand together.
    pub(crate) fn encode(&self, writer: &mut XmlWriter) {
        writer.leaf("CreatedAt", &self.created_at.to_precise_string());
        writer.leaf("UpdatedAt", &self.updated_at.to_precise_string());
        let accessed = match self.accessed_at {
            Some(accessed) => accessed.to_precise_string(),
            None => Timestamp::MIN.to_seconds_string(),
        };
        writer.leaf("AccessedAt", &accessed);
    }
}

/// A queue's runtime properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueRuntimeProperties {
    /// `SizeInBytes`.
    pub size_in_bytes: u64,
    /// `MessageCount`: every message the queue holds (the SDKs' `TotalMessageCount`).
    pub message_count: u64,
    /// `CountDetails`.
    pub counts: MessageCountDetails,
    /// `CreatedAt`, `UpdatedAt`, `AccessedAt`.
    pub times: EntityTimes,
}

/// A topic's runtime properties (a topic has no `MessageCount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopicRuntimeProperties {
    /// `SizeInBytes`.
    pub size_in_bytes: u64,
    /// `SubscriptionCount`.
    pub subscription_count: u64,
    /// `CountDetails`.
    pub counts: MessageCountDetails,
    /// `CreatedAt`, `UpdatedAt`, `AccessedAt`.
    pub times: EntityTimes,
}

/// A subscription's runtime properties (a subscription has no `SizeInBytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionRuntimeProperties {
    /// `MessageCount`.
    pub message_count: u64,
    /// `CountDetails`.
    pub counts: MessageCountDetails,
    /// `CreatedAt`, `UpdatedAt`, `AccessedAt`.
    pub times: EntityTimes,
}
