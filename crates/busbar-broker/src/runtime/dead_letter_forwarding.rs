//! `ForwardDeadLetteredMessagesTo`: a message dead-lettered in a queue or subscription goes on
//! to another queue or topic (routed like a send there: its `ForwardTo`, its subscriptions'
//! rules), carrying its dead-letter reason as application properties. It leaves the source's
//! dead-letter sub-queue only once the destination holds it durably; a crash in between may
//! deliver it twice (at least once, never lost), and a destination that refuses it (a session
//! entity and no SessionId, say) leaves it where it is until the next start-up retries it.

use std::sync::Weak;

use busbar_amqp::DecodeError;
use busbar_amqp::message::Message;
use busbar_core::{DeadLetterInfo, Delivery, NewMessage, Properties, SequenceNumber};
use bytes::Bytes;
use tokio::runtime::Handle;
use tokio::sync::mpsc::{WeakSender, error::TrySendError};
use tokio::sync::oneshot;

use super::connection::store_routed;
use super::inbound::new_message;
use super::live_registry::LiveRegistry;
use super::mailbox::EntityCommand;
use super::outbound::with_application_properties;
use crate::address::EntityPath;
use crate::errors::BrokerError;
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
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let destination = EntityPath::QueueOrTopic(self.destination.clone());
        let copy = forwarded_copy(
            delivery.payload.clone(),
            &delivery.properties,
            delivery.dead_letter.as_ref(),
        );
        let source = DeadLetterSource {
            inbox: self.own_inbox.clone(),
            runtime: self.runtime.clone(),
        };
        move_dead_lettered(
            &registry,
            &destination,
            delivery.sequence,
            copy,
            source,
            None,
        );
    }
}

/// The entity a dead-lettered message is moved out of: its inbox, reached from the store
/// writer's thread through the runtime.
pub(crate) struct DeadLetterSource {
    /// Weak, so that a pending move does not keep the entity's task alive.
    pub(crate) inbox: WeakSender<EntityCommand>,
    /// The answer is posted from the store writer's thread, outside the runtime.
    pub(crate) runtime: Handle,
}

/// Stores `copy` of the dead-lettered message `sequence` at `destination` (routed like a send
/// there), then asks the source to remove the original, which it does only if the copy is
/// durable ([`EntityCommand::DeadLetterForwarded`]); `done` hears the outcome once the removal
/// is durable. `ForwardDeadLetteredMessagesTo` and the explorer's re-drive both move messages
/// this way: at least once, never lost.
pub(crate) fn move_dead_lettered(
    registry: &LiveRegistry,
    destination: &EntityPath,
    sequence: SequenceNumber,
    copy: Result<NewMessage, DecodeError>,
    source: DeadLetterSource,
    done: Option<oneshot::Sender<Result<(), BrokerError>>>,
) {
    let copy = match copy {
        Ok(copy) => copy,
        Err(error) => {
            tracing::warn!(%error, sequence = sequence.value(), "dead-lettered message cannot be decoded; not moved");
            if let Some(done) = done {
                let _ = done.send(Err(BrokerError::Argument(format!(
                    "message {} cannot be decoded: {error}",
                    sequence.value()
                ))));
            }
            return;
        }
    };
    let targets = registry.current().route(destination, vec![copy]);
    store_routed(
        targets,
        Box::new(move |result| {
            let command = EntityCommand::DeadLetterForwarded {
                sequence,
                result: result.map(drop),
                done,
            };
            post_back(&source.inbox, &source.runtime, command);
        }),
    );
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
