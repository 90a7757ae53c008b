//! The `BrokerProperties` header: a JSON object of the message's system properties, read on a
//! send (only the ones a sender may set; others, e.g. echoed from a received message, are
//! ignored as the service ignores them) and written on a receive. Dates are RFC 1123
//! (`Wed, 02 Jun 2021 22:07:53 GMT`); `TimeToLive` is in seconds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::atom::Timestamp;

/// The `TimeToLive` written for a message that never expires: .NET's `TimeSpan.MaxValue` in
/// seconds, as the service writes it.
const NEVER_EXPIRES_SECONDS: f64 = 922_337_203_685.477_6;

/// A message's system properties. A sender sets the first group; the broker fills in the rest
/// on a received message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrokerProperties {
    /// `MessageId`.
    pub message_id: Option<String>,
    /// `CorrelationId`.
    pub correlation_id: Option<String>,
    /// `SessionId`.
    pub session_id: Option<String>,
    /// `Label` (the AMQP subject).
    pub label: Option<String>,
    /// `To`.
    pub to: Option<String>,
    /// `ReplyTo`.
    pub reply_to: Option<String>,
    /// `ReplyToSessionId`.
    pub reply_to_session_id: Option<String>,
    /// `PartitionKey`.
    pub partition_key: Option<String>,
    /// `TimeToLive`; on a received message, `None` means it never expires.
    pub time_to_live: Option<Duration>,
    /// `ScheduledEnqueueTimeUtc`.
    pub scheduled_enqueue_time: Option<Timestamp>,
    /// `DeliveryCount`: deliveries so far, this one included.
    pub delivery_count: Option<u32>,
    /// `SequenceNumber` (also written as `EnqueuedSequenceNumber`).
    pub sequence_number: Option<i64>,
    /// `EnqueuedTimeUtc`.
    pub enqueued_time: Option<Timestamp>,
    /// `LockToken`, on a peek-locked message.
    pub lock_token: Option<Uuid>,
    /// `LockedUntilUtc`, on a peek-locked message.
    pub locked_until: Option<Timestamp>,
    /// `State`: `Active`, `Deferred` or `Scheduled`.
    pub state: Option<&'static str>,
    /// `DeadLetterSource`, on a message forwarded to a dead-letter sub-queue.
    pub dead_letter_source: Option<String>,
}

/// Why a `BrokerProperties` header is refused (400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SubCode=40000. The BrokerProperties header is invalid: {0}.")]
pub struct InvalidBrokerProperties(String);

/// The properties a sender may set, as the JSON names and types them.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Settable {
    message_id: Option<String>,
    correlation_id: Option<String>,
    session_id: Option<String>,
    label: Option<String>,
    to: Option<String>,
    reply_to: Option<String>,
    reply_to_session_id: Option<String>,
    partition_key: Option<String>,
    time_to_live: Option<f64>,
    scheduled_enqueue_time_utc: Option<String>,
}

impl BrokerProperties {
    /// Reads the properties a sender set from the header's JSON text.
    pub fn parse(text: &str) -> Result<BrokerProperties, InvalidBrokerProperties> {
        let value: Value = serde_json::from_str(text)
            .map_err(|error| InvalidBrokerProperties(error.to_string()))?;
        BrokerProperties::from_json(value)
    }

    /// Reads the properties a sender set from a JSON object (a batch entry's).
    pub fn from_json(value: Value) -> Result<BrokerProperties, InvalidBrokerProperties> {
        if !value.is_object() {
            return Err(InvalidBrokerProperties("it is not a JSON object".into()));
        }
        let settable: Settable = serde_json::from_value(value)
            .map_err(|error| InvalidBrokerProperties(error.to_string()))?;
        let time_to_live = settable
            .time_to_live
            .map(|seconds| match Duration::try_from_secs_f64(seconds) {
                Ok(ttl) if !ttl.is_zero() => Ok(ttl),
                _ => Err(InvalidBrokerProperties(format!(
                    "TimeToLive {seconds} is not a positive number of seconds"
                ))),
            })
            .transpose()?;
        let scheduled_enqueue_time = settable
            .scheduled_enqueue_time_utc
            .map(|text| {
                parse_date(&text).ok_or_else(|| {
                    InvalidBrokerProperties(format!(
                        "ScheduledEnqueueTimeUtc {text:?} is not an RFC 1123 date"
                    ))
                })
            })
            .transpose()?;
        Ok(BrokerProperties {
            message_id: settable.message_id,
            correlation_id: settable.correlation_id,
            session_id: settable.session_id,
            label: settable.label,
            to: settable.to,
            reply_to: settable.reply_to,
            reply_to_session_id: settable.reply_to_session_id,
            partition_key: settable.partition_key,
            time_to_live,
            scheduled_enqueue_time,
            ..BrokerProperties::default()
        })
    }

    /// The header's JSON text for a received message.
    pub fn to_json(&self) -> String {
        let mut object = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                object.insert(key.to_owned(), value);
            }
        };
        let text = |value: &Option<String>| value.as_ref().map(|text| json!(text));
        let date = |value: Option<Timestamp>| value.map(|at| json!(format_date(at)));
        put("CorrelationId", text(&self.correlation_id));
        put("SessionId", text(&self.session_id));
        put(
            "DeliveryCount",
            self.delivery_count.map(|count| json!(count)),
        );
        put("LockedUntilUtc", date(self.locked_until));
        put(
            "LockToken",
            self.lock_token.map(|token| json!(token.to_string())),
        );
        put("MessageId", text(&self.message_id));
        put("Label", text(&self.label));
        put("ReplyTo", text(&self.reply_to));
        put("EnqueuedTimeUtc", date(self.enqueued_time));
        put("SequenceNumber", self.sequence_number.map(|n| json!(n)));
        put(
            "EnqueuedSequenceNumber",
            self.sequence_number.map(|n| json!(n)),
        );
        let ttl = self
            .time_to_live
            .map_or(NEVER_EXPIRES_SECONDS, |ttl| ttl.as_secs_f64());
        put("TimeToLive", Some(json!(ttl)));
        put("To", text(&self.to));
        put("ReplyToSessionId", text(&self.reply_to_session_id));
        put("PartitionKey", text(&self.partition_key));
        put("ScheduledEnqueueTimeUtc", date(self.scheduled_enqueue_time));
        put("State", self.state.map(|state| json!(state)));
        put("DeadLetterSource", text(&self.dead_letter_source));
        Value::Object(object).to_string()
    }
}

/// An RFC 1123 date as the service writes it (`…GMT`).
pub fn format_date(at: Timestamp) -> String {
    let seconds = u64::try_from(at.unix_millis().max(0) / 1_000).unwrap_or(0);
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// An RFC 1123 date; the numeric zone `+0000` that RFC 2822 writers (the Rust crate) use is
/// taken as `GMT`.
fn parse_date(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    let gmt = match text.strip_suffix("+0000") {
        Some(head) => format!("{head}GMT"),
        None => text.to_owned(),
    };
    let at = httpdate::parse_http_date(&gmt).ok()?;
    let millis = at.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_millis();
    Some(Timestamp::from_unix_millis(i64::try_from(millis).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_a_sender_sets_and_ignores_the_rest() {
        let properties = BrokerProperties::parse(
            r#"{"MessageId":"m1","Label":"l","CorrelationId":"c","SessionId":"s","TimeToLive":90.5,
                "ScheduledEnqueueTimeUtc":"Wed, 02 Jun 2021 22:07:53 GMT","To":"t","ReplyTo":"r",
                "ReplyToSessionId":"rs","PartitionKey":"p","SequenceNumber":7,"ForcePersistence":true}"#,
        )
        .unwrap();
        assert_eq!(properties.message_id.as_deref(), Some("m1"));
        assert_eq!(properties.label.as_deref(), Some("l"));
        assert_eq!(properties.correlation_id.as_deref(), Some("c"));
        assert_eq!(properties.session_id.as_deref(), Some("s"));
        assert_eq!(properties.time_to_live, Some(Duration::from_millis(90_500)));
        assert_eq!(
            properties.scheduled_enqueue_time,
            Some(Timestamp::from_unix_millis(1_622_671_673_000))
        );
        assert_eq!(properties.partition_key.as_deref(), Some("p"));
        assert_eq!(properties.sequence_number, None);
    }

    #[test]
    fn takes_the_numeric_zone_of_rfc_2822_writers() {
        let properties = BrokerProperties::parse(
            r#"{"ScheduledEnqueueTimeUtc":"Wed, 02 Jun 2021 22:07:53 +0000"}"#,
        )
        .unwrap();
        assert_eq!(
            properties.scheduled_enqueue_time,
            Some(Timestamp::from_unix_millis(1_622_671_673_000))
        );
    }

    #[test]
    fn refuses_malformed_headers() {
        for text in [
            "",
            "{",
            "[1]",
            "\"MessageId\"",
            r#"{"MessageId":5}"#,
            r#"{"TimeToLive":"soon"}"#,
            r#"{"TimeToLive":-1}"#,
            r#"{"TimeToLive":0}"#,
            r#"{"TimeToLive":1e300}"#,
            r#"{"ScheduledEnqueueTimeUtc":"tomorrow"}"#,
        ] {
            assert!(BrokerProperties::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn writes_a_received_message_with_rfc_1123_dates() {
        let token = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let properties = BrokerProperties {
            message_id: Some("m1".into()),
            delivery_count: Some(1),
            sequence_number: Some(3),
            enqueued_time: Some(Timestamp::from_unix_millis(1_622_671_673_000)),
            lock_token: Some(token),
            locked_until: Some(Timestamp::from_unix_millis(1_622_671_733_999)),
            state: Some("Active"),
            ..BrokerProperties::default()
        };
        let written: Value = serde_json::from_str(&properties.to_json()).unwrap();
        assert_eq!(written["MessageId"], "m1");
        assert_eq!(written["DeliveryCount"], 1);
        assert_eq!(written["SequenceNumber"], 3);
        assert_eq!(written["EnqueuedTimeUtc"], "Wed, 02 Jun 2021 22:07:53 GMT");
        assert_eq!(written["LockedUntilUtc"], "Wed, 02 Jun 2021 22:08:53 GMT");
        assert_eq!(written["LockToken"], token.to_string());
        assert_eq!(written["TimeToLive"], NEVER_EXPIRES_SECONDS);
        assert_eq!(written["State"], "Active");
        assert!(written.get("Label").is_none());
    }
}
