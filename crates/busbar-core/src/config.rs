//! Entity configuration (the Service Bus queue/subscription properties the core enforces) and its limits.

use crate::error::CoreError;
use std::time::Duration;

/// Shortest lock duration Service Bus accepts.
pub const MIN_LOCK_DURATION: Duration = Duration::from_secs(5);
/// Longest lock duration Service Bus accepts.
pub const MAX_LOCK_DURATION: Duration = Duration::from_secs(5 * 60);
/// Service Bus default `LockDuration`.
pub const DEFAULT_LOCK_DURATION: Duration = Duration::from_secs(60);
/// Service Bus default `MaxDeliveryCount`.
pub const DEFAULT_MAX_DELIVERY_COUNT: u32 = 10;
/// Service Bus default entity size (`MaxSizeInMegabytes` 1024), in bytes.
pub const DEFAULT_MAX_SIZE_BYTES: u64 = 1024 * 1024 * 1024;

/// The properties of one entity that change how its messages behave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntityConfig {
    /// How long a peek-lock lasts (`LockDuration`), 5 s ..= 5 min.
    pub lock_duration: Duration,
    /// Deliveries allowed before a message is dead-lettered (`MaxDeliveryCount`), at least 1.
    pub max_delivery_count: u32,
    /// Upper bound on every message's time to live (`DefaultMessageTimeToLive`); `None` = unbounded.
    pub default_message_ttl: Option<Duration>,
    /// Dead-letter expired messages instead of dropping them (`DeadLetteringOnMessageExpiration`).
    pub dead_lettering_on_message_expiration: bool,
    /// Duplicate detection on message-id for this window (`DuplicateDetectionHistoryTimeWindow`);
    /// `None` = duplicate detection off.
    pub duplicate_detection_window: Option<Duration>,
    /// The entity size quota (`MaxSizeInMegabytes`, in bytes): once the stored messages reach
    /// it, enqueues are refused with [`CoreError::QuotaExceeded`].
    pub max_size_bytes: u64,
}

impl Default for EntityConfig {
    fn default() -> Self {
        EntityConfig {
            lock_duration: DEFAULT_LOCK_DURATION,
            max_delivery_count: DEFAULT_MAX_DELIVERY_COUNT,
            default_message_ttl: None,
            dead_lettering_on_message_expiration: false,
            duplicate_detection_window: None,
            max_size_bytes: DEFAULT_MAX_SIZE_BYTES,
        }
    }
}

impl EntityConfig {
    /// Checks the Service Bus limits; the entity refuses a configuration that fails here.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.lock_duration < MIN_LOCK_DURATION || self.lock_duration > MAX_LOCK_DURATION {
            return Err(CoreError::InvalidConfig(
                "lock duration must be between 5 seconds and 5 minutes",
            ));
        }
        if self.max_delivery_count == 0 {
            return Err(CoreError::InvalidConfig(
                "max delivery count must be at least 1",
            ));
        }
        if self.default_message_ttl == Some(Duration::ZERO) {
            return Err(CoreError::InvalidConfig(
                "default message time to live must be positive",
            ));
        }
        if self.duplicate_detection_window == Some(Duration::ZERO) {
            return Err(CoreError::InvalidConfig(
                "duplicate detection window must be positive",
            ));
        }
        if self.max_size_bytes == 0 {
            return Err(CoreError::InvalidConfig(
                "maximum entity size must be positive",
            ));
        }
        Ok(())
    }

    /// The time to live a message gets: the smaller of its own and the entity default.
    pub fn effective_ttl(&self, message_ttl: Option<Duration>) -> Option<Duration> {
        match (message_ttl, self.default_message_ttl) {
            (Some(own), Some(default)) => Some(own.min(default)),
            (own, default) => own.or(default),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_is_valid_and_matches_service_bus_defaults() {
        let config = EntityConfig::default();
        assert_eq!(config.validate(), Ok(()));
        assert_eq!(config.lock_duration, Duration::from_secs(60));
        assert_eq!(config.max_delivery_count, 10);
        assert_eq!(config.max_size_bytes, 1024 * 1024 * 1024);
    }

    #[test]
    fn lock_duration_limits_are_inclusive() {
        for (lock, ok) in [
            (Duration::from_millis(4_999), false),
            (MIN_LOCK_DURATION, true),
            (MAX_LOCK_DURATION, true),
            (MAX_LOCK_DURATION + Duration::from_millis(1), false),
        ] {
            let config = EntityConfig {
                lock_duration: lock,
                ..EntityConfig::default()
            };
            assert_eq!(config.validate().is_ok(), ok, "{lock:?}");
        }
    }

    #[test]
    fn zero_counts_and_windows_are_refused() {
        let zero_count = EntityConfig {
            max_delivery_count: 0,
            ..EntityConfig::default()
        };
        assert!(matches!(
            zero_count.validate(),
            Err(CoreError::InvalidConfig(_))
        ));
        let zero_ttl = EntityConfig {
            default_message_ttl: Some(Duration::ZERO),
            ..EntityConfig::default()
        };
        assert!(zero_ttl.validate().is_err());
        let zero_window = EntityConfig {
            duplicate_detection_window: Some(Duration::ZERO),
            ..EntityConfig::default()
        };
        assert!(zero_window.validate().is_err());
        let zero_size = EntityConfig {
            max_size_bytes: 0,
            ..EntityConfig::default()
        };
        assert!(zero_size.validate().is_err());
    }

    #[test]
    fn effective_ttl_is_the_minimum_of_message_and_entity() {
        let s = Duration::from_secs;
        let bounded = EntityConfig {
            default_message_ttl: Some(s(10)),
            ..EntityConfig::default()
        };
        assert_eq!(bounded.effective_ttl(Some(s(5))), Some(s(5)));
        assert_eq!(bounded.effective_ttl(Some(s(50))), Some(s(10)));
        assert_eq!(bounded.effective_ttl(None), Some(s(10)));
        let unbounded = EntityConfig::default();
        assert_eq!(unbounded.effective_ttl(Some(s(5))), Some(s(5)));
        assert_eq!(unbounded.effective_ttl(None), None);
    }
}
