//! Settlements held back while a run of commands is applied, then sent as few `disposition`
//! frames as possible: contiguous deliveries of one link that end in the same state share one
//! `first..last` disposition (AMQP 1.0 §2.7.6). Outcomes that arrive out of order, or with a
//! gap still outstanding, simply form several ranges.

use busbar_amqp::engine::{DeliveryId, LinkId};
use busbar_amqp::performatives::DeliveryState;

/// One disposition to send: deliveries `first..=last` of `link` settled with `state`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SettledRange<L = LinkId> {
    pub(super) link: L,
    pub(super) first: DeliveryId,
    pub(super) last: DeliveryId,
    pub(super) state: DeliveryState,
}

/// Settlements waiting for the end of the current run of commands.
/// (Generic over the link id so the merging is tested without an engine.)
#[derive(Debug)]
pub(super) struct HeldDispositions<L = LinkId> {
    held: Vec<(L, DeliveryId, DeliveryState)>,
}

impl<L> Default for HeldDispositions<L> {
    fn default() -> Self {
        Self { held: Vec::new() }
    }
}

impl<L: Copy + Ord> HeldDispositions<L> {
    /// Holds the settlement of one delivery until [`HeldDispositions::flush`].
    pub(super) fn hold(&mut self, link: L, delivery_id: DeliveryId, state: DeliveryState) {
        self.held.push((link, delivery_id, state));
    }

    /// Hands every held settlement to `send`, merged into ranges, and forgets them.
    pub(super) fn flush(&mut self, mut send: impl FnMut(SettledRange<L>)) {
        // Stable: a delivery settled twice keeps its order (it is never merged with itself).
        self.held.sort_by_key(|(link, id, _)| (*link, *id));
        let mut current: Option<SettledRange<L>> = None;
        for (link, id, state) in self.held.drain(..) {
            if let Some(range) = &mut current
                && range.link == link
                && range.last.0.checked_add(1) == Some(id.0)
                && range.state == state
            {
                range.last = id;
                continue;
            }
            if let Some(range) = current.replace(SettledRange {
                link,
                first: id,
                last: id,
                state,
            }) {
                send(range);
            }
        }
        if let Some(range) = current {
            send(range);
        }
    }
}

#[cfg(test)]
mod tests {
    use busbar_amqp::performatives::{Accepted, Released};

    use super::*;

    fn accepted() -> DeliveryState {
        DeliveryState::Accepted(Accepted {})
    }

    fn flushed(held: &[(u8, u32, DeliveryState)]) -> Vec<(u8, u32, u32, DeliveryState)> {
        let mut holder = HeldDispositions::default();
        for (link, id, state) in held {
            holder.hold(*link, DeliveryId(*id), state.clone());
        }
        let mut sent = Vec::new();
        holder.flush(|range| sent.push((range.link, range.first.0, range.last.0, range.state)));
        let mut again = 0;
        holder.flush(|_| again += 1);
        assert_eq!(again, 0, "a flush forgets what it sent");
        sent
    }

    #[test]
    fn contiguous_deliveries_with_one_outcome_share_a_range_whatever_their_order() {
        let held = [3, 1, 2, 4].map(|id| (0, id, accepted()));
        assert_eq!(flushed(&held), [(0, 1, 4, accepted())]);
    }

    #[test]
    fn gaps_links_and_other_states_split_ranges() {
        let released = DeliveryState::Released(Released {});
        let held = [
            (0, 1, accepted()),
            (0, 2, accepted()),
            (0, 4, accepted()), // 3 is still outstanding
            (0, 5, released.clone()),
            (0, 6, accepted()),
            (1, 7, accepted()), // another link
            (0, u32::MAX, accepted()),
        ];
        assert_eq!(
            flushed(&held),
            [
                (0, 1, 2, accepted()),
                (0, 4, 4, accepted()),
                (0, 5, 5, released),
                (0, 6, 6, accepted()),
                (0, u32::MAX, u32::MAX, accepted()),
                (1, 7, 7, accepted()),
            ]
        );
    }

    #[test]
    fn a_delivery_held_twice_is_sent_twice_not_merged_with_itself() {
        let held = [(0, 1, accepted()), (0, 1, accepted()), (0, 2, accepted())];
        assert_eq!(
            flushed(&held),
            [(0, 1, 1, accepted()), (0, 1, 2, accepted())]
        );
    }
}
