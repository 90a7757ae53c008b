//! An entity whose status refuses receives (`Disabled`, `ReceiveDisabled`, or a subscription of
//! a disabled topic): its receive links are detached with the refusal, links that attach
//! meanwhile are refused, and receives and settlements through `$management` are refused too.
//! Its messages stay as they are: a lock already held runs out as usual.

use std::collections::HashSet;

use busbar_core::Timestamp;

use super::EntityTask;
use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, Mailbox, ReceiverKey};
use crate::runtime::management::Operation;

impl EntityTask {
    /// Applies the entity's (changed) status: with a refusal, every receive link ends with it
    /// and the session locks its session links held are given back.
    pub(super) fn set_receive_refusal(&mut self, refusal: Option<BrokerError>, now: Timestamp) {
        if let Some(error) = &refusal {
            let mut ended: Vec<(ReceiverKey, Mailbox)> = self
                .receivers
                .drain(..)
                .map(|receiver| (receiver.key, receiver.mailbox))
                .collect();
            ended.extend(self.session_links.close_all(&mut self.entity, now));
            let mut seen = HashSet::new();
            for (key, mailbox) in ended {
                if seen.insert(key) {
                    mailbox.post(ConnectionCommand::ReceiverEnded {
                        link: key.link,
                        error: error.clone(),
                    });
                }
            }
        }
        self.receive_refusal = refusal;
    }

    /// Answers `command` with the refusal if it receives or settles while receives are
    /// refused; otherwise hands it back.
    pub(super) fn refuse_receive(&self, command: EntityCommand) -> Option<EntityCommand> {
        let Some(error) = &self.receive_refusal else {
            return Some(command);
        };
        match command {
            EntityCommand::Flow {
                receiver, mailbox, ..
            }
            | EntityCommand::AcceptSession {
                receiver, mailbox, ..
            } => mailbox.post(ConnectionCommand::ReceiverEnded {
                link: receiver.link,
                error: error.clone(),
            }),
            EntityCommand::SettleDeliveries { settlements, reply } => {
                reply(vec![Err(error.clone()); settlements.len()]);
            }
            EntityCommand::Execute {
                operation: Operation::Settle { .. } | Operation::ReceiveDeferred { .. },
                reply,
                ..
            } => reply(Err(error.clone())),
            other => return Some(other),
        }
        None
    }
}
