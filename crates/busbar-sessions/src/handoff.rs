//! The cross-task hand-off a broker needs around [`SessionEntity`](crate::SessionEntity): an
//! [`AcceptSlot`] through which the entity task hands a session lock to a waiting receiver's
//! connection task exactly once (or learns that the receiver left and takes the lock back), and
//! a [`SessionLease`] that settles the race between a lock expiring on the entity task and the
//! link releasing it on the connection task. Both are modelled with loom.

use crate::sync::{Arc, AtomicU8, Mutex, Ordering};

/// A one-shot slot shared by one waiting receiver (its connection task) and the entity task.
///
/// The entity task [`fill`](AcceptSlot::fill)s it when
/// [`SessionEvent::Accepted`](crate::SessionEvent::Accepted) names the receiver; the connection task
/// [`take`](AcceptSlot::take)s the value once woken (pair the slot with the runtime's notify
/// primitive), or [`cancel`](AcceptSlot::cancel)s when its link detaches. Whatever the
/// interleaving, the value ends up in exactly one place: taken by the receiver, returned to the
/// entity task by `fill`, or returned to the receiver by `cancel` (which must then release it).
#[derive(Debug)]
pub struct AcceptSlot<T> {
    state: Arc<Mutex<SlotState<T>>>,
}

impl<T> Clone for AcceptSlot<T> {
    fn clone(&self) -> Self {
        AcceptSlot {
            state: Arc::clone(&self.state),
        }
    }
}

#[derive(Debug)]
enum SlotState<T> {
    Waiting,
    Filled(T),
    Taken,
    Cancelled,
}

impl<T> Default for AcceptSlot<T> {
    fn default() -> Self {
        AcceptSlot::new()
    }
}

impl<T> AcceptSlot<T> {
    /// An empty slot; clone it to give the other task its handle.
    pub fn new() -> AcceptSlot<T> {
        AcceptSlot {
            state: Arc::new(Mutex::new(SlotState::Waiting)),
        }
    }

    /// Entity side: offers `value`. `Err(value)` if the receiver already cancelled (or the slot
    /// was filled before): the caller keeps the value, e.g. releases the session at once.
    pub fn fill(&self, value: T) -> Result<(), T> {
        let mut state = self.lock();
        match *state {
            SlotState::Waiting => {
                *state = SlotState::Filled(value);
                Ok(())
            }
            _ => Err(value),
        }
    }

    /// Receiver side: takes the offered value, once.
    pub fn take(&self) -> Option<T> {
        let mut state = self.lock();
        match std::mem::replace(&mut *state, SlotState::Taken) {
            SlotState::Filled(value) => Some(value),
            other => {
                *state = other;
                None
            }
        }
    }

    /// Receiver side: gives up waiting. Returns a value offered but not yet taken, which the
    /// receiver now owns and must hand back (release the session).
    pub fn cancel(&self) -> Option<T> {
        let mut state = self.lock();
        match std::mem::replace(&mut *state, SlotState::Cancelled) {
            SlotState::Filled(value) => Some(value),
            SlotState::Taken => {
                *state = SlotState::Taken;
                None
            }
            SlotState::Waiting | SlotState::Cancelled => None,
        }
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, SlotState<T>> {
        // The critical sections cannot panic, so a poisoned lock still holds a sound state.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How a session lease ended, as seen from either task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    /// The receiver still holds the session.
    Held,
    /// The receiver released it (close/detach): in-flight messages come back uncounted.
    Released,
    /// The lock expired first: in-flight messages count a delivery; later settlements fail with
    /// `com.microsoft:session-lock-lost`.
    Expired,
}

const HELD: u8 = 0;
const RELEASED: u8 = 1;
const EXPIRED: u8 = 2;

/// A session lock's fate shared by the connection task (which may release it) and the entity
/// task (which may expire it): exactly one of [`release`](SessionLease::release) and
/// [`expire`](SessionLease::expire) wins, so the receiver and the entity agree on whether the
/// release or the expiry rules apply and on whether settlements may still be sent.
#[derive(Clone, Debug)]
pub struct SessionLease {
    state: Arc<AtomicU8>,
}

impl Default for SessionLease {
    fn default() -> Self {
        SessionLease::new()
    }
}

impl SessionLease {
    /// A held lease; clone it to give the other task its handle.
    pub fn new() -> SessionLease {
        SessionLease {
            state: Arc::new(AtomicU8::new(HELD)),
        }
    }

    /// The current state.
    pub fn state(&self) -> LeaseState {
        match self.state.load(Ordering::Acquire) {
            HELD => LeaseState::Held,
            RELEASED => LeaseState::Released,
            _ => LeaseState::Expired,
        }
    }

    /// Connection side: ends a held lease as released; false if it had already ended.
    pub fn release(&self) -> bool {
        self.end(RELEASED)
    }

    /// Entity side: ends a held lease as expired; false if it had already ended.
    pub fn expire(&self) -> bool {
        self.end(EXPIRED)
    }

    fn end(&self, to: u8) -> bool {
        self.state
            .compare_exchange(HELD, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_filled_slot_is_taken_once() {
        let slot = AcceptSlot::new();
        let receiver = slot.clone();
        assert_eq!(receiver.take(), None);
        assert_eq!(slot.fill(7), Ok(()));
        assert_eq!(slot.fill(8), Err(8));
        assert_eq!(receiver.take(), Some(7));
        assert_eq!(receiver.take(), None);
        assert_eq!(receiver.cancel(), None);
    }

    #[test]
    fn cancelling_returns_an_untaken_value_and_refuses_later_offers() {
        let slot = AcceptSlot::new();
        assert_eq!(slot.fill(1), Ok(()));
        assert_eq!(slot.cancel(), Some(1));
        assert_eq!(slot.fill(2), Err(2));
        let empty: AcceptSlot<u8> = AcceptSlot::default();
        assert_eq!(empty.cancel(), None);
        assert_eq!(empty.fill(3), Err(3));
    }

    #[test]
    fn a_lease_ends_once() {
        let lease = SessionLease::new();
        let other = lease.clone();
        assert_eq!(lease.state(), LeaseState::Held);
        assert!(other.expire());
        assert!(!lease.release());
        assert_eq!(lease.state(), LeaseState::Expired);
        let lease = SessionLease::default();
        assert!(lease.release());
        assert!(!lease.expire());
        assert_eq!(lease.state(), LeaseState::Released);
    }
}

#[cfg(all(loom, test))]
mod loom_tests {
    use super::*;
    use loom::thread;

    /// The entity task offers one freed session to the oldest waiter, then the next, while the
    /// oldest waiter's link detaches: the session ends up in exactly one place.
    #[test]
    fn loom_next_available_hand_off_between_competing_acceptors() {
        loom::model(|| {
            let first = AcceptSlot::<&'static str>::new();
            let second = AcceptSlot::<&'static str>::new();
            let entity = {
                let (first, second) = (first.clone(), second.clone());
                thread::spawn(move || {
                    let back = first.fill("s").err().map(|value| second.fill(value));
                    // Some(Err(_)): both refused; the entity keeps the session.
                    matches!(back, Some(Err(_)))
                })
            };
            let leaving = {
                let first = first.clone();
                thread::spawn(move || first.cancel().is_some())
            };
            let staying = {
                let second = second.clone();
                thread::spawn(move || second.take().is_some())
            };
            let kept_by_entity = entity.join().unwrap();
            let returned_by_leaver = leaving.join().unwrap();
            let taken_early = staying.join().unwrap();
            // The staying receiver may be woken after its thread looked: take again at the end.
            let taken_late = second.take().is_some();
            let cancelled_late = second.cancel().is_some();
            let places = [
                kept_by_entity,
                returned_by_leaver,
                taken_early,
                taken_late,
                cancelled_late,
            ];
            assert_eq!(places.iter().filter(|&&here| here).count(), 1, "{places:?}");
            assert_eq!(
                first.take(),
                None,
                "the leaver must not find the session later"
            );
        });
    }

    /// A lock expiring on the entity task races the link releasing it: exactly one wins, and
    /// both sides then read the winner's state.
    #[test]
    fn loom_lock_expiry_races_release() {
        loom::model(|| {
            let lease = SessionLease::new();
            let entity = {
                let lease = lease.clone();
                thread::spawn(move || lease.expire())
            };
            let link = {
                let lease = lease.clone();
                thread::spawn(move || lease.release())
            };
            let expired = entity.join().unwrap();
            let released = link.join().unwrap();
            assert!(expired ^ released, "exactly one side ends the lease");
            let expected = if expired {
                LeaseState::Expired
            } else {
                LeaseState::Released
            };
            assert_eq!(lease.state(), expected);
        });
    }

    /// An offer racing a cancel: the value is either taken back by the entity or returned to
    /// the cancelling receiver, never lost and never both.
    #[test]
    fn loom_offer_races_cancel() {
        loom::model(|| {
            let slot = AcceptSlot::<u32>::new();
            let entity = {
                let slot = slot.clone();
                thread::spawn(move || slot.fill(1).is_err())
            };
            let returned = slot.cancel().is_some();
            let kept = entity.join().unwrap();
            assert!(kept ^ returned);
            assert_eq!(slot.take(), None);
        });
    }
}
