//! `NamespaceInfo` (§6.6): what `GET /$namespaceinfo` answers.

use super::common::DESCRIPTION_NAMESPACES;
use super::timestamp::Timestamp;
use super::xml_writer::XmlWriter;

/// The messaging tier a namespace reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MessagingSku {
    /// `Basic`.
    Basic,
    /// `Standard`.
    #[default]
    Standard,
    /// `Premium`.
    Premium,
}

impl MessagingSku {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            MessagingSku::Basic => "Basic",
            MessagingSku::Standard => "Standard",
            MessagingSku::Premium => "Premium",
        }
    }
}

/// The namespace's properties (the emulator's namespace is `sbemulatorns`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamespaceInfo {
    /// `Name`.
    pub name: String,
    /// `CreatedTime`.
    pub created_time: Timestamp,
    /// `ModifiedTime`.
    pub modified_time: Timestamp,
    /// `MessagingSKU`.
    pub messaging_sku: MessagingSku,
    /// `MessagingUnits` (Premium only).
    pub messaging_units: Option<u32>,
}

/// Writes a `NamespaceInfo` in the service's (alphabetical, DataContract) order.
pub(crate) fn encode(writer: &mut XmlWriter, namespace: &NamespaceInfo) {
    writer.start("NamespaceInfo", &DESCRIPTION_NAMESPACES);
    writer.leaf("CreatedTime", &namespace.created_time.to_precise_string());
    writer.leaf("MessagingSKU", namespace.messaging_sku.as_str());
    if let Some(units) = namespace.messaging_units {
        writer.leaf_display("MessagingUnits", units);
    }
    writer.leaf("ModifiedTime", &namespace.modified_time.to_precise_string());
    writer.leaf("Name", &namespace.name);
    writer.leaf("NamespaceType", "Messaging");
    writer.end("NamespaceInfo");
}
