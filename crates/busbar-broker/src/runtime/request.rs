//! The request/response envelope shared by `$cbs` and `$management` (servicebus-amqp.md §1.5,
//! §5.1): what a request carries, and a response with `correlation-id` = the request's
//! message-id in its own AMQP type, the status in the key style each node's parsers expect.

use busbar_amqp::DecodeError;
use busbar_amqp::message::{
    ApplicationProperties, Body, Message, MessageBuilder, MessageId, Properties,
};
use busbar_amqp::types::{Symbol, Value};

use crate::errors::{StatusCode, WireError};

/// A request message, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    /// `properties.message-id`, echoed as the response's correlation-id.
    pub(crate) message_id: Option<MessageId>,
    /// `properties.reply-to`, used to route the response.
    pub(crate) reply_to: Option<String>,
    /// The application properties (`operation`, `name`, …).
    pub(crate) properties: ApplicationProperties,
    /// The `amqp-value` body (`Null` when there is none).
    pub(crate) body: Value,
}

impl Request {
    /// Decodes a request message.
    pub(crate) fn decode(message: &Message) -> Result<Self, DecodeError> {
        let properties = message.properties()?.unwrap_or_default();
        let body = match message.body()? {
            Body::Value(value) => value,
            _ => Value::Null,
        };
        Ok(Self {
            message_id: properties.message_id,
            reply_to: properties.reply_to,
            properties: message.application_properties()?.unwrap_or_default(),
            body,
        })
    }

    /// An application property as text (string or symbol).
    pub(crate) fn text_property(&self, key: &str) -> Option<&str> {
        match self.properties.get(key)? {
            Value::String(text) => Some(text),
            Value::Symbol(symbol) => Some(symbol.as_str()),
            _ => None,
        }
    }
}

/// Which status keys a node's clients read: `$cbs` kebab-case, `$management` camelCase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusKeys {
    /// `status-code`, `status-description`; no condition: Python's CBS client drops the status
    /// code (and so the "401" of its error text) when a condition is present.
    Cbs,
    /// `statusCode`, `statusDescription`, `errorCondition`.
    Management,
}

impl StatusKeys {
    fn names(self) -> [&'static str; 3] {
        match self {
            Self::Cbs => ["status-code", "status-description", ""],
            Self::Management => ["statusCode", "statusDescription", "errorCondition"],
        }
    }
}

/// A successful response; `body` is `None` for no body.
pub(crate) fn success(
    request: &Request,
    keys: StatusKeys,
    status: StatusCode,
    description: &str,
    body: Option<Value>,
) -> Message {
    let [code, text, _] = keys.names();
    let mut properties = ApplicationProperties::default();
    properties.push(code, Value::Int(status.as_i32()));
    properties.push(text, Value::from(description));
    build(request, properties, body)
}

/// An error response: status, description with tracking id, and (on `$management`) the
/// condition as a `symbol`.
pub(crate) fn failure(request: &Request, keys: StatusKeys, error: &WireError) -> Message {
    let [code, text, condition] = keys.names();
    let mut properties = ApplicationProperties::default();
    properties.push(code, Value::Int(error.status.as_i32()));
    properties.push(text, Value::from(error.description.as_str()));
    if !condition.is_empty() {
        properties.push(condition, Value::Symbol(Symbol::from(error.condition)));
    }
    build(request, properties, None)
}

fn build(request: &Request, application: ApplicationProperties, body: Option<Value>) -> Message {
    let builder = MessageBuilder::new()
        .properties(Properties {
            correlation_id: request.message_id.clone(),
            ..Properties::default()
        })
        .application_properties(application);
    match body {
        Some(body) => builder.value(body),
        None => builder,
    }
    .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_amqp::types::Uuid;

    fn request(id: MessageId) -> Request {
        let message = MessageBuilder::new()
            .properties(Properties {
                message_id: Some(id),
                reply_to: Some("reply".into()),
                ..Properties::default()
            })
            .application_properties(ApplicationProperties(vec![(
                "operation".into(),
                Value::Symbol("put-token".into()),
            )]))
            .value(Value::from("token"))
            .build();
        Request::decode(&message).unwrap()
    }

    #[test]
    fn correlation_id_keeps_the_request_id_type() {
        for id in [
            MessageId::Uuid(Uuid([7; 16])),
            MessageId::String("abc".into()),
            MessageId::Ulong(9),
        ] {
            let request = request(id.clone());
            assert_eq!(request.text_property("operation"), Some("put-token"));
            assert_eq!(request.reply_to.as_deref(), Some("reply"));
            assert_eq!(request.body, Value::from("token"));
            let response = success(&request, StatusKeys::Cbs, StatusCode::ACCEPTED, "OK", None);
            let properties = response.properties().unwrap().unwrap();
            assert_eq!(properties.correlation_id, Some(id));
            let application = response.application_properties().unwrap().unwrap();
            assert_eq!(application.get("status-code"), Some(&Value::Int(202)));
        }
    }

    #[test]
    fn failures_carry_a_symbol_condition_in_camel_case_on_management() {
        let request = request(MessageId::String("m".into()));
        let error = WireError {
            condition: "com.microsoft:message-lock-lost",
            description: "lost TrackingId:x".into(),
            status: StatusCode::GONE,
        };
        let response = failure(&request, StatusKeys::Management, &error);
        let application = response.application_properties().unwrap().unwrap();
        assert_eq!(application.get("statusCode"), Some(&Value::Int(410)));
        assert_eq!(
            application.get("errorCondition"),
            Some(&Value::Symbol("com.microsoft:message-lock-lost".into()))
        );
        assert_eq!(
            application.get("statusDescription"),
            Some(&Value::from("lost TrackingId:x"))
        );
        let cbs = failure(&request, StatusKeys::Cbs, &error);
        let application = cbs.application_properties().unwrap().unwrap();
        assert_eq!(application.get("status-code"), Some(&Value::Int(410)));
        assert_eq!(application.0.len(), 2, "no condition on $cbs");
    }
}
