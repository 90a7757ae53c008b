//! What the writer knows of its storage's condition, read by the broker at every send without a
//! lock: whether new messages are refused because the disk is full, or the storage failed for
//! good (poisoned: only a restart recovers it). Each change is logged once.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::StoreError;

/// The storage's condition, as `GET /health` and a refused send report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreCondition {
    /// Taking everything.
    Healthy,
    /// New messages are refused until space is freed; settlements still work. The text says
    /// where and how much room is missing.
    Full(String),
    /// A write or sync failed: nothing more is acknowledged until a restart. The text is the
    /// failure.
    Failed(String),
}

const HEALTHY: u8 = 0;
const FULL: u8 = 1;
const FAILED: u8 = 2;

#[derive(Debug, Default)]
pub(super) struct Health {
    state: AtomicU8,
    /// The text of a full or failed condition (kept after the disk has room again, unread).
    detail: Mutex<String>,
}

impl Health {
    pub(super) fn condition(&self) -> StoreCondition {
        match self.state.load(Ordering::Acquire) {
            HEALTHY => StoreCondition::Healthy,
            state => {
                let detail = self.detail().clone();
                if state == FULL {
                    StoreCondition::Full(detail)
                } else {
                    StoreCondition::Failed(detail)
                }
            }
        }
    }

    /// Whether new messages are refused (full or failed): one atomic load.
    pub(super) fn refuses_new_messages(&self) -> bool {
        self.state.load(Ordering::Relaxed) != HEALTHY
    }

    pub(super) fn is_full(&self) -> bool {
        self.state.load(Ordering::Relaxed) == FULL
    }

    /// Records what [`Storage::check_room`](crate::Storage::check_room) said, unless the
    /// storage has already failed.
    pub(super) fn record_room(&self, room: Result<(), StoreError>) {
        let state = self.state.load(Ordering::Acquire);
        match room {
            Ok(()) if state == FULL => {
                self.state.store(HEALTHY, Ordering::Release);
                tracing::info!("the store has room again: new messages are taken");
            }
            Err(StoreError::Full { detail }) if state == HEALTHY => {
                tracing::warn!(%detail, "the store is full: new messages are refused");
                *self.detail() = detail;
                self.state.store(FULL, Ordering::Release);
            }
            _ => {}
        }
    }

    /// Records a failed commit: every error but the ones that refuse a single submission
    /// (too large, no room) or report a shutdown means the storage is poisoned.
    pub(super) fn record_failure(&self, error: &StoreError) {
        if matches!(
            error,
            StoreError::RecordTooLarge { .. } | StoreError::Full { .. } | StoreError::Closed
        ) || self.state.load(Ordering::Acquire) == FAILED
        {
            return;
        }
        tracing::error!(%error, "the storage failed and acknowledges nothing more");
        *self.detail() = error.to_string();
        self.state.store(FAILED, Ordering::Release);
    }

    fn detail(&self) -> std::sync::MutexGuard<'_, String> {
        self.detail.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> StoreError {
        StoreError::Full {
            detail: "no room".into(),
        }
    }

    #[test]
    fn full_comes_and_goes_with_the_room() {
        let health = Health::default();
        health.record_room(Err(full()));
        assert_eq!(health.condition(), StoreCondition::Full("no room".into()));
        assert!(health.refuses_new_messages());
        health.record_room(Ok(()));
        assert_eq!(health.condition(), StoreCondition::Healthy);
        assert!(!health.refuses_new_messages());
    }

    #[test]
    fn a_failure_is_for_good_and_single_refusals_are_not_failures() {
        let health = Health::default();
        health.record_failure(&full());
        health.record_failure(&StoreError::Closed);
        assert_eq!(health.condition(), StoreCondition::Healthy);
        health.record_failure(&StoreError::InjectedFault("sync"));
        health.record_room(Ok(()));
        health.record_room(Err(full()));
        assert_eq!(
            health.condition(),
            StoreCondition::Failed("injected fault: sync".into())
        );
    }
}
