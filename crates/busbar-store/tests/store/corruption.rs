//! Corruption of synced data: reported with the file and offset, never skipped.

use std::path::PathBuf;

use busbar_store::{FileOptions, FileStorage, Storage, StoreError};

use crate::records::{insert, update};
use crate::support::{TestDir, segment_files};

const SMALL: FileOptions = FileOptions {
    segment_size: 1024,
    compact_dead_percent: 50,
};

/// A journal of several segments; returns the segment paths, oldest first.
fn several_segments(dir: &TestDir) -> Vec<PathBuf> {
    let mut store = FileStorage::open(dir.path(), SMALL).unwrap();
    for sequence in 1..=60 {
        store
            .append(&[insert(sequence, "a message of some length", "state")])
            .unwrap();
        store.sync().unwrap();
    }
    assert!(store.segment_count() >= 3);
    drop(store);
    segment_files(dir.path())
}

fn flip_byte(path: &PathBuf, offset: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn damaged_frame_in_an_earlier_segment_names_file_and_offset() {
    let dir = TestDir::new("corrupt-middle");
    let segments = several_segments(&dir);
    // Second frame of the first segment: header (24) + one frame.
    let frame_len = 9 + 12 + 4 + "a message of some length".len() + "state".len();
    let offset = 24 + frame_len;
    flip_byte(&segments[0], offset + 15);
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::Corrupt {
            file, offset: at, ..
        }) => {
            assert_eq!(file, segments[0]);
            assert_eq!(at, offset as u64);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn damaged_header_of_an_earlier_segment_is_corruption() {
    let dir = TestDir::new("corrupt-header");
    let segments = several_segments(&dir);
    flip_byte(&segments[1], 3);
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::Corrupt { file, offset, .. }) => {
            assert_eq!(file, segments[1]);
            assert_eq!(offset, 0);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn damaged_header_of_the_last_segment_with_records_is_corruption() {
    let dir = TestDir::new("corrupt-last-header");
    let segments = several_segments(&dir);
    let last = segments.last().unwrap();
    flip_byte(last, 14);
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::Corrupt { file, offset, .. }) => {
            assert_eq!(&file, last);
            assert_eq!(offset, 0);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn incomplete_creation_of_the_last_segment_is_dropped() {
    let dir = TestDir::new("corrupt-last-created");
    let segments = several_segments(&dir);
    let mut store = FileStorage::open(dir.path(), SMALL).unwrap();
    let expected = store.recover().unwrap();
    drop(store);
    // A crash while the next segment was being created: only part of its header exists.
    let next = dir.path().join(format!("{:016x}.seg", segments.len() + 1));
    std::fs::write(&next, b"BUSBARJ").unwrap();
    let mut store = FileStorage::open(dir.path(), SMALL).unwrap();
    assert_eq!(store.recover().unwrap(), expected);
    assert!(!next.exists());
    store.append(&[insert(100, "after", "s")]).unwrap();
    store.sync().unwrap();
}

#[test]
fn missing_middle_segment_is_corruption() {
    let dir = TestDir::new("corrupt-missing");
    let segments = several_segments(&dir);
    std::fs::remove_file(&segments[1]).unwrap();
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::Corrupt { file, .. }) => assert_eq!(file, segments[2]),
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn a_second_store_on_the_same_directory_is_refused() {
    let dir = TestDir::new("corrupt-in-use");
    let first = FileStorage::open(dir.path(), SMALL).unwrap();
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::InUse { dir: in_use }) => assert_eq!(in_use, dir.path()),
        other => panic!("expected InUse, got {other:?}"),
    }
    drop(first);
    FileStorage::open(dir.path(), SMALL).unwrap();
}

#[test]
fn unknown_format_version_is_refused() {
    let dir = TestDir::new("corrupt-version");
    let segments = several_segments(&dir);
    let mut bytes = std::fs::read(&segments[0]).unwrap();
    bytes[8..12].copy_from_slice(&9u32.to_le_bytes());
    let crc = crc32c_of_header(&bytes[..20]);
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&segments[0], bytes).unwrap();
    match FileStorage::open(dir.path(), SMALL) {
        Err(StoreError::UnsupportedVersion { version: 9, .. }) => {}
        other => panic!("expected a version error, got {other:?}"),
    }
}

/// CRC32C (Castagnoli), bit by bit: independent of the implementation under test.
fn crc32c_of_header(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn damaged_frame_in_the_last_segment_cuts_the_tail_there() {
    let dir = TestDir::new("corrupt-last");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    // One record per append: each frame stands alone (no group frame).
    for record in [
        insert(1, "one", "s"),
        insert(2, "two", "s"),
        update(1, "s2"),
    ] {
        store.append(&[record]).unwrap();
    }
    store.sync().unwrap();
    drop(store);
    let path = dir.path().join("0000000000000001.seg");
    let first_frame = 9 + 12 + 4 + 3 + 1;
    flip_byte(&path, 24 + first_frame + 20);
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    let recovered = store.recover().unwrap();
    // Only what precedes the damaged frame is kept (the last segment's rule: never synced).
    assert_eq!(recovered.messages.len(), 1);
    assert_eq!(&recovered.messages[&crate::records::key(1)].state[..], b"s");
}

#[test]
fn damaged_frame_in_a_grouped_append_of_the_last_segment_cuts_the_whole_append() {
    let dir = TestDir::new("corrupt-last-group");
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    store.append(&[insert(1, "one", "s")]).unwrap();
    store
        .append(&[insert(2, "two", "s"), insert(3, "three", "s")])
        .unwrap();
    store.sync().unwrap();
    let written = usize::try_from(store.disk_usage()).unwrap();
    drop(store);
    let path = dir.path().join("0000000000000001.seg");
    // The last byte written: the group's second frame (the store keeps no part of an append).
    flip_byte(&path, written - 1);
    let mut store = FileStorage::open(dir.path(), FileOptions::default()).unwrap();
    let recovered = store.recover().unwrap();
    assert_eq!(recovered.messages.len(), 1);
    assert!(recovered.messages.contains_key(&crate::records::key(1)));
}
