//! The client steps the crash campaign shares between its workload and its checks: a connection
//! with one session, receivers (plain or locked to one session), and `$management` requests,
//! whose answers are what the campaign counts as acknowledged: a settlement through
//! `com.microsoft:update-disposition` is answered only once it is stored, while fe2o3-amqp's
//! link dispositions are never confirmed to the caller.

use std::sync::atomic::{AtomicU64, Ordering};

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::link::delivery::Delivery;
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::definitions::{ReceiverSettleMode, SenderSettleMode};
use fe2o3_amqp::types::messaging::annotations::OwnedKey;
use fe2o3_amqp::types::messaging::{
    AmqpValue, ApplicationProperties, Message, Outcome, Properties, Source,
};
use fe2o3_amqp::types::primitives::{Array, OrderedMap, SimpleValue, Symbol, Uuid, Value};
use fe2o3_amqp::{Connection, Receiver, Sender, Session};

use crate::client::{attach_sender, step};
use crate::error::BenchError;

/// One connection with one session: every workload task has its own, so a kill cuts them all.
pub(crate) struct Link {
    pub(crate) connection: ConnectionHandle<()>,
    pub(crate) session: SessionHandle<()>,
}

impl Link {
    pub(crate) async fn open(url: &str, name: &str) -> Result<Self, BenchError> {
        let mut connection = step("connect", Connection::open(name.to_owned(), url)).await?;
        let session = step("begin session", Session::begin(&mut connection)).await?;
        Ok(Self {
            connection,
            session,
        })
    }

    pub(crate) async fn sender(&mut self, name: &str, address: &str) -> Result<Sender, BenchError> {
        attach_sender(&mut self.session, name.to_owned(), address).await
    }

    /// A peek-lock receiver; `session` locks it to that session of a session-enabled queue.
    pub(crate) async fn receiver(
        &mut self,
        name: &str,
        address: &str,
        session: Option<&str>,
        credit: u32,
    ) -> Result<Receiver, BenchError> {
        let mut source = Source::builder().address(address);
        if let Some(session) = session {
            let mut filter = OrderedMap::new();
            filter.insert(
                Symbol::from("com.microsoft:session-filter"),
                Value::String(session.to_owned()),
            );
            source = source.filter(filter);
        }
        step(
            "attach receiver",
            Receiver::builder()
                .name(name)
                .source(source.build())
                .sender_settle_mode(SenderSettleMode::Unsettled)
                .receiver_settle_mode(ReceiverSettleMode::First)
                .credit_mode(CreditMode::Auto(credit))
                .attach(&mut self.session),
        )
        .await
    }

    pub(crate) async fn management(&mut self, entity: &str) -> Result<Management, BenchError> {
        let node = format!("{entity}/$management");
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let reply_to = format!("{entity}-replies-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let requests = self.sender(&format!("{reply_to}-requests"), &node).await?;
        let replies = step(
            "attach management receiver",
            Receiver::builder()
                .name(format!("{reply_to}-link"))
                .source(node.as_str())
                .target(reply_to.as_str())
                .attach(&mut self.session),
        )
        .await?;
        Ok(Management {
            requests,
            replies,
            reply_to,
            next_id: 0,
        })
    }

    pub(crate) async fn close(mut self) {
        let _ = step("end session", self.session.end()).await;
        let _ = step("close connection", self.connection.close()).await;
    }
}

/// A message whose body is its id, in `session` when given.
pub(crate) fn message(id: &str, session: Option<&str>) -> Message<AmqpValue<String>> {
    let properties = Properties {
        message_id: Some(id.to_owned().into()),
        group_id: session.map(str::to_owned),
        ..Properties::default()
    };
    Message::builder()
        .properties(properties)
        .value(id.to_owned())
        .build()
}

/// Sends one message and waits for its outcome: `Ok(true)` accepted, `Ok(false)` refused.
pub(crate) async fn send(
    sender: &mut Sender,
    id: &str,
    session: Option<&str>,
) -> Result<bool, BenchError> {
    let outcome = step("send", sender.send(message(id, session))).await?;
    Ok(matches!(outcome, Outcome::Accepted(_)))
}

/// Receives the next message, granting `credit` again each time half of it is used: settling
/// through `$management` does not count for fe2o3-amqp's automatic top-up.
pub(crate) async fn receive(
    receiver: &mut Receiver,
    credit: u32,
    received: &mut u32,
) -> Result<Delivery<Value>, BenchError> {
    let delivery = receiver
        .recv()
        .await
        .map_err(|error| BenchError::broker("receive", error))?;
    *received += 1;
    if (*received).is_multiple_of((credit / 2).max(1)) {
        step("flow", receiver.set_credit(credit)).await?;
    }
    Ok(delivery)
}

/// The id (string body) and lock token of a received message.
pub(crate) fn id_and_token(delivery: &Delivery<Value>) -> Result<(String, Uuid), BenchError> {
    let Value::String(id) = delivery.body() else {
        return Err(BenchError::broker(
            "receive",
            "a message without a string body",
        ));
    };
    let token = delivery
        .message()
        .message_annotations
        .as_ref()
        .and_then(|annotations| {
            annotations
                .iter()
                .find_map(|(key, value)| match (key, value) {
                    (OwnedKey::Symbol(name), Value::Uuid(token))
                        if name.0 == "x-opt-lock-token" =>
                    {
                        Some(token.clone())
                    }
                    _ => None,
                })
        })
        .ok_or_else(|| BenchError::broker("receive", format!("{id} has no lock token")))?;
    Ok((id.clone(), token))
}

/// How a client settles a locked message (`update-disposition`'s `disposition-status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settlement {
    Complete,
    Abandon,
    DeadLetter,
}

impl Settlement {
    fn status(self) -> &'static str {
        match self {
            Settlement::Complete => "completed",
            Settlement::Abandon => "abandoned",
            Settlement::DeadLetter => "suspended",
        }
    }

    /// The same settlement as a link disposition (not confirmed to the caller by fe2o3-amqp).
    pub(crate) async fn on_link(
        self,
        receiver: &mut Receiver,
        delivery: &Delivery<Value>,
    ) -> Result<(), BenchError> {
        let settled = match self {
            Settlement::Complete => receiver.accept(delivery).await,
            Settlement::Abandon => {
                let modified = fe2o3_amqp::types::messaging::Modified {
                    delivery_failed: Some(true),
                    undeliverable_here: None,
                    message_annotations: None,
                };
                receiver.modify(delivery, modified).await
            }
            Settlement::DeadLetter => receiver.reject(delivery, None).await,
        };
        settled.map_err(|error| BenchError::broker("settle", error))
    }
}

/// A request/reply link pair on one entity's `$management` node.
pub(crate) struct Management {
    requests: Sender,
    replies: Receiver,
    reply_to: String,
    next_id: u64,
}

impl Management {
    /// One request; its body on status 200 (or 204), an error otherwise.
    async fn call(
        &mut self,
        operation: &str,
        body: Vec<(&str, Value)>,
        associated_link: Option<&str>,
    ) -> Result<Value, BenchError> {
        self.next_id += 1;
        let map: OrderedMap<Value, Value> = body
            .into_iter()
            .map(|(key, value)| (Value::String(key.to_owned()), value))
            .collect();
        let mut properties = ApplicationProperties::builder().insert("operation", operation);
        if let Some(link) = associated_link {
            properties = properties.insert("associated-link-name", link);
        }
        let request = Message::builder()
            .properties(Properties {
                message_id: Some(format!("request-{}", self.next_id).into()),
                reply_to: Some(self.reply_to.clone()),
                ..Properties::default()
            })
            .application_properties(properties.build())
            .value(Value::Map(map))
            .build();
        let outcome = step("management request", self.requests.send(request)).await?;
        if !matches!(outcome, Outcome::Accepted(_)) {
            return Err(BenchError::broker("management", format!("{outcome:?}")));
        }
        let reply = step("management reply", self.replies.recv::<Value>()).await?;
        let _ = self.replies.accept(&reply).await;
        let status = reply
            .message()
            .application_properties
            .as_ref()
            .and_then(|properties| properties.get("statusCode"))
            .cloned();
        match status {
            Some(SimpleValue::Int(200 | 204)) => Ok(reply.body().clone()),
            other => Err(BenchError::broker(
                "management",
                format!(
                    "{operation} answered {other:?}: {:?}",
                    reply.message().application_properties
                ),
            )),
        }
    }

    /// Settles these locked messages; returns once the broker has stored the settlement.
    pub(crate) async fn settle(
        &mut self,
        tokens: &[Uuid],
        settlement: Settlement,
        session: Option<(&str, &str)>,
    ) -> Result<(), BenchError> {
        let tokens: Vec<Value> = tokens.iter().cloned().map(Value::Uuid).collect();
        let mut body = vec![
            ("lock-tokens", Value::Array(Array::from(tokens))),
            (
                "disposition-status",
                Value::String(settlement.status().to_owned()),
            ),
        ];
        if let Some((session, _)) = session {
            body.push(("session-id", Value::String(session.to_owned())));
        }
        self.call(
            "com.microsoft:update-disposition",
            body,
            session.map(|(_, link)| link),
        )
        .await
        .map(drop)
    }

    /// Sets a session's state through the receive link `link` that holds it.
    pub(crate) async fn set_session_state(
        &mut self,
        session: &str,
        link: &str,
        state: &str,
    ) -> Result<(), BenchError> {
        let body = vec![
            ("session-id", Value::String(session.to_owned())),
            (
                "session-state",
                Value::Binary(state.as_bytes().to_vec().into()),
            ),
        ];
        self.call("com.microsoft:set-session-state", body, Some(link))
            .await
            .map(drop)
    }

    /// A session's state as text (`None`: no state), through the link `link` that holds it.
    pub(crate) async fn session_state(
        &mut self,
        session: &str,
        link: &str,
    ) -> Result<Option<String>, BenchError> {
        let body = vec![("session-id", Value::String(session.to_owned()))];
        let reply = self
            .call("com.microsoft:get-session-state", body, Some(link))
            .await?;
        let Value::Map(map) = reply else {
            return Ok(None);
        };
        match map.get(&Value::String("session-state".to_owned())) {
            Some(Value::Binary(bytes)) => Ok(Some(String::from_utf8_lossy(bytes).into_owned())),
            _ => Ok(None),
        }
    }
}
