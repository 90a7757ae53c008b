//! Duplicate detection: message-ids remembered for a window from their enqueue time, forgotten in
//! arrival order so memory stays bounded and each step is O(1) amortised.

use crate::time::Timestamp;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub(crate) struct DuplicateWindow {
    window: Option<Duration>,
    seen: HashMap<Bytes, Timestamp>,
    /// Ids in the order they were remembered; times never decrease because `now` never does.
    order: VecDeque<(Timestamp, Bytes)>,
}

impl DuplicateWindow {
    pub(crate) fn new(window: Option<Duration>) -> DuplicateWindow {
        DuplicateWindow {
            window,
            ..DuplicateWindow::default()
        }
    }

    /// Changes the window; turning detection off forgets every id.
    pub(crate) fn set_window(&mut self, window: Option<Duration>, now: Timestamp) {
        self.window = window;
        if window.is_none() {
            self.seen.clear();
            self.order.clear();
        }
        self.forget_expired(now);
    }

    /// Whether `id` was remembered within the window before `now`.
    pub(crate) fn contains(&self, id: &Bytes, now: Timestamp) -> bool {
        self.seen.get(id).is_some_and(|&at| self.covers(at, now))
    }

    /// Whether an id seen at `at` is still within the window at `now` (never when detection is
    /// off): what a restart needs to remember.
    pub(crate) fn covers(&self, at: Timestamp, now: Timestamp) -> bool {
        self.window
            .is_some_and(|window| at.saturating_add(window) > now)
    }

    /// Remembers `id` as seen at `at` (no-op when detection is off).
    pub(crate) fn remember(&mut self, id: Bytes, at: Timestamp) {
        if self.window.is_some() {
            self.seen.insert(id.clone(), at);
            self.order.push_back((at, id));
        }
    }

    /// Forgets `id` if it was last remembered at `at` (an enqueue that never happened).
    pub(crate) fn forget(&mut self, id: &Bytes, at: Timestamp) {
        // The entry in `order` stays; `forget_expired` skips entries whose time no longer matches.
        if self.seen.get(id) == Some(&at) {
            self.seen.remove(id);
        }
    }

    /// Drops ids whose window has passed.
    pub(crate) fn forget_expired(&mut self, now: Timestamp) {
        let Some(window) = self.window else { return };
        while let Some((at, _)) = self.order.front() {
            if at.saturating_add(window) > now {
                break;
            }
            if let Some((at, id)) = self.order.pop_front() {
                // A later remember of the same id owns the map entry.
                if self.seen.get(&id) == Some(&at) {
                    self.seen.remove(&id);
                }
            }
        }
    }

    /// Number of ids remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &'static str) -> Bytes {
        Bytes::from_static(text.as_bytes())
    }

    #[test]
    fn an_id_is_a_duplicate_only_within_its_window() {
        let mut window = DuplicateWindow::new(Some(Duration::from_secs(10)));
        window.remember(id("a"), Timestamp(0));
        assert!(window.contains(&id("a"), Timestamp(9_999)));
        assert!(!window.contains(&id("a"), Timestamp(10_000)));
        assert!(!window.contains(&id("b"), Timestamp(1)));
    }

    #[test]
    fn forgetting_bounds_memory() {
        let mut window = DuplicateWindow::new(Some(Duration::from_secs(1)));
        for (at, name) in [(0, "a"), (500, "b"), (1_200, "c")] {
            window.remember(id(name), Timestamp(at));
        }
        window.forget_expired(Timestamp(1_600));
        assert_eq!(window.len(), 1);
        assert!(window.contains(&id("c"), Timestamp(1_600)));
    }

    #[test]
    fn a_re_remembered_id_survives_its_first_entry_expiring() {
        let mut window = DuplicateWindow::new(Some(Duration::from_secs(1)));
        window.remember(id("a"), Timestamp(0));
        window.forget_expired(Timestamp(1_000));
        window.remember(id("a"), Timestamp(1_000));
        window.forget_expired(Timestamp(1_500));
        assert!(window.contains(&id("a"), Timestamp(1_500)));
    }

    #[test]
    fn a_forgotten_id_is_no_duplicate() {
        let mut window = DuplicateWindow::new(Some(Duration::from_secs(10)));
        window.remember(id("a"), Timestamp(0));
        window.forget(&id("a"), Timestamp(5));
        assert!(
            window.contains(&id("a"), Timestamp(6)),
            "a later time forgets nothing"
        );
        window.forget(&id("a"), Timestamp(0));
        assert!(!window.contains(&id("a"), Timestamp(6)));
        window.forget_expired(Timestamp(20_000));
        assert_eq!(window.len(), 0);
    }

    #[test]
    fn detection_off_remembers_nothing() {
        let mut window = DuplicateWindow::new(None);
        window.remember(id("a"), Timestamp(0));
        assert!(!window.contains(&id("a"), Timestamp(0)));
        let mut on = DuplicateWindow::new(Some(Duration::from_secs(5)));
        on.remember(id("a"), Timestamp(0));
        on.set_window(None, Timestamp(1));
        assert_eq!(on.len(), 0);
    }
}
