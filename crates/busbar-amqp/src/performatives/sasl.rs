//! SASL frames (§5.3.3): mechanisms, init, challenge, response, outcome.

use bytes::Bytes;

use super::SaslCode;
use crate::types::{Symbol, composite};

/// The SASL mechanism that needs no credentials.
pub const ANONYMOUS: &str = "ANONYMOUS";
/// The mechanism name the .NET Service Bus SDK requires (an anonymous handshake followed by CBS).
pub const MSSBCBS: &str = "MSSBCBS";

composite! {
    /// Advertise available SASL mechanisms (§5.3.3.1).
    SaslMechanisms = 0x40, "amqp:sasl-mechanisms:list" {
        /// Supported SASL mechanisms.
        sasl_server_mechanisms: Vec<Symbol> = required,
    }
}

composite! {
    /// Initiate SASL exchange (§5.3.3.2).
    SaslInit = 0x41, "amqp:sasl-init:list" {
        /// Selected security mechanism.
        mechanism: Symbol = required,
        /// Security response data.
        initial_response: Option<Bytes> = optional,
        /// The name of the target host.
        hostname: Option<String> = optional,
    }
}

composite! {
    /// Security mechanism challenge (§5.3.3.3).
    SaslChallenge = 0x42, "amqp:sasl-challenge:list" {
        /// Security challenge data.
        challenge: Bytes = required,
    }
}

composite! {
    /// Security mechanism response (§5.3.3.4).
    SaslResponse = 0x43, "amqp:sasl-response:list" {
        /// Security response data.
        response: Bytes = required,
    }
}

composite! {
    /// Indicates the outcome of the SASL dialog (§5.3.3.5).
    SaslOutcome = 0x44, "amqp:sasl-outcome:list" {
        /// Indicates the outcome of the sasl dialog.
        code: SaslCode = required,
        /// Additional data as specified in RFC-4422.
        additional_data: Option<Bytes> = optional,
    }
}
