//! The HTTP data plane on the admin port: which requests are its operations (a pure function
//! of the method and the path, tried before the administration API's routes), and answering
//! them through [`DataPlane`](crate::data_plane::DataPlane) (`answer`).
//!
//! The paths end in `messages`: `POST /{entity}/messages` sends, `POST` / `DELETE` of
//! `/{entity}/messages/head` receive (peek-lock / receive-and-delete), and `DELETE` / `PUT` /
//! `POST` of `/{entity}/messages/{sequence or message-id}/{lock token}` complete, unlock and
//! renew. `{entity}` is a queue, a topic (send only), `{topic}/Subscriptions/{subscription}`,
//! or any of them with `/$DeadLetterQueue`. As in the service, those shapes are the data
//! plane's even where an entity name could spell them.

mod answer;

pub(crate) use answer::{DataExchange, answer};
use hyper::Method;

use crate::atom::percent_decode;
use crate::auth::Right;
use crate::data_plane::{LockAction, ReceiveMode};

/// A data-plane request: the entity's path (decoded) and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataRequest {
    /// `queue`, `topic/Subscriptions/subscription`, … as the path spells it.
    pub(crate) entity: String,
    /// The operation.
    pub(crate) operation: DataOperation,
}

/// A data-plane operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DataOperation {
    /// `POST …/messages`.
    Send,
    /// `POST` / `DELETE` of `…/messages/head`.
    Receive(ReceiveMode),
    /// `DELETE` / `PUT` / `POST` of `…/messages/{id}/{lock token}`; the token as sent.
    Lock {
        /// The lock token's text (a GUID when well formed).
        token: String,
        /// Complete, unlock or renew.
        action: LockAction,
    },
}

impl DataOperation {
    /// The right it needs: Send to send, Listen to receive and settle.
    pub(crate) fn right(&self) -> Right {
        match self {
            DataOperation::Send => Right::Send,
            DataOperation::Receive(_) | DataOperation::Lock { .. } => Right::Listen,
        }
    }
}

/// The data-plane request `method` on `path` (raw, percent-encoded) asks for, if it is one.
pub(crate) fn route(method: &Method, path: &str) -> Option<DataRequest> {
    let path = path.strip_prefix('/').unwrap_or(path);
    let path = path.strip_suffix('/').unwrap_or(path);
    let segments: Vec<String> = path.split('/').map(percent_decode).collect();
    let is_messages = |segment: &String| segment.eq_ignore_ascii_case("messages");
    let (entity, operation) = match segments.as_slice() {
        [entity @ .., last] if is_messages(last) && *method == Method::POST => {
            (entity, DataOperation::Send)
        }
        [entity @ .., messages, head]
            if is_messages(messages) && head.eq_ignore_ascii_case("head") =>
        {
            let mode = match *method {
                Method::POST => ReceiveMode::PeekLock,
                Method::DELETE => ReceiveMode::ReceiveAndDelete,
                _ => return None,
            };
            (entity, DataOperation::Receive(mode))
        }
        [entity @ .., messages, _id, token] if is_messages(messages) => {
            let action = match *method {
                Method::DELETE => LockAction::Complete,
                Method::PUT => LockAction::Unlock,
                Method::POST => LockAction::Renew,
                _ => return None,
            };
            let token = token.clone();
            (entity, DataOperation::Lock { token, action })
        }
        _ => return None,
    };
    if entity.is_empty() || entity.iter().any(String::is_empty) {
        return None;
    }
    Some(DataRequest {
        entity: entity.join("/"),
        operation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(entity: &str, operation: DataOperation) -> Option<DataRequest> {
        Some(DataRequest {
            entity: entity.into(),
            operation,
        })
    }

    #[test]
    fn sends_and_receives() {
        assert_eq!(
            route(&Method::POST, "/q/messages"),
            request("q", DataOperation::Send)
        );
        assert_eq!(
            route(&Method::POST, "/t/Messages/"),
            request("t", DataOperation::Send)
        );
        assert_eq!(
            route(&Method::POST, "/q/messages/head"),
            request("q", DataOperation::Receive(ReceiveMode::PeekLock))
        );
        assert_eq!(
            route(&Method::DELETE, "/t/subscriptions/s/messages/head"),
            request(
                "t/subscriptions/s",
                DataOperation::Receive(ReceiveMode::ReceiveAndDelete)
            )
        );
        assert_eq!(
            route(&Method::POST, "/q/%24DeadLetterQueue/messages/head"),
            request(
                "q/$DeadLetterQueue",
                DataOperation::Receive(ReceiveMode::PeekLock)
            )
        );
    }

    #[test]
    fn settles_by_lock_token() {
        let token = "0d9c2ff6-1a25-4b64-a7a7-b44d5f3f6a60";
        for (method, action) in [
            (Method::DELETE, LockAction::Complete),
            (Method::PUT, LockAction::Unlock),
            (Method::POST, LockAction::Renew),
        ] {
            assert_eq!(
                route(&method, &format!("/q/messages/7/{token}")),
                request(
                    "q",
                    DataOperation::Lock {
                        token: token.into(),
                        action
                    }
                )
            );
        }
    }

    #[test]
    fn leaves_everything_else_to_the_administration_api() {
        for (method, path) in [
            (Method::GET, "/q/messages"),
            (Method::PUT, "/q/messages"),
            (Method::GET, "/q/messages/head"),
            (Method::PUT, "/q/messages/head"),
            (Method::GET, "/q/messages/1/x"),
            (Method::POST, "/messages"),
            (Method::POST, "//messages"),
            (Method::PUT, "/q"),
            (Method::GET, "/$Resources/Queues"),
        ] {
            assert_eq!(route(&method, path), None, "{method} {path}");
        }
    }
}
