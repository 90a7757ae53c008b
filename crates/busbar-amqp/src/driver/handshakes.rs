//! The cap on connections still handshaking: a shared count that a connection enters when it is
//! accepted and leaves exactly once, when its handshake completes, fails or times out (or its
//! task ends in any other way), so the count cannot leak.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many accepted connections have not finished their handshake, bounded by a limit.
#[derive(Debug)]
pub(crate) struct Handshakes {
    count: Arc<AtomicUsize>,
    limit: usize,
}

impl Handshakes {
    /// A count that admits at most `limit` connections at once.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            count: Arc::new(AtomicUsize::new(0)),
            limit,
        }
    }

    /// A place for a newly accepted connection, or `None` when `limit` are handshaking already.
    pub(crate) fn try_enter(&self) -> Option<HandshakeSlot> {
        self.count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |count| {
                (count < self.limit).then_some(count + 1)
            })
            .ok()?;
        Some(HandshakeSlot {
            count: Some(self.count.clone()),
        })
    }

    /// Connections handshaking now.
    #[cfg(test)]
    fn current(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

/// One connection's place in a [`Handshakes`] count, given back by [`Self::leave`] or on drop.
#[derive(Debug)]
pub(crate) struct HandshakeSlot {
    count: Option<Arc<AtomicUsize>>,
}

impl HandshakeSlot {
    /// A slot counted nowhere, for a connection run outside [`serve`](super::serve).
    pub(crate) fn uncounted() -> Self {
        Self { count: None }
    }

    /// The handshake is over; later calls do nothing.
    pub(crate) fn leave(&mut self) {
        if let Some(count) = self.count.take() {
            count.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_holds_and_every_slot_is_given_back_once() {
        let handshakes = Handshakes::new(2);
        let mut first = handshakes.try_enter().expect("room for the first");
        let second = handshakes.try_enter().expect("room for the second");
        assert!(handshakes.try_enter().is_none());
        assert_eq!(handshakes.current(), 2);

        // Completed: leaving twice (and then dropping) counts once.
        first.leave();
        first.leave();
        assert_eq!(handshakes.current(), 1);
        drop(first);
        assert_eq!(handshakes.current(), 1);

        // Failed or timed out: the task ends and the slot is dropped.
        let third = handshakes.try_enter().expect("room after a completion");
        assert!(handshakes.try_enter().is_none());
        drop((second, third));
        assert_eq!(handshakes.current(), 0);

        drop(HandshakeSlot::uncounted());
        assert_eq!(handshakes.current(), 0);
    }

    #[test]
    fn any_sequence_of_enters_and_leaves_keeps_the_count_exact() {
        let handshakes = Handshakes::new(3);
        let mut slots: Vec<HandshakeSlot> = Vec::new();
        // A fixed pseudo-random walk: enter, leave early (then drop later) or drop.
        let mut state = 0x2545_f491_u32;
        let mut held = 0usize;
        for _ in 0..1_000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            match state % 3 {
                0 => match handshakes.try_enter() {
                    Some(slot) => {
                        slots.push(slot);
                        held += 1;
                    }
                    None => assert_eq!(held, 3),
                },
                1 if !slots.is_empty() => {
                    let mut slot = slots.swap_remove(0);
                    slot.leave();
                    held -= 1;
                    drop(slot);
                }
                _ => {
                    if slots.pop().is_some() {
                        held -= 1;
                    }
                }
            }
            assert_eq!(handshakes.current(), held);
        }
        drop(slots);
        assert_eq!(handshakes.current(), 0);
    }
}
