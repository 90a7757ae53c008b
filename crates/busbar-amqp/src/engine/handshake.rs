//! The opening handshake of a server connection: protocol headers (§2.2), the SASL layer (§5.3)
//! and the exchange of `open` (§2.7.1).

use std::time::Duration;

use bytes::BytesMut;

use super::connection::{Connection, ConnectionState};
use super::event::Event;
use super::sasl::{OFFERED_MECHANISMS, SaslCredentials, SaslVerdict};
use crate::condition;
use crate::frame::{MIN_MAX_FRAME_SIZE, ProtocolHeader, encode_amqp_frame, encode_sasl_frame};
use crate::performatives::{
    AmqpError, Milliseconds, Open, Performative, SaslCode, SaslFrame, SaslInit, SaslMechanisms,
    SaslOutcome,
};
use crate::types::Symbol;

impl Connection {
    /// Answers the client's `sasl-init` (after [`Event::SaslInit`]).
    pub fn sasl_outcome(&mut self, verdict: SaslVerdict) {
        if self.state != ConnectionState::SaslInitReceived {
            return;
        }
        let outcome = SaslOutcome {
            code: match verdict {
                SaslVerdict::Ok => SaslCode::Ok,
                SaslVerdict::AuthFailed => SaslCode::Auth,
            },
            additional_data: None,
        };
        encode_sasl_frame(&SaslFrame::SaslOutcome(outcome), &mut self.outbox);
        match verdict {
            SaslVerdict::Ok => self.state = ConnectionState::SaslDone,
            SaslVerdict::AuthFailed => self.finish(Some(AmqpError::new(
                condition::UNAUTHORIZED_ACCESS,
                "SASL authentication failed",
            ))),
        }
    }

    /// Reads one protocol header; false when more bytes are needed or the connection ended.
    pub(crate) fn handle_header(&mut self, input: &mut BytesMut) -> bool {
        let header = match ProtocolHeader::decode(input) {
            Ok(None) => return false,
            Ok(Some(header)) => Some(header),
            Err(_) => None,
        };
        self.last_received = self.now;
        match (self.state, header) {
            (ConnectionState::Start, Some(ProtocolHeader::Sasl)) => {
                self.outbox
                    .extend_from_slice(&ProtocolHeader::Sasl.to_bytes());
                let mechanisms = SaslMechanisms {
                    sasl_server_mechanisms: OFFERED_MECHANISMS
                        .iter()
                        .map(|name| Symbol::from(*name))
                        .collect(),
                };
                encode_sasl_frame(&SaslFrame::SaslMechanisms(mechanisms), &mut self.outbox);
                self.sasl_used = true;
                self.state = ConnectionState::SaslMechanismsSent;
                true
            }
            (ConnectionState::Start, Some(ProtocolHeader::Amqp)) if !self.config.require_sasl => {
                self.outbox
                    .extend_from_slice(&ProtocolHeader::Amqp.to_bytes());
                self.state = ConnectionState::HeaderExchanged;
                true
            }
            (ConnectionState::SaslDone, Some(ProtocolHeader::Amqp)) => {
                self.outbox
                    .extend_from_slice(&ProtocolHeader::Amqp.to_bytes());
                self.state = ConnectionState::HeaderExchanged;
                true
            }
            _ => {
                // §2.2: answer with the header we support, then close the socket.
                let ours = if self.state == ConnectionState::Start && self.config.require_sasl {
                    ProtocolHeader::Sasl
                } else {
                    ProtocolHeader::Amqp
                };
                self.outbox.extend_from_slice(&ours.to_bytes());
                self.finish(Some(AmqpError::new(
                    condition::FRAMING_ERROR,
                    "unsupported protocol header",
                )));
                false
            }
        }
    }

    /// The handshake deadline passed: once the AMQP headers are exchanged the peer is told
    /// (`open`, then `close` with `amqp:resource-limit-exceeded`); before that the connection
    /// just ends and the socket is shut.
    pub(crate) fn handshake_expired(&mut self) {
        let error = AmqpError::new(
            condition::RESOURCE_LIMIT_EXCEEDED,
            format!(
                "handshake not completed within {:?}",
                self.config.handshake_timeout
            ),
        );
        if self.state == ConnectionState::HeaderExchanged {
            self.fail(error);
        } else {
            self.finish(Some(error));
        }
    }

    pub(crate) fn on_open(&mut self, open: Open) {
        if open.max_frame_size < MIN_MAX_FRAME_SIZE {
            self.fail(AmqpError::new(
                condition::INVALID_FIELD,
                format!(
                    "max-frame-size {} is below {MIN_MAX_FRAME_SIZE}",
                    open.max_frame_size
                ),
            ));
            return;
        }
        self.peer_max_frame_size = open.max_frame_size;
        self.peer_channel_max = open.channel_max;
        self.peer_idle_time_out = open
            .idle_time_out
            .filter(|millis| millis.0 > 0)
            .map(|millis| Duration::from_millis(u64::from(millis.0)));
        self.send_open();
        self.state = ConnectionState::Opened;
        self.handshake_deadline = None;
        self.events.push_back(Event::ConnectionOpened {
            open: Box::new(open),
            sasl_used: self.sasl_used,
        });
    }

    pub(crate) fn send_open(&mut self) {
        let open = Open {
            container_id: self.config.container_id.clone(),
            hostname: None,
            max_frame_size: self.decoder.max_frame_size(),
            channel_max: self.config.channel_max,
            idle_time_out: Some(Milliseconds(
                u32::try_from(self.config.idle_time_out.as_millis()).unwrap_or(u32::MAX),
            )),
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: self.config.properties.clone(),
        };
        encode_amqp_frame(0, &Performative::Open(open), &[], &mut self.outbox);
    }

    pub(crate) fn on_sasl_init(&mut self, init: SaslInit) {
        self.state = ConnectionState::SaslInitReceived;
        self.events.push_back(Event::SaslInit {
            credentials: SaslCredentials::parse(
                init.mechanism.as_str(),
                init.initial_response.unwrap_or_default(),
            ),
            hostname: init.hostname,
        });
    }
}
