//! What must survive a restart: the `Storage` trait, `MemoryStorage` and `FileStorage`.
