//! Session receive links (§6): the attach is held while the entity task accepts a session, then
//! answered with the locked session and its locked-until (§6.2) or refused (§6.3); a link whose
//! session lock expired is detached with `com.microsoft:session-lock-lost` (§6.4).

use busbar_amqp::engine::{AttachReply, AttachRequest, Connection, LinkId};
use busbar_amqp::performatives::AmqpError;
use busbar_amqp::types::{Descriptor, Fields, Value};
use busbar_core::Timestamp;

use super::{BrokerConnection, LinkKind, ReceiveLink};
use crate::errors::BrokerError;
use crate::runtime::mailbox::{EntityCommand, post_entity};

/// The source filter a session receiver sets: the session id, or null for the next one.
pub(super) const SESSION_FILTER: &str = "com.microsoft:session-filter";
/// The attach property with the session lock's end, in .NET ticks.
const LOCKED_UNTIL_UTC: &str = "com.microsoft:locked-until-utc";
/// The attach property bounding the wait for the next available session, in milliseconds.
const TIMEOUT: &str = "com.microsoft:timeout";
/// The wait for the next available session when the client sets none (the service's 65 s).
const DEFAULT_WAIT_MILLIS: i64 = 65_000;
/// .NET ticks (100 ns since 0001-01-01) at the Unix epoch.
const TICKS_AT_UNIX_EPOCH: i64 = 621_355_968_000_000_000;

/// A session receive link whose attach waits for the entity to lock a session.
#[derive(Debug)]
pub(super) struct AcceptingSession {
    /// The link as it will be once attached.
    pub(super) receiver: ReceiveLink,
    /// Our attach, to complete with the session and its locked-until.
    pub(super) reply: AttachReply,
    /// The descriptor of the client's session filter, which the echo carries too.
    pub(super) filter_descriptor: Option<Descriptor>,
}

/// Whether the attach asks for a session (its source carries a session filter).
pub(super) fn is_session_receiver(request: &AttachRequest) -> bool {
    session_filter(request).is_some()
}

/// The session filter's value, when the source has one.
fn session_filter(request: &AttachRequest) -> Option<&Value> {
    request
        .source
        .as_ref()?
        .filter
        .as_ref()?
        .get(SESSION_FILTER)
}

/// The descriptor of the client's session filter, when it sent a described value (go-amqp sends
/// the numeric code; the other SDKs a plain value).
pub(super) fn session_filter_descriptor(request: &AttachRequest) -> Option<Descriptor> {
    match session_filter(request) {
        Some(Value::Described(described)) => Some(described.descriptor.clone()),
        _ => None,
    }
}

/// The echoed filter value naming the locked session, in the form the client used, as Service
/// Bus does: go-amqp refuses a bare value there (filter-set values are described, AMQP §3.5.8),
/// while rhea (JS) hands a described one to the SDK undecoded, which then fails to match it.
fn session_filter_echo(descriptor: Option<Descriptor>, session: String) -> Value {
    let session = Value::String(session);
    match descriptor {
        Some(descriptor) => Value::described(descriptor, session),
        None => session,
    }
}

/// The session a receiver names: a string, symbol or described string; `None` (null or
/// anything else) asks for the next available session.
fn named_session(request: &AttachRequest) -> Option<String> {
    let mut value = session_filter(request)?;
    if let Value::Described(described) = value {
        value = &described.value;
    }
    match value {
        Value::String(id) => Some(id.clone()),
        Value::Symbol(id) => Some(id.as_str().to_owned()),
        _ => None,
    }
}

/// How long the client lets us wait for the next available session.
fn wait_millis(request: &AttachRequest) -> i64 {
    let timeout = request.properties.as_ref().and_then(|p| p.get(TIMEOUT));
    match timeout {
        Some(Value::Uint(ms)) => i64::from(*ms),
        Some(Value::Ulong(ms)) => i64::try_from(*ms).unwrap_or(i64::MAX),
        Some(Value::Int(ms)) => i64::from(*ms).max(0),
        Some(Value::Long(ms)) => (*ms).max(0),
        _ => DEFAULT_WAIT_MILLIS,
    }
}

/// `unix_millis` as .NET ticks.
fn dotnet_ticks(at: Timestamp) -> i64 {
    at.as_millis()
        .saturating_mul(10_000)
        .saturating_add(TICKS_AT_UNIX_EPOCH)
}

impl BrokerConnection {
    /// Holds a session receiver's attach and asks its entity for a session.
    pub(super) fn hold_session_attach(
        &mut self,
        link: LinkId,
        request: &AttachRequest,
        pending: Box<AcceptingSession>,
    ) {
        let now = self.now();
        post_entity(
            &pending.receiver.entity.inbox,
            EntityCommand::AcceptSession {
                receiver: self.receiver_key(link),
                session: named_session(request),
                wait_until: Timestamp(now.as_millis().saturating_add(wait_millis(request))),
                mailbox: self.mailbox.clone(),
            },
        );
        self.links.insert(link, LinkKind::AcceptingSession(pending));
    }

    /// The entity locked a session for the link: answer its attach (§6.2).
    pub(super) fn session_accepted(
        &mut self,
        link: LinkId,
        session: String,
        locked_until: Timestamp,
        connection: &mut Connection,
    ) {
        let Some(LinkKind::AcceptingSession(pending)) = self.links.remove(&link) else {
            // The link left while waiting; its detach released the session.
            return;
        };
        let AcceptingSession {
            receiver,
            mut reply,
            filter_descriptor,
        } = *pending;
        if let Some(source) = reply.source.as_mut() {
            let mut filter = Fields::default();
            filter.push(
                SESSION_FILTER,
                session_filter_echo(filter_descriptor, session),
            );
            source.filter = Some(filter);
        }
        let mut properties = Fields::default();
        properties.push(LOCKED_UNTIL_UTC, Value::Long(dotnet_ticks(locked_until)));
        reply.properties = Some(properties);
        let inbox = receiver.entity.inbox.clone();
        self.links.insert(link, LinkKind::Receiver(receiver));
        if connection.accept_attach(link, reply).is_err() {
            self.links.remove(&link);
            post_entity(&inbox, EntityCommand::Detach(self.receiver_key(link)));
        }
    }

    /// The entity found no session for the link: refuse its attach (§6.3).
    pub(super) fn session_refused(
        &mut self,
        link: LinkId,
        error: &BrokerError,
        connection: &mut Connection,
    ) {
        let Some(LinkKind::AcceptingSession(pending)) = self.links.remove(&link) else {
            return;
        };
        let wire = self.wire(error, &pending.receiver.entity.path);
        tracing::info!(connection = self.id, entity = %pending.receiver.entity.path, condition = wire.condition, "session attach refused");
        // The link may already be gone; then there is nothing to refuse.
        let _ = connection.refuse_attach(link, AmqpError::new(wire.condition, wire.description));
    }

    /// The entity the link reads ended it (deleted, or disabled for receives): detach it with
    /// `error`, or refuse its attach if it still waits for a session.
    pub(super) fn receiver_ended(
        &mut self,
        link: LinkId,
        error: &BrokerError,
        connection: &mut Connection,
    ) {
        let path = match self.links.get(&link) {
            Some(LinkKind::AcceptingSession(_)) => {
                self.session_refused(link, error, connection);
                return;
            }
            Some(LinkKind::Receiver(receiver)) => receiver.entity.path.clone(),
            _ => return,
        };
        let wire = self.wire(error, &path);
        self.forget(link);
        let _ = connection.detach(link, Some(AmqpError::new(wire.condition, wire.description)));
    }

    /// The link's session lock expired: detach it (§6.4).
    pub(super) fn session_lock_lost(&mut self, link: LinkId, connection: &mut Connection) {
        let Some(LinkKind::Receiver(receiver)) = self.links.get(&link) else {
            return;
        };
        let wire = self.wire(&BrokerError::SessionLockLost, &receiver.entity.path);
        self.forget(link);
        let _ = connection.detach(link, Some(AmqpError::new(wire.condition, wire.description)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_filter_is_echoed_in_the_form_the_client_sent() {
        let go_amqp = Descriptor::Code(0x0000_0137_0000_000c);
        assert_eq!(
            session_filter_echo(Some(go_amqp.clone()), "s1".into()),
            Value::described(go_amqp, Value::String("s1".into()))
        );
        assert_eq!(
            session_filter_echo(None, "s1".into()),
            Value::String("s1".into())
        );
    }

    #[test]
    fn locked_until_is_in_dotnet_ticks() {
        // 2023-11-14T22:13:20Z, as .NET's DateTime(ticks) reads it.
        assert_eq!(
            dotnet_ticks(Timestamp(1_700_000_000_000)),
            638_355_968_000_000_000
        );
    }
}
