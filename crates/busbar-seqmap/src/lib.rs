//! An ordered map for keys that arrive mostly in order and leave mostly in order, such as a
//! queue's sequence numbers.
//!
//! A `BTreeMap` spends about as much again as its values on nodes that appends leave half full,
//! which for a deep backlog of small per-message records is most of the memory. Here keys are
//! grouped 64 to a *chunk*: a bitmap says which of the chunk's keys are present, and their values
//! sit in key order in one `VecDeque`, so a dense chunk costs its values plus some 48 bytes
//! shared by 64 entries. Lookups are a `BTreeMap` lookup of the chunk and a popcount; appending
//! and removing at either end of a chunk are O(1), in its middle O(64).
//!
//! Entries can also be *marked* (a queue marks the messages available to receive): one more bit
//! per key, with the marked entries found in key order without walking the unmarked ones.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// Keys per chunk: one bit each in a `u64`.
const CHUNK_KEYS: i64 = 64;

/// An ordered map from `i64` keys to `V`, packed for keys that cluster (see the crate docs).
#[derive(Clone, PartialEq, Eq)]
pub struct SequenceMap<V> {
    chunks: BTreeMap<i64, Chunk<V>>,
    len: usize,
    /// The chunks with a marked entry.
    marked_chunks: BTreeSet<i64>,
    marked_len: usize,
}

/// The keys `index * 64 .. index * 64 + 64`: which are present (and which of those marked), and
/// their values in key order.
#[derive(Clone, PartialEq, Eq)]
struct Chunk<V> {
    present: u64,
    marked: u64,
    values: VecDeque<V>,
}

/// The chunk a key falls in and its bit there.
fn locate(key: i64) -> (i64, u32) {
    // rem_euclid of 64 is in 0..64, so the cast is exact.
    (
        key.div_euclid(CHUNK_KEYS),
        key.rem_euclid(CHUNK_KEYS) as u32,
    )
}

/// The bits of a chunk below `bit`.
fn below(bit: u32) -> u64 {
    (1u64 << bit) - 1
}

impl<V> Chunk<V> {
    /// Where the value of `bit` is (or would go) in `values`.
    fn rank(&self, bit: u32) -> usize {
        (self.present & below(bit)).count_ones() as usize
    }

    fn has(&self, bit: u32) -> bool {
        self.present & (1 << bit) != 0
    }

    /// The present entries from `bit` on, as `(bit, value)`.
    fn entries_from(&self, bit: u32) -> impl Iterator<Item = (u32, &V)> {
        Bits(self.present & !below(bit)).zip(self.values.range(self.rank(bit)..))
    }
}

/// The set bits of a word, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        (self.0 != 0).then(|| {
            let bit = self.0.trailing_zeros();
            self.0 &= self.0 - 1;
            bit
        })
    }
}

impl<V> Default for SequenceMap<V> {
    fn default() -> Self {
        SequenceMap {
            chunks: BTreeMap::new(),
            len: 0,
            marked_chunks: BTreeSet::new(),
            marked_len: 0,
        }
    }
}

impl<V> SequenceMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        SequenceMap::default()
    }

    /// Entries in the map. O(1).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of `key`.
    pub fn get(&self, key: i64) -> Option<&V> {
        let (index, bit) = locate(key);
        let chunk = self.chunks.get(&index)?;
        chunk.has(bit).then(|| &chunk.values[chunk.rank(bit)])
    }

    /// The value of `key`, mutably.
    pub fn get_mut(&mut self, key: i64) -> Option<&mut V> {
        let (index, bit) = locate(key);
        let chunk = self.chunks.get_mut(&index)?;
        if !chunk.has(bit) {
            return None;
        }
        let at = chunk.rank(bit);
        Some(&mut chunk.values[at])
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: i64) -> bool {
        self.get(key).is_some()
    }

    /// Sets the value of `key`, returning the one it replaces.
    pub fn insert(&mut self, key: i64, value: V) -> Option<V> {
        let (index, bit) = locate(key);
        let chunk = self.chunks.entry(index).or_insert_with(|| Chunk {
            present: 0,
            marked: 0,
            values: VecDeque::new(),
        });
        let at = chunk.rank(bit);
        if chunk.has(bit) {
            return Some(std::mem::replace(&mut chunk.values[at], value));
        }
        if at == chunk.values.len()
            && chunk.values.len() == chunk.values.capacity()
            && bit > 0
            && chunk.has(bit - 1)
        {
            // Keys arriving one after another: room for the rest of the chunk at once, rather
            // than doubling (and copying) four or five times on the way to 64.
            chunk
                .values
                .reserve_exact(CHUNK_KEYS as usize - bit as usize);
        }
        chunk.present |= 1 << bit;
        chunk.values.insert(at, value);
        self.len += 1;
        None
    }

    /// Takes `key` out (and its mark), returning its value.
    pub fn remove(&mut self, key: i64) -> Option<V> {
        let (index, bit) = locate(key);
        let chunk = self.chunks.get_mut(&index)?;
        if !chunk.has(bit) {
            return None;
        }
        if chunk.marked & (1 << bit) != 0 {
            chunk.marked &= !(1 << bit);
            self.marked_len -= 1;
            if chunk.marked == 0 {
                self.marked_chunks.remove(&index);
            }
        }
        let at = chunk.rank(bit);
        chunk.present &= !(1 << bit);
        let value = chunk.values.remove(at);
        self.len -= 1;
        if chunk.present == 0 {
            self.chunks.remove(&index);
        } else if chunk.values.len() * 4 <= chunk.values.capacity() {
            // A chunk drained from its middle (locks settled out of order) gives memory back.
            chunk.values.shrink_to_fit();
        }
        value
    }

    /// Marks the entry of `key` (`on`) or clears its mark; false when `key` is not present.
    pub fn mark(&mut self, key: i64, on: bool) -> bool {
        let (index, bit) = locate(key);
        let Some(chunk) = self.chunks.get_mut(&index) else {
            return false;
        };
        if !chunk.has(bit) {
            return false;
        }
        let was = chunk.marked & (1 << bit) != 0;
        if was != on {
            chunk.marked ^= 1 << bit;
            if on {
                self.marked_len += 1;
                self.marked_chunks.insert(index);
            } else {
                self.marked_len -= 1;
                if chunk.marked == 0 {
                    self.marked_chunks.remove(&index);
                }
            }
        }
        true
    }

    /// Whether `key` is present and marked.
    pub fn is_marked(&self, key: i64) -> bool {
        let (index, bit) = locate(key);
        self.chunks
            .get(&index)
            .is_some_and(|chunk| chunk.marked & (1 << bit) != 0)
    }

    /// Marked entries. O(1).
    pub fn marked_len(&self) -> usize {
        self.marked_len
    }

    /// The marked keys in order.
    pub fn marked_keys(&self) -> impl Iterator<Item = i64> {
        self.marked_chunks.iter().flat_map(|&index| {
            let marked = self.chunks.get(&index).map_or(0, |chunk| chunk.marked);
            Bits(marked).map(move |bit| index * CHUNK_KEYS + i64::from(bit))
        })
    }

    /// The lowest marked key.
    pub fn first_marked(&self) -> Option<i64> {
        self.marked_keys().next()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &V)> {
        self.range(i64::MIN)
    }

    /// The values in key order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.chunks
            .values_mut()
            .flat_map(|chunk| chunk.values.iter_mut())
    }

    /// The entries with keys from `from` on, in key order.
    pub fn range(&self, from: i64) -> impl Iterator<Item = (i64, &V)> {
        let (first, first_bit) = locate(from);
        self.chunks.range(first..).flat_map(move |(&index, chunk)| {
            let bit = if index == first { first_bit } else { 0 };
            let base = index * CHUNK_KEYS;
            chunk
                .entries_from(bit)
                .map(move |(bit, value)| (base + i64::from(bit), value))
        })
    }

    /// The lowest key.
    pub fn first_key(&self) -> Option<i64> {
        let (&index, chunk) = self.chunks.first_key_value()?;
        Some(index * CHUNK_KEYS + i64::from(chunk.present.trailing_zeros()))
    }

    /// The highest key.
    pub fn last_key(&self) -> Option<i64> {
        let (&index, chunk) = self.chunks.last_key_value()?;
        Some(index * CHUNK_KEYS + 63 - i64::from(chunk.present.leading_zeros()))
    }
}

impl<V: fmt::Debug> fmt::Debug for SequenceMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V> FromIterator<(i64, V)> for SequenceMap<V> {
    fn from_iter<I: IntoIterator<Item = (i64, V)>>(entries: I) -> Self {
        let mut map = SequenceMap::new();
        for (key, value) in entries {
            map.insert(key, value);
        }
        map
    }
}
