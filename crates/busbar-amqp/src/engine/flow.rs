//! Link credit and delivery-count arithmetic (AMQP 1.0 §2.6.7) and session windows (§2.5.6).
//!
//! All counters are RFC-1982 serial numbers: they wrap, and differences are taken modulo 2³².

/// Flow state of a link on which *we* send (we are the sender, the peer grants credit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SenderFlow {
    /// Our delivery-count: deliveries sent (or consumed by drain) since the link began.
    pub(crate) delivery_count: u32,
    /// Credit we may still use.
    pub(crate) link_credit: u32,
    /// The peer asked us to use up or give back all credit.
    pub(crate) drain: bool,
}

impl SenderFlow {
    /// A link that starts at `initial_delivery_count` with no credit.
    pub(crate) fn new(initial_delivery_count: u32) -> Self {
        Self {
            delivery_count: initial_delivery_count,
            link_credit: 0,
            drain: false,
        }
    }

    /// Applies the receiver's flow: credit is absolute, relative to the receiver's view of our
    /// delivery-count (absent when the receiver has not seen our attach yet).
    pub(crate) fn on_flow(
        &mut self,
        receiver_delivery_count: Option<u32>,
        link_credit: u32,
        drain: bool,
    ) {
        let base = receiver_delivery_count.unwrap_or(self.delivery_count);
        // credit = delivery-count(rcv) + link-credit(rcv) - delivery-count(snd), computed as the
        // receiver's credit minus the deliveries it has not seen yet, so that a huge credit
        // (u32::MAX) is not mistaken for a wrapped, negative one.
        self.link_credit = link_credit.saturating_sub(unseen(base, self.delivery_count));
        self.drain = drain;
    }

    /// Consumes one credit for a new delivery; false when there is none.
    pub(crate) fn consume(&mut self) -> bool {
        if self.link_credit == 0 {
            return false;
        }
        self.link_credit -= 1;
        self.delivery_count = self.delivery_count.wrapping_add(1);
        true
    }

    /// Ends a drain: unused credit is consumed by advancing the delivery-count.
    pub(crate) fn finish_drain(&mut self) {
        self.delivery_count = self.delivery_count.wrapping_add(self.link_credit);
        self.link_credit = 0;
    }
}

/// Flow state of a link on which *we* receive (we grant credit, the peer sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReceiverFlow {
    /// The sender's delivery-count as we last know it.
    pub(crate) delivery_count: u32,
    /// Credit we granted and that is not used yet.
    pub(crate) link_credit: u32,
    /// Deliveries the peer sent without credit since credit last ran out (tolerated up to a bound).
    pub(crate) overdraft: u32,
    /// We asked the sender to drain and have not heard back.
    pub(crate) drain: bool,
}

impl ReceiverFlow {
    /// A link whose sender starts at `initial_delivery_count`; no credit granted yet.
    pub(crate) fn new(initial_delivery_count: u32) -> Self {
        Self {
            delivery_count: initial_delivery_count,
            link_credit: 0,
            overdraft: 0,
            drain: false,
        }
    }

    /// Counts one incoming delivery. Returns false when it came without credit.
    pub(crate) fn on_delivery(&mut self) -> bool {
        self.delivery_count = self.delivery_count.wrapping_add(1);
        if self.link_credit == 0 {
            self.overdraft = self.overdraft.saturating_add(1);
            return false;
        }
        self.link_credit -= 1;
        true
    }

    /// Applies the sender's flow: its delivery-count may have moved on (drain), which uses up
    /// the credit between our count and its count.
    pub(crate) fn on_flow(&mut self, sender_delivery_count: u32) {
        if serial_lt(self.delivery_count, sender_delivery_count) {
            let consumed = sender_delivery_count.wrapping_sub(self.delivery_count);
            self.link_credit = self.link_credit.saturating_sub(consumed);
            self.delivery_count = sender_delivery_count;
        }
        if self.link_credit == 0 {
            self.drain = false;
        }
    }

    /// Sets the credit to `credit` (absolute); the overdraft is forgiven.
    pub(crate) fn set_credit(&mut self, credit: u32) {
        self.link_credit = credit;
        self.overdraft = 0;
    }
}

/// How far `sent` is ahead of `seen` (serial numbers): what we sent that the peer had not seen
/// when it wrote its flow. A `seen` ahead of `sent` (a confused peer) counts as nothing unseen.
fn unseen(seen: u32, sent: u32) -> u32 {
    if serial_lt(seen, sent) {
        sent.wrapping_sub(seen)
    } else {
        0
    }
}

/// `a < b` in serial-number arithmetic (RFC 1982, 32 bits).
pub(crate) fn serial_lt(a: u32, b: u32) -> bool {
    a != b && b.wrapping_sub(a) < (1 << 31)
}

/// Session window state (§2.5.6), counted in transfer frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionWindows {
    /// transfer-id of the next frame we send.
    pub(crate) next_outgoing_id: u32,
    /// How many more transfer frames the peer will take (its incoming window as we compute it).
    pub(crate) remote_incoming_window: u32,
    /// transfer-id we expect on the next incoming frame.
    pub(crate) next_incoming_id: u32,
    /// How many more transfer frames we take before the peer must wait for our flow.
    pub(crate) incoming_window: u32,
    /// The incoming window we advertise when we replenish.
    pub(crate) advertised_incoming_window: u32,
}

impl SessionWindows {
    /// Windows after the peer's begin (its next-outgoing-id and incoming-window) and ours.
    pub(crate) fn new(
        peer_next_outgoing_id: u32,
        peer_incoming_window: u32,
        our_incoming_window: u32,
    ) -> Self {
        Self {
            next_outgoing_id: 0,
            remote_incoming_window: peer_incoming_window,
            next_incoming_id: peer_next_outgoing_id,
            incoming_window: our_incoming_window,
            advertised_incoming_window: our_incoming_window,
        }
    }

    /// Applies a session flow from the peer: remote-incoming-window =
    /// next-incoming-id(flow) + incoming-window(flow) − next-outgoing-id(ours).
    pub(crate) fn on_flow(
        &mut self,
        peer_next_incoming_id: Option<u32>,
        peer_incoming_window: u32,
    ) {
        // Absent: the peer has not seen our begin, whose next-outgoing-id was 0. Frames the
        // peer has not seen yet use up its window (.NET offers u32::MAX, which must not wrap).
        let seen = peer_next_incoming_id.unwrap_or(0);
        self.remote_incoming_window =
            peer_incoming_window.saturating_sub(unseen(seen, self.next_outgoing_id));
    }

    /// Counts one outgoing transfer frame; false when the peer's window is closed.
    pub(crate) fn consume_outgoing(&mut self) -> bool {
        if self.remote_incoming_window == 0 {
            return false;
        }
        self.remote_incoming_window -= 1;
        self.next_outgoing_id = self.next_outgoing_id.wrapping_add(1);
        true
    }

    /// Counts one incoming transfer frame; false is a window violation.
    pub(crate) fn consume_incoming(&mut self) -> bool {
        if self.incoming_window == 0 {
            return false;
        }
        self.incoming_window -= 1;
        self.next_incoming_id = self.next_incoming_id.wrapping_add(1);
        true
    }

    /// Whether our incoming window is down to half or less and should be re-advertised.
    pub(crate) fn needs_replenish(&self) -> bool {
        self.incoming_window <= self.advertised_incoming_window / 2
    }

    /// Re-opens our incoming window to the advertised size.
    pub(crate) fn replenish(&mut self) {
        self.incoming_window = self.advertised_incoming_window;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sender_credit_is_absolute_relative_to_the_receivers_count() {
        let mut flow = SenderFlow::new(0);
        flow.on_flow(Some(0), 10, false);
        assert_eq!(flow.link_credit, 10);
        for _ in 0..4 {
            assert!(flow.consume());
        }
        // The receiver re-issues credit 10 having seen only 2 of our 4 deliveries.
        flow.on_flow(Some(2), 10, false);
        assert_eq!((flow.delivery_count, flow.link_credit), (4, 8));
        // A receiver far behind leaves no credit, never a wrapped huge one.
        flow.on_flow(Some(0), 1, false);
        assert_eq!(flow.link_credit, 0);
        assert!(!flow.consume());
    }

    #[test]
    fn absent_receiver_count_means_our_initial_count() {
        let mut flow = SenderFlow::new(u32::MAX - 1);
        flow.on_flow(None, 5, false);
        assert_eq!(flow.link_credit, 5);
        assert!(flow.consume());
        assert!(flow.consume());
        assert_eq!(flow.delivery_count, 0);
        flow.on_flow(Some(u32::MAX), 5, false);
        assert_eq!(flow.link_credit, 4);
    }

    #[test]
    fn drain_advances_the_count_by_the_unused_credit() {
        // js_drain trace: flow(delivery-count=1, link-credit=4, drain) -> flow(delivery-count=5, 0).
        let mut flow = SenderFlow::new(0);
        assert!(flow.link_credit == 0);
        flow.on_flow(Some(0), 1, false);
        assert!(flow.consume());
        flow.on_flow(Some(1), 4, true);
        assert!(flow.drain);
        flow.finish_drain();
        assert_eq!((flow.delivery_count, flow.link_credit), (5, 0));
    }

    #[test]
    fn receiver_tracks_credit_overdraft_and_drain_replies() {
        let mut flow = ReceiverFlow::new(7);
        flow.set_credit(2);
        assert!(flow.on_delivery());
        assert!(flow.on_delivery());
        assert!(!flow.on_delivery());
        assert_eq!((flow.delivery_count, flow.overdraft), (10, 1));
        flow.set_credit(5);
        flow.drain = true;
        assert_eq!(flow.overdraft, 0);
        // The sender drained: its count moved 5 ahead, credit gone, drain over.
        flow.on_flow(15);
        assert_eq!(
            (flow.delivery_count, flow.link_credit, flow.drain),
            (15, 0, false)
        );
    }

    #[test]
    fn session_windows_count_frames_and_detect_violations() {
        let mut windows = SessionWindows::new(100, 3, 2);
        assert!(windows.consume_incoming());
        assert!(windows.needs_replenish());
        assert!(windows.consume_incoming());
        assert!(!windows.consume_incoming());
        assert_eq!(windows.next_incoming_id, 102);
        windows.replenish();
        assert!(windows.consume_incoming());

        for _ in 0..3 {
            assert!(windows.consume_outgoing());
        }
        assert!(!windows.consume_outgoing());
        // The peer has seen 2 of our 3 frames and opens 4 more from there.
        windows.on_flow(Some(2), 4);
        assert_eq!(windows.remote_incoming_window, 3);
    }

    #[test]
    fn maximal_credit_and_window_do_not_wrap_to_nothing() {
        let mut flow = SenderFlow::new(0);
        flow.on_flow(Some(0), u32::MAX, false);
        assert_eq!(flow.link_credit, u32::MAX);
        assert!(flow.consume());
        flow.on_flow(Some(0), u32::MAX, false);
        assert_eq!(flow.link_credit, u32::MAX - 1);

        let mut windows = SessionWindows::new(0, 0, 10);
        windows.on_flow(Some(0), u32::MAX);
        assert_eq!(windows.remote_incoming_window, u32::MAX);
        assert!(windows.consume_outgoing());
        windows.on_flow(None, u32::MAX);
        assert_eq!(windows.remote_incoming_window, u32::MAX - 1);
    }

    #[test]
    fn serial_comparison_wraps() {
        assert!(serial_lt(u32::MAX, 0));
        assert!(!serial_lt(0, u32::MAX));
        assert!(!serial_lt(5, 5));
    }
}
