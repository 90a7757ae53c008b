//! Configuration: the Service Bus emulator's `Config.json`, read as-is and validated.
//!
//! The file is read exactly as the emulator ships it, `//` comments included. Every property
//! the emulator's schema lists is understood, plus `MaxSizeInMegabytes` on queues and topics
//! (Service Bus's size quota, which the emulator fixes at 100 MB), `MaxMessageSizeInKilobytes`
//! on queues and topics (1 to 102,400; the emulator fixes it at 256) and `Status` on queues, topics
//! and subscriptions (as in Service Bus's ARM `properties.status`); any other is refused, so a
//! typo cannot be silently ignored. Service Bus's own limits are enforced (lock duration 5 s to 5 min,
//! MaxDeliveryCount ≥ 1, message TTL 1 s to .NET `TimeSpan.MaxValue`, duplicate-detection
//! window 5 s to 7 days, forwarding at most 4 hops and never in a loop, no property written
//! twice); the emulator's quotas (50 entities, 1-hour TTL, MaxDeliveryCount ≤ 10, 50
//! subscriptions) are not. Every error names the file, the entity and the property.

mod checks;
mod duration;
mod jsonc;
mod model;
mod reader;
mod resolve;
mod status;
mod strict_json;

use std::path::Path;

pub use duration::{DurationError, parse_duration};
pub use model::{
    Config, CorrelationFilter, DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES,
    DEFAULT_MAX_SIZE_IN_MEGABYTES, DEFAULT_RULE_NAME, DeliverySettings, DuplicateDetection,
    LoggingTargets, MATCH_ALL_SQL, MAX_MESSAGE_SIZE_IN_KILOBYTES, NamespaceConfig, PropertyValue,
    QueueConfig, RuleConfig, RuleFilter, SqlExpression, SubscriptionConfig, TopicConfig,
    message_size_limit,
};
pub use status::{
    EntityStatus, QUEUE_STATUSES, SUBSCRIPTION_STATUSES, TOPIC_STATUSES,
    subscription_refuses_receives,
};

/// Why a configuration was refused. The message always starts with the file name.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read the file: {source}")]
    Read {
        /// The file as named by the user.
        file: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not JSON (after comments are removed), or an object repeats a property.
    #[error("{file}: line {line}, column {column}: {message}")]
    Syntax {
        /// The file as named by the user.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The JSON is well formed but describes an invalid configuration.
    #[error("{file}: {scope}: {message}")]
    Invalid {
        /// The file as named by the user.
        file: String,
        /// The entity, e.g. `queue "orders"`, or a JSON path when the entity has no valid name.
        scope: String,
        /// What is wrong, naming the property and the limit.
        message: String,
    },
}

/// Reads and validates a configuration file; errors name the file as `path` is written.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&text, &file)
}

/// Validates configuration text (JSON with comments); `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
    let json = jsonc::strip_comments(text).map_err(|at| ConfigError::Syntax {
        file: file.to_owned(),
        line: at.line,
        column: at.column,
        message: "unterminated /* comment".to_owned(),
    })?;
    let document: serde_json::Value =
        strict_json::from_str(&json).map_err(|error| ConfigError::Syntax {
            file: file.to_owned(),
            line: error.line(),
            column: error.column(),
            message: syntax_message(&error),
        })?;
    let invalid = |invalid: reader::Invalid| ConfigError::Invalid {
        file: file.to_owned(),
        scope: invalid.scope,
        message: invalid.message,
    };
    let config = resolve::resolve(&document).map_err(invalid)?;
    checks::check(&config.namespace).map_err(invalid)?;
    Ok(config)
}

/// Runs the cross-entity checks (unique names, forwarding targets that exist, no loops, at most
/// four hops) on a namespace about to change at run time; the error names the entity.
pub(crate) fn check_namespace(namespace: &NamespaceConfig) -> Result<(), String> {
    checks::check(namespace).map_err(|invalid| format!("{}: {}", invalid.scope, invalid.message))
}

/// serde_json's message without its own " at line L column C" tail (the error shows both already).
fn syntax_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _position)) => message.to_owned(),
        None => text,
    }
}
