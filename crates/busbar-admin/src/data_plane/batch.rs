//! The body of a batch send (`Content-Type: application/vnd.microsoft.servicebus.json`): a JSON
//! array of `{"Body": "…", "BrokerProperties": {…}, "UserProperties": {…}}`, each entry one
//! message whose body is the text of `Body`.

use bytes::Bytes;
use serde_json::Value;

use super::{BrokerProperties, HttpMessage, PropertyValue};

/// The content type that makes a send a batch.
pub const CONTENT_TYPE: &str = "application/vnd.microsoft.servicebus.json";

/// Why a batch body is refused (400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SubCode=40000. The batch is invalid: {0}.")]
pub struct InvalidBatch(String);

/// Whether a send's `Content-Type` makes it a batch (parameters such as `charset` allowed).
pub fn is_batch(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(CONTENT_TYPE))
}

/// The messages of a batch body.
pub fn parse(body: &[u8]) -> Result<Vec<HttpMessage>, InvalidBatch> {
    let entries: Vec<Value> =
        serde_json::from_slice(body).map_err(|error| InvalidBatch(error.to_string()))?;
    if entries.is_empty() {
        return Err(InvalidBatch("it holds no message".into()));
    }
    entries
        .into_iter()
        .enumerate()
        .map(|(index, entry)| message(index, entry))
        .collect()
}

fn message(index: usize, entry: Value) -> Result<HttpMessage, InvalidBatch> {
    let fail = |what: String| InvalidBatch(format!("message {index}: {what}"));
    let Value::Object(mut fields) = entry else {
        return Err(fail("it is not a JSON object".into()));
    };
    let body = match fields.remove("Body") {
        Some(Value::String(text)) => Bytes::from(text),
        None | Some(Value::Null) => Bytes::new(),
        Some(_) => return Err(fail("Body is not a string".into())),
    };
    let properties = match fields.remove("BrokerProperties") {
        Some(value) => {
            BrokerProperties::from_json(value).map_err(|error| fail(error.to_string()))?
        }
        None => BrokerProperties::default(),
    };
    let custom_properties = match fields.remove("UserProperties") {
        Some(Value::Object(properties)) => properties
            .into_iter()
            .map(|(name, value)| match PropertyValue::from_json(&value) {
                Some(value) => Ok((name, value)),
                None => Err(fail(format!("UserProperties.{name} is not a scalar"))),
            })
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
        Some(_) => return Err(fail("UserProperties is not an object".into())),
    };
    Ok(HttpMessage {
        body,
        content_type: None,
        properties,
        custom_properties,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_entry() {
        let messages = parse(
            br#"[{"Body":"one","BrokerProperties":{"MessageId":"a","Label":"x"},"UserProperties":{"n":1,"s":"t"}},
                 {"Body":"two"}]"#,
        )
        .unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].body, Bytes::from_static(b"one"));
        assert_eq!(messages[0].properties.message_id.as_deref(), Some("a"));
        assert_eq!(
            messages[0].custom_properties,
            vec![
                ("n".to_owned(), PropertyValue::Long(1)),
                ("s".to_owned(), PropertyValue::String("t".into()))
            ]
        );
        assert_eq!(messages[1].body, Bytes::from_static(b"two"));
    }

    #[test]
    fn refuses_what_is_not_a_batch() {
        for body in [
            &b"[]"[..],
            b"{}",
            b"[1]",
            b"[{\"Body\":5}]",
            b"[{\"UserProperties\":{\"a\":[1]}}]",
            b"[{\"BrokerProperties\":{\"TimeToLive\":\"x\"}}]",
            b"\xff",
        ] {
            assert!(parse(body).is_err(), "{body:?}");
        }
    }

    #[test]
    fn knows_the_batch_content_type() {
        assert!(is_batch("application/vnd.microsoft.servicebus.json"));
        assert!(is_batch(
            "application/vnd.microsoft.servicebus.json; charset=utf-8"
        ));
        assert!(!is_batch("application/json"));
    }
}
