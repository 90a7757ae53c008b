//! A bounded slab whose keys carry a generation, so a stale key never reaches a newer entry.

/// Where an entry lives in a [`Slab`]: its slot and the generation the slot had when it was filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SlotKey {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

#[derive(Debug)]
struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// Entries indexed by slot number, with a hard capacity chosen by the owner.
///
/// Slots are reused after removal, but every reuse bumps the slot's generation, so a [`SlotKey`]
/// handed out earlier no longer matches.
#[derive(Debug)]
pub(crate) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Number of live entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Stores `value` in a free slot, or returns it back when `capacity` entries are already live.
    pub(crate) fn insert(&mut self, value: T, capacity: usize) -> Result<SlotKey, T> {
        if self.len >= capacity {
            return Err(value);
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let Ok(slot) = u32::try_from(self.slots.len()) else {
                    return Err(value);
                };
                self.slots.push(Slot {
                    generation: 0,
                    value: None,
                });
                slot
            }
        };
        let Some(entry) = self.slots.get_mut(slot as usize) else {
            return Err(value);
        };
        entry.value = Some(value);
        self.len += 1;
        Ok(SlotKey {
            slot,
            generation: entry.generation,
        })
    }

    /// The entry for `key`, if the key is still current.
    pub(crate) fn get(&self, key: SlotKey) -> Option<&T> {
        self.slots
            .get(key.slot as usize)
            .filter(|entry| entry.generation == key.generation)
            .and_then(|entry| entry.value.as_ref())
    }

    /// The entry for `key`, mutably, if the key is still current.
    pub(crate) fn get_mut(&mut self, key: SlotKey) -> Option<&mut T> {
        self.slots
            .get_mut(key.slot as usize)
            .filter(|entry| entry.generation == key.generation)
            .and_then(|entry| entry.value.as_mut())
    }

    /// Removes and returns the entry for `key`; the slot's generation moves on.
    pub(crate) fn remove(&mut self, key: SlotKey) -> Option<T> {
        let entry = self
            .slots
            .get_mut(key.slot as usize)
            .filter(|entry| entry.generation == key.generation)?;
        let value = entry.value.take()?;
        entry.generation = entry.generation.wrapping_add(1);
        self.free.push(key.slot);
        self.len -= 1;
        Some(value)
    }

    /// Live entries with their keys.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (SlotKey, &T)> {
        self.slots.iter().enumerate().filter_map(|(slot, entry)| {
            let value = entry.value.as_ref()?;
            let slot = u32::try_from(slot).ok()?;
            Some((
                SlotKey {
                    slot,
                    generation: entry.generation,
                },
                value,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_key_misses_the_reused_slot() {
        let mut slab = Slab::default();
        let first = slab.insert("a", 4).unwrap();
        assert_eq!(slab.remove(first), Some("a"));
        let second = slab.insert("b", 4).unwrap();
        assert_eq!(first.slot, second.slot);
        assert_eq!(slab.get(first), None);
        assert_eq!(slab.get(second), Some(&"b"));
        assert_eq!(slab.remove(first), None);
        assert_eq!(slab.len(), 1);
    }

    #[test]
    fn capacity_is_a_hard_bound() {
        let mut slab = Slab::default();
        for i in 0..3 {
            slab.insert(i, 3).unwrap();
        }
        assert_eq!(slab.insert(9, 3), Err(9));
        assert_eq!(slab.iter().count(), 3);
    }
}
