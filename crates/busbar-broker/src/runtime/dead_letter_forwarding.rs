//! `ForwardDeadLetteredMessagesTo`: a message dead-lettered in a queue or subscription goes on
//! to another queue or topic (routed like a send there: its `ForwardTo`, its subscriptions'
//! rules), carrying its dead-letter reason as application properties. It leaves the source's
//! dead-letter sub-queue only once the destination holds it durably; a crash in between may
//! deliver it twice (at least once, never lost), and a destination that refuses it (a session
//! entity and no SessionId, say) leaves it where it is until the next start-up retries it.

use std::sync::Weak;

use busbar_amqp::DecodeError;
use busbar_amqp::message::Message;
use busbar_core::{DeadLetterInfo, Delivery, NewMessage, Properties};
use bytes::Bytes;
use tokio::runtime::Handle;
use tokio::sync::mpsc::{WeakSender, error::TrySendError};

use super::connection::store_routed;
use super::inbound::new_message;
use super::live_registry::LiveRegistry;
use super::mailbox::EntityCommand;
use super::outbound::with_application_properties;
use crate::address::EntityPath;
use crate::names::EntityName;

/// Where one entity's dead-lettered messages go, and how the answer comes back to its task.
pub(crate) struct DeadLetterForwarding {
    destination: EntityName,
    /// Weak, like `own_inbox`, so that the entity tasks end once the connections are gone.
    registry: Weak<LiveRegistry>,
    /// The forwarding entity's own inbox, for [`EntityCommand::DeadLetterForwarded`].
    own_inbox: WeakSender<EntityCommand>,
    /// The answer is posted from the store writer's thread, outside the runtime.
    runtime: Handle,
}

impl DeadLetterForwarding {
    /// Forwarding to `destination`; must be created on the runtime.
    pub(crate) fn new(
        destination: EntityName,
        registry: Weak<LiveRegistry>,
        own_inbox: WeakSender<EntityCommand>,
    ) -> Self {
        Self {
            destination,
            registry,
            own_inbox,
            runtime: Handle::current(),
        }
    }

    /// Stores a copy of the dead-lettered `delivery` at the destination; the outcome comes back
    /// to the entity's inbox as [`EntityCommand::DeadLetterForwarded`].
    pub(crate) fn forward(&self, delivery: &Delivery) {
        let sequence = delivery.sequence;
        let copy = match forwarded_copy(
            delivery.payload.clone(),
            &delivery.properties,
            delivery.dead_letter.as_ref(),
        ) {
            Ok(copy) => copy,
            Err(error) => {
                tracing::warn!(%error, sequence = sequence.value(), "dead-lettered message cannot be decoded; not forwarded");
                return;
            }
        };
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let targets = registry.current().route(
            &EntityPath::QueueOrTopic(self.destination.clone()),
            vec![copy],
        );
        let own_inbox = self.own_inbox.clone();
        let runtime = self.runtime.clone();
        store_routed(
            targets,
            Box::new(move |result| {
                let command = EntityCommand::DeadLetterForwarded {
                    sequence,
                    result: result.map(drop),
                };
                post_back(&own_inbox, &runtime, command);
            }),
        );
    }
}

/// A dead-lettered message as it is stored elsewhere: the properties modified by its receivers
/// and its dead-letter reason written into its application properties, no longer dead-lettered.
pub(crate) fn forwarded_copy(
    payload: Bytes,
    modified: &Properties,
    dead_letter: Option<&DeadLetterInfo>,
) -> Result<NewMessage, DecodeError> {
    let message = Message::parse(payload)?;
    new_message(with_application_properties(
        &message,
        modified,
        dead_letter,
    )?)
}

/// Posts to the entity's inbox from any thread; an entity already shut down misses nothing
/// (the message stays where it was: in its dead-letter sub-queue, or scheduled in its topic).
pub(crate) fn post_back(
    inbox: &WeakSender<EntityCommand>,
    runtime: &Handle,
    command: EntityCommand,
) {
    let Some(inbox) = inbox.upgrade() else {
        return;
    };
    match inbox.try_send(command) {
        Ok(()) | Err(TrySendError::Closed(_)) => {}
        Err(TrySendError::Full(command)) => {
            runtime.spawn(async move {
                let _ = inbox.send(command).await;
            });
        }
    }
}

#[cfg(test)]
mod tests;
