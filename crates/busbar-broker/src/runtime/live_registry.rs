//! The namespace's entities as they are now. The registry is replaced whole when an entity is
//! created, changed or deleted at run time; readers take the current one per operation (an `Arc`
//! clone), so a send never waits behind a change and always sees one consistent namespace.

use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;

use super::registry::Registry;

/// The current registry, replaceable while the broker runs.
#[derive(Debug)]
pub(crate) struct LiveRegistry {
    current: RwLock<Arc<Registry>>,
    /// Marked at every change (connections signed in with an entity rule's key watch it).
    changed: watch::Sender<()>,
}

impl LiveRegistry {
    /// The namespace as it starts.
    pub(crate) fn new(registry: Registry) -> Self {
        Self {
            current: RwLock::new(Arc::new(registry)),
            changed: watch::channel(()).0,
        }
    }

    /// The registry as it is now.
    pub(crate) fn current(&self) -> Arc<Registry> {
        // A panic elsewhere cannot leave the registry half-replaced: the swap is one assignment.
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Applies `change` to a copy of the registry and makes the copy current; changes are
    /// serialised, so none is lost.
    pub(crate) fn change<R>(&self, change: impl FnOnce(&mut Registry) -> R) -> R {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = Registry::clone(&current);
        let result = change(&mut next);
        *current = Arc::new(next);
        self.changed.send_replace(());
        result
    }

    /// Wakes its holder at each later change.
    pub(crate) fn changes(&self) -> watch::Receiver<()> {
        self.changed.subscribe()
    }
}
