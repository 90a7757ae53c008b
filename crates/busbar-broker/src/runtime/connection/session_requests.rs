//! Session operations on `$management`: the entity task runs them for the session link that
//! `associated-link-name` names on this connection (the holder of the session lock).

use busbar_amqp::engine::{Connection, LinkId};

use super::{BrokerConnection, LinkKind};
use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, ReceiverKey, post_entity};
use crate::runtime::management::{OperationResult, SessionOperation};
use crate::runtime::registry::EntityHandle;
use crate::runtime::request::Request;

/// The application property naming the receive link a management request acts for.
const ASSOCIATED_LINK_NAME: &str = "associated-link-name";

impl BrokerConnection {
    /// The receive link a management request acts for (`associated-link-name`).
    pub(super) fn associated_receiver(&self, request: &Request) -> Option<ReceiverKey> {
        request
            .text_property(ASSOCIATED_LINK_NAME)
            .and_then(|name| {
                self.links.iter().find_map(|(id, kind)| match kind {
                    LinkKind::Receiver(receiver) if receiver.name == name => Some(*id),
                    _ => None,
                })
            })
            .map(|id| self.receiver_key(id))
    }

    /// Runs a parsed session operation (or answers its parse error) on `entity`.
    pub(super) fn session_request(
        &mut self,
        link: LinkId,
        request: Request,
        entity: &EntityHandle,
        parsed: Result<SessionOperation, BrokerError>,
        connection: &mut Connection,
    ) {
        let operation = match parsed {
            Ok(operation) => operation,
            Err(error) => {
                self.respond_management(link, &request, &entity.path, Err(error), connection);
                return;
            }
        };
        let receiver = self.associated_receiver(&request);
        let mailbox = self.mailbox.clone();
        let path = entity.path.clone();
        post_entity(
            &entity.inbox,
            EntityCommand::Session {
                receiver,
                operation,
                reply: Box::new(move |result: Result<OperationResult, BrokerError>| {
                    mailbox.post(ConnectionCommand::Respond {
                        request_link: link,
                        request: Box::new(request),
                        entity: path,
                        result,
                    });
                }),
            },
        );
    }
}
