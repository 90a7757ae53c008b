//! At most [`MAX_UNSETTLED`] peek-locked deliveries unsettled per receive link. A client that
//! keeps giving credit but never settles (its locks expire and the messages go to others) would
//! otherwise make the connection remember ever more deliveries: the entity is given the client's
//! credit only as far as the cap allows, and the rest as settlements make room.

use busbar_core::ReceiveMode;

use super::ReceiveLink;

/// Unsettled deliveries a receive link may hold (Service Bus's largest prefetch in practice is
/// a few thousand).
pub(super) const MAX_UNSETTLED: usize = 5_000;

impl ReceiveLink {
    /// The client's flow gave the link `credit`: the limit to give the entity.
    pub(super) fn take_credit(&mut self, credit: u32) -> u32 {
        self.credit_limit = self.sent.wrapping_add(credit);
        self.granted_limit = self.capped_limit();
        self.granted_limit
    }

    /// A drain ended: whatever credit the client gave is used up.
    pub(super) fn drained(&mut self) {
        self.credit_limit = self.sent;
        self.granted_limit = self.sent;
    }

    /// The higher limit to give the entity now that settlements made room, if the cap held
    /// the client's credit back.
    pub(super) fn more_credit(&mut self) -> Option<u32> {
        let limit = self.capped_limit();
        let ahead = |limit: u32| limit.wrapping_sub(self.sent);
        if ahead(limit) <= ahead(self.granted_limit) {
            return None;
        }
        self.granted_limit = limit;
        Some(limit)
    }

    /// The client's limit, cut so that the unsettled deliveries stay within the cap.
    fn capped_limit(&self) -> u32 {
        // Past the client's limit (deliveries already on their way when it lowered its credit)
        // there is no credit left.
        let credit = match self.credit_limit.wrapping_sub(self.sent) {
            credit if credit > i32::MAX.unsigned_abs() => 0,
            credit => credit,
        };
        let room = match self.mode {
            ReceiveMode::PeekLock => MAX_UNSETTLED.saturating_sub(self.unsettled.len()),
            ReceiveMode::ReceiveAndDelete => usize::MAX,
        };
        self.sent
            .wrapping_add(credit.min(u32::try_from(room).unwrap_or(u32::MAX)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use busbar_amqp::engine::DeliveryId;
    use busbar_core::{LockToken, SubQueue};

    use super::*;
    use crate::runtime::registry::EntityHandle;

    fn link(mode: ReceiveMode) -> ReceiveLink {
        let entity = EntityHandle {
            path: "q".into(),
            inbox: tokio::sync::mpsc::channel(1).0,
            requires_session: false,
            metrics: std::sync::Arc::default(),
        };
        ReceiveLink {
            name: "r".into(),
            entity,
            sub_queue: SubQueue::Main,
            mode,
            sent: 0,
            unsettled: HashMap::new(),
            credit_limit: 0,
            granted_limit: 0,
        }
    }

    /// Delivers `count` messages on `link`, peek-locked ones left unsettled.
    fn deliver(link: &mut ReceiveLink, count: u32) {
        for _ in 0..count {
            if link.mode == ReceiveMode::PeekLock {
                let id = DeliveryId(link.sent);
                link.unsettled
                    .insert(id, LockToken::from_bytes(*uuid::Uuid::new_v4().as_bytes()));
            }
            link.sent = link.sent.wrapping_add(1);
        }
    }

    #[test]
    fn credit_past_the_cap_is_given_as_settlements_make_room() {
        let mut link = link(ReceiveMode::PeekLock);
        let cap = MAX_UNSETTLED as u32;
        assert_eq!(link.take_credit(cap + 100), cap);
        deliver(&mut link, cap);
        assert_eq!(link.more_credit(), None);
        let settled: Vec<DeliveryId> = link.unsettled.keys().take(30).copied().collect();
        for id in settled {
            link.unsettled.remove(&id);
        }
        assert_eq!(link.more_credit(), Some(cap + 30));
        assert_eq!(link.more_credit(), None);
        deliver(&mut link, 30);
        for id in link.unsettled.keys().copied().collect::<Vec<_>>() {
            link.unsettled.remove(&id);
        }
        // Only the client's credit is left to give: 70 of its 100 beyond the cap.
        assert_eq!(link.more_credit(), Some(cap + 100));
    }

    #[test]
    fn a_drained_link_gets_no_credit_from_settlements() {
        let mut link = link(ReceiveMode::PeekLock);
        let cap = MAX_UNSETTLED as u32;
        link.take_credit(cap * 2);
        deliver(&mut link, cap);
        link.drained();
        link.unsettled.clear();
        assert_eq!(link.more_credit(), None);
        assert_eq!(link.take_credit(10), cap + 10);
    }

    #[test]
    fn receive_and_delete_is_not_capped_and_lowered_credit_is_none() {
        let mut link = link(ReceiveMode::ReceiveAndDelete);
        assert_eq!(link.take_credit(u32::MAX / 4), u32::MAX / 4);
        deliver(&mut link, 10);
        assert_eq!(link.take_credit(0), 10);
        deliver(&mut link, 2);
        assert_eq!(link.more_credit(), None);
        assert_eq!(link.take_credit(5), 17);
    }
}
