//! Throttling as Service Bus does it: while the entity's inbox or the store's queue is past a
//! bound, sends are refused at once with `com.microsoft:server-busy` (the SDKs back off and
//! retry) instead of queueing behind the backlog, and the refusal waits for nothing; what is
//! not a send (settlements, credit, management) is still served.

use busbar_store::GroupCommitHandle;
use tokio::sync::mpsc;

use super::EntityTask;
use crate::runtime::mailbox::EntityCommand;

/// Whether the entity is overloaded: its inbox still holds three quarters of its capacity
/// after a batch was taken, or the store's queue is three quarters full (one entity rarely
/// fills it: the writer takes everything queued at each commit; many busy entities may).
pub(super) fn overloaded(inbox: &mpsc::Receiver<EntityCommand>, store: &GroupCommitHandle) -> bool {
    let backlog = store.backlog();
    past_bound(inbox.len(), inbox.max_capacity()) || past_bound(backlog.queued, backlog.capacity)
}

/// Three quarters of `capacity`: the rest stays for what is not a send.
fn past_bound(queued: usize, capacity: usize) -> bool {
    queued.saturating_mul(4) >= capacity.saturating_mul(3)
}

impl EntityTask {
    /// Whether the next send is refused as server-busy: the entity is overloaded, or a test
    /// asked for it (counting the injected refusal off).
    pub(super) fn refuses_send(&mut self) -> bool {
        self.faults.refuse_send() || self.overloaded
    }
}

#[cfg(test)]
mod tests {
    use super::past_bound;

    #[test]
    fn the_bound_is_three_quarters_of_the_capacity() {
        assert!(!past_bound(767, 1024));
        assert!(past_bound(768, 1024));
        assert!(past_bound(1024, 1024));
        assert!(!past_bound(0, 1));
        assert!(past_bound(1, 1));
        // An inline store never queues and has no bound.
        assert!(!past_bound(0, usize::MAX));
    }
}
