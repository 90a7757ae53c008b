//! The namespace's rules as the broker holds them while it runs: one [`KeyRing`] shared by the
//! `$cbs` handler of every connection, the administration API and the binary, which replaces
//! the rules when the policy file is re-read. A replacement counts for every token presented
//! after it; a token already accepted keeps what it granted (until it expires, or its renewal
//! is refused). A connection signed in with SASL PLAIN has no renewal: it watches the ring
//! ([`changes`](KeyRing::changes)) and checks its credential again on every replacement.

use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;

use super::keys::SasKeys;

/// The current rules, shared: clones hold the same ring, so a [`replace`](Self::replace) is
/// seen by all of them.
#[derive(Clone)]
pub struct KeyRing {
    current: Arc<RwLock<Arc<SasKeys>>>,
    /// Marked at every replacement.
    replaced: Arc<watch::Sender<()>>,
}

impl Default for KeyRing {
    fn default() -> Self {
        Self::new(SasKeys::default())
    }
}

impl KeyRing {
    /// A ring holding `keys`.
    pub fn new(keys: SasKeys) -> Self {
        Self {
            current: Arc::new(RwLock::new(Arc::new(keys))),
            replaced: Arc::new(watch::channel(()).0),
        }
    }

    /// Wakes its holder at each later [`replace`](Self::replace).
    pub fn changes(&self) -> watch::Receiver<()> {
        self.replaced.subscribe()
    }

    /// The rules now.
    pub fn current(&self) -> Arc<SasKeys> {
        // A writer cannot panic half-way through swapping an Arc: a poisoned lock still holds
        // whole rules.
        let keys = self.current.read().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&keys)
    }

    /// Puts `keys` in place of the rules for every holder of the ring.
    pub fn replace(&self, keys: SasKeys) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(keys);
        self.replaced.send_replace(());
    }
}

/// Rings are equal when their current rules are.
impl PartialEq for KeyRing {
    fn eq(&self, other: &Self) -> bool {
        self.current() == other.current()
    }
}

/// Shows the current rules (key names and rights, never a key).
impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.current().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_is_seen_by_every_clone() {
        let ring = KeyRing::new(SasKeys::emulator());
        let held = ring.clone();
        assert!(held.current().accepts_published_key());
        ring.replace(SasKeys::new([("k", "a key of our own")]));
        assert!(!held.current().accepts_published_key());
        assert_eq!(held, ring);
        assert!(!format!("{held:?}").contains("a key of our own"));
    }

    #[test]
    fn a_replacement_wakes_the_watchers() {
        let ring = KeyRing::new(SasKeys::emulator());
        let changes = ring.clone().changes();
        assert!(!changes.has_changed().unwrap());
        ring.replace(SasKeys::emulator());
        assert!(changes.has_changed().unwrap());
    }
}
