//! Property test: random batches, syncs, compactions and restarts, checked against an
//! independent model after every recovery; `model_property!` declares it for one backend.

use busbar_store::{EntityId, MessageKey, Record, Storage};
use bytes::Bytes;
use proptest::prelude::*;

use crate::records::{Backend, Model};

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Append(Vec<Record>),
    Sync,
    Compact,
    /// Sync, then restart (what survives an unsynced restart differs between backends).
    Restart,
    Recover,
}

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..max).prop_map(Bytes::from)
}

/// Every key the generated records use (the reads also ask for the absent ones).
fn all_keys() -> Vec<MessageKey> {
    (0u32..2)
        .flat_map(|entity| {
            (0i64..24).map(move |sequence| MessageKey {
                entity: EntityId(entity),
                sequence,
            })
        })
        .collect()
}

fn record() -> impl Strategy<Value = Record> {
    let key = (0u32..2, 0i64..24).prop_map(|(entity, sequence)| MessageKey {
        entity: EntityId(entity),
        sequence,
    });
    prop_oneof![
        4 => (key.clone(), bytes(200), bytes(16))
            .prop_map(|(key, message, state)| Record::Insert { key, message, state }),
        3 => (key.clone(), bytes(16)).prop_map(|(key, state)| Record::Update { key, state }),
        3 => key.prop_map(|key| Record::Remove { key }),
        1 => (0u32..2, bytes(3), prop::option::of(bytes(40))).prop_map(|(entity, key, value)| {
            Record::Meta { entity: EntityId(entity), key, value }
        }),
    ]
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => prop::collection::vec(record(), 0..6).prop_map(Op::Append),
        4 => Just(Op::Sync),
        2 => Just(Op::Compact),
        1 => Just(Op::Restart),
        1 => Just(Op::Recover),
    ]
}

/// Runs `ops`, checking recovery against the model after every sync, compaction and restart,
/// and the reads too whenever everything appended is durable (a read may or may not see what
/// was appended after the last sync).
pub(crate) fn run<B: Backend>(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut backend = B::create(true);
    let mut reader = backend.store().reader().unwrap();
    let keys = all_keys();
    let mut appended = Model::default();
    let mut synced = Model::default();
    for op in ops {
        match op {
            Op::Append(records) => {
                backend.store().append(records).unwrap();
                records.iter().for_each(|r| appended.apply(r));
            }
            Op::Sync => {
                backend.store().sync().unwrap();
                synced = appended.clone();
                prop_assert!(synced.reads_match(&*reader, &keys));
            }
            Op::Compact => {
                // A step may sync, which is allowed to make more durable, never less.
                backend.store().compact().unwrap();
                let recovered = backend.store().recover().unwrap();
                prop_assert!(synced.matches(&recovered) || appended.matches(&recovered));
                if appended.matches(&recovered) {
                    synced = appended.clone();
                    prop_assert!(synced.reads_match(&*reader, &keys));
                }
            }
            Op::Restart => {
                backend.store().sync().unwrap();
                synced = appended.clone();
                backend.restart();
                reader = backend.store().reader().unwrap();
                if let Some(part) = B::index_part() {
                    let kept = backend.store().recover_keeping(part).unwrap();
                    prop_assert!(synced.matches_kept(&kept, part), "{kept:?} vs {synced:?}");
                }
                let recovered = backend.store().recover().unwrap();
                prop_assert!(synced.matches(&recovered), "{recovered:?} vs {synced:?}");
                prop_assert!(synced.reads_match(&*reader, &keys));
            }
            Op::Recover => {
                let recovered = backend.store().recover().unwrap();
                prop_assert!(synced.matches(&recovered), "{recovered:?} vs {synced:?}");
            }
        }
    }
    backend.store().sync().unwrap();
    backend.restart();
    let recovered = backend.store().recover().unwrap();
    prop_assert!(appended.matches(&recovered));
    Ok(())
}

/// Declares the property test `$name` against `$backend`, 64 cases of up to 120 operations.
/// Every backend replays the failures found so far, kept in one file beside this suite.
macro_rules! model_property {
    ($name:ident, $backend:ty) => {
        proptest::proptest! {
            #![proptest_config(proptest::prelude::ProptestConfig {
                cases: 64,
                failure_persistence: Some(Box::new(
                    proptest::test_runner::FileFailurePersistence::Direct(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../busbar-store/tests/proptest-regressions/model.txt"
                    )),
                )),
                ..proptest::prelude::ProptestConfig::default()
            })]

            #[test]
            fn $name(ops in proptest::collection::vec($crate::model::op(), 0..120)) {
                $crate::model::run::<$backend>(&ops)?;
            }
        }
    };
}
pub(crate) use model_property;
