//! The memory budget: one byte count shared by every entity of a broker, so that the messages
//! they hold together stay within a limit. Each sub-queue charges its messages' bytes (encoded,
//! plus their bookkeeping) to the budget through a [`Charge`] as they are inserted and gives them
//! back as they are removed; a sub-queue dropped (an entity deleted, a broker stopped) gives
//! back all it held, and a clone charges its own copy, so the count is right however an entity
//! ends.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A broker-wide limit on the bytes of messages held in memory, shared by cloning. Enqueues are
/// refused ([`CoreError::MemoryBudgetExceeded`](crate::CoreError::MemoryBudgetExceeded)) once
/// the bytes held have reached the limit; like the size quota, the last batch accepted may go
/// past it.
#[derive(Clone)]
pub struct MemoryBudget(Arc<Shared>);

struct Shared {
    used: AtomicU64,
    limit: u64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes, nothing held yet.
    #[must_use]
    pub fn new(limit: u64) -> MemoryBudget {
        MemoryBudget(Arc::new(Shared {
            used: AtomicU64::new(0),
            limit,
        }))
    }

    /// A budget that refuses nothing (it still counts).
    #[must_use]
    pub fn unlimited() -> MemoryBudget {
        MemoryBudget::new(u64::MAX)
    }

    /// Bytes held now, by every entity charging this budget.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.0.used.load(Ordering::Relaxed)
    }

    /// The limit in bytes.
    #[must_use]
    pub fn limit(&self) -> u64 {
        self.0.limit
    }

    /// Whether the bytes held have reached the limit.
    #[must_use]
    pub fn is_exhausted(&self) -> bool {
        self.used() >= self.limit()
    }

    fn add(&self, bytes: u64) {
        self.0.used.fetch_add(bytes, Ordering::Relaxed);
    }

    fn sub(&self, bytes: u64) {
        self.0.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("used", &self.used())
            .field("limit", &self.limit())
            .finish()
    }
}

/// The bytes one owner (a sub-queue) has charged to a budget: given back when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: MemoryBudget,
    bytes: u64,
}

impl Charge {
    /// Nothing charged yet to `budget`.
    pub(crate) fn new(budget: MemoryBudget) -> Charge {
        Charge { budget, bytes: 0 }
    }

    pub(crate) fn budget(&self) -> &MemoryBudget {
        &self.budget
    }

    /// Bytes charged by this owner.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(crate) fn add(&mut self, bytes: u64) {
        self.bytes += bytes;
        self.budget.add(bytes);
    }

    pub(crate) fn sub(&mut self, bytes: u64) {
        self.bytes -= bytes;
        self.budget.sub(bytes);
    }

    /// Moves what this owner holds over to `budget`.
    pub(crate) fn move_to(&mut self, budget: MemoryBudget) {
        self.budget.sub(self.bytes);
        budget.add(self.bytes);
        self.budget = budget;
    }
}

impl Clone for Charge {
    /// A copy of the owner holds its messages again: charged again.
    fn clone(&self) -> Charge {
        self.budget.add(self.bytes);
        Charge {
            budget: self.budget.clone(),
            bytes: self.bytes,
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.sub(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_given_back_when_removed_moved_or_dropped() {
        let budget = MemoryBudget::new(10);
        let mut charge = Charge::new(budget.clone());
        charge.add(7);
        charge.add(3);
        assert!(budget.is_exhausted());
        charge.sub(4);
        assert_eq!((budget.used(), budget.is_exhausted()), (6, false));
        let copy = charge.clone();
        assert_eq!(budget.used(), 12);
        drop(copy);
        let other = MemoryBudget::unlimited();
        charge.move_to(other.clone());
        assert_eq!((budget.used(), other.used()), (0, 6));
        drop(charge);
        assert_eq!(other.used(), 0);
    }
}
