//! Lock tokens and the slab of held locks: a token maps to `{slot, generation}`, so a stale token
//! can never settle a newer delivery.

use crate::entity::SubQueue;
use crate::time::SequenceNumber;
use std::fmt;

/// A peek-lock token: a UUID with the version-4 bit layout, in RFC 4122 (big-endian) byte order.
///
/// Tokens are derived from the entity's seed, the lock slot and the slot's generation with a
/// keyed mix, so they are unique within a run, differ across runs (the broker passes a fresh
/// random seed) and cannot be forged by guessing slot numbers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockToken([u8; 16]);

impl LockToken {
    /// A token from its 16 RFC 4122 bytes (as carried by an AMQP `uuid`).
    pub const fn from_bytes(bytes: [u8; 16]) -> LockToken {
        LockToken(bytes)
    }

    /// The 16 bytes in RFC 4122 (big-endian) order; the .NET delivery-tag byte swap is the
    /// broker's business.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for LockToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for LockToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LockToken({self})")
    }
}

/// The message a held lock covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LockHolder {
    pub(crate) queue: SubQueue,
    pub(crate) sequence: SequenceNumber,
}

#[derive(Clone, Debug)]
struct SlabEntry {
    generation: u32,
    holder: Option<LockHolder>,
}

/// Held locks in an indexed slab; freed slots are reused with a bumped generation.
#[derive(Clone, Debug)]
pub(crate) struct LockSlab {
    entries: Vec<SlabEntry>,
    free: Vec<u32>,
    held: usize,
    seed: u128,
}

impl LockSlab {
    pub(crate) fn new(seed: u128) -> LockSlab {
        LockSlab {
            entries: Vec::new(),
            free: Vec::new(),
            held: 0,
            seed,
        }
    }

    /// Number of locks currently held.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// Takes a free slot for `holder`; `None` only when all 2^32 slots are held.
    pub(crate) fn acquire(&mut self, holder: LockHolder) -> Option<(u32, LockToken)> {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = u32::try_from(self.entries.len()).ok()?;
                self.entries.push(SlabEntry {
                    generation: 0,
                    holder: None,
                });
                slot
            }
        };
        let entry = self.entries.get_mut(slot as usize)?;
        entry.holder = Some(holder);
        self.held += 1;
        let generation = entry.generation;
        Some((slot, self.derive(slot, generation)))
    }

    /// The slot and holder of a token that names a currently held lock.
    pub(crate) fn resolve(&self, token: LockToken) -> Option<(u32, LockHolder)> {
        let (slot, generation) = self.decode(token);
        let entry = self.entries.get(slot as usize)?;
        let holder = entry.holder?;
        (entry.generation == generation && self.derive(slot, generation) == token)
            .then_some((slot, holder))
    }

    /// The holder of a held slot.
    pub(crate) fn holder(&self, slot: u32) -> Option<LockHolder> {
        self.entries.get(slot as usize)?.holder
    }

    /// The token of a held slot.
    pub(crate) fn token(&self, slot: u32) -> Option<LockToken> {
        let entry = self.entries.get(slot as usize)?;
        entry.holder?;
        Some(self.derive(slot, entry.generation))
    }

    /// Frees a slot; its generation moves on so every token issued for it goes stale.
    pub(crate) fn release(&mut self, slot: u32) -> Option<LockHolder> {
        let entry = self.entries.get_mut(slot as usize)?;
        let holder = entry.holder.take()?;
        entry.generation = entry.generation.wrapping_add(1);
        self.free.push(slot);
        self.held -= 1;
        Some(holder)
    }

    /// Slots of every held lock, in slot order.
    pub(crate) fn held_slots(&self) -> Vec<u32> {
        (0u32..)
            .zip(&self.entries)
            .filter(|(_, entry)| entry.holder.is_some())
            .map(|(slot, _)| slot)
            .collect()
    }

    fn keys(&self) -> (u64, u64) {
        // Truncation intended: the seed's two halves are the two mixing keys.
        (self.seed as u64, (self.seed >> 64) as u64)
    }

    /// Layout: bytes 0..4 slot and 12..16 generation (both masked), bytes 4..12 a keyed check
    /// value; then the UUID version-4 and variant bits are forced (they fall in the check value).
    fn derive(&self, slot: u32, generation: u32) -> LockToken {
        let (k0, k1) = self.keys();
        let id = (u64::from(generation) << 32) | u64::from(slot);
        let masked = id ^ mix64(k1 ^ 0x6a09_e667_f3bc_c908);
        let check = mix64(mix64(id ^ k0) ^ k1);
        let mut bytes = [0u8; 16];
        bytes[0..4].copy_from_slice(&(masked as u32).to_be_bytes());
        bytes[4..12].copy_from_slice(&check.to_be_bytes());
        bytes[12..16].copy_from_slice(&((masked >> 32) as u32).to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        LockToken(bytes)
    }

    fn decode(&self, token: LockToken) -> (u32, u32) {
        let (_, k1) = self.keys();
        let [a, b, c, d, .., w, x, y, z] = token.0;
        let low = u64::from(u32::from_be_bytes([a, b, c, d]));
        let high = u64::from(u32::from_be_bytes([w, x, y, z]));
        let id = ((high << 32) | low) ^ mix64(k1 ^ 0x6a09_e667_f3bc_c908);
        (id as u32, (id >> 32) as u32)
    }
}

/// SplitMix64's finaliser: a cheap bijective mix with full avalanche.
fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(sequence: i64) -> LockHolder {
        LockHolder {
            queue: SubQueue::Main,
            sequence: SequenceNumber(sequence),
        }
    }

    #[test]
    fn tokens_have_the_uuid_v4_layout_and_format() {
        let mut slab = LockSlab::new(7);
        let (_, token) = slab.acquire(holder(1)).unwrap();
        let bytes = token.as_bytes();
        assert_eq!(bytes[6] >> 4, 4, "version nibble");
        assert_eq!(bytes[8] >> 6, 0b10, "RFC 4122 variant");
        let text = token.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(text.matches('-').count(), 4);
    }

    #[test]
    fn a_token_resolves_until_its_slot_is_released() {
        let mut slab = LockSlab::new(42);
        let (slot, token) = slab.acquire(holder(5)).unwrap();
        assert_eq!(slab.resolve(token), Some((slot, holder(5))));
        assert_eq!(slab.token(slot), Some(token));
        assert_eq!(slab.release(slot), Some(holder(5)));
        assert_eq!(slab.resolve(token), None);
        assert_eq!(slab.held(), 0);
    }

    #[test]
    fn a_stale_token_cannot_settle_the_slots_next_lock() {
        let mut slab = LockSlab::new(42);
        let (slot, old) = slab.acquire(holder(1)).unwrap();
        slab.release(slot);
        let (reused, new) = slab.acquire(holder(2)).unwrap();
        assert_eq!(reused, slot);
        assert_ne!(old, new);
        assert_eq!(slab.resolve(old), None);
        assert_eq!(slab.resolve(new), Some((slot, holder(2))));
    }

    #[test]
    fn forged_and_foreign_tokens_are_refused() {
        let mut slab = LockSlab::new(1);
        let (_, token) = slab.acquire(holder(1)).unwrap();
        let mut forged = *token.as_bytes();
        forged[10] ^= 1;
        assert_eq!(slab.resolve(LockToken::from_bytes(forged)), None);
        let other_seed = LockSlab::new(2);
        assert_eq!(other_seed.resolve(token), None);
        assert_eq!(slab.resolve(LockToken::from_bytes([0; 16])), None);
    }

    #[test]
    fn tokens_are_unique_across_slots_generations_and_seeds() {
        let mut seen = std::collections::HashSet::new();
        for seed in [0u128, 1, u128::MAX] {
            let mut slab = LockSlab::new(seed);
            for round in 0..50 {
                let (slot, token) = slab.acquire(holder(round)).unwrap();
                assert!(seen.insert(token), "duplicate token {token}");
                if round % 2 == 0 {
                    slab.release(slot);
                }
            }
        }
    }
}
