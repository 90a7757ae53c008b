//! `EntityName`: an entity or rule name that compares case-insensitively, as Service Bus does.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A queue, topic, subscription or rule name.
///
/// Service Bus names are case-insensitive (`Orders` and `orders` are the same queue), so equality
/// and hashing ignore ASCII case while [`Display`](fmt::Display) keeps the spelling as written,
/// which is what error messages and attach echoes must show.
#[derive(Debug, Clone, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct EntityName(String);

impl EntityName {
    /// Wraps a name without checking its shape (addresses name entities that may not exist).
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `name` matches the Service Bus / emulator name pattern
    /// `^[A-Za-z0-9]$|^[A-Za-z0-9][\w-./]*[A-Za-z0-9]$` (with `\w` read as ASCII word characters).
    pub fn is_well_formed(name: &str) -> bool {
        let bytes = name.as_bytes();
        let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
            return false;
        };
        let inner_ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/');
        first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() && bytes.iter().all(inner_ok)
    }
}

impl PartialEq for EntityName {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Hash for EntityName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for byte in self.0.bytes() {
            state.write_u8(byte.to_ascii_lowercase());
        }
        state.write_u8(0xff);
    }
}

impl Ord for EntityName {
    /// Case-insensitive, like equality: the order entities are listed in.
    fn cmp(&self, other: &Self) -> Ordering {
        let mine = self.0.bytes().map(|b| b.to_ascii_lowercase());
        mine.cmp(other.0.bytes().map(|b| b.to_ascii_lowercase()))
    }
}

impl PartialOrd for EntityName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for EntityName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for EntityName {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn equality_and_hash_ignore_case_but_display_keeps_it() {
        let upper = EntityName::from("Orders.EU");
        let lower = EntityName::from("orders.eu");
        assert_eq!(upper, lower);
        let set: HashSet<_> = [upper.clone(), lower].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_eq!(upper.to_string(), "Orders.EU");
        assert_ne!(EntityName::from("orders"), EntityName::from("orders2"));
    }

    #[test]
    fn name_pattern() {
        for good in [
            "a",
            "7",
            "queue.1",
            "app-prop-filter-1",
            "a_b",
            "orders/eu",
            "Q9",
        ] {
            assert!(EntityName::is_well_formed(good), "{good}");
        }
        for bad in [
            "", "-a", "a-", ".a", "a.", "a b", "$cbs", "q/", "/q", "é", "a$b",
        ] {
            assert!(!EntityName::is_well_formed(bad), "{bad}");
        }
    }
}
