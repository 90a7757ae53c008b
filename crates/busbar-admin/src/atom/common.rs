//! Pieces the queue, topic and subscription descriptions share: entity status, authorization
//! rules, forwarding targets, and how a sent description overrides stored properties.

use super::element_values::{invalid, string, timestamp};
use super::error::AtomError;
use super::namespaces::{SERVICE_BUS, XML_SCHEMA_INSTANCE};
use super::timestamp::Timestamp;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// An entity's `Status` (§7). The first four are what clients set; the rest are states the
/// service reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EntityStatus {
    /// Sends and receives allowed.
    #[default]
    Active,
    /// Neither sends nor receives.
    Disabled,
    /// Receives only.
    SendDisabled,
    /// Sends only.
    ReceiveDisabled,
    /// Being created.
    Creating,
    /// Being deleted.
    Deleting,
    /// Being renamed.
    Renaming,
    /// Being restored.
    Restoring,
    /// Unknown.
    Unknown,
}

impl EntityStatus {
    const ALL: [EntityStatus; 9] = [
        EntityStatus::Active,
        EntityStatus::Disabled,
        EntityStatus::SendDisabled,
        EntityStatus::ReceiveDisabled,
        EntityStatus::Creating,
        EntityStatus::Deleting,
        EntityStatus::Renaming,
        EntityStatus::Restoring,
        EntityStatus::Unknown,
    ];

    /// The wire name (`SendDisabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            EntityStatus::Active => "Active",
            EntityStatus::Disabled => "Disabled",
            EntityStatus::SendDisabled => "SendDisabled",
            EntityStatus::ReceiveDisabled => "ReceiveDisabled",
            EntityStatus::Creating => "Creating",
            EntityStatus::Deleting => "Deleting",
            EntityStatus::Renaming => "Renaming",
            EntityStatus::Restoring => "Restoring",
            EntityStatus::Unknown => "Unknown",
        }
    }

    /// The status a wire name denotes, ignoring ASCII case.
    pub fn parse(text: &str) -> Option<EntityStatus> {
        let text = text.trim();
        EntityStatus::ALL
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(text))
    }

    pub(crate) fn decode(element: &Element) -> Result<EntityStatus, AtomError> {
        EntityStatus::parse(element.text())
            .ok_or_else(|| invalid(element, "Active, Disabled, SendDisabled or ReceiveDisabled"))
    }
}

/// One right a shared access authorization rule grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessRight {
    /// `Manage`.
    Manage,
    /// `Send`.
    Send,
    /// `Listen`.
    Listen,
}

impl AccessRight {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessRight::Manage => "Manage",
            AccessRight::Send => "Send",
            AccessRight::Listen => "Listen",
        }
    }

    fn decode(element: &Element) -> Result<AccessRight, AtomError> {
        [AccessRight::Manage, AccessRight::Send, AccessRight::Listen]
            .into_iter()
            .find(|right| right.as_str().eq_ignore_ascii_case(element.text().trim()))
            .ok_or_else(|| invalid(element, "Manage, Send or Listen"))
    }
}

/// An entity-level `SharedAccessAuthorizationRule` (§6.2), kept and echoed as sent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AuthorizationRule {
    /// `KeyName`.
    pub key_name: String,
    /// `PrimaryKey`.
    pub primary_key: String,
    /// `SecondaryKey`.
    pub secondary_key: String,
    /// `Rights`.
    pub rights: Vec<AccessRight>,
    /// `CreatedTime`, if known.
    pub created_time: Option<Timestamp>,
    /// `ModifiedTime`, if known.
    pub modified_time: Option<Timestamp>,
}

const SHARED_ACCESS_RULE_TYPE: &str = "SharedAccessAuthorizationRule";

impl AuthorizationRule {
    /// The rules inside an `AuthorizationRules` element.
    pub(crate) fn decode_all(rules: &Element) -> Result<Vec<AuthorizationRule>, AtomError> {
        rules
            .children_in(SERVICE_BUS)
            .filter(|rule| rule.local_name() == "AuthorizationRule")
            .map(AuthorizationRule::decode)
            .collect()
    }

    fn decode(element: &Element) -> Result<AuthorizationRule, AtomError> {
        match element.schema_type() {
            Some(SHARED_ACCESS_RULE_TYPE) | None => {}
            Some(other) => {
                return Err(AtomError::invalid(
                    "AuthorizationRule",
                    other,
                    "SharedAccessAuthorizationRule",
                ));
            }
        }
        let mut rule = AuthorizationRule::default();
        for field in element.children_in(SERVICE_BUS) {
            match field.local_name() {
                "KeyName" => rule.key_name = string(field),
                "PrimaryKey" => rule.primary_key = string(field),
                "SecondaryKey" => rule.secondary_key = string(field),
                "CreatedTime" => rule.created_time = Some(timestamp(field)?),
                "ModifiedTime" => rule.modified_time = Some(timestamp(field)?),
                "Rights" => {
                    rule.rights = field
                        .children_in(SERVICE_BUS)
                        .filter(|right| right.local_name() == "AccessRights")
                        .map(AccessRight::decode)
                        .collect::<Result<_, _>>()?;
                }
                // ClaimType / ClaimValue are fixed for SAS rules.
                _ => {}
            }
        }
        Ok(rule)
    }

    /// `<AuthorizationRules>…</AuthorizationRules>`, in .NET's element order.
    pub(crate) fn encode_all(writer: &mut XmlWriter, rules: &[AuthorizationRule]) {
        writer.start("AuthorizationRules", &[]);
        for rule in rules {
            writer.start("AuthorizationRule", &[("i:type", SHARED_ACCESS_RULE_TYPE)]);
            writer.leaf("ClaimType", "SharedAccessKey");
            writer.leaf("ClaimValue", "None");
            writer.start("Rights", &[]);
            for right in &rule.rights {
                writer.leaf("AccessRights", right.as_str());
            }
            writer.end("Rights");
            if let Some(created) = rule.created_time {
                writer.leaf("CreatedTime", &created.to_precise_string());
            }
            if let Some(modified) = rule.modified_time {
                writer.leaf("ModifiedTime", &modified.to_precise_string());
            }
            writer.leaf("KeyName", &rule.key_name);
            writer.leaf("PrimaryKey", &rule.primary_key);
            writer.leaf("SecondaryKey", &rule.secondary_key);
            writer.end("AuthorizationRule");
        }
        writer.end("AuthorizationRules");
    }
}

/// The entity a `ForwardTo` / `ForwardDeadLetteredMessagesTo` value names. Clients send it as
/// `sb://host:port/q` (Python, JS), `https://host/q` (Java), `http://host/q` (.NET) or `q` (Go),
/// §0 item 6: any `scheme://host[:port]/` is dropped, and a trailing `/`.
pub fn forward_target_entity(value: &str) -> &str {
    let value = value.trim();
    let path = match value.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, path)| path),
        None => value,
    };
    path.trim_end_matches('/')
}

/// Overrides a stored property with a sent one, if it was sent.
pub(crate) fn override_with<T>(stored: &mut T, sent: Option<T>) {
    if let Some(value) = sent {
        *stored = value;
    }
}

/// Overrides an optional text property with a sent one, if it was sent; a blank value sent
/// removes it.
pub(crate) fn override_text(stored: &mut Option<String>, sent: Option<String>) {
    if let Some(value) = sent {
        *stored = (!value.trim().is_empty()).then_some(value);
    }
}

/// The `xmlns` and `xmlns:i` declarations every description carries in responses.
pub(crate) const DESCRIPTION_NAMESPACES: [(&str, &str); 2] =
    [("xmlns", SERVICE_BUS), ("xmlns:i", XML_SCHEMA_INSTANCE)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_target_spellings_name_the_same_entity() {
        for value in [
            "sb://localhost:5300/q-min",
            "https://localhost/q-min",
            "http://localhost/q-min/",
            "q-min",
            " sb://ns.servicebus.windows.net/q-min ",
        ] {
            assert_eq!(forward_target_entity(value), "q-min", "{value}");
        }
        assert_eq!(
            forward_target_entity("sb://host/topic/Subscriptions/s"),
            "topic/Subscriptions/s"
        );
        assert_eq!(forward_target_entity("sb://host"), "");
    }

    #[test]
    fn status_parses_any_case() {
        assert_eq!(
            EntityStatus::parse("senddisabled"),
            Some(EntityStatus::SendDisabled)
        );
        assert_eq!(EntityStatus::parse("Paused"), None);
    }
}
