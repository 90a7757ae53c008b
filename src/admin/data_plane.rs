//! The HTTP data plane of the `busbar` binary: busbar-admin's [`DataPlane`] over the broker's
//! control interface, with messages converted to and from AMQP (`http_message`) and broker
//! errors answered with the status of the broker's one error table.

use busbar_admin::atom::Timestamp;
use busbar_admin::data_plane::{
    DataPlane, DataPlaneError, DataPlaneResult, HttpMessage, LockAction, ReceiveMode,
};
use busbar_amqp::message::Message;
use busbar_broker::BrokerError;
use busbar_broker::errors::{ErrorScope, TrackingId};
use busbar_broker::runtime::LockedMessageAction;
use busbar_core::LockToken;

use super::BrokerNamespace;
use super::http_message::{from_amqp, to_amqp};

impl DataPlane for BrokerNamespace {
    async fn send_messages(&self, entity: &str, messages: Vec<HttpMessage>) -> DataPlaneResult<()> {
        let encoded = messages
            .into_iter()
            .map(|message| to_amqp(message).into_bytes())
            .collect();
        self.control
            .send_messages(entity, encoded)
            .await
            .map_err(|error| self.data_plane_error(&error, entity))
    }

    async fn receive_message(
        &self,
        entity: &str,
        mode: ReceiveMode,
        give_up: impl Future<Output = ()> + Send,
    ) -> DataPlaneResult<Option<HttpMessage>> {
        let mode = match mode {
            ReceiveMode::PeekLock => busbar_core::ReceiveMode::PeekLock,
            ReceiveMode::ReceiveAndDelete => busbar_core::ReceiveMode::ReceiveAndDelete,
        };
        let received = self
            .control
            .receive_message(entity, mode, give_up)
            .await
            .map_err(|error| self.data_plane_error(&error, entity))?;
        received
            .map(|bytes| from_amqp(&Message::from_bytes(bytes)))
            .transpose()
            .map_err(|error| {
                let error =
                    BrokerError::Internal(format!("a delivered message cannot be read: {error}"));
                self.data_plane_error(&error, entity)
            })
    }

    async fn locked_message(
        &self,
        entity: &str,
        token: uuid::Uuid,
        action: LockAction,
    ) -> DataPlaneResult<Option<Timestamp>> {
        let token = LockToken::from_bytes(token.into_bytes());
        let settled = match action {
            LockAction::Complete => LockedMessageAction::Complete,
            LockAction::Unlock => LockedMessageAction::Unlock,
            LockAction::Renew => {
                return self
                    .control
                    .renew_message_lock(entity, token)
                    .await
                    .map(|until| Some(Timestamp::from_unix_millis(until.as_millis())))
                    .map_err(|error| self.data_plane_error(&error, entity));
            }
        };
        self.control
            .settle_message(entity, token, settled)
            .await
            .map(|()| None)
            .map_err(|error| self.data_plane_error(&error, entity))
    }

    fn max_message_size(&self, entity: &str) -> usize {
        usize::try_from(self.control.max_message_size(entity)).unwrap_or(usize::MAX)
    }
}

impl BrokerNamespace {
    /// A broker error as the HTTP API answers it: the status of the broker's error table (410
    /// for a lost lock, 404, 403 over quota, 413, 503 busy) and its description.
    fn data_plane_error(&self, error: &BrokerError, entity: &str) -> DataPlaneError {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            });
        let wire = error.to_wire(&ErrorScope {
            namespace: &self.name,
            entity,
            tracking_id: TrackingId::random(),
            now_unix_millis: now,
        });
        DataPlaneError {
            status: u16::try_from(wire.status.as_i32()).unwrap_or(500),
            detail: wire.description,
        }
    }
}
