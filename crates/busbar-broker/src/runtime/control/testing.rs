//! Test controls through the control interface: purge and reset for test suites that start each
//! test from a clean namespace, and, only when the broker runs with test controls, a virtual
//! clock moved ahead on request and faults injected on purpose.

use std::time::Duration;

use busbar_core::Timestamp;
use tokio::sync::oneshot;

use super::{Control, ControlError, ControlState, answered};
use crate::address::{Address, SubQueue as AddressSubQueue};
use crate::runtime::mailbox::{EntityCommand, post_entity};
use crate::runtime::registry::{EntityHandle, Resolved};

pub use crate::runtime::mailbox::Fault;

/// The virtual clock as the control interface reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockState {
    /// The broker's time now.
    pub now: Timestamp,
    /// How far it has been moved ahead of the wall clock.
    pub offset: Duration,
}

impl Control {
    /// Whether the broker runs with test controls (virtual clock, fault injection).
    pub fn test_controls(&self) -> bool {
        self.state()
            .is_ok_and(|state| state.clock.offset().is_some())
    }

    /// Removes every message of an entity (a topic: its subscriptions and its scheduled
    /// messages) — only its dead-letter sub-queue when asked — with its sessions' state;
    /// answered with how many messages went, once that is durable.
    pub async fn purge(&self, path: &str, dead_letter_only: bool) -> Result<usize, ControlError> {
        let state = self.state()?;
        let entities = state.entities_at(path)?;
        let mut purged = 0;
        for entity in entities {
            purged += state.purge_entity(&entity, dead_letter_only).await?;
        }
        Ok(purged)
    }

    /// The clock (test controls only).
    pub async fn clock(&self) -> Result<ClockState, ControlError> {
        let state = self.state()?;
        let offset = state.clock.offset().ok_or_else(not_enabled)?;
        Ok(ClockState {
            now: state.clock.now(),
            offset,
        })
    }

    /// Moves the virtual clock ahead (test controls only): every entity re-evaluates its
    /// deadlines at once, as if that time had passed.
    pub async fn advance_clock(&self, by: Duration) -> Result<ClockState, ControlError> {
        let state = self.state()?;
        state.clock.advance(by).ok_or_else(not_enabled)?;
        self.clock().await
    }

    /// Makes an entity misbehave for its next operations (test controls only).
    pub async fn inject_fault(&self, path: &str, fault: Fault) -> Result<(), ControlError> {
        let state = self.state()?;
        if state.clock.offset().is_none() {
            return Err(not_enabled());
        }
        for entity in state.entities_at(path)? {
            post_entity(&entity.inbox, EntityCommand::InjectFault(fault.clone()));
        }
        Ok(())
    }
}

impl ControlState {
    /// The entities an entity path names: a queue or subscription, or a topic's scheduled
    /// messages and subscriptions.
    fn entities_at(&self, path: &str) -> Result<Vec<EntityHandle>, ControlError> {
        let not_found = || ControlError::NotFound(path.to_owned());
        let node = match Address::parse(path) {
            Ok(Address::Entity(node)) if node.sub_queue == AddressSubQueue::Active => node,
            _ => return Err(not_found()),
        };
        let registry = self.registry.current();
        match registry.resolve(&node.path) {
            Some(Resolved::Entity(handle)) => Ok(vec![handle.clone()]),
            Some(Resolved::Topic(topic)) => Ok(std::iter::once(topic.scheduled.clone())
                .chain(topic.subscriptions.iter().map(|s| s.entity.clone()))
                .collect()),
            None => Err(not_found()),
        }
    }

    pub(super) async fn purge_entity(
        &self,
        entity: &EntityHandle,
        dead_letter_only: bool,
    ) -> Result<usize, ControlError> {
        let (done, purged) = oneshot::channel();
        post_entity(
            &entity.inbox,
            EntityCommand::Purge {
                dead_letter_only,
                done,
            },
        );
        match purged.await {
            Ok(Ok(count)) => Ok(count),
            Ok(Err(error)) => answered(Ok(Err(error))).map(|()| 0),
            Err(_) => Err(ControlError::Unavailable(
                "the entity's task has stopped".into(),
            )),
        }
    }
}

fn not_enabled() -> ControlError {
    ControlError::NotFound("test controls are off: start the broker with --test-controls".into())
}
