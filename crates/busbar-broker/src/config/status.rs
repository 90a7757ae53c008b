//! An entity's status (Service Bus's `EntityStatus` as clients set it): whether it takes sends
//! and hands out messages. A suspended entity keeps its messages untouched ("Suspend and
//! reactivate messaging entities"); a disabled subscription still receives its topic's copies.

use serde::{Deserialize, Serialize};

/// What an entity allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EntityStatus {
    /// Sends and receives.
    #[default]
    Active,
    /// Neither sends nor receives.
    Disabled,
    /// Receives only.
    SendDisabled,
    /// Sends only.
    ReceiveDisabled,
}

/// The statuses Service Bus lets a queue take.
pub const QUEUE_STATUSES: &[EntityStatus] = &[
    EntityStatus::Active,
    EntityStatus::Disabled,
    EntityStatus::SendDisabled,
    EntityStatus::ReceiveDisabled,
];
/// The statuses of a topic (nothing receives from a topic itself).
pub const TOPIC_STATUSES: &[EntityStatus] = &[
    EntityStatus::Active,
    EntityStatus::Disabled,
    EntityStatus::SendDisabled,
];
/// The statuses of a subscription (nothing sends to a subscription itself).
pub const SUBSCRIPTION_STATUSES: &[EntityStatus] = &[
    EntityStatus::Active,
    EntityStatus::Disabled,
    EntityStatus::ReceiveDisabled,
];

impl EntityStatus {
    /// The wire name (`SendDisabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            EntityStatus::Active => "Active",
            EntityStatus::Disabled => "Disabled",
            EntityStatus::SendDisabled => "SendDisabled",
            EntityStatus::ReceiveDisabled => "ReceiveDisabled",
        }
    }

    /// The status among `allowed` that `text` names, ignoring ASCII case.
    pub fn parse(text: &str, allowed: &[EntityStatus]) -> Option<EntityStatus> {
        allowed
            .iter()
            .copied()
            .find(|status| status.as_str().eq_ignore_ascii_case(text.trim()))
    }

    /// Whether sends to the entity are refused.
    pub fn refuses_sends(self) -> bool {
        matches!(self, EntityStatus::Disabled | EntityStatus::SendDisabled)
    }

    /// Whether receives from the entity are refused.
    pub fn refuses_receives(self) -> bool {
        matches!(self, EntityStatus::Disabled | EntityStatus::ReceiveDisabled)
    }
}

/// Whether receives from a subscription are refused: its own status, or its topic's when the
/// topic is disabled ("a subscription to a disabled topic" hands out nothing either).
pub fn subscription_refuses_receives(subscription: EntityStatus, topic: EntityStatus) -> bool {
    subscription.refuses_receives() || topic == EntityStatus::Disabled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_refuses_what_its_name_says() {
        let refusals: Vec<(bool, bool)> = QUEUE_STATUSES
            .iter()
            .map(|status| (status.refuses_sends(), status.refuses_receives()))
            .collect();
        assert_eq!(
            refusals,
            [(false, false), (true, true), (true, false), (false, true)]
        );
    }

    #[test]
    fn a_disabled_topic_stops_its_subscriptions_receiving_but_a_send_disabled_one_does_not() {
        use EntityStatus::*;
        assert!(subscription_refuses_receives(Active, Disabled));
        assert!(!subscription_refuses_receives(Active, SendDisabled));
        assert!(subscription_refuses_receives(ReceiveDisabled, Active));
        assert!(!subscription_refuses_receives(Active, Active));
    }

    #[test]
    fn only_the_statuses_of_the_kind_parse() {
        assert_eq!(
            EntityStatus::parse(" senddisabled", QUEUE_STATUSES),
            Some(EntityStatus::SendDisabled)
        );
        assert_eq!(
            EntityStatus::parse("SendDisabled", SUBSCRIPTION_STATUSES),
            None
        );
        assert_eq!(EntityStatus::parse("ReceiveDisabled", TOPIC_STATUSES), None);
        assert_eq!(EntityStatus::parse("Creating", QUEUE_STATUSES), None);
    }
}
