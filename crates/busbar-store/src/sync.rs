//! The synchronisation primitives the group-commit writer shares between threads, swapped for
//! loom's under `cfg(loom)` so `cargo xtask loom` can explore every interleaving.

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;
