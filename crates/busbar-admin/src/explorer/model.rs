//! What crosses [`NamespaceControl`](crate::control::NamespaceControl) for the explorer: a
//! namespace overview row, a peeked message, a message to send, a re-drive's outcome, and a
//! session with its state and lock holder. Plain data, serialised as the JSON API's bodies.

use serde::{Deserialize, Serialize};

/// Which messages of an entity a peek reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubQueue {
    /// The entity's own queue: active, deferred and scheduled messages.
    Active,
    /// Its dead-letter sub-queue.
    DeadLetter,
}

impl SubQueue {
    /// The query-string spelling (`active`, `dead-letter`).
    pub fn as_str(self) -> &'static str {
        match self {
            SubQueue::Active => "active",
            SubQueue::DeadLetter => "dead-letter",
        }
    }

    /// Parses the query-string spelling.
    pub fn parse(text: &str) -> Option<SubQueue> {
        match text {
            "active" => Some(SubQueue::Active),
            "dead-letter" => Some(SubQueue::DeadLetter),
            _ => None,
        }
    }
}

/// What kind of entity an overview row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntityKind {
    /// A queue.
    Queue,
    /// A topic (its counts are the scheduled messages it holds).
    Topic,
    /// A subscription, `{topic}/Subscriptions/{name}`.
    Subscription,
}

/// One entity of the namespace with its message counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntityCounts {
    /// `queue`, `topic` or `topic/Subscriptions/subscription`.
    pub path: String,
    /// What it is.
    pub kind: EntityKind,
    /// Active messages (available, locked or deferred).
    pub active: u64,
    /// Dead-lettered messages.
    pub dead_letter: u64,
    /// Scheduled messages.
    pub scheduled: u64,
    /// Deferred messages (counted among the active ones too).
    pub deferred: u64,
    /// Whether receivers must accept sessions.
    pub requires_session: bool,
}

/// A message as a peek shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeekedMessage {
    /// Its sequence number.
    pub sequence_number: i64,
    /// `active`, `deferred` or `scheduled` (dead-lettered messages: their state before).
    pub state: String,
    /// When it was enqueued (a scheduled message: when it becomes active), Unix ms.
    pub enqueued_time: i64,
    /// Failed delivery attempts so far.
    pub delivery_count: u32,
    /// When it expires, Unix ms.
    pub expires_at: Option<i64>,
    /// When it was scheduled to become active, Unix ms.
    pub scheduled_enqueue_time: Option<i64>,
    /// The system properties a client set (`message-id`, `session-id`, `subject`, …).
    pub system_properties: Vec<(String, String)>,
    /// The application properties, as text.
    pub application_properties: Vec<(String, String)>,
    /// The body's bytes.
    #[serde(with = "body_bytes")]
    pub body: Vec<u8>,
    /// `DeadLetterReason`.
    pub dead_letter_reason: Option<String>,
    /// `DeadLetterErrorDescription`.
    pub dead_letter_description: Option<String>,
}

/// A message to send.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutgoingMessage {
    /// The body (UTF-8 text, sent as one `data` section).
    pub body: String,
    /// `content-type`.
    pub content_type: Option<String>,
    /// `message-id`.
    pub message_id: Option<String>,
    /// The session id.
    pub session_id: Option<String>,
    /// `subject`.
    pub subject: Option<String>,
    /// `correlation-id`.
    pub correlation_id: Option<String>,
    /// Application properties, as strings.
    #[serde(default)]
    pub application_properties: Vec<(String, String)>,
    /// When it becomes active (Unix ms); absent sends it now.
    pub scheduled_enqueue_time: Option<i64>,
}

/// What a re-drive did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Redriven {
    /// Messages stored at the destination and removed from the dead-letter queue.
    pub moved: u64,
    /// Messages left in the dead-letter queue (refused, or locked meanwhile).
    pub kept: u64,
}

/// A session of a session-enabled entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// Its state as text (lossy UTF-8), if it has one.
    pub state: Option<String>,
    /// Who holds its lock, if anyone: `connection N, receiver M`.
    pub locked_by: Option<String>,
    /// Until when (Unix ms).
    pub locked_until: Option<i64>,
}

/// The body as base64-free JSON: a UTF-8 string when it is one, else an array of bytes.
mod body_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(bytes) {
            Ok(text) => serializer.serialize_str(text),
            Err(_) => serializer.collect_seq(bytes),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Body {
            Text(String),
            Bytes(Vec<u8>),
        }
        Ok(match Body::deserialize(deserializer)? {
            Body::Text(text) => text.into_bytes(),
            Body::Bytes(bytes) => bytes,
        })
    }
}
