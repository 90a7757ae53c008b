//! Credit for a client's sender link, given back as its sends are answered and shaped by how
//! loaded its entity is. A link has at most a window of sends unanswered: fewer for large
//! messages, and fewer still as its entity's inbox fills. So one client's flood never queues
//! more than a window of work ahead of other clients' sends to the same entity, and a client
//! that stops reading its answers stops getting credit (its own back-pressure, nobody else's).

use busbar_amqp::engine::{Connection, LinkId};

use super::{BrokerConnection, LinkKind};
use crate::runtime::registry::Resolved;

/// Most sends a link may have unanswered; also its credit at attach ("Service Bus instantly
/// provides ample link credit").
pub(super) const SEND_CREDIT: u32 = 1_000;
/// Most bytes of sends a link may have unanswered, judged by the size of its latest message:
/// a few group commits' worth, so what a flood puts ahead of a neighbour's send is stored in
/// tens of milliseconds. 4 MiB (64 sends of 64 KiB) held a lone sender of large messages to
/// groups of ~26 messages, each paying a whole `fdatasync`; 16 MiB let the same sender's
/// groups grow and doubled its rate (BENCHMARKS.md, "Large durable sends").
const SEND_BYTES: u64 = 16 * 1024 * 1024;

/// How full an entity's inbox is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct InboxLoad {
    /// Free slots.
    pub(super) free: usize,
    /// All slots.
    pub(super) capacity: usize,
}

impl InboxLoad {
    /// An entity whose load is not known (a topic's): as if idle.
    pub(super) const IDLE: InboxLoad = InboxLoad {
        free: 1,
        capacity: 1,
    };
}

/// The sends of one sender link still waiting for their answer.
#[derive(Debug, Default)]
pub(super) struct SendWindow {
    /// Sends taken and not answered yet.
    unanswered: u32,
    /// The latest send's size: what the next ones are expected to weigh.
    latest_size: u64,
}

impl SendWindow {
    /// A send of `size` bytes was taken.
    pub(super) fn sent(&mut self, size: u64) {
        self.unanswered = self.unanswered.saturating_add(1);
        self.latest_size = size;
    }

    /// A send was answered (or needs no answer any more).
    pub(super) fn answered(&mut self) {
        self.unanswered = self.unanswered.saturating_sub(1);
    }

    /// The credit to set when the link has `credit` left and its entity's inbox is `load`, or
    /// `None` until it can be given at least half a window more (one flow per half window, not
    /// one per answer once the window is in use). Credit is never cut
    /// back: transfers the client sent meanwhile would arrive beyond it. So the credit given at
    /// attach, before the link's message size is known, is used up before the window applies.
    pub(super) fn top_up(&self, credit: u32, load: InboxLoad) -> Option<u32> {
        let by_size = SEND_BYTES / self.latest_size.max(1);
        let window = u64::from(SEND_CREDIT).min(by_size);
        // A loaded entity takes sends in smaller steps; `free <= capacity`, so this fits.
        let scaled = window.saturating_mul(load.free as u64) / (load.capacity.max(1) as u64);
        let scaled = u32::try_from(scaled).unwrap_or(SEND_CREDIT);
        let mut allowed = scaled.saturating_sub(self.unanswered);
        // With nothing unanswered no answer will come to top it up: never left without credit.
        if self.unanswered == 0 {
            allowed = allowed.max(1);
        }
        let half = scaled.div_ceil(2).max(1);
        (allowed.saturating_sub(credit) >= half).then_some(allowed)
    }
}

impl BrokerConnection {
    /// Counts a send of `size` bytes taken on sender `link` and tops up its credit.
    pub(super) fn send_taken(&mut self, link: LinkId, size: u64, connection: &mut Connection) {
        self.update_window(link, connection, |window| window.sent(size));
    }

    /// Counts the answer to a send on sender `link` (gone already: nothing to do) and tops up
    /// its credit.
    pub(super) fn send_answered(&mut self, link: LinkId, connection: &mut Connection) {
        self.update_window(link, connection, SendWindow::answered);
    }

    fn update_window(
        &mut self,
        link: LinkId,
        connection: &mut Connection,
        update: impl FnOnce(&mut SendWindow),
    ) {
        let Some(LinkKind::Sender { path, window, .. }) = self.links.get_mut(&link) else {
            return;
        };
        update(window);
        let credit = connection.link_credit(link).unwrap_or(0);
        // A load only lowers the top-up, so the registry is read only when an idle entity's
        // would be due: about once per half window, not at every send and answer.
        if window.top_up(credit, InboxLoad::IDLE).is_none() {
            return;
        }
        let load = inbox_load(self.shared.registry.current().resolve(path));
        if let Some(credit) = window.top_up(credit, load) {
            // The link exists: it is in our table.
            let _ = connection.set_credit(link, credit);
        }
    }
}

/// How full the inbox of the entity a sender link sends to is.
fn inbox_load(resolved: Option<Resolved<'_>>) -> InboxLoad {
    match resolved {
        Some(Resolved::Entity(entity)) => InboxLoad {
            free: entity.inbox.capacity(),
            capacity: entity.inbox.max_capacity(),
        },
        // A topic's sends go to its subscriptions, each with its own inbox.
        Some(Resolved::Topic(_)) | None => InboxLoad::IDLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: InboxLoad = InboxLoad::IDLE;

    fn window(sends: u32, size: u64) -> SendWindow {
        let mut window = SendWindow::default();
        for _ in 0..sends {
            window.sent(size);
        }
        window
    }

    #[test]
    fn small_sends_get_the_full_credit_back_once_half_is_used() {
        assert_eq!(window(0, 128).top_up(SEND_CREDIT, IDLE), None);
        assert_eq!(window(0, 128).top_up(501, IDLE), None);
        assert_eq!(window(0, 128).top_up(499, IDLE), Some(SEND_CREDIT));
        // Credit comes back as answers do, not as sends arrive, half a window at a time.
        assert_eq!(window(600, 128).top_up(0, IDLE), None);
        assert_eq!(window(500, 128).top_up(0, IDLE), Some(500));
    }

    #[test]
    fn large_sends_get_a_window_of_a_few_mebibytes() {
        // 16 MiB: 256 sends of 64 KiB, 64 of 256 KiB.
        assert_eq!(window(1, 64 * 1024).top_up(0, IDLE), Some(255));
        assert_eq!(window(1, 256 * 1024).top_up(0, IDLE), Some(63));
        // The credit of the attach is used up first.
        assert_eq!(window(1, 64 * 1024).top_up(SEND_CREDIT - 1, IDLE), None);
        assert_eq!(window(200, 64 * 1024).top_up(0, IDLE), None);
        assert_eq!(window(256, 64 * 1024).top_up(0, IDLE), None);
        let mut answered = window(256, 64 * 1024);
        for _ in 0..128 {
            answered.answered();
        }
        assert_eq!(answered.top_up(0, IDLE), Some(128));
    }

    #[test]
    fn a_load_never_gives_a_top_up_an_idle_entity_would_not() {
        for size in [128, 64 * 1024, 256 * 1024] {
            for unanswered in (0..1_100).step_by(13) {
                let window = window(unanswered, size);
                for credit in (0..1_100).step_by(17) {
                    if window.top_up(credit, IDLE).is_some() {
                        continue;
                    }
                    for free in (0..=1024).step_by(64) {
                        let load = InboxLoad {
                            free,
                            capacity: 1024,
                        };
                        assert_eq!(window.top_up(credit, load), None);
                    }
                }
            }
        }
    }

    #[test]
    fn credit_shrinks_as_the_entity_inbox_fills() {
        let quarter_free = InboxLoad {
            free: 256,
            capacity: 1024,
        };
        assert_eq!(window(0, 128).top_up(0, quarter_free), Some(250));
        let full = InboxLoad {
            free: 0,
            capacity: 1024,
        };
        assert_eq!(window(3, 128).top_up(0, full), None);
        // Nothing in flight: one send at a time rather than none at all.
        assert_eq!(window(0, 128).top_up(0, full), Some(1));
        assert_eq!(window(0, 128).top_up(1, full), None);
    }
}
