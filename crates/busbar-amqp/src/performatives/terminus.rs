//! Link termini (§3.5.3–3.5.4): `Source` (with its filter set) and `Target`.

use super::{DeliveryState, Seconds, TerminusDurability};
use crate::types::{Fields, Symbol, Value, composite};

/// The default `expiry-policy` of a terminus.
pub const SESSION_END: &str = "session-end";

composite! {
    /// The source of a link (§3.5.3).
    Source = 0x28, "amqp:source:list" {
        /// The address of the source (a string for Service Bus; any type on the wire).
        address: Option<Value> = optional,
        /// Which terminus state is durable.
        durable: TerminusDurability = default(TerminusDurability::None),
        /// When expiry of the terminus starts.
        expiry_policy: Symbol = default(Symbol::from(SESSION_END)),
        /// Duration that an expiring source will be retained.
        timeout: Seconds = default(Seconds(0)),
        /// Request dynamic creation of a remote node.
        dynamic: bool = default(false),
        /// Properties of the dynamically created node.
        dynamic_node_properties: Option<Fields> = optional,
        /// The distribution mode of the link.
        distribution_mode: Option<Symbol> = optional,
        /// A set of predicates to filter the messages admitted onto the link.
        filter: Option<Fields> = optional,
        /// Default outcome for unsettled transfers.
        default_outcome: Option<DeliveryState> = optional,
        /// Descriptors for the outcomes that can be chosen on this link.
        outcomes: Option<Vec<Symbol>> = optional,
        /// The extension capabilities the sender supports or desires.
        capabilities: Option<Vec<Symbol>> = optional,
    }
}

composite! {
    /// The target of a link (§3.5.4).
    Target = 0x29, "amqp:target:list" {
        /// The address of the target.
        address: Option<Value> = optional,
        /// Which terminus state is durable.
        durable: TerminusDurability = default(TerminusDurability::None),
        /// When expiry of the terminus starts.
        expiry_policy: Symbol = default(Symbol::from(SESSION_END)),
        /// Duration that an expiring target will be retained.
        timeout: Seconds = default(Seconds(0)),
        /// Request dynamic creation of a remote node.
        dynamic: bool = default(false),
        /// Properties of the dynamically created node.
        dynamic_node_properties: Option<Fields> = optional,
        /// The extension capabilities the sender supports or desires.
        capabilities: Option<Vec<Symbol>> = optional,
    }
}

impl Source {
    /// A source with this address and every other field at its default.
    pub fn with_address(address: impl Into<Value>) -> Self {
        Self {
            address: Some(address.into()),
            durable: TerminusDurability::None,
            expiry_policy: Symbol::from(SESSION_END),
            timeout: Seconds(0),
            dynamic: false,
            dynamic_node_properties: None,
            distribution_mode: None,
            filter: None,
            default_outcome: None,
            outcomes: None,
            capabilities: None,
        }
    }

    /// The address as text, when it is a string or symbol.
    pub fn address_str(&self) -> Option<&str> {
        address_str(self.address.as_ref())
    }
}

impl Target {
    /// A target with this address and every other field at its default.
    pub fn with_address(address: impl Into<Value>) -> Self {
        Self {
            address: Some(address.into()),
            durable: TerminusDurability::None,
            expiry_policy: Symbol::from(SESSION_END),
            timeout: Seconds(0),
            dynamic: false,
            dynamic_node_properties: None,
            capabilities: None,
        }
    }

    /// The address as text, when it is a string or symbol.
    pub fn address_str(&self) -> Option<&str> {
        address_str(self.address.as_ref())
    }
}

fn address_str(address: Option<&Value>) -> Option<&str> {
    match address? {
        Value::String(s) => Some(s),
        Value::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}
