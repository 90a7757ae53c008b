//! The synchronisation primitives shared across threads, swapped for loom's under `cfg(loom)`
//! so `cargo xtask loom` can explore every interleaving of the hand-off.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Mutex};

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
#[cfg(not(loom))]
pub(crate) use std::sync::MutexGuard;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Mutex};
