//! A `$management` request/reply link pair driven by fe2o3-amqp: one request at a time, its
//! status, error condition and body.

use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::messaging::{ApplicationProperties, Message, Properties};
use fe2o3_amqp::types::primitives::{OrderedMap, SimpleValue, Value};
use fe2o3_amqp::{Receiver, Sender};

use super::client::step;

/// A request/reply link pair on one `$management` node.
pub struct Management {
    requests: Sender,
    replies: Receiver,
    next_id: u32,
}

/// What a `$management` request was answered with.
pub struct Response {
    pub status: i32,
    pub condition: Option<String>,
    pub body: Value,
}

impl Management {
    pub async fn attach(session: &mut SessionHandle<()>, entity: &str) -> Management {
        let node = format!("{entity}/$management");
        let requests = step(Sender::attach(
            session,
            format!("{entity}-requests"),
            node.as_str(),
        ))
        .await
        .unwrap();
        let replies = step(
            Receiver::builder()
                .name(format!("{entity}-replies"))
                .source(node.as_str())
                .target(format!("{entity}-client"))
                .attach(session),
        )
        .await
        .unwrap();
        Management {
            requests,
            replies,
            next_id: 0,
        }
    }

    pub async fn call(&mut self, operation: &str, body: Vec<(&str, Value)>) -> Response {
        self.next_id += 1;
        let map: OrderedMap<Value, Value> = body
            .into_iter()
            .map(|(key, value)| (Value::String(key.to_owned()), value))
            .collect();
        let request = Message::builder()
            .properties(Properties {
                message_id: Some(format!("request-{}", self.next_id).into()),
                reply_to: Some(format!(
                    "{}-client",
                    self.replies.name().trim_end_matches("-replies")
                )),
                ..Properties::default()
            })
            .application_properties(
                ApplicationProperties::builder()
                    .insert("operation", operation)
                    .build(),
            )
            .value(Value::Map(map))
            .build();
        step(self.requests.send(request)).await.unwrap();
        let response = step(self.replies.recv::<Value>()).await.unwrap();
        self.replies.accept(&response).await.unwrap();
        let properties = response.message().application_properties.as_ref().unwrap();
        let Some(SimpleValue::Int(status)) = properties.get("statusCode") else {
            panic!("{properties:?}")
        };
        let condition = match properties.get("errorCondition") {
            Some(SimpleValue::String(text)) => Some(text.clone()),
            Some(SimpleValue::Symbol(symbol)) => Some(symbol.0.clone()),
            _ => None,
        };
        Response {
            status: *status,
            condition,
            body: response.body().clone(),
        }
    }

    pub async fn close(self) {
        self.requests.close().await.unwrap();
        self.replies.close().await.unwrap();
    }
}
