//! The HTTP data plane of Service Bus (its REST API for clients without AMQP): the messages it
//! carries and the one narrow interface, [`DataPlane`], through which the server reaches the
//! broker to send, receive, settle and renew. The wire forms are pure and live here too:
//! the `BrokerProperties` header's JSON ([`broker_properties`]), custom properties as headers
//! ([`custom_properties`]) and the JSON batch body of a multi-message send ([`batch`]).

pub mod batch;
pub mod broker_properties;
pub mod custom_properties;

use std::future::Future;

use bytes::Bytes;
use uuid::Uuid;

use crate::atom::Timestamp;
pub use broker_properties::BrokerProperties;
pub use custom_properties::PropertyValue;

/// A message as the HTTP API carries it, either way: its body, its content type, its
/// `BrokerProperties`, and its custom (application) properties.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpMessage {
    /// The body, as sent.
    pub body: Bytes,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// The `BrokerProperties` header.
    pub properties: BrokerProperties,
    /// The custom properties, in order.
    pub custom_properties: Vec<(String, PropertyValue)>,
}

/// How a receive takes its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiveMode {
    /// `POST …/messages/head`: locked until completed, unlocked or expired.
    PeekLock,
    /// `DELETE …/messages/head`: removed as it is handed out.
    ReceiveAndDelete,
}

/// What becomes of a locked message: `DELETE`, `PUT` or `POST` of
/// `…/messages/{sequence or message-id}/{lock token}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockAction {
    /// `DELETE`: complete it.
    Complete,
    /// `PUT`: unlock it (an abandon: the delivery counts).
    Unlock,
    /// `POST`: renew its lock.
    Renew,
}

/// A refused or failed data-plane operation: the HTTP status the service answers with, and
/// the detail for the `<Error>` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPlaneError {
    /// 400, 403, 404, 410, 413, 503, …
    pub status: u16,
    /// What the client is told.
    pub detail: String,
}

impl DataPlaneError {
    /// 400 with `detail`.
    pub fn bad_request(detail: impl Into<String>) -> DataPlaneError {
        DataPlaneError {
            status: 400,
            detail: detail.into(),
        }
    }

    /// 404: the data plane is not served by this server.
    fn not_served() -> DataPlaneError {
        DataPlaneError {
            status: 404,
            detail: "SubCode=40400. The HTTP data plane is not served here.".into(),
        }
    }
}

/// The result of a data-plane operation.
pub type DataPlaneResult<T> = Result<T, DataPlaneError>;

/// The broker's messaging operations, as the HTTP data plane needs them. Entities are named
/// by path as a client writes them (`queue`, `topic/Subscriptions/sub`, `queue/$DeadLetterQueue`).
/// Every method has a default that answers 404, for servers without a data plane.
pub trait DataPlane: Send + Sync + 'static {
    /// Sends messages to a queue or topic as one send, answered once they are stored.
    fn send_messages(
        &self,
        _entity: &str,
        _messages: Vec<HttpMessage>,
    ) -> impl Future<Output = DataPlaneResult<()>> + Send {
        async { Err(DataPlaneError::not_served()) }
    }

    /// Receives one message, waiting until `give_up` resolves (`None`: nothing arrived). A
    /// message handed out as `give_up` resolves is still returned.
    fn receive_message(
        &self,
        _entity: &str,
        _mode: ReceiveMode,
        _give_up: impl Future<Output = ()> + Send,
    ) -> impl Future<Output = DataPlaneResult<Option<HttpMessage>>> + Send {
        async { Err(DataPlaneError::not_served()) }
    }

    /// Completes, unlocks or renews the lock `token` of a message of `entity`; a renewal
    /// answers the new locked-until.
    fn locked_message(
        &self,
        _entity: &str,
        _token: Uuid,
        _action: LockAction,
    ) -> impl Future<Output = DataPlaneResult<Option<Timestamp>>> + Send {
        async { Err(DataPlaneError::not_served()) }
    }

    /// The largest request body a send to `entity` may have (its message size limit).
    fn max_message_size(&self, _entity: &str) -> usize {
        256 * 1024
    }
}
