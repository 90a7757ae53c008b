//! Test helpers of the file and memory backends: scratch directories, the two backends behind
//! the shared suite's `Backend` trait, segment listings.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use busbar_store::{FileOptions, FileStorage, MemoryStorage, MessagePart};
use bytes::Bytes;

use crate::records::Backend;

/// A directory under the system temp dir, unique per test, removed when dropped.
pub(crate) struct TestDir {
    path: PathBuf,
}

impl TestDir {
    pub(crate) fn new(name: &str) -> TestDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let unique = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "busbar-store-{name}-{}-{unique}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TestDir { path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

pub(crate) struct Memory {
    store: Option<MemoryStorage>,
}

impl Backend for Memory {
    type Store = MemoryStorage;

    fn create(_small: bool) -> Self {
        Memory {
            store: Some(MemoryStorage::new()),
        }
    }

    fn store(&mut self) -> &mut MemoryStorage {
        self.store.as_mut().unwrap()
    }

    fn restart(&mut self) {
        let store = self.store.take().unwrap();
        self.store = Some(store.restart());
    }
}

pub(crate) struct File {
    // Field order matters: the store is dropped before its directory.
    store: Option<FileStorage>,
    options: FileOptions,
    dir: TestDir,
    /// Set for [`FileWithIndex`]: opened with segment summaries keeping this part.
    index_part: Option<MessagePart>,
}

/// What [`FileWithIndex`]'s summaries keep of a message: its first three bytes.
pub(crate) fn first_bytes(message: &Bytes) -> Bytes {
    message.slice(..message.len().min(3))
}

/// `FileStorage` opened with segment summaries ([`FileStorage::open_with_index`]), which a
/// restart reads instead of sealed segments to rebuild the location index.
pub(crate) struct FileWithIndex(File);

impl Backend for FileWithIndex {
    type Store = FileStorage;

    fn create(small: bool) -> Self {
        let mut file = File::create(small);
        file.index_part = Some(first_bytes);
        file.restart();
        FileWithIndex(file)
    }

    fn store(&mut self) -> &mut FileStorage {
        self.0.store()
    }

    fn restart(&mut self) {
        self.0.restart();
    }

    fn index_part() -> Option<MessagePart> {
        Some(first_bytes)
    }
}

impl Backend for File {
    type Store = FileStorage;

    fn create(small: bool) -> Self {
        let dir = TestDir::new("suite");
        let options = if small {
            FileOptions {
                segment_size: 2048,
                compact_dead_percent: 40,
            }
        } else {
            FileOptions::default()
        };
        let store = FileStorage::open(dir.path(), options).unwrap();
        File {
            store: Some(store),
            options,
            dir,
            index_part: None,
        }
    }

    fn store(&mut self) -> &mut FileStorage {
        self.store.as_mut().unwrap()
    }

    fn restart(&mut self) {
        drop(self.store.take());
        let store = match self.index_part {
            Some(part) => FileStorage::open_with_index(self.dir.path(), self.options, part),
            None => FileStorage::open(self.dir.path(), self.options),
        };
        self.store = Some(store.unwrap());
    }
}

/// The segment files of a journal directory, oldest first.
pub(crate) fn segment_files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, "seg")
}

/// The files of `dir` with this extension, in name order (for segments and their summaries,
/// oldest first).
pub(crate) fn files_ending(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    paths.sort();
    paths
}
