//! Link termini (§3.5.3–3.5.4): `Source` (with its filter set) and `Target`, and the
//! transaction `Coordinator` (§4.5.1) a link may target instead of a node.

use bytes::BufMut;

use super::{DeliveryState, Seconds, TerminusDurability};
use crate::error::DecodeError;
use crate::types::{Field, Fields, Symbol, Value, composite};

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

composite! {
    /// The target of a link that declares and discharges transactions (§4.5.1).
    Coordinator = 0x30, "amqp:coordinator:list" {
        /// The transaction capabilities the controller desires.
        capabilities: Option<Vec<Symbol>> = optional,
    }
}

/// What an attach targets: a node, or the transaction coordinator.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkTarget {
    /// A node (an address).
    Node(Target),
    /// The transaction coordinator.
    Coordinator(Coordinator),
}

impl From<Target> for LinkTarget {
    fn from(target: Target) -> Self {
        Self::Node(target)
    }
}

impl LinkTarget {
    /// The node's address as text; the coordinator has none.
    pub fn address_str(&self) -> Option<&str> {
        match self {
            Self::Node(target) => target.address_str(),
            Self::Coordinator(_) => None,
        }
    }
}

impl Field for LinkTarget {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        let is_coordinator = matches!(&value, Value::Described(described)
            if described.descriptor.matches(0x30, "amqp:coordinator:list"));
        if is_coordinator {
            Coordinator::from_value(value).map(Self::Coordinator)
        } else {
            Target::from_value(value).map(Self::Node)
        }
    }
    fn field_size(&self) -> usize {
        match self {
            Self::Node(target) => target.field_size(),
            Self::Coordinator(coordinator) => coordinator.field_size(),
        }
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        match self {
            Self::Node(target) => target.encode_field(buf),
            Self::Coordinator(coordinator) => coordinator.encode_field(buf),
        }
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
