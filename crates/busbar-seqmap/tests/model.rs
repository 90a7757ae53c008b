//! The map behaves as a `BTreeMap<i64, V>` under any sequence of operations, keys clustered the
//! way sequence numbers are (runs, gaps, chunk edges, negative keys included).
#![allow(clippy::unwrap_used)]

use busbar_seqmap::SequenceMap;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, u32),
    Remove(i64),
    GetMut(i64, u32),
    Range(i64),
    Mark(i64, bool),
    /// Keys `from..from + len` inserted one after another, as a queue appends.
    Run(i64, u8),
    /// Every value raised by this much, through `values_mut`.
    Raise(u32),
}

fn key() -> impl Strategy<Value = i64> {
    prop_oneof![
        0i64..200,
        -70i64..70,
        Just(i64::MAX),
        Just(i64::MIN),
        any::<i64>()
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => key().prop_map(Op::Remove),
        1 => (key(), any::<u32>()).prop_map(|(k, v)| Op::GetMut(k, v)),
        1 => key().prop_map(Op::Range),
        2 => (key(), any::<bool>()).prop_map(|(k, on)| Op::Mark(k, on)),
        1 => (-70i64..200, any::<u8>()).prop_map(|(k, len)| Op::Run(k, len)),
        1 => any::<u32>().prop_map(Op::Raise),
    ]
}

proptest! {
    #[test]
    fn behaves_as_an_ordered_map(ops in proptest::collection::vec(op(), 0..400)) {
        let mut map = SequenceMap::new();
        let mut model = BTreeMap::new();
        let mut marked = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                Op::Remove(k) => {
                    marked.remove(&k);
                    prop_assert_eq!(map.remove(k), model.remove(&k));
                }
                Op::Mark(k, on) => {
                    prop_assert_eq!(map.mark(k, on), model.contains_key(&k));
                    if model.contains_key(&k) {
                        if on { marked.insert(k); } else { marked.remove(&k); }
                    }
                }
                Op::GetMut(k, v) => {
                    let ours = map.get_mut(k).map(|slot| std::mem::replace(slot, v));
                    let theirs = model.get_mut(&k).map(|slot| std::mem::replace(slot, v));
                    prop_assert_eq!(ours, theirs);
                }
                Op::Run(from, len) => {
                    for k in from..from + i64::from(len) {
                        let v = k as u32;
                        prop_assert_eq!(map.insert(k, v), model.insert(k, v));
                    }
                }
                Op::Raise(by) => {
                    map.values_mut().for_each(|v| *v = v.wrapping_add(by));
                    model.values_mut().for_each(|v| *v = v.wrapping_add(by));
                }
                Op::Range(from) => {
                    let ours: Vec<_> = map.range(from).map(|(k, v)| (k, *v)).collect();
                    let theirs: Vec<_> = model.range(from..).map(|(k, v)| (*k, *v)).collect();
                    prop_assert_eq!(ours, theirs);
                }
            }
            prop_assert_eq!(map.len(), model.len());
            prop_assert_eq!(map.marked_len(), marked.len());
            prop_assert_eq!(map.first_marked(), marked.first().copied());
            let keys: Vec<i64> = map.marked_keys().collect();
            prop_assert_eq!(keys, marked.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(map.first_key(), model.keys().next().copied());
            prop_assert_eq!(map.last_key(), model.keys().next_back().copied());
        }
        let all: Vec<_> = map.iter().map(|(k, v)| (k, *v)).collect();
        let expected: Vec<_> = model.iter().map(|(k, v)| (*k, *v)).collect();
        prop_assert_eq!(all, expected);
        for (k, v) in &model {
            prop_assert_eq!(map.get(*k), Some(v));
            prop_assert!(map.contains_key(*k));
            prop_assert_eq!(map.is_marked(*k), marked.contains(k));
        }
    }
}

#[test]
fn a_drained_map_holds_no_chunks() {
    let mut map: SequenceMap<u64> = (1..10_000).map(|k| (k, k as u64)).collect();
    for k in 1..10_000 {
        assert_eq!(map.remove(k), Some(k as u64));
    }
    assert!(map.is_empty());
    assert_eq!(map, SequenceMap::new());
}
