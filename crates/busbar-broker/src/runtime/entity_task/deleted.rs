//! An entity deleted through the control interface: its task answers every command that still
//! reaches it with entity-not-found (every request is answered), until nothing holds its inbox.

use busbar_core::MessageCounts;
use busbar_store::GroupCommitHandle;

use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand};

/// Answers `command` for a deleted entity with `error`.
pub(super) fn refuse(command: EntityCommand, error: &BrokerError, store: &GroupCommitHandle) {
    match command {
        EntityCommand::Execute { reply, .. } | EntityCommand::Session { reply, .. } => {
            reply(Err(error.clone()));
        }
        EntityCommand::SettleDeliveries { settlements, reply } => {
            reply(vec![Err(error.clone()); settlements.len()]);
        }
        EntityCommand::Hold { send, .. } => send.report(Err(error.clone()), store),
        EntityCommand::CommitTransaction(commit) => commit.refuse(error.clone()),
        // A link that attached just before the deletion: detach it too.
        EntityCommand::Flow {
            receiver, mailbox, ..
        } => mailbox.post(ConnectionCommand::ReceiverEnded {
            link: receiver.link,
            error: error.clone(),
        }),
        EntityCommand::AcceptSession {
            receiver, mailbox, ..
        } => mailbox.post(ConnectionCommand::SessionRefused {
            link: receiver.link,
            error: error.clone(),
        }),
        EntityCommand::Counts(reply) => {
            let _ = reply.send(MessageCounts::default());
        }
        EntityCommand::Reconfigure { done, .. } => {
            let _ = done.send(Err(error.clone()));
        }
        EntityCommand::Delete { done, .. } => {
            let _ = done.send(Ok(()));
        }
        EntityCommand::Purge { done, .. } => {
            let _ = done.send(Err(error.clone()));
        }
        EntityCommand::ExploreSessions { reply, .. } => {
            let _ = reply.send(Err(error.clone()));
        }
        EntityCommand::DeadLetterForwarded {
            done: Some(done), ..
        } => {
            let _ = done.send(Err(error.clone()));
        }
        // Nothing is left to detach, release or remove.
        EntityCommand::Detach(_)
        | EntityCommand::Release(_)
        | EntityCommand::InjectFault(_)
        | EntityCommand::DeadLetterForwarded { .. }
        | EntityCommand::ScheduledReleased { .. } => {}
    }
}
